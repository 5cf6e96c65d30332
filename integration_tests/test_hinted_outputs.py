"""A multi-asset's and a Collection asset's return hints, on parquet and DuckDB, against the
declarations given their schemas.

This module uses `from __future__ import annotations`, so every hint is a string the package
resolves as Dagster does. Per form of the hint (`-> tuple[...]` in the order of `outs`, a
`TypedDict` by output name, `dd.AssetOut(dy.DataFrame[S])`; `-> Book`, `-> Book | None` and a
bare `@dd.collection_asset`), and per outcome of the spec's six, the hinted asset and the one
given its schemas returning the same value have the same definition (specs, checks, metadata,
code versions, repository snapshot), and their runs the same events and stored rows.

The six outcomes of one form and manager run together, each outcome's asset under a key prefix
of its own (`OUTCOME_PREFIXES`), the same for the hinted asset and the one given its schemas, so
each case compares what its own asset left in those runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd

from .compared_runs import (
    KINDS,
    OUTCOME_PREFIXES,
    OUTCOMES,
    definition,
    returned,
    run_once,
    run_together,
)
from .conftest import DAY_1, Orders
from .refund_book import Book, Refunds

pytestmark = pytest.mark.integration


class OrdersAndRefunds(TypedDict):
    orders: Annotated[pl.DataFrame, Orders]
    refunds: dy.DataFrame[Refunds]


REFUNDS = pl.DataFrame({"order_id": [f"first-{DAY_1}-eu-ok0"], "amount": [3.0]})


def placed(prefix: str | None, step: str) -> dict[str, Any]:
    """The step's name under `prefix`, for a run the six outcomes share (none without one)."""
    return {} if prefix is None else {"name": f"{prefix}__{step}"}


def hinted_outs(quarantine: bool, prefix: str | None) -> dict[str, Any]:
    """The multi-asset's outputs, each schema read from the function's return hint."""
    outs = {
        "orders": dd.AssetOut(quarantine=quarantine, key_prefix=prefix),
        "refunds": dd.AssetOut(key_prefix=prefix),
    }
    return {"outs": outs, **placed(prefix, "orders_and_refunds")}


def given_outputs(
    quarantine: bool, value: object, prefix: str | None = None
) -> dg.AssetsDefinition:
    """The multi-asset given each output's schema, returning `value` (under `prefix`)."""

    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(Orders, quarantine=quarantine, key_prefix=prefix),
            "refunds": dd.AssetOut(Refunds, key_prefix=prefix),
        },
        **placed(prefix, "orders_and_refunds"),
    )
    def orders_and_refunds() -> Any:
        return value

    return orders_and_refunds


def tuple_hint(
    quarantine: bool, orders: pl.DataFrame | None, prefix: str | None = None
) -> tuple[dg.AssetsDefinition, object]:
    @dd.multi_asset(**hinted_outs(quarantine, prefix))
    def orders_and_refunds() -> tuple[dy.DataFrame[Orders], dy.LazyFrame[Refunds] | None]:
        return orders, REFUNDS.lazy()  # type: ignore[return-value]

    return orders_and_refunds, (orders, REFUNDS.lazy())


def typed_dict_hint(
    quarantine: bool, orders: pl.DataFrame | None, prefix: str | None = None
) -> tuple[dg.AssetsDefinition, object]:
    @dd.multi_asset(**hinted_outs(quarantine, prefix))
    def orders_and_refunds() -> OrdersAndRefunds:
        return {"orders": orders, "refunds": REFUNDS}  # type: ignore[typeddict-item]

    return orders_and_refunds, {"orders": orders, "refunds": REFUNDS}


def asset_out_hints(
    quarantine: bool, orders: pl.DataFrame | None, prefix: str | None = None
) -> tuple[dg.AssetsDefinition, object]:
    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(dy.DataFrame[Orders], quarantine=quarantine, key_prefix=prefix),
            "refunds": dd.AssetOut(dy.LazyFrame[Refunds], key_prefix=prefix),
        },
        **placed(prefix, "orders_and_refunds"),
    )
    def orders_and_refunds() -> dict[str, pl.DataFrame | None]:
        return {"orders": orders, "refunds": REFUNDS}

    return orders_and_refunds, {"orders": orders, "refunds": REFUNDS}


MULTI_ASSET_FORMS: dict[
    str, Callable[[bool, pl.DataFrame | None, str | None], tuple[dg.AssetsDefinition, object]]
] = {
    "tuple": tuple_hint,
    "typed dict": typed_dict_hint,
    "asset out": asset_out_hints,
}
"""Each hinted form: the multi-asset it declares, and the value its function returns."""


def given_collection(
    quarantine: bool, members: object, prefix: str | None = None
) -> dg.AssetsDefinition:
    @dd.collection_asset(Book, quarantine=quarantine, key_prefix=prefix, **placed(prefix, "book"))
    def book() -> Any:
        return members

    return book


def book_hint(quarantine: bool, members: object, prefix: str | None = None) -> dg.AssetsDefinition:
    @dd.collection_asset(quarantine=quarantine, key_prefix=prefix, **placed(prefix, "book"))
    def book() -> Book:
        return members  # type: ignore[return-value]

    return book


def optional_book_hint(
    quarantine: bool, members: object, prefix: str | None = None
) -> dg.AssetsDefinition:
    @dd.collection_asset(quarantine=quarantine, key_prefix=prefix, **placed(prefix, "book"))
    def book() -> Book | None:
        return members  # type: ignore[return-value]

    return book


def bare_decorator(
    quarantine: bool, members: object, prefix: str | None = None
) -> dg.AssetsDefinition:
    def book() -> Book:
        return members  # type: ignore[return-value]

    return dd.collection_asset(  # type: ignore[call-overload]
        book, quarantine=quarantine, key_prefix=prefix, **placed(prefix, "book")
    )


COLLECTION_FORMS: dict[str, Callable[[bool, object, str | None], dg.AssetsDefinition]] = {
    "-> Book": book_hint,
    "-> Book | None": optional_book_hint,
    "bare decorator": bare_decorator,
}


def _members(orders: pl.DataFrame | None) -> dict[str, object]:
    return {"orders": orders, "refunds": REFUNDS}


def _by_outcome(
    declared: Callable[[bool, pl.DataFrame | None, str], dg.AssetsDefinition],
) -> dict[str, dg.AssetsDefinition]:
    """Each outcome's asset, under its key prefix."""
    return {
        prefix: declared(*OUTCOMES[outcome], prefix) for outcome, prefix in OUTCOME_PREFIXES.items()
    }


@pytest.mark.parametrize("manager", KINDS)
@pytest.mark.parametrize("outcome", list(OUTCOMES))
@pytest.mark.parametrize("form", ["tuple", "typed dict", "asset out"])
def test_the_hinted_multi_asset_is_the_multi_asset_given_its_schemas(
    form: str, outcome: str, manager: str
) -> None:
    quarantine, orders = OUTCOMES[outcome]
    declare = MULTI_ASSET_FORMS[form]
    hinted, value = declare(quarantine, orders, None)
    given = given_outputs(quarantine, value)

    assert definition(hinted) == definition(given)
    # The six outcomes run together, once; two forms return the same dicts: the given
    # multi-asset's runs are made once for both.
    values = tuple((q, returned(declare(q, frame, None)[1])) for q, frame in OUTCOMES.values())
    prefix = OUTCOME_PREFIXES[outcome]
    hinted_runs = run_once(
        ("hinted multi-asset", form, manager),
        lambda folder: run_together(
            _by_outcome(lambda q, frame, p: declare(q, frame, p)[0]), folder, manager
        ),
    )
    given_runs = run_once(
        ("multi-asset", values, manager),
        lambda folder: run_together(
            _by_outcome(lambda q, frame, p: given_outputs(q, declare(q, frame, p)[1], p)),
            folder,
            manager,
        ),
    )
    assert hinted_runs[prefix] == given_runs[prefix]


@pytest.mark.parametrize("manager", KINDS)
@pytest.mark.parametrize("outcome", list(OUTCOMES))
@pytest.mark.parametrize("form", list(COLLECTION_FORMS))
def test_the_hinted_collection_asset_is_the_asset_given_its_collection(
    form: str, outcome: str, manager: str
) -> None:
    quarantine, orders = OUTCOMES[outcome]
    members = _members(orders)
    declare = COLLECTION_FORMS[form]
    hinted = declare(quarantine, members, None)
    given = given_collection(quarantine, members)

    assert definition(hinted) == definition(given)
    # The six outcomes run together, once; every form returns the same members: the given
    # Collection asset's runs are made once.
    values = tuple((q, returned(_members(frame))) for q, frame in OUTCOMES.values())
    prefix = OUTCOME_PREFIXES[outcome]
    hinted_runs = run_once(
        ("hinted collection asset", form, manager),
        lambda folder: run_together(
            _by_outcome(lambda q, frame, p: declare(q, _members(frame), p)), folder, manager
        ),
    )
    given_runs = run_once(
        ("collection asset", values, manager),
        lambda folder: run_together(
            _by_outcome(lambda q, frame, p: given_collection(q, _members(frame), p)),
            folder,
            manager,
        ),
    )
    assert hinted_runs[prefix] == given_runs[prefix]

"""A multi-asset's and a Collection asset's return hints, on parquet and DuckDB, against the
declarations given their schemas.

This module uses `from __future__ import annotations`, so every hint is a string the package
resolves as Dagster does. Per form of the hint (`-> tuple[...]` in the order of `outs`, a
`TypedDict` by output name, `dd.AssetOut(dy.DataFrame[S])`; `-> Book`, `-> Book | None` and a
bare `@dd.collection_asset`), and per outcome of the spec's six, the hinted asset and the one
given its schemas returning the same value have the same definition (specs, checks, metadata,
code versions, repository snapshot), and their runs the same events and stored rows.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd

from .compared_runs import KINDS, OUTCOMES, definition, returned, run, run_once
from .conftest import DAY_1, Orders
from .refund_book import Book, Refunds

pytestmark = pytest.mark.integration


class OrdersAndRefunds(TypedDict):
    orders: Annotated[pl.DataFrame, Orders]
    refunds: dy.DataFrame[Refunds]


REFUNDS = pl.DataFrame({"order_id": [f"first-{DAY_1}-eu-ok0"], "amount": [3.0]})


def given_outputs(quarantine: bool, value: object) -> dg.AssetsDefinition:
    """The multi-asset given each output's schema, returning `value`."""

    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(Orders, quarantine=quarantine),
            "refunds": dd.AssetOut(Refunds),
        }
    )
    def orders_and_refunds() -> Any:
        return value

    return orders_and_refunds


def tuple_hint(quarantine: bool, orders: pl.DataFrame | None) -> tuple[dg.AssetsDefinition, object]:
    @dd.multi_asset(outs={"orders": dd.AssetOut(quarantine=quarantine), "refunds": dd.AssetOut()})
    def orders_and_refunds() -> tuple[dy.DataFrame[Orders], dy.LazyFrame[Refunds] | None]:
        return orders, REFUNDS.lazy()  # type: ignore[return-value]

    return orders_and_refunds, (orders, REFUNDS.lazy())


def typed_dict_hint(
    quarantine: bool, orders: pl.DataFrame | None
) -> tuple[dg.AssetsDefinition, object]:
    @dd.multi_asset(outs={"orders": dd.AssetOut(quarantine=quarantine), "refunds": dd.AssetOut()})
    def orders_and_refunds() -> OrdersAndRefunds:
        return {"orders": orders, "refunds": REFUNDS}  # type: ignore[typeddict-item]

    return orders_and_refunds, {"orders": orders, "refunds": REFUNDS}


def asset_out_hints(
    quarantine: bool, orders: pl.DataFrame | None
) -> tuple[dg.AssetsDefinition, object]:
    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(dy.DataFrame[Orders], quarantine=quarantine),
            "refunds": dd.AssetOut(dy.LazyFrame[Refunds]),
        }
    )
    def orders_and_refunds() -> dict[str, pl.DataFrame | None]:
        return {"orders": orders, "refunds": REFUNDS}

    return orders_and_refunds, {"orders": orders, "refunds": REFUNDS}


MULTI_ASSET_FORMS: dict[
    str, Callable[[bool, pl.DataFrame | None], tuple[dg.AssetsDefinition, object]]
] = {
    "tuple": tuple_hint,
    "typed dict": typed_dict_hint,
    "asset out": asset_out_hints,
}
"""Each hinted form: the multi-asset it declares, and the value its function returns."""


def given_collection(quarantine: bool, members: object) -> dg.AssetsDefinition:
    @dd.collection_asset(Book, quarantine=quarantine)
    def book() -> Any:
        return members

    return book


def book_hint(quarantine: bool, members: object) -> dg.AssetsDefinition:
    @dd.collection_asset(quarantine=quarantine)
    def book() -> Book:
        return members  # type: ignore[return-value]

    return book


def optional_book_hint(quarantine: bool, members: object) -> dg.AssetsDefinition:
    @dd.collection_asset(quarantine=quarantine)
    def book() -> Book | None:
        return members  # type: ignore[return-value]

    return book


def bare_decorator(quarantine: bool, members: object) -> dg.AssetsDefinition:
    def book() -> Book:
        return members  # type: ignore[return-value]

    return dd.collection_asset(book, quarantine=quarantine)  # type: ignore[arg-type]


COLLECTION_FORMS: dict[str, Callable[[bool, object], dg.AssetsDefinition]] = {
    "-> Book": book_hint,
    "-> Book | None": optional_book_hint,
    "bare decorator": bare_decorator,
}


@pytest.mark.parametrize("manager", KINDS)
@pytest.mark.parametrize("outcome", list(OUTCOMES))
@pytest.mark.parametrize("form", ["tuple", "typed dict", "asset out"])
def test_the_hinted_multi_asset_is_the_multi_asset_given_its_schemas(
    tmp_path: Path, form: str, outcome: str, manager: str
) -> None:
    quarantine, orders = OUTCOMES[outcome]
    hinted, value = MULTI_ASSET_FORMS[form](quarantine, orders)
    given = given_outputs(quarantine, value)

    assert definition(hinted) == definition(given)
    # Two forms return the same dict: the given multi-asset's runs are made once for both.
    assert run(hinted, tmp_path / "hinted", manager) == run_once(
        ("multi-asset", quarantine, returned(value), manager),
        lambda folder: run(given, folder, manager),
    )


@pytest.mark.parametrize("manager", KINDS)
@pytest.mark.parametrize("outcome", list(OUTCOMES))
@pytest.mark.parametrize("form", list(COLLECTION_FORMS))
def test_the_hinted_collection_asset_is_the_asset_given_its_collection(
    tmp_path: Path, form: str, outcome: str, manager: str
) -> None:
    quarantine, orders = OUTCOMES[outcome]
    members = {"orders": orders, "refunds": REFUNDS}
    hinted = COLLECTION_FORMS[form](quarantine, members)
    given = given_collection(quarantine, members)

    assert definition(hinted) == definition(given)
    # Every form returns the same members: the given Collection asset's runs are made once.
    assert run(hinted, tmp_path / "hinted", manager) == run_once(
        ("collection asset", quarantine, returned(members), manager),
        lambda folder: run(given, folder, manager),
    )

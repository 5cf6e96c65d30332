"""The common mistakes with the decorators: each refused with the package's error and its fix.

A Dagster user carries `@dg.asset` habits over (`key=`, `check_specs=`, `output_required=`), or
forgets the schema. Each test calls a decorator the wrong way and asserts the message names
what to write instead; the error is also a `TypeError`, which Python raised before.
"""

from collections.abc import Callable
from typing import Any

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    CollectionNotSupportedError,
    InvalidDefinitionError,
    UnexpectedArgumentError,
)
from tests.schemas import OrderBook, Orders


def refusal(call: Callable[[], Any]) -> UnexpectedArgumentError:
    """The error `call` raises, checked to be the package's, a definition error and a TypeError."""
    with pytest.raises(UnexpectedArgumentError) as raised:
        call()
    assert isinstance(raised.value, InvalidDefinitionError)
    assert isinstance(raised.value, TypeError)
    return raised.value


@pytest.mark.parametrize(
    ("keyword", "value", "fix"),
    [
        ("key", ["sales", "orders"], "key_prefix='sales', name='orders'"),
        ("check_specs", [], "The checks come from the schema"),
        ("output_required", False, "return None to skip it"),
        ("dagster_type", None, "The schema is the type"),
        ("is_virtual", True, "dg.AssetSpec"),
        ("io_manager_def", None, "resource_defs={'io_manager': ...}"),
        ("compute_kind", "polars", "kinds={...}"),
    ],
)
def test_a_dg_asset_keyword_names_its_replacement(keyword: str, value: Any, fix: str) -> None:
    error = refusal(lambda: dd.asset(Orders, **{keyword: value}))

    assert str(error).startswith(f"dd.asset: `{keyword}=` is not one of its keywords. ")
    assert fix in str(error)


def test_a_misspelt_keyword_names_the_close_ones() -> None:
    error = refusal(lambda: dd.asset(Orders, quarantin=True))

    assert "Did you mean quarantine= or clear_quarantine=?" in str(error)


def test_multi_asset_specs_and_check_specs_name_dd_asset_out() -> None:
    specs = refusal(lambda: dd.multi_asset(outs={"orders": dd.AssetOut(Orders)}, specs=[]))
    checks = refusal(lambda: dd.multi_asset(outs={"orders": dd.AssetOut(Orders)}, check_specs=[]))

    assert "declare each as a dd.AssetOut under outs=" in str(specs)
    assert "The checks come from the schema" in str(checks)


def test_collection_asset_key_names_key_prefix() -> None:
    error = refusal(lambda: dd.collection_asset(OrderBook, key=["book"]))

    assert "`key_prefix=` plus the asset's name" in str(error)


def test_a_bare_decorator_names_the_schema_it_lacks() -> None:
    def orders() -> pl.DataFrame:
        return pl.DataFrame()

    asset = refusal(lambda: dd.asset(orders))  # `@dd.asset` without `(Orders)`
    collection = refusal(lambda: dd.collection_asset(orders))
    multi = refusal(lambda: dd.multi_asset(orders))  # type: ignore[call-arg]

    assert str(asset) == (
        "dd.asset: it was given the function 'orders' where its schema should be. "
        "Write @dd.asset(Orders) above `def orders(...)`, or annotate it "
        "`def orders(...) -> dy.DataFrame[Orders]`: a bare @dd.asset has no schema without "
        "such a hint."
    )
    assert "Write @dd.collection_asset(OrderBook) above `def orders(...)`" in str(collection)
    assert 'Write @dd.multi_asset(outs={"orders": dd.AssetOut(Orders)})' in str(multi)


def test_a_decorator_called_without_its_schema_names_it() -> None:
    def orders() -> pl.DataFrame:
        return pl.DataFrame()

    error = refusal(lambda: dd.asset(quarantine=True)(orders))

    assert str(error) == (
        "dd.asset: it was called without its schema, and the return hint of 'orders' names "
        "none. Write @dd.asset(Orders), or annotate `def orders(...) -> dy.DataFrame[Orders]`."
    )


def test_the_schema_by_keyword_says_it_is_positional() -> None:
    error = refusal(lambda: dd.asset(schema=Orders))  # type: ignore[call-arg]

    assert "`schema` is positional" in str(error)
    assert "Write it first, as in @dd.asset(Orders)" in str(error)


def test_a_collection_given_to_dd_asset_names_dd_collection_asset() -> None:
    with pytest.raises(CollectionNotSupportedError) as raised:
        dd.asset(OrderBook)  # type: ignore[arg-type]

    assert "dd.collection_asset(OrderBook)" in str(raised.value)


def test_a_correct_call_passes_through_with_the_front_ends_own_signature() -> None:
    @dd.asset(Orders, name="orders", key_prefix="sales")
    def orders() -> pl.DataFrame:
        return pl.DataFrame()

    assert orders.key == dg.AssetKey(["sales", "orders"])
    assert (dd.asset.__doc__ or "").startswith("Turn the decorated")
    assert dd.asset.__name__ == "asset"

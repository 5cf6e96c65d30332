"""`dd.collection_asset` reading its Collection from `-> OrderBook` declares `(OrderBook)`'s asset.

A property draws the members' rows (lines with and without an order, quantities that fail a
rule or a filter) and a form of the hint, declares the asset both ways and compares the
definitions and the runs. Then the refusals, each on its message: a hint naming another
Collection than the argument, a Collection in a form the package cannot read, a schema, and
neither argument nor hint.
"""

from typing import Any

import dataframely as dy
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    OutputHintError,
    SchemaHintMismatchError,
    UnexpectedArgumentError,
)
from tests.hinted_support import PROPERTY, TIME_LIMIT, declared, definition, run
from tests.schemas import BookOrders, OrderBook, Shop

ORDER_IDS = st.sampled_from(["a", "b", "c"])
MEMBERS = st.fixed_dictionaries(
    {
        "orders": st.lists(
            st.tuples(ORDER_IDS, st.sampled_from([1.0, -1.0])), max_size=3, unique_by=lambda r: r[0]
        ).map(
            lambda rows: pl.DataFrame(
                rows, schema={"order_id": pl.String, "amount": pl.Float64}, orient="row"
            )
        ),
        "lines": st.lists(
            st.tuples(ORDER_IDS, st.integers(1, 2), st.sampled_from([1, 0])), max_size=4
        ).map(
            lambda rows: pl.DataFrame(
                rows,
                schema={"order_id": pl.String, "line_no": pl.Int64, "quantity": pl.Int64},
                orient="row",
            )
        ),
    }
)
"""The members' rows: an amount or a quantity below its minimum, a line without an order, a
duplicate key, an order without lines; empty members too."""

HINTS = st.sampled_from([OrderBook, OrderBook | None])
"""The Collection class, optionally `| None` (the strings PEP 563 leaves are read in
integration_tests/test_hinted_outputs.py, whose module defines the Collection)."""


@TIME_LIMIT
@PROPERTY
@given(members=MEMBERS, hint=HINTS, quarantine=st.booleans(), skipped=st.booleans())
def test_the_hinted_collection_asset_is_the_asset_given_its_collection(
    tmp_path_factory: pytest.TempPathFactory,
    members: dict[str, pl.DataFrame],
    hint: object,
    quarantine: bool,
    skipped: bool,
) -> None:
    value = None if skipped else members
    given_collection = declared(
        dd.collection_asset(OrderBook, quarantine=quarantine),
        value,
        dict[str, pl.DataFrame],
        name="order_book",
    )
    hinted = declared(dd.collection_asset(quarantine=quarantine), value, hint, name="order_book")

    assert definition(hinted) == definition(given_collection)
    assert run(hinted, tmp_path_factory.mktemp("hinted")) == run(
        given_collection, tmp_path_factory.mktemp("given")
    )


def test_a_bare_decorator_on_a_hinted_function_declares_the_collection_asset() -> None:
    @dd.collection_asset
    def order_book() -> OrderBook:
        raise NotImplementedError

    @dd.collection_asset(OrderBook)
    def given() -> dict[str, pl.DataFrame]:
        raise NotImplementedError

    assert order_book.code_versions_by_key == given.code_versions_by_key
    assert list(order_book.check_specs) == list(given.check_specs)


def test_a_hint_naming_another_collection_than_the_argument_is_refused() -> None:
    def order_book() -> Shop:
        raise NotImplementedError

    with pytest.raises(SchemaHintMismatchError) as raised:
        dd.collection_asset(OrderBook)(order_book)

    assert str(raised.value) == (
        "'order_book' is declared with the Collection OrderBook but its return hint names "
        "Shop. Name one Collection: drop the decorator's Collection argument to use the "
        "hint's, or change the hint to name OrderBook."
    )


FIX = (
    "Annotate the Collection class itself, `-> OrderBook` (optionally `| None`), or pass it: "
    "`@dd.collection_asset(OrderBook)`."
)


@pytest.mark.parametrize(
    ("hint", "problem"),
    [
        (
            list[OrderBook],
            "`list[OrderBook]`, names a Collection in a form the package cannot read",
        ),
        (
            OrderBook | Shop,
            "`OrderBook | Shop`, names a Collection in a form the package cannot read",
        ),
        (
            dy.DataFrame[BookOrders],
            "`dy.DataFrame[BookOrders]`, names a schema, but a Collection asset returns the "
            "members of a Collection",
        ),
    ],
    ids=["list", "two-collections", "schema"],
)
def test_a_hint_naming_no_one_collection_is_refused(hint: object, problem: str) -> None:
    def order_book() -> Any:
        raise NotImplementedError

    order_book.__annotations__ = {"return": hint}

    for decorate in (dd.collection_asset(), dd.collection_asset):
        with pytest.raises(OutputHintError) as raised:
            decorate(order_book)

        assert str(raised.value) == f"The return hint of 'order_book', {problem}. {FIX}"


@pytest.mark.parametrize(
    "hint", [list[OrderBook], OrderBook | Shop, dy.DataFrame[BookOrders], dy.Collection]
)
def test_a_given_collection_leaves_a_hint_naming_no_one_collection_unread(hint: object) -> None:
    """Such a hint was accepted before the package read hints, and is not needed here."""

    def order_book() -> Any:
        raise NotImplementedError

    order_book.__annotations__ = {"return": hint}

    asset = dd.collection_asset(OrderBook)(order_book)

    assert {key.to_user_string() for key in asset.keys} == {"orders", "lines"}


def test_neither_a_collection_nor_a_hint_is_refused_with_both_fixes() -> None:
    def order_book() -> dict[str, pl.DataFrame]:
        raise NotImplementedError

    with pytest.raises(UnexpectedArgumentError) as raised:
        dd.collection_asset()(order_book)

    assert str(raised.value).endswith(
        "Write @dd.collection_asset(OrderBook), or annotate `def order_book(...) -> OrderBook`."
    )
    with pytest.raises(UnexpectedArgumentError, match="where its schema should be"):
        dd.collection_asset(order_book)  # type: ignore[arg-type]

"""The schema a return hint names: each accepted form, each refused one, and what names none.

The hints here are evaluated when each function is defined (no `from __future__ import
annotations`); `integration_tests/test_return_hints.py` reads the same forms as strings.
"""

from collections.abc import Callable
from typing import Annotated, Any, NotRequired, Optional, TypedDict

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

from dagster_dataframely._model.return_hints import (
    collection_from_return_hint,
    schema_from_return_hint,
    schemas_by_output,
)
from dagster_dataframely.errors import UnreadableReturnHintError
from tests.schemas import OrderBook, Orders


class Refunds(dy.Schema):
    refund_id = dy.String(primary_key=True)


def returning(hint: Any) -> Callable[[], None]:
    """A function whose return hint is `hint`."""

    def function() -> None: ...

    function.__annotations__ = {"return": hint}
    return function


ACCEPTED = {
    "DataFrame": dy.DataFrame[Orders],
    "LazyFrame": dy.LazyFrame[Orders],
    "Annotated DataFrame": Annotated[pl.DataFrame, Orders],
    "Annotated LazyFrame": Annotated[pl.LazyFrame, Orders],
    "Annotated with a note": Annotated[pl.DataFrame, "orders of the day", Orders],
    "MaterializeResult": dg.MaterializeResult[dy.DataFrame[Orders]],
    "lazy MaterializeResult": dg.MaterializeResult[dy.LazyFrame[Orders]],
    "DataFrame | None": dy.DataFrame[Orders] | None,
    "Optional LazyFrame": Optional[dy.LazyFrame[Orders]],  # noqa: UP045  # the older spelling
    "Annotated | None": Annotated[pl.LazyFrame, Orders] | None,
    "MaterializeResult | None": dg.MaterializeResult[dy.DataFrame[Orders]] | None,
    "either frame of one schema": dy.DataFrame[Orders] | dy.LazyFrame[Orders],
}


@pytest.mark.parametrize("hint", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_each_accepted_form_names_its_schema(hint: Any) -> None:
    assert schema_from_return_hint(returning(hint)) is Orders


NAMES_NONE = {
    "no hint": None,
    "DataFrame": pl.DataFrame,
    "LazyFrame | None": pl.LazyFrame | None,
    "MaterializeResult": dg.MaterializeResult[pl.DataFrame],
    "Annotated without a schema": Annotated[pl.DataFrame, "a note"],
    "Any": Any,
}


@pytest.mark.parametrize("hint", NAMES_NONE.values(), ids=NAMES_NONE.keys())
def test_a_hint_without_a_schema_names_none(hint: Any) -> None:
    function = returning(hint) if hint is not None else (lambda: None)

    assert schema_from_return_hint(function) is None


REFUSED = {
    "two schemas": (
        dy.DataFrame[Orders] | dy.DataFrame[Refunds],
        "`dy.DataFrame[Orders] | dy.DataFrame[Refunds]`, names more than one schema",
    ),
    "two schemas in Annotated": (
        Annotated[pl.DataFrame, Orders, Refunds],
        "`Annotated[pl.DataFrame, Orders, Refunds]`, names more than one schema",
    ),
    "a list": (
        list[dy.DataFrame[Orders]],
        "`list[dy.DataFrame[Orders]]`, names a schema in a form the package cannot read",
    ),
    "a Collection": (OrderBook, "`OrderBook`, names a dy.Collection, which is several tables"),
    "a Collection in Annotated": (
        Annotated[pl.DataFrame, OrderBook],
        "names a dy.Collection, which is several tables: declare it with dd.collection_asset",
    ),
    "the schema class": (Orders, "`Orders`, names a schema in a form the package cannot read"),
}


@pytest.mark.parametrize(("hint", "problem"), REFUSED.values(), ids=REFUSED.keys())
def test_an_unreadable_hint_is_refused_with_the_accepted_forms(hint: Any, problem: str) -> None:
    with pytest.raises(UnreadableReturnHintError) as raised:
        schema_from_return_hint(returning(hint))

    message = str(raised.value)
    assert message.startswith("The return hint of 'function', ")
    assert problem in message
    for form in ("dy.DataFrame[Orders]", "Annotated[pl.LazyFrame, Orders]", "| None"):
        assert form in message


def test_a_name_the_module_lacks_is_refused_unless_a_schema_was_given() -> None:
    function = returning("dy.DataFrame[Missing]")

    with pytest.raises(UnreadableReturnHintError, match="name 'Missing' is not defined"):
        schema_from_return_hint(function)
    assert schema_from_return_hint(function, must_resolve=False) is None


# --- the schema of each output of a multi-asset, the Collection of a Collection asset --------


class TwoOutputs(TypedDict):
    orders: dg.MaterializeResult[dy.DataFrame[Orders]]
    refunds: NotRequired[dy.LazyFrame[Refunds] | None]


@pytest.mark.parametrize(
    "hint",
    [
        tuple[dy.DataFrame[Orders], dy.LazyFrame[Refunds]],
        tuple[Annotated[pl.DataFrame, Orders], Optional[dy.DataFrame[Refunds]]],  # noqa: UP045
        tuple[dg.MaterializeResult[dy.DataFrame[Orders]], dy.DataFrame[Refunds] | None],
        TwoOutputs,
    ],
    ids=[
        "tuple",
        "Annotated and Optional entries",
        "MaterializeResult and | None entries",
        "TypedDict",
    ],
)
def test_each_output_gets_the_schema_its_entry_names(hint: Any) -> None:
    by_output = schemas_by_output(returning(hint), ["orders", "refunds"], needed=True)

    assert by_output == {"orders": Orders, "refunds": Refunds}


@pytest.mark.parametrize("hint", [dict[str, pl.DataFrame], pl.DataFrame, None])
def test_a_hint_naming_no_schema_gives_no_output_one(hint: Any) -> None:
    function = returning(hint) if hint is not None else (lambda: None)

    assert schemas_by_output(function, ["orders", "refunds"], needed=True) == {}


@pytest.mark.parametrize("hint", [OrderBook, Optional[OrderBook], OrderBook | None])  # noqa: UP045
def test_the_collection_class_names_the_collection(hint: Any) -> None:
    assert collection_from_return_hint(returning(hint), needed=True) is OrderBook


@pytest.mark.parametrize("hint", [dict[str, pl.DataFrame], "Missing"])
def test_a_hint_naming_no_collection_names_none_unless_it_must_resolve(hint: Any) -> None:
    assert collection_from_return_hint(returning(hint), needed=False) is None

"""The Polars type an input's dataframely hint stands for: each accepted form, each refused one.

`polars_input_hint` reads a parameter's hint with the return hints' parser and gives Dagster
the annotation the same parameter would have with the plain Polars type, so the IO managers,
which choose what to load from it, load exactly what they load today. A property draws the
accepted forms nested in each other and compares them with their plain spelling.
"""

from typing import Annotated, Any, Optional

import dataframely as dy
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dagster_dataframely._model.return_hints import polars_input_hint
from dagster_dataframely.errors import UnreadableInputHintError
from tests.schemas import OrderBook, Orders


class Refunds(dy.Schema):
    refund_id = dy.String(primary_key=True)


ACCEPTED = {
    "DataFrame": (dy.DataFrame[Orders], pl.DataFrame),
    "LazyFrame": (dy.LazyFrame[Orders], pl.LazyFrame),
    "Annotated DataFrame": (Annotated[pl.DataFrame, Orders], pl.DataFrame),
    "Annotated LazyFrame": (Annotated[pl.LazyFrame, Orders], pl.LazyFrame),
    "Annotated with a note": (Annotated[pl.DataFrame, "of the day", Orders], pl.DataFrame),
    "DataFrame | None": (dy.DataFrame[Orders] | None, pl.DataFrame | None),
    "Optional LazyFrame": (
        Optional[dy.LazyFrame[Orders]],  # noqa: UP045  # the older spelling
        pl.LazyFrame | None,
    ),
    "Annotated | None": (Annotated[pl.DataFrame, Orders] | None, pl.DataFrame | None),
    "partitions": (dict[str, dy.DataFrame[Orders]], dict[str, pl.DataFrame]),
    "lazy partitions": (dict[str, dy.LazyFrame[Orders]], dict[str, pl.LazyFrame]),
}


@pytest.mark.parametrize(("hint", "plain"), ACCEPTED.values(), ids=ACCEPTED.keys())
def test_each_accepted_form_stands_for_its_polars_type(hint: Any, plain: Any) -> None:
    assert polars_input_hint(hint, "summary", "orders") == plain


NAMES_NONE = {
    "DataFrame": pl.DataFrame,
    "LazyFrame | None": pl.LazyFrame | None,
    "partitions": dict[str, pl.DataFrame],
    "Annotated without a schema": Annotated[pl.DataFrame, "a note"],
    "int": int,
    "Any": Any,
}


@pytest.mark.parametrize("hint", NAMES_NONE.values(), ids=NAMES_NONE.keys())
def test_a_hint_without_a_schema_is_left_as_written(hint: Any) -> None:
    assert polars_input_hint(hint, "summary", "orders") is hint


REFUSED = {
    "two schemas": (
        dy.DataFrame[Orders] | dy.DataFrame[Refunds],
        "`dy.DataFrame[Orders] | dy.DataFrame[Refunds]`, names more than one schema",
    ),
    "two schemas in Annotated": (
        Annotated[pl.DataFrame, Orders, Refunds],
        "`Annotated[pl.DataFrame, Orders, Refunds]`, names more than one schema",
    ),
    "either frame": (
        dy.DataFrame[Orders] | dy.LazyFrame[Orders],
        "`dy.DataFrame[Orders] | dy.LazyFrame[Orders]`, names a schema in a form the package "
        "cannot read",
    ),
    "a list": (
        list[dy.DataFrame[Orders]],
        "`list[dy.DataFrame[Orders]]`, names a schema in a form the package cannot read",
    ),
    "a Collection": (
        OrderBook,
        "`OrderBook`, names a dy.Collection, whose members are assets of their own: annotate "
        "one input per member",
    ),
    "a Collection's partitions": (
        dict[str, Annotated[pl.DataFrame, OrderBook]],
        "`dict[str, Annotated[pl.DataFrame, OrderBook]]`, names a dy.Collection",
    ),
    "the schema class": (Orders, "`Orders`, names a schema in a form the package cannot read"),
}


@pytest.mark.parametrize(("hint", "problem"), REFUSED.values(), ids=REFUSED.keys())
def test_an_unreadable_hint_is_refused_with_the_accepted_forms(hint: Any, problem: str) -> None:
    with pytest.raises(UnreadableInputHintError) as raised:
        polars_input_hint(hint, "summary", "orders")

    message = str(raised.value)
    assert message.startswith("The hint of input 'orders' of 'summary', ")
    assert problem in message
    for form in ("`dy.DataFrame[Orders]`", "`Annotated[pl.LazyFrame, Orders]`", "`| None`"):
        assert form in message
    assert "`dict[str, ...]`" in message
    assert "`pl.DataFrame`" in message


@st.composite
def input_hints(draw: st.DrawFn) -> tuple[Any, Any]:
    """An accepted hint and the Polars annotation a user would write for the same input."""
    plain: Any = draw(st.sampled_from([pl.DataFrame, pl.LazyFrame]))
    typed = dy.DataFrame if plain is pl.DataFrame else dy.LazyFrame
    hint: Any = draw(
        st.sampled_from(
            [typed[Orders], Annotated[plain, Orders], Annotated[plain, "a note", Orders]]
        )
    )
    if draw(st.booleans()):
        hint, plain = hint | None, plain | None
    if draw(st.booleans()):
        hint, plain = dict[str, hint], dict[str, plain]
        if draw(st.booleans()):
            hint, plain = Optional[hint], Optional[plain]  # noqa: UP045  # both spellings
    return hint, plain


@given(input_hints())
def test_a_hinted_input_reads_as_its_plain_annotation(drawn: tuple[Any, Any]) -> None:
    hint, plain = drawn

    assert polars_input_hint(hint, "summary", "orders") == plain

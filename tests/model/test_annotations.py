"""A hint read through its aliases: a `type` alias or a `NewType` says what it names.

A type checker reads `-> OrdersFrame` (`type OrdersFrame = dy.DataFrame[Orders]`) as
`-> dy.DataFrame[Orders]`, so the package does too: for a return hint, a multi-asset's
entries, a Collection asset's hint and an input's hint. A property wraps every form of
`test_return_hints` and `test_input_hints` (accepted, naming none, refused) in aliases at any
depth, and compares what is read, or the whole refusal, with the form written out.

The `type` statement is Python 3.12 syntax and the package supports 3.11: its tests compile it
on 3.12 and later; typing_extensions' `TypeAliasType` is the same alias on every version.
"""

import sys
import textwrap
import types
import typing
from collections.abc import Callable
from typing import Annotated, Any, NewType, TypedDict, TypeVar

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
import typing_extensions
from hypothesis import given
from hypothesis import strategies as st

from dagster_dataframely._model.annotations import unaliased
from dagster_dataframely._model.return_hints import (
    collection_from_return_hint,
    polars_input_hint,
    schema_from_return_hint,
    schemas_by_output,
)
from dagster_dataframely.errors import UnreadableInputHintError, UnreadableReturnHintError
from tests.model import test_input_hints, test_return_hints
from tests.model.test_return_hints import Refunds, returning
from tests.schemas import OrderBook, Orders

TypeAliasType = typing_extensions.TypeAliasType
S = TypeVar("S", bound=dy.Schema)
T = TypeVar("T")

OrdersFrame = TypeAliasType("OrdersFrame", dy.DataFrame[Orders])
Frame = TypeAliasType("Frame", dy.DataFrame[S], type_params=(S,))
LazyOrNone = TypeAliasType("LazyOrNone", dy.LazyFrame[S] | None, type_params=(S,))
Tagged = TypeAliasType("Tagged", Annotated[pl.DataFrame, "tagged", S], type_params=(S,))
OrdersNewType = NewType("OrdersNewType", dy.DataFrame[Orders])  # type: ignore[valid-newtype]
OrdersSchema = TypeAliasType("OrdersSchema", Orders)
Written = TypeAliasType("Written", "dy.DataFrame[Orders] | None")
Book = TypeAliasType("Book", OrderBook)
Nested = TypeAliasType("Nested", "dy.DataFrame[Orders] | list[Nested]")
Json = TypeAliasType("Json", "dict[str, Json] | list[Json] | str | None")

ALIASED = {
    "a type alias": (OrdersFrame, dy.DataFrame[Orders]),
    "a generic alias": (Frame[Orders], dy.DataFrame[Orders]),
    "a generic alias of a union": (LazyOrNone[Orders], dy.LazyFrame[Orders] | None),
    "a generic alias into Annotated's metadata": (
        Tagged[Orders],
        Annotated[pl.DataFrame, "tagged", Orders],
    ),
    "a NewType": (OrdersNewType, dy.DataFrame[Orders]),
    "an alias of the schema": (dy.LazyFrame[OrdersSchema], dy.LazyFrame[Orders]),
    "an alias in Annotated's metadata": (
        Annotated[pl.DataFrame, OrdersSchema],
        Annotated[pl.DataFrame, Orders],
    ),
    "a value written as a string": (Written, dy.DataFrame[Orders] | None),
    "an alias | None": (OrdersFrame | None, dy.DataFrame[Orders] | None),
    "an alias in a MaterializeResult": (
        dg.MaterializeResult[Frame[Orders]],
        dg.MaterializeResult[dy.DataFrame[Orders]],
    ),
    "an alias of an alias": (
        TypeAliasType("Outer", dg.MaterializeResult[OrdersNewType] | None),
        dg.MaterializeResult[dy.DataFrame[Orders]] | None,
    ),
}


@pytest.mark.parametrize(("aliased", "plain"), ALIASED.values(), ids=ALIASED.keys())
def test_an_alias_reads_as_what_it_names(aliased: Any, plain: Any) -> None:
    assert unaliased(aliased) == plain
    assert schema_from_return_hint(returning(aliased)) is Orders


def test_a_hint_without_an_alias_is_returned_as_it_is() -> None:
    hint = Annotated[pl.DataFrame, "orders of the day", Orders] | None

    assert unaliased(hint) is hint


class AliasedOutputs(TypedDict):
    orders: OrdersFrame  # type: ignore[valid-type]
    refunds: LazyOrNone[Refunds]  # type: ignore[valid-type]


@pytest.mark.parametrize(
    "hint",
    [tuple[OrdersFrame, LazyOrNone[Refunds]], AliasedOutputs],
    ids=["tuple entries", "TypedDict fields"],
)
def test_a_multi_assets_entries_read_through_their_aliases(hint: Any) -> None:
    by_output = schemas_by_output(returning(hint), ["orders", "refunds"], needed=True)

    assert by_output == {"orders": Orders, "refunds": Refunds}


def test_a_collection_asset_reads_its_collection_through_an_alias() -> None:
    assert collection_from_return_hint(returning(Book | None), needed=True) is OrderBook


def test_an_inputs_hint_reads_through_its_aliases() -> None:
    assert (
        polars_input_hint(dict[str, LazyOrNone[Orders]], "summary", "orders")
        == dict[str, pl.LazyFrame | None]
    )


def test_an_input_aliased_without_a_schema_is_left_as_written() -> None:
    plain = TypeAliasType("Plain", pl.LazyFrame)

    assert polars_input_hint(plain, "summary", "orders") is plain


def test_a_recursive_alias_is_expanded_once_and_read_where_it_recurs() -> None:
    assert unaliased(Nested) == dy.DataFrame[Orders] | list[Nested]  # type: ignore[valid-type]
    with pytest.raises(UnreadableReturnHintError) as raised:
        schema_from_return_hint(returning(Nested))
    assert str(raised.value).startswith(
        "The return hint of 'function', `list[Nested]`, names a schema in a form the package "
        "cannot read. "
    )
    assert polars_input_hint(Json, "summary", "payload") is Json  # names no schema


def test_an_alias_naming_what_its_module_lacks_is_unreadable() -> None:
    missing = TypeAliasType("Missing", "dy.DataFrame[NoSuchSchema]")

    with pytest.raises(UnreadableReturnHintError) as raised:
        schema_from_return_hint(returning(missing))
    assert str(raised.value) == (
        "The return hint of 'function', `Missing`, does not resolve in its module (name "
        "'NoSuchSchema' is not defined): each name in a hint must be defined when the module "
        "runs, not only imported under `if TYPE_CHECKING:`. Annotate the function with one "
        "schema: `-> dy.DataFrame[Orders]`, `-> dy.LazyFrame[Orders]`, "
        "`-> Annotated[pl.DataFrame, Orders]`, `-> Annotated[pl.LazyFrame, Orders]` or "
        "`-> dg.MaterializeResult[dy.DataFrame[Orders]]` (or of `dy.LazyFrame[Orders]`), each "
        "optionally `| None`; or pass the schema: `@dd.asset(Orders)`."
    )
    assert schema_from_return_hint(returning(missing), must_resolve=False) is None
    with pytest.raises(UnreadableInputHintError) as input_refused:
        polars_input_hint(missing, "summary", "orders")
    assert str(input_refused.value).startswith(
        "The hint of input 'orders' of 'summary', `Missing`, does not resolve in its module "
        "(name 'NoSuchSchema' is not defined): "
    )


# --- the property: any aliases around any form read as the form itself ------------------------

Identity = TypeAliasType("Identity", T, type_params=(T,))
Optional_ = TypeAliasType("Optional_", T | None, type_params=(T,))


@st.composite
def wrapped(draw: st.DrawFn, hint: Any) -> tuple[Any, Any]:
    """`hint` with aliases drawn around it and its parts, and the same hint written out."""
    plain = hint
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin is Annotated and draw(st.booleans()):  # the frame aliased, the metadata as it is
        frame, plain_frame = draw(wrapped(arguments[0]))
        hint = Annotated[(frame, *arguments[1:])]
        plain = Annotated[(plain_frame, *arguments[1:])]
    elif origin is not Annotated and arguments and draw(st.booleans()):  # a generic's arguments
        parts = [draw(wrapped(argument)) for argument in arguments]
        aliased_parts = tuple(part[0] for part in parts)
        plain_parts = tuple(part[1] for part in parts)
        if origin in (typing.Union, types.UnionType):
            hint, plain = typing.Union[aliased_parts], typing.Union[plain_parts]  # noqa: UP007
        else:
            hint, plain = origin[aliased_parts], origin[plain_parts]
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["alias", "generic", "optional", "newtype"]))
        if kind == "alias":
            hint = TypeAliasType(f"Alias{draw(st.integers(0, 9))}", hint)
        elif kind == "generic":
            hint = Identity[hint]
        elif kind == "optional":
            hint, plain = Optional_[hint], plain | None
        else:
            hint = NewType("Renamed", hint)
    return hint, plain


def read_return(hint: Any) -> object:
    """What the return hint names, or its whole refusal."""
    try:
        return schema_from_return_hint(returning(hint))
    except UnreadableReturnHintError as error:
        return str(error)


def read_input(hint: Any) -> object:
    """The Polars type an input hinted so loads as, or its whole refusal."""
    try:
        return polars_input_hint(hint, "summary", "orders")
    except UnreadableInputHintError as error:
        return str(error)


RETURN_FORMS = [
    *test_return_hints.ACCEPTED.values(),
    *(hint for hint in test_return_hints.NAMES_NONE.values() if hint is not None),
    *(hint for hint, _ in test_return_hints.REFUSED.values()),
    dy.DataFrame[dy.Schema],
]
INPUT_FORMS = [
    *(hint for hint, _ in test_input_hints.ACCEPTED.values()),
    *(hint for hint, _ in test_input_hints.REFUSED.values()),
    dy.LazyFrame[dy.Schema] | None,
]


@given(st.sampled_from(RETURN_FORMS).flatmap(wrapped))
def test_any_aliases_around_a_return_hint_read_as_the_hint_itself(drawn: tuple[Any, Any]) -> None:
    aliased, plain = drawn

    assert read_return(aliased) == read_return(plain)


@given(st.sampled_from(INPUT_FORMS).flatmap(wrapped))
def test_any_aliases_around_an_input_hint_read_as_the_hint_itself(drawn: tuple[Any, Any]) -> None:
    aliased, plain = drawn

    assert read_input(aliased) == read_input(plain)


# --- the `type` statement itself, on Python 3.12 and later ------------------------------------

PEP_695 = textwrap.dedent(
    """
    import dataframely as dy
    import polars as pl
    from typing import Annotated

    from tests.schemas import Orders

    type OrdersFrame = dy.DataFrame[Orders]
    type Frame[S: dy.Schema] = dy.LazyFrame[S] | None
    type Tagged[S: dy.Schema] = Annotated[pl.DataFrame, S]
    type Later = dy.DataFrame[DefinedAfter]
    type Never = dy.DataFrame[NoSuchSchema]


    class DefinedAfter(dy.Schema):
        key = dy.Int64(primary_key=True)
    """
)


def _pep_695() -> dict[str, Any]:
    """The aliases above, compiled at run time: the module must import on Python 3.11."""
    namespace: dict[str, Any] = {"__name__": "tests.model.pep_695_aliases"}
    exec(compile(PEP_695, "<pep 695 aliases>", "exec"), namespace)  # 3.12 syntax
    return namespace


@pytest.mark.skipif(
    sys.version_info < (3, 12),
    reason="the `type` statement is Python 3.12 syntax; TypeAliasType covers it on 3.11",
)
def test_the_type_statements_aliases_read_as_what_they_name() -> None:
    aliases = _pep_695()

    def read(hint: Any) -> Callable[[], None]:
        return returning(hint)

    assert schema_from_return_hint(read(aliases["OrdersFrame"])) is Orders
    assert schema_from_return_hint(read(aliases["Frame"][Orders])) is Orders
    assert schema_from_return_hint(read(aliases["Tagged"][Orders])) is Orders
    assert schema_from_return_hint(read(aliases["Later"])) is aliases["DefinedAfter"]
    assert polars_input_hint(aliases["Frame"][Orders], "summary", "orders") == pl.LazyFrame | None
    with pytest.raises(UnreadableReturnHintError, match="name 'NoSuchSchema' is not defined"):
        schema_from_return_hint(read(aliases["Never"]))


def test_an_alias_whose_value_is_no_expression_is_unreadable() -> None:
    note = TypeAliasType("Note", "of the day")

    with pytest.raises(UnreadableReturnHintError) as raised:
        schema_from_return_hint(returning(dy.DataFrame[Orders] | note))
    assert str(raised.value).startswith(
        "The return hint of 'function', `dy.DataFrame[Orders] | Note`, cannot be read as a type "
        "(Forward reference must be an expression -- got 'of the day'). "
    )

"""`dy.Schema` and `dy.Collection` themselves are refused wherever a schema is taken.

Both pass every `issubclass` check a schema or a Collection passes, and neither declares a
column: an asset declared on `dy.Schema` kept no column of any row, so a run through Dagster's
default manager stored a `(0, 0)` table and quarantined nothing. Each entry point refuses them
when the asset or check is declared, with the error it raises for any other wrong schema: a
`SchemaTypeError` for an argument, a hint's own error for a hint (`UnreadableReturnHintError`,
`OutputHintError`, `UnreadableInputHintError`), a `ComponentFieldError` for the YAML
(`test_table_checks_component`), each saying what was given, why, and to name a subclass.
"""

from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    OutputHintError,
    SchemaTypeError,
    UnreadableInputHintError,
    UnreadableReturnHintError,
)
from tests.schemas import OrderBook, Orders

SCHEMA_GIVEN = (
    "Expected a dataframely Schema class (a subclass of dy.Schema), got dy.Schema: the base "
    "class itself declares no column, so a frame validated against it keeps no column and no "
    "row. Pass a subclass of dy.Schema that declares the frame's columns."
)
COLLECTION_GIVEN = (
    "Expected a dataframely Collection class (a subclass of dy.Collection), got dy.Collection: "
    "the base class itself declares no member, so there is no table to validate. Pass a "
    "subclass of dy.Collection that declares its members."
)
SCHEMA_HINTED = (
    "names dy.Schema: the base class itself declares no column, so a frame validated against it "
    "keeps no column and no row; name a subclass of dy.Schema that declares the frame's columns"
)
RETURN_FORMS = (
    "Annotate the function with one schema: `-> dy.DataFrame[Orders]`, "
    "`-> dy.LazyFrame[Orders]`, `-> Annotated[pl.DataFrame, Orders]`, "
    "`-> Annotated[pl.LazyFrame, Orders]` or "
    "`-> dg.MaterializeResult[dy.DataFrame[Orders]]` (or of `dy.LazyFrame[Orders]`), each "
    "optionally `| None`; or pass the schema: `@dd.asset(Orders)`."
)
OUT_FORMS = (
    "`dd.AssetOut(Orders)`) or its frame hint (`dd.AssetOut(dy.DataFrame[Orders])`, or "
    "`dy.LazyFrame[Orders]`)"
)


def orders() -> pl.DataFrame:
    return pl.DataFrame({"order_id": ["a"], "amount": [1.0]})


@dg.asset
def raw_orders() -> pl.DataFrame:
    return orders()


ERROR = dg.AssetCheckSeverity.ERROR
FRAME = pl.DataFrame({"order_id": ["a"], "amount": [1.0]})

ARGUMENTS: dict[str, Callable[[Any], object]] = {
    "dd.asset": lambda schema: dd.asset(schema)(orders),
    "dd.asset with settings": lambda schema: dd.asset(schema, quarantine=True)(orders),
    "dd.table_checks": lambda schema: dd.table_checks(schema, raw_orders, severity=ERROR),
    "dd.quarantine_spec": lambda schema: dd.quarantine_spec(schema, raw_orders),
    "dd.wiring.check_specs": lambda schema: dd.wiring.check_specs(schema, asset="orders"),
    "dd.wiring.schema_version": dd.wiring.schema_version,
    "dd.wiring.schema_metadata": dd.wiring.schema_metadata,
    "dd.wiring.table_schema": dd.wiring.table_schema,
    "dd.wiring.validation_results": lambda schema: list(
        dd.wiring.validation_results(schema, FRAME, valid_key=dg.AssetKey("orders"))
    ),
    "dd.wiring.check_results": lambda schema: list(
        dd.wiring.check_results(schema, FRAME, asset_key="orders", severity=ERROR)
    ),
}


@pytest.mark.parametrize("declare", ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_dy_schema_itself_is_refused_as_an_argument(declare: Callable[[Any], object]) -> None:
    with pytest.raises(SchemaTypeError) as raised:
        declare(dy.Schema)

    assert str(raised.value) == SCHEMA_GIVEN
    assert raised.value.given == "dy.Schema"


class NoColumns(dy.Schema):
    """An abstract base of the user's: a subclass that declares no column."""


NO_COLUMNS_GIVEN = (
    "Expected a dataframely Schema class (a subclass of dy.Schema), got NoColumns: NoColumns "
    "declares no column, so a frame validated against it keeps no column and no row. Declare "
    "the frame's columns on NoColumns, or pass the subclass that declares them."
)


@pytest.mark.parametrize("declare", ARGUMENTS.values(), ids=ARGUMENTS.keys())
def test_a_subclass_declaring_no_column_is_refused_as_the_base_class_is(
    declare: Callable[[Any], object],
) -> None:
    with pytest.raises(SchemaTypeError) as raised:
        declare(NoColumns)

    assert str(raised.value) == NO_COLUMNS_GIVEN


def test_a_return_hint_naming_a_subclass_without_columns_is_refused() -> None:
    def hinted() -> dy.DataFrame[NoColumns]:
        raise AssertionError("never called")

    with pytest.raises(SchemaTypeError) as raised:
        dd.asset(hinted)

    assert str(raised.value) == NO_COLUMNS_GIVEN


def test_dy_collection_itself_is_refused_where_one_schema_goes() -> None:
    with pytest.raises(SchemaTypeError) as raised:
        dd.asset(dy.Collection)(orders)  # type: ignore[call-overload]

    assert str(raised.value) == (
        "Expected a dataframely Schema class (a subclass of dy.Schema), got dy.Collection: the "
        "base class itself declares no member, so there is no table to validate. Pass a "
        "subclass of dy.Schema that declares the frame's columns."
    )


COLLECTION_ARGUMENTS: dict[str, Callable[[], object]] = {
    "dd.collection_asset": lambda: dd.collection_asset(dy.Collection)(lambda: None),
    "dd.table_checks": lambda: dd.table_checks(dy.Collection, {"orders": "o"}, severity=ERROR),
    "dd.quarantine_spec": lambda: dd.quarantine_spec(dy.Collection, "book/orders"),
}


@pytest.mark.parametrize("declare", COLLECTION_ARGUMENTS.values(), ids=COLLECTION_ARGUMENTS.keys())
def test_dy_collection_itself_is_refused_as_a_collection(declare: Callable[[], object]) -> None:
    with pytest.raises(SchemaTypeError) as raised:
        declare()

    assert str(raised.value) == COLLECTION_GIVEN


@pytest.mark.parametrize(
    ("given", "shown"),
    [(dy.Schema, "dy.Schema"), (dy.DataFrame[dy.Schema], "dy.DataFrame[dy.Schema]")],
    ids=["the class", "its frame hint"],
)
@pytest.mark.parametrize(
    "declare",
    [dd.AssetOut, lambda schema: dd.AssetOut.from_spec(schema, dg.AssetSpec("orders"))],
    ids=["dd.AssetOut", "dd.AssetOut.from_spec"],
)
def test_an_output_refuses_dy_schema_itself_and_a_hint_naming_it(
    declare: Callable[[Any], object], given: Any, shown: str
) -> None:
    with pytest.raises(SchemaTypeError) as raised:
        declare(given)

    assert str(raised.value) == (
        f"Expected a dataframely Schema class ({OUT_FORMS}, got `{shown}`: the base class itself "
        "declares no column, so a frame validated against it keeps no column and no row. Pass a "
        "subclass of dy.Schema that declares the frame's columns."
    )


def _frame_of_the_base() -> dy.DataFrame[dy.Schema]:
    raise NotImplementedError


def _lazy_of_the_base() -> dg.MaterializeResult[dy.LazyFrame[dy.Schema]] | None:
    raise NotImplementedError


def _annotated_base() -> Annotated[pl.DataFrame, dy.Schema]:
    raise NotImplementedError


@pytest.mark.parametrize(
    ("function", "shown"),
    [
        (_frame_of_the_base, "dy.DataFrame[dy.Schema]"),
        (_lazy_of_the_base, "dy.LazyFrame[dy.Schema]"),  # the part that names it
        (_annotated_base, "Annotated[pl.DataFrame, dy.Schema]"),
    ],
    ids=["DataFrame", "MaterializeResult | None", "Annotated"],
)
def test_a_bare_decorator_refuses_a_return_hint_naming_dy_schema(
    function: Callable[[], object], shown: str
) -> None:
    for decorate in (dd.asset, dd.asset(quarantine=True)):
        with pytest.raises(UnreadableReturnHintError) as raised:
            decorate(function)  # type: ignore[operator]

        assert str(raised.value) == (
            f"The return hint of {function.__name__!r}, `{shown}`, {SCHEMA_HINTED}. {RETURN_FORMS}"
        )


class BaseOutputs(TypedDict):
    orders: dy.DataFrame[Orders]
    anything: dy.LazyFrame[dy.Schema]


def _tuple_naming_the_base() -> tuple[dy.DataFrame[Orders], dy.LazyFrame[dy.Schema]]:
    raise NotImplementedError


def _typed_dict_naming_the_base() -> BaseOutputs:
    raise NotImplementedError


MULTI_FORMS = (
    "Annotate one entry per output, in the order of outs: `-> tuple[dy.DataFrame[Orders], "
    "dy.DataFrame[Lines]]`; or a TypedDict with one field per output name, each such as "
    "`orders: dy.DataFrame[Orders]`; or give each dd.AssetOut its schema: `dd.AssetOut(Orders)`."
)


@pytest.mark.parametrize(
    ("function", "shown"),
    [
        (_tuple_naming_the_base, "tuple[dy.DataFrame[Orders], dy.LazyFrame[dy.Schema]]"),
        (_typed_dict_naming_the_base, "BaseOutputs"),
    ],
    ids=["tuple", "TypedDict"],
)
def test_a_multi_asset_refuses_an_entry_naming_dy_schema(
    function: Callable[[], object], shown: str
) -> None:
    decorator = dd.multi_asset(outs={"orders": dd.AssetOut(), "anything": dd.AssetOut()})

    with pytest.raises(OutputHintError) as raised:
        decorator(function)  # type: ignore[arg-type]

    assert str(raised.value) == (
        f"The return hint of {function.__name__!r}, `{shown}`, gives the output 'anything' "
        f"`dy.LazyFrame[dy.Schema]`, which {SCHEMA_HINTED}. {MULTI_FORMS}"
    )


def _the_base_collection() -> dy.Collection | None:
    raise NotImplementedError


def test_a_bare_collection_asset_refuses_a_hint_naming_dy_collection() -> None:
    for decorate in (dd.collection_asset, dd.collection_asset(quarantine=True)):
        with pytest.raises(OutputHintError) as raised:
            decorate(_the_base_collection)  # type: ignore[operator]

        assert str(raised.value) == (
            "The return hint of '_the_base_collection', `dy.Collection | None`, names "
            "dy.Collection: the base class itself declares no member, so there is no table to "
            "validate; name a subclass of dy.Collection that declares its members. Annotate the "
            "Collection class itself, `-> OrderBook` (optionally `| None`), or pass it: "
            "`@dd.collection_asset(OrderBook)`."
        )


def test_given_its_collection_the_decorator_leaves_a_hint_naming_the_base_unread() -> None:
    """As for any hint it cannot read: the argument decides, and it declares no column less."""
    declared = dd.collection_asset(OrderBook)(_the_base_collection)

    assert {key.to_user_string() for key in declared.keys} == {"orders", "lines"}


@pytest.mark.parametrize(
    ("hint", "shown"),
    [
        (dy.DataFrame[dy.Schema], "dy.DataFrame[dy.Schema]"),
        (dy.LazyFrame[dy.Schema] | None, "dy.LazyFrame[dy.Schema] | None"),
        (dict[str, dy.DataFrame[dy.Schema]], "dict[str, dy.DataFrame[dy.Schema]]"),
    ],
    ids=["DataFrame", "LazyFrame | None", "partitions"],
)
def test_an_inputs_hint_naming_dy_schema_is_refused(hint: Any, shown: str) -> None:
    def summary(orders: pl.DataFrame) -> dy.DataFrame[Orders]:
        raise NotImplementedError

    summary.__annotations__["orders"] = hint

    with pytest.raises(UnreadableInputHintError) as raised:
        dd.asset(summary)

    assert str(raised.value) == (
        f"The hint of input 'orders' of 'summary', `{shown}`, {SCHEMA_HINTED}. Annotate the "
        "input with one schema: `dy.DataFrame[Orders]`, `dy.LazyFrame[Orders]`, "
        "`Annotated[pl.DataFrame, Orders]` or `Annotated[pl.LazyFrame, Orders]`, each optionally "
        "`| None`, or a `dict[str, ...]` of one of them to read several partitions; or with its "
        "Polars type, `pl.DataFrame`."
    )


def test_a_member_of_dy_schema_itself_is_refused_naming_the_member() -> None:
    class Loose(dy.Collection):
        orders: dy.LazyFrame[Orders]
        anything: dy.LazyFrame[dy.Schema]

    with pytest.raises(SchemaTypeError) as raised:
        dd.collection_asset(Loose)(lambda: None)

    assert str(raised.value) == SCHEMA_GIVEN
    assert raised.value.__notes__ == [
        "The schema is that of member 'anything' of Collection 'Loose'."
    ]

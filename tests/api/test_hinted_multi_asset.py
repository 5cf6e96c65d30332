"""`dd.multi_asset` reading each output's schema from its return hint declares `dd.AssetOut(S)`.

A property draws two schemas and rules (`rule_grammar`), a frame and an outcome per output,
and a form of the hint (a tuple in the order of `outs`, a `TypedDict` by output name, or the
frame hint in `dd.AssetOut` itself), declares the multi-asset both ways and compares the
definitions and the runs. Then the refusals, each on its message: a hint naming another schema
than an output's `dd.AssetOut`, a tuple of another length, a `TypedDict` missing an output, a
hint that does not say which output is which, and an output no hint gives a schema.
"""

from pathlib import Path
from typing import Annotated, Any, NotRequired, TypedDict

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    MultiAssetReturnError,
    OutputHintError,
    SchemaHintMismatchError,
    SchemaTypeError,
)
from tests.hinted_support import OUTCOMES, PROPERTY, TIME_LIMIT, declared, definition, returned, run
from tests.rule_grammar import FRAMES, schemas
from tests.schemas import BookLines, OrderBook, Orders

FORMS = st.sampled_from(["tuple", "typed dict", "asset out"])
"""Where the hint names each output's schema: the return hint (as a tuple or a TypedDict), or
the frame hint passed to `dd.AssetOut` in place of the schema."""


@TIME_LIMIT
@PROPERTY
@given(
    data=st.data(),
    first=schemas(),
    second=schemas(),
    frames=st.tuples(FRAMES, FRAMES),
    outcomes=st.tuples(OUTCOMES, OUTCOMES),
    form=FORMS,
)
def test_the_hinted_multi_asset_is_the_multi_asset_given_its_schemas(
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    first: type[dy.Schema],
    second: type[dy.Schema],
    frames: tuple[pl.DataFrame, pl.DataFrame],
    outcomes: tuple[str, str],
    form: str,
) -> None:
    values = (
        returned(first, frames[0], outcomes[0]),
        returned(second, frames[1], outcomes[1]),
    )
    quarantine = data.draw(st.booleans())
    frame = data.draw(st.sampled_from([dy.DataFrame, dy.LazyFrame]))
    value: object = dict(zip(("first", "second"), values, strict=True))
    hint: object = dict[str, pl.DataFrame]
    if form == "tuple":
        value, hint = values, tuple[frame[first], frame[second] | None]  # type: ignore[index]
    elif form == "typed dict":
        fields = {"first": frame[first], "second": frame[second]}  # type: ignore[index]
        hint = TypedDict("Outputs", fields)  # type: ignore[misc]
    schema_or_hint = (frame[first], frame[second]) if form == "asset out" else (None, None)  # type: ignore[index]

    given_schemas = declared(
        dd.multi_asset(
            outs={
                "first": dd.AssetOut(first, quarantine=quarantine),
                "second": dd.AssetOut(second),
            }
        ),
        value,
        dict[str, pl.DataFrame],
    )
    hinted = declared(
        dd.multi_asset(
            outs={
                "first": dd.AssetOut(schema_or_hint[0], quarantine=quarantine),
                "second": dd.AssetOut(schema_or_hint[1]),
            }
        ),
        value,
        hint,
    )

    assert definition(hinted) == definition(given_schemas)
    assert run(hinted, tmp_path_factory.mktemp("hinted")) == run(
        given_schemas, tmp_path_factory.mktemp("given")
    )


ORDERS = pl.DataFrame({"order_id": ["a", "b"], "amount": [1.0, -1.0]})
LINES = pl.DataFrame({"order_id": ["a"], "line_no": [1], "quantity": [2]})


class OrdersAndLines(TypedDict):
    orders: dy.DataFrame[Orders]
    lines: NotRequired[Annotated[pl.LazyFrame, BookLines]]


def test_a_typed_dict_names_each_output_by_its_field() -> None:
    @dd.multi_asset(outs={"lines": dd.AssetOut(), "orders": dd.AssetOut(quarantine=True)})
    def orders_and_lines() -> OrdersAndLines:
        return {"orders": ORDERS}  # type: ignore[typeddict-item]

    @dd.multi_asset(
        outs={"lines": dd.AssetOut(BookLines), "orders": dd.AssetOut(Orders, quarantine=True)}
    )
    def given() -> dict[str, pl.DataFrame]:
        return {"orders": ORDERS}

    assert orders_and_lines.code_versions_by_key == given.code_versions_by_key
    assert list(orders_and_lines.specs) == list(given.specs)
    assert list(orders_and_lines.check_specs) == list(given.check_specs)


def test_a_returned_tuple_fills_the_outputs_in_the_order_of_outs(tmp_path: Path) -> None:
    @dd.multi_asset(outs={"orders": dd.AssetOut(quarantine=True), "lines": dd.AssetOut()})
    def orders_and_lines() -> tuple[dy.DataFrame[Orders], dy.LazyFrame[BookLines]]:
        return ORDERS, LINES.lazy()  # type: ignore[return-value]

    result = dg.materialize(
        [orders_and_lines],
        resources={"io_manager": dg.FilesystemIOManager(base_dir=str(tmp_path))},
    )

    assert result.output_for_node("orders_and_lines", "orders").to_dicts() == [
        {"order_id": "a", "amount": 1.0}
    ]
    assert result.output_for_node("orders_and_lines", "lines").equals(LINES)


def test_a_returned_tuple_of_another_length_fails_the_step() -> None:
    @dd.multi_asset(outs={"orders": dd.AssetOut(Orders), "lines": dd.AssetOut(BookLines)})
    def orders_and_lines() -> Any:
        return (ORDERS,)

    with pytest.raises(MultiAssetReturnError) as raised:
        dg.materialize([orders_and_lines])

    assert "returned a tuple of 1 values for its 2 outputs" in str(raised.value)
    assert "in the order of outs" in str(raised.value)


def test_a_hint_naming_another_schema_than_the_asset_out_is_refused() -> None:
    def orders_and_lines() -> tuple[dy.DataFrame[BookLines], dy.DataFrame[BookLines]]:
        raise NotImplementedError

    decorator = dd.multi_asset(
        outs={"orders": dd.AssetOut(Orders), "lines": dd.AssetOut(BookLines)}
    )
    with pytest.raises(SchemaHintMismatchError) as raised:
        decorator(orders_and_lines)

    assert str(raised.value) == (
        "The output 'orders' of 'orders_and_lines' is declared with the schema Orders but the "
        "return hint names BookLines for it. Name one schema: write its dd.AssetOut without "
        "the schema to use the hint's, or change the hint to name Orders."
    )


FIX = (
    "Annotate one entry per output, in the order of outs: "
    "`-> tuple[dy.DataFrame[Orders], dy.DataFrame[Lines]]`; or a TypedDict with one field per "
    "output name, each such as `orders: dy.DataFrame[Orders]`; or give each dd.AssetOut its "
    "schema: `dd.AssetOut(Orders)`."
)


class OrdersOnly(TypedDict):
    orders: dy.DataFrame[Orders]
    refunds: dy.DataFrame[Orders]


@pytest.mark.parametrize(
    ("hint", "message"),
    [
        (
            tuple[dy.DataFrame[Orders]],
            "The return hint of 'orders_and_lines', `tuple[dy.DataFrame[Orders]]`, has 1 entry "
            "for the 2 outputs 'orders', 'lines'.",
        ),
        (
            tuple[dy.DataFrame[Orders], ...],
            "The return hint of 'orders_and_lines', `tuple[dy.DataFrame[Orders], Ellipsis]`, is "
            "a tuple of any length, which does not say which entry is which output.",
        ),
        (
            OrdersOnly,
            "The return hint of 'orders_and_lines', `OrdersOnly`, has no field for the outputs "
            "'lines' and has fields 'refunds' that are no output (the outputs are 'orders', "
            "'lines').",
        ),
        (
            dy.DataFrame[Orders],
            "The return hint of 'orders_and_lines', `dy.DataFrame[Orders]`, names schemas "
            "without saying which of the outputs 'orders', 'lines' follows which.",
        ),
        (
            dict[str, dy.DataFrame[Orders]],
            "The return hint of 'orders_and_lines', `dict[str, dy.DataFrame[Orders]]`, names "
            "schemas without saying which of the outputs 'orders', 'lines' follows which.",
        ),
        (
            tuple[dy.DataFrame[Orders], list[dy.DataFrame[BookLines]]],
            "The return hint of 'orders_and_lines', `tuple[dy.DataFrame[Orders], "
            "list[dy.DataFrame[BookLines]]]`, gives the output 'lines' "
            "`list[dy.DataFrame[BookLines]]`, which names a schema in a form the package "
            "cannot read.",
        ),
        (
            tuple[dy.DataFrame[Orders], pl.DataFrame],
            "The return hint of 'orders_and_lines', `tuple[dy.DataFrame[Orders], "
            "pl.DataFrame]`, names no schema for the output 'lines', whose dd.AssetOut has "
            "none.",
        ),
        (
            dict[str, pl.DataFrame],
            "The return hint of 'orders_and_lines', `dict[str, pl.DataFrame]`, names no schema "
            "for the output 'orders', whose dd.AssetOut has none.",
        ),
    ],
    ids=[
        "short-tuple",
        "any-length",
        "typed-dict-fields",
        "one-frame",
        "dict",
        "unreadable-entry",
        "no-schema-entry",
        "no-schema",
    ],
)
def test_a_hint_that_does_not_give_each_output_its_schema_is_refused(
    hint: object, message: str
) -> None:
    def orders_and_lines() -> Any:
        raise NotImplementedError

    orders_and_lines.__annotations__ = {"return": hint}
    decorator = dd.multi_asset(outs={"orders": dd.AssetOut(), "lines": dd.AssetOut()})

    with pytest.raises(OutputHintError) as raised:
        decorator(orders_and_lines)

    assert str(raised.value) == f"{message} {FIX}"


def test_outputs_given_their_schemas_keep_an_unhinted_function_as_it_was() -> None:
    @dd.multi_asset(outs={"orders": dd.AssetOut(Orders)})
    def orders() -> dict[str, pl.DataFrame]:
        return {"orders": ORDERS}

    assert orders.code_versions_by_key[orders.keys_by_output_name["orders"]] == (
        dd.wiring.schema_version(Orders)
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [(pl.DataFrame, "pl.DataFrame"), (list[dy.DataFrame[Orders]], "list[dy.DataFrame[Orders]]")],
)
def test_an_asset_out_given_something_else_than_a_schema_or_its_hint_is_refused(
    value: object, shown: str
) -> None:
    with pytest.raises(SchemaTypeError) as raised:
        dd.AssetOut(value)  # type: ignore[arg-type]

    assert str(raised.value) == (
        "Expected a dataframely Schema class (`dd.AssetOut(Orders)`) or its frame hint "
        "(`dd.AssetOut(dy.DataFrame[Orders])`, or `dy.LazyFrame[Orders]`), got "
        f"`{shown}`. Pass the class "
        "itself, not an instance or a frame."
    )


def test_an_asset_out_given_a_collection_is_pointed_to_the_collection_asset() -> None:
    with pytest.raises(dd.errors.CollectionNotSupportedError, match=r"dd\.collection_asset"):
        dd.AssetOut(OrderBook)  # type: ignore[arg-type]


def test_a_name_in_the_hint_that_does_not_resolve_is_refused_with_the_forms() -> None:
    def orders_and_lines() -> Any:
        raise NotImplementedError

    orders_and_lines.__annotations__ = {"return": "tuple[dy.DataFrame[Missing], Missing]"}
    decorator = dd.multi_asset(outs={"orders": dd.AssetOut(), "lines": dd.AssetOut()})

    with pytest.raises(OutputHintError) as raised:
        decorator(orders_and_lines)

    assert str(raised.value) == (
        "The return hint of 'orders_and_lines', `tuple[dy.DataFrame[Missing], Missing]`, does "
        "not resolve in its module (name 'Missing' is not defined): each name in a hint must be "
        f"defined when the module runs, not only imported under `if TYPE_CHECKING:`. {FIX}"
    )


def test_outputs_given_their_schemas_ignore_a_hint_that_does_not_resolve() -> None:
    def orders() -> Any:
        return {"orders": ORDERS}

    orders.__annotations__ = {"return": "Missing"}

    asset = dd.multi_asset(outs={"orders": dd.AssetOut(Orders)})(orders)

    assert asset.code_versions_by_key[asset.keys_by_output_name["orders"]] == (
        dd.wiring.schema_version(Orders)
    )


def test_a_subset_run_of_a_tuple_returning_multi_asset_writes_the_selected_output(
    tmp_path: Path,
) -> None:
    @dd.multi_asset(outs={"orders": dd.AssetOut(), "lines": dd.AssetOut()}, can_subset=True)
    def orders_and_lines() -> tuple[dy.DataFrame[Orders], dy.DataFrame[BookLines]]:
        return ORDERS.head(1), LINES  # type: ignore[return-value]

    result = dg.materialize(
        [orders_and_lines],
        resources={"io_manager": dg.FilesystemIOManager(base_dir=str(tmp_path))},
        selection=[dg.AssetKey("lines")],
    )

    assert [e.asset_key for e in result.get_asset_materialization_events()] == [
        dg.AssetKey("lines")
    ]
    assert result.output_for_node("orders_and_lines", "lines").equals(LINES)


@pytest.mark.parametrize(
    "hint",
    [
        dy.DataFrame[Orders],
        dy.LazyFrame[Orders],
        Annotated[pl.DataFrame, Orders],
        Annotated[pl.LazyFrame, Orders],
        dy.DataFrame[Orders] | None,
        dg.MaterializeResult[dy.DataFrame[Orders]],
    ],
)
def test_an_asset_out_reads_each_of_dd_asset_s_hints_as_its_schema(hint: Any) -> None:
    out = dd.AssetOut(hint, quarantine=True)

    assert out.schema is Orders
    assert out.settings == dd.AssetOut(Orders, quarantine=True).settings


def test_from_spec_takes_the_frame_hint_in_place_of_the_schema() -> None:
    out = dd.AssetOut.from_spec(dy.LazyFrame[Orders], dg.AssetSpec("orders"), quarantine=True)

    assert out.schema is Orders
    assert dd.AssetOut.from_spec(None, dg.AssetSpec("orders")).schema is None


@pytest.mark.parametrize(
    "hint",
    [dict[str, dy.DataFrame[Orders]], tuple[dy.DataFrame[Orders]], list[dy.DataFrame[Orders]]],
    ids=["dict", "short-tuple", "list"],
)
def test_outputs_given_their_schemas_leave_a_hint_they_do_not_need_unread(hint: object) -> None:
    """Such a hint was accepted before the package read hints: a readable one is compared."""

    def orders() -> Any:
        return {"orders": ORDERS}

    orders.__annotations__ = {"return": hint}

    asset = dd.multi_asset(outs={"orders": dd.AssetOut(Orders), "lines": dd.AssetOut(BookLines)})(
        orders
    )

    assert set(asset.keys_by_output_name) == {"orders", "lines"}

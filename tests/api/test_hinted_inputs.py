"""An input hinted `dy.DataFrame[S]` declares what the same input hinted `pl.DataFrame` declares.

Dagster refuses a dataframely hint on an input; `dd.asset`, `dd.multi_asset` and
`dd.collection_asset` show Dagster the hint's Polars type instead, so a hinted input's Dagster
type, and the whole repository snapshot, are those of the plain annotation. A plain
`@dg.asset` still refuses the hint, with the message the docs quote.
`integration_tests/test_input_hints.py` runs each form on dagster-polars and DuckDB.
"""

from collections.abc import Callable
from typing import Annotated, Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster._core.remote_representation.external_data import RepositorySnap
from dagster._serdes import serialize_value

import dagster_dataframely as dd
from dagster_dataframely.errors import UnreadableInputHintError
from tests.hinted_support import dagsters_refusal_as_quoted
from tests.schemas import BookLines, BookOrders, OrderBook, Orders

FORMS = {
    "DataFrame": (dy.DataFrame[Orders], pl.DataFrame),
    "LazyFrame": (dy.LazyFrame[Orders], pl.LazyFrame),
    "Annotated DataFrame": (Annotated[pl.DataFrame, Orders], pl.DataFrame),
    "Annotated LazyFrame": (Annotated[pl.LazyFrame, Orders], pl.LazyFrame),
    "DataFrame | None": (dy.DataFrame[Orders] | None, pl.DataFrame | None),
    "LazyFrame | None": (dy.LazyFrame[Orders] | None, pl.LazyFrame | None),
    "Annotated DataFrame | None": (Annotated[pl.DataFrame, Orders] | None, pl.DataFrame | None),
    "Annotated LazyFrame | None": (Annotated[pl.LazyFrame, Orders] | None, pl.LazyFrame | None),
    "partitions": (dict[str, dy.DataFrame[Orders]], dict[str, pl.DataFrame]),
    "lazy partitions": (dict[str, dy.LazyFrame[Orders]], dict[str, pl.LazyFrame]),
    "a string": ("dy.DataFrame[Orders]", pl.DataFrame),
}

DECORATORS: dict[str, Callable[[Callable[..., Any]], dg.AssetsDefinition]] = {
    "dd.asset": dd.asset(Orders, quarantine=True),
    "dd.multi_asset": dd.multi_asset(outs={"summary": dd.AssetOut(Orders)}),
    "dd.collection_asset": dd.collection_asset(OrderBook),
}


def summary(annotation: object) -> Callable[..., Any]:
    """A function reading `raw_orders` annotated `annotation` (a string resolves here)."""

    def summary(raw_orders: Any) -> Any:
        return raw_orders

    summary.__annotations__ = {"raw_orders": annotation}
    return summary


def input_type(asset: dg.AssetsDefinition, name: str = "raw_orders") -> dg.DagsterType:
    """The Dagster type of the input `name`, as the UI shows it and the IO manager reads it."""
    dagster_type = asset.op.ins[name].dagster_type
    assert isinstance(dagster_type, dg.DagsterType)
    return dagster_type


def snapshot(asset: dg.AssetsDefinition) -> str:
    """Everything the UI shows of `asset`, its input's Dagster type included."""
    upstream = dg.AssetSpec("raw_orders")
    defs = dg.Definitions(assets=[upstream, asset])
    return serialize_value(RepositorySnap.from_def(defs.get_repository_def()))


@pytest.mark.parametrize("decorator", DECORATORS.values(), ids=DECORATORS.keys())
@pytest.mark.parametrize(("hint", "plain"), FORMS.values(), ids=FORMS.keys())
def test_a_hinted_input_declares_the_plain_input(
    decorator: Callable[[Callable[..., Any]], dg.AssetsDefinition], hint: object, plain: object
) -> None:
    hinted = decorator(summary(hint))
    given = decorator(summary(plain))

    assert input_type(hinted).typing_type == input_type(given).typing_type
    assert input_type(hinted).display_name == input_type(given).display_name
    assert snapshot(hinted) == snapshot(given)


def test_the_ui_shows_the_polars_type() -> None:
    asset = dd.asset(Orders)(summary(dy.LazyFrame[Orders] | None))

    assert input_type(asset).display_name == "LazyFrame?"


UNREADABLE = {
    "a list": (
        list[dy.DataFrame[Orders]],
        "`list[dy.DataFrame[Orders]]`, names a schema in a form the package cannot read.",
    ),
    "two schemas": (
        dy.DataFrame[Orders] | dy.DataFrame[BookOrders],
        "`dy.DataFrame[Orders] | dy.DataFrame[BookOrders]`, names more than one schema.",
    ),
    "a collection": (
        OrderBook,
        "`OrderBook`, names a dy.Collection, whose members are assets of their own: annotate "
        "one input per member.",
    ),
}


@pytest.mark.parametrize("decorator", DECORATORS.values(), ids=DECORATORS.keys())
@pytest.mark.parametrize(("hint", "problem"), UNREADABLE.values(), ids=UNREADABLE.keys())
def test_an_unreadable_input_hint_is_refused_when_declared(
    decorator: Callable[[Callable[..., Any]], dg.AssetsDefinition], hint: object, problem: str
) -> None:
    with pytest.raises(UnreadableInputHintError) as raised:
        decorator(summary(hint))

    assert str(raised.value) == (
        f"The hint of input 'raw_orders' of 'summary', {problem} Annotate the input with one "
        "schema: `dy.DataFrame[Orders]`, `dy.LazyFrame[Orders]`, `Annotated[pl.DataFrame, "
        "Orders]` or `Annotated[pl.LazyFrame, Orders]`, each optionally `| None`, or a "
        "`dict[str, ...]` of one of them to read several partitions; or with its Polars type, "
        "`pl.DataFrame`."
    )


def test_a_collection_reads_hinted_members_of_another_asset() -> None:
    @dd.collection_asset(OrderBook)
    def book(
        raw_orders: dy.LazyFrame[BookOrders], raw_lines: dy.LazyFrame[BookLines]
    ) -> dict[str, pl.LazyFrame]:
        return {"orders": raw_orders, "lines": raw_lines}

    assert [input_type(book, name).typing_type for name in ("raw_orders", "raw_lines")] == [
        pl.LazyFrame,
        pl.LazyFrame,
    ]


def test_a_direct_call_passes_the_frame_unchanged() -> None:
    frame = pl.DataFrame({"order_id": ["a"], "amount": [1.0]})

    @dd.asset(Orders)
    def copy(orders: dy.DataFrame[Orders]) -> dy.DataFrame[Orders]:
        return orders

    call = dd.testing.call_asset(copy, {"orders": frame})

    assert call.table is not None
    assert call.table.equals(frame)


def test_the_docs_quote_dagsters_refusal_of_a_hinted_input() -> None:
    """The page shows the error a plain `@dg.asset` raises today, as Dagster words it."""

    def summary(orders: dy.DataFrame[Orders]) -> None: ...

    shown, quoted = dagsters_refusal_as_quoted(summary, "for argument 'orders'")

    assert shown == quoted

"""`dd.collection_asset`: the settings it refuses, with the reason, and `outs=` of `dd.AssetOut`."""

from typing import Any

import dagster as dg
import pytest

import dagster_dataframely as dd
from dagster_dataframely._model.setting_model import EntryPoint, refusals
from dagster_dataframely.errors import InvalidArgumentsError, UnexpectedArgumentError
from tests.schemas import BookLines, BookOrders, OrderBook


@pytest.mark.parametrize(
    ("keyword", "value"), [("warning_rules", ["amount|min"]), ("streaming", True)]
)
def test_warning_rules_and_streaming_are_refused_with_the_reason(keyword: str, value: Any) -> None:
    with pytest.raises(InvalidArgumentsError) as raised:
        dd.collection_asset(OrderBook, **{keyword: value})
    message = str(raised.value)
    assert f"`{keyword}=`" in message
    assert "Collection.filter decides every member's rows together in memory" in message


@pytest.mark.parametrize(
    ("entry_point", "call"),
    [
        (EntryPoint.ASSET, lambda **kw: dd.asset(BookOrders, **kw)),
        (EntryPoint.MULTI_ASSET, lambda **kw: dd.multi_asset(outs={}, **kw)),
        (EntryPoint.COLLECTION_ASSET, lambda **kw: dd.collection_asset(OrderBook, **kw)),
    ],
)
def test_every_refused_setting_names_the_models_reason(entry_point: EntryPoint, call: Any) -> None:
    for name, reason in refusals(entry_point).items():
        with pytest.raises(UnexpectedArgumentError) as raised:
            call(**{name: None})
        assert reason in str(raised.value)


def test_a_dd_asset_out_gives_a_member_its_asset_attributes() -> None:
    @dd.collection_asset(
        OrderBook,
        quarantine=True,
        key_prefix="shop",
        outs={
            "lines": dd.AssetOut(
                BookLines,
                key_prefix="erp",
                io_manager_key="warehouse",
                group_name="sales",
                metadata={"owner": "erp"},
            )
        },
    )
    def book() -> None:
        return None

    lines = book.specs_by_key[dg.AssetKey(["erp", "lines"])]
    assert set(book.keys) == {dg.AssetKey(["shop", "orders"]), lines.key}
    assert book.get_io_manager_key_for_asset_key(lines.key) == "warehouse"
    assert lines.group_name == "sales"
    assert lines.metadata["owner"] == "erp"
    assert "dagster/column_schema" in lines.metadata


def test_a_dd_asset_out_and_a_dg_asset_out_declare_the_same_member() -> None:
    def declared(out: dd.AssetOut | dg.AssetOut) -> dg.AssetSpec:
        @dd.collection_asset(OrderBook, outs={"lines": out})
        def book() -> None:
            return None

        return book.specs_by_key[dg.AssetKey(["wh", "lines"])]

    ours = declared(dd.AssetOut(BookLines, key_prefix="wh", io_manager_key="m", kinds={"x"}))
    theirs = declared(dg.AssetOut(key_prefix="wh", io_manager_key="m", kinds={"x"}))
    assert ours == theirs


def test_a_dd_asset_out_of_another_schema_names_both() -> None:
    with pytest.raises(InvalidArgumentsError) as raised:
        dd.collection_asset(OrderBook, outs={"lines": dd.AssetOut(BookOrders)})
    assert "BookOrders" in str(raised.value)
    assert "BookLines" in str(raised.value)


@pytest.mark.parametrize(
    "settings",
    [{"quarantine": True}, {"check_granularity": "schema"}, {"warning_rules": ["x"]}],
)
def test_a_dd_asset_out_with_settings_of_its_own_is_refused(settings: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgumentsError) as raised:
        dd.collection_asset(OrderBook, outs={"lines": dd.AssetOut(BookLines, **settings)})
    message = str(raised.value)
    assert all(f"`{name}=`" in message for name in settings)
    assert "validates every member together" in message

"""`quarantine_spec`: the quarantine in the asset graph, and read back by a downstream asset."""

from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely import errors
from tests.asset_support import MIXED, Materialize, SmallOrders, run_tables, value
from tests.schemas import BookLines, OrderBook, OrderLines

DAYS = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-03")
QUARANTINE_COLUMNS = [
    "order_id",
    "amount",
    "dy_rule__primary_key",
    "dy_rule__order_id__nullability",
    "dy_rule__amount__nullability",
    "dy_rule__amount__min",
    "dy_rule__amount__inf",
    "dy_rule__amount__nan",
]


def _orders(**arguments: object) -> dg.AssetsDefinition:
    @dd.asset(SmallOrders, quarantine=True, **arguments)  # type: ignore[arg-type]
    def orders() -> pl.DataFrame:
        return MIXED

    return orders


@pytest.mark.parametrize(
    ("asset", "key"),
    [
        (dg.AssetKey("orders"), ["orders_quarantine"]),
        ("orders", ["orders_quarantine"]),
        (["sales", "orders"], ["sales", "orders_quarantine"]),
        (dg.AssetKey(["sales", "orders"]), ["sales", "orders_quarantine"]),
        ("sales/orders", ["sales", "orders_quarantine"]),
    ],
    ids=["key", "string", "sequence", "prefixed-key", "user-string"],
)
def test_the_spec_is_keyed_name_quarantine_and_depends_on_the_asset(
    asset: dg.AssetKey | str | list[str], key: list[str]
) -> None:
    spec = dd.quarantine_spec(SmallOrders, asset)

    source = dg.AssetKey([*key[:-1], "orders"])
    assert spec.key == dg.AssetKey(key)
    assert [dep.asset_key for dep in spec.deps] == [source]
    assert spec.description == (
        f"Invalid rows from {source.to_user_string()}, with one column per rule."
    )
    assert spec.partitions_def is None


def test_a_definition_gives_its_key_prefix_and_partitions() -> None:
    orders = _orders(key_prefix="sales", partitions_def=DAYS)

    spec = dd.quarantine_spec(SmallOrders, orders)

    assert spec.key == dg.AssetKey(["sales", "orders_quarantine"])
    assert [dep.asset_key for dep in spec.deps] == [orders.key]
    assert spec.description == "Invalid rows from sales/orders, with one column per rule."
    assert spec.partitions_def == DAYS


def test_the_output_of_a_multi_asset_is_named_by_the_string_dagster_prints() -> None:
    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(SmallOrders, quarantine=True, key_prefix="sales"),
            "returns": dd.AssetOut(SmallOrders, quarantine=True, key_prefix="sales"),
        }
    )
    def shop() -> dict[str, pl.DataFrame]:
        return {"orders": MIXED, "returns": MIXED}

    spec = dd.quarantine_spec(SmallOrders, shop, asset_key="sales/returns")

    assert spec.key == dg.AssetKey(["sales", "returns_quarantine"])
    assert [dep.asset_key for dep in spec.deps] == [dg.AssetKey(["sales", "returns"])]


def test_partitions_def_with_a_key() -> None:
    spec = dd.quarantine_spec(SmallOrders, "orders", partitions_def=DAYS)
    assert spec.partitions_def == DAYS


def test_partitions_def_with_a_definition_is_refused() -> None:
    with pytest.raises(dg.DagsterInvariantViolationError, match="partitions_def"):
        dd.quarantine_spec(SmallOrders, _orders(partitions_def=DAYS), partitions_def=DAYS)


def test_the_columns_tab_has_the_schemas_columns_then_a_string_per_rule_and_no_constraints() -> (
    None
):
    spec = dd.quarantine_spec(OrderLines, "order_lines")

    table = spec.metadata["dagster/column_schema"]
    assert isinstance(table, dg.TableSchema)
    schema_columns = dd.wiring.table_schema(OrderLines).columns
    rule_checks = [
        name
        for name in (s.name for s in dd.wiring.check_specs(OrderLines, asset="order_lines"))
        if name != "dy_schema__columns"
    ]
    assert [c.name for c in table.columns] == [c.name for c in schema_columns] + rule_checks
    for column, declared in zip(table.columns, schema_columns, strict=False):
        # Dtype, description and tags carry over; the constraints invalid rows break do not.
        assert (column.type, column.description, column.tags) == (
            declared.type,
            declared.description,
            declared.tags,
        )
    assert {c.type for c in table.columns[len(schema_columns) :]} == {"String"}
    assert all(c.constraints == dg.TableColumnConstraints() for c in table.columns)
    assert not table.constraints.other  # no primary key
    sku = next(c for c in table.columns if c.name == "sku")
    assert sku.tags == {"pii": "False", "owner": "catalog"}


def test_the_spec_loads_in_definitions_and_is_not_a_collision(
    materialize: Materialize, warehouse: Path
) -> None:
    orders = _orders()
    spec = dd.quarantine_spec(SmallOrders, orders)
    defs = dg.Definitions(assets=[orders, spec])
    dg.Definitions.validate_loadable(defs)
    assert not defs.resolve_asset_graph().get(spec.key).is_materializable

    result = materialize([orders, spec])

    assert result.success
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").columns == QUARANTINE_COLUMNS
    # Nothing materializes the spec: the rows are a record of the run, not an asset's output.
    # It has no step either, so only a dependency on `orders` orders a reader after the write.
    assert run_tables(result, "orders_quarantine") == []
    assert {event.step_key for event in result.get_step_success_events()} == {"orders"}


def test_a_downstream_asset_reads_the_quarantine_through_the_io_manager(
    materialize: Materialize,
) -> None:
    orders = _orders()
    received: dict[str, object] = {}

    # The spec has no step, so `deps=[orders]` is what orders these after the step writing it.
    @dg.asset(deps=[orders])
    def triage(orders_quarantine: pl.DataFrame) -> dg.MaterializeResult[None]:
        received["triage"] = orders_quarantine
        failed = orders_quarantine.filter(pl.col("dy_rule__amount__min") == "invalid")
        return dg.MaterializeResult(metadata={"amount_min": failed.height})

    @dg.asset(deps=[orders])
    def lazy_triage(orders_quarantine: pl.LazyFrame) -> None:
        received["lazy_triage"] = orders_quarantine

    result = materialize([orders, dd.quarantine_spec(SmallOrders, orders), triage, lazy_triage])

    eager = received["triage"]
    lazy = received["lazy_triage"]
    assert isinstance(eager, pl.DataFrame)
    assert isinstance(lazy, pl.LazyFrame)
    assert eager.columns == QUARANTINE_COLUMNS
    assert sorted(eager["order_id"]) == ["b", "d"]
    assert lazy.collect().equals(eager)
    (table,) = run_tables(result, "triage")
    assert value(table.metadata["amount_min"]) == 1


def test_a_partitioned_downstream_asset_reads_its_partitions_quarantine(
    materialize: Materialize,
) -> None:
    orders = _orders(partitions_def=DAYS)
    received: list[pl.DataFrame] = []

    @dg.asset(partitions_def=DAYS, deps=[orders])
    def triage(orders_quarantine: pl.DataFrame) -> None:
        received.append(orders_quarantine)

    spec = dd.quarantine_spec(SmallOrders, orders)
    materialize([orders, spec, triage], partition_key="2026-01-02")

    (frame,) = received
    assert sorted(frame["order_id"]) == ["b", "d"]


# --- the definition's own schema ---------------------------------------------------------------


def _tab(spec: dg.AssetSpec) -> list[str]:
    table = spec.metadata["dagster/column_schema"]
    assert isinstance(table, dg.TableSchema)
    return [column.name for column in table.columns]


def _same_spec(alone: dg.AssetSpec, given: dg.AssetSpec) -> None:
    assert (alone.key, alone.deps, alone.partitions_def, alone.description) == (
        given.key,
        given.deps,
        given.partitions_def,
        given.description,
    )
    assert alone.metadata == given.metadata


def test_the_definition_alone_reads_the_schema_the_decorator_validates_against() -> None:
    orders = _orders(key_prefix="sales", partitions_def=DAYS)

    alone = dd.quarantine_spec(orders)

    _same_spec(alone, dd.quarantine_spec(SmallOrders, orders))
    _same_spec(dd.quarantine_spec(asset=orders), alone)
    assert alone.key == dg.AssetKey(["sales", "orders_quarantine"])
    assert _tab(alone) == QUARANTINE_COLUMNS


def test_a_typed_definition_alone_reads_the_schema_of_its_return_hint() -> None:
    @dd.asset(quarantine=True)
    def orders() -> dy.DataFrame[SmallOrders]:
        return SmallOrders.validate(MIXED.drop_nulls(), cast=True)

    _same_spec(dd.quarantine_spec(orders), dd.quarantine_spec(SmallOrders, orders))
    assert _tab(dd.quarantine_spec(orders)) == QUARANTINE_COLUMNS


def test_each_output_of_a_multi_asset_alone_reads_its_own_schema() -> None:
    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(SmallOrders, quarantine=True),
            "lines": dd.AssetOut(OrderLines, quarantine=True),
        }
    )
    def shop() -> dict[str, pl.DataFrame]:
        return {}

    _same_spec(
        dd.quarantine_spec(shop, asset_key="lines"),
        dd.quarantine_spec(OrderLines, shop, asset_key="lines"),
    )
    assert _tab(dd.quarantine_spec(shop, asset_key="orders")) == QUARANTINE_COLUMNS


def test_a_collection_member_alone_has_its_filter_columns() -> None:
    @dd.collection_asset(OrderBook, quarantine=True)
    def book() -> None:
        return None

    alone = dd.quarantine_spec(book, asset_key="lines")

    _same_spec(alone, dd.quarantine_spec(OrderBook, book, asset_key="lines"))
    assert _tab(alone)[-2:] == ["dy_filter__has_order", "dy_filter__positive_total"]


def test_a_copy_of_the_definition_with_another_key_reads_the_same_schema() -> None:
    orders = _orders()
    moved = orders.with_attributes(
        asset_key_replacements={orders.key: dg.AssetKey(["shop", "orders"])}
    )

    spec = dd.quarantine_spec(moved)

    assert spec.key == dg.AssetKey(["shop", "orders_quarantine"])
    assert _tab(spec) == QUARANTINE_COLUMNS


def test_a_schema_other_than_the_definitions_is_refused() -> None:
    with pytest.raises(errors.InvalidArgumentsError) as refused:
        dd.quarantine_spec(OrderLines, _orders())

    assert str(refused.value) == (
        "quarantine_spec: the asset 'orders' is declared with the schema Orders, not "
        "OrderLines, so the spec's Columns tab would not list the columns of its quarantine. "
        "Pass Orders, or the definition alone, whose schema the spec then reads: "
        "dd.quarantine_spec(orders)."
    )
    assert isinstance(refused.value, dg.DagsterInvariantViolationError)


class Orders(dy.Schema):
    """Named as the tests' `Orders` (`SmallOrders` here), in another module."""

    order_id = dy.String(primary_key=True)
    amount = dy.Float64(min=0.0)


def test_a_schema_of_the_same_name_from_another_module_is_named_with_its_module() -> None:
    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(SmallOrders, quarantine=True),
            "returns": dd.AssetOut(SmallOrders, quarantine=True),
        }
    )
    def shop() -> dict[str, pl.DataFrame]:
        return {}

    with pytest.raises(errors.InvalidArgumentsError) as refused:
        dd.quarantine_spec(Orders, shop, asset_key="returns")

    assert str(refused.value) == (
        "quarantine_spec: the asset 'returns' is declared with the schema tests.schemas.Orders, "
        "not tests.declare.test_quarantine_spec.Orders, so the spec's Columns tab would not "
        "list the columns of its quarantine. Pass tests.schemas.Orders, or the definition "
        "alone, whose schema the spec then reads: dd.quarantine_spec(shop, "
        "asset_key='returns')."
    )


def test_a_collection_members_own_schema_is_refused_for_the_collection() -> None:
    @dd.collection_asset(OrderBook, quarantine=True)
    def book() -> None:
        return None

    with pytest.raises(errors.InvalidArgumentsError) as refused:
        dd.quarantine_spec(BookLines, book, asset_key="lines")

    assert str(refused.value) == (
        "quarantine_spec: the asset 'lines' is declared with the Collection OrderBook, not "
        "BookLines, so the spec's Columns tab would not list the columns of its quarantine. "
        "Pass OrderBook, or the definition alone, whose schema the spec then reads: "
        "dd.quarantine_spec(book, asset_key='lines')."
    )


@pytest.mark.parametrize(
    "arguments", [{}, {"schema": SmallOrders}], ids=["definition-alone", "with-schema"]
)
def test_an_asset_declared_without_a_quarantine_is_refused(arguments: dict[str, Any]) -> None:
    @dd.asset(SmallOrders, key_prefix="sales")
    def orders() -> pl.DataFrame:
        return MIXED

    with pytest.raises(errors.InvalidArgumentsError) as refused:
        dd.quarantine_spec(**arguments, asset=orders)

    assert str(refused.value) == (
        "quarantine_spec: the asset 'sales/orders' is declared without a quarantine, so no run "
        "writes 'sales/orders_quarantine' and the spec would be a node nothing fills. Declare "
        "the asset with quarantine=True (on dd.asset, on its dd.AssetOut in a dd.multi_asset, "
        "or on dd.collection_asset), or leave the spec out."
    )


def test_an_output_of_a_multi_asset_without_a_quarantine_is_refused() -> None:
    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(SmallOrders, quarantine=True),
            "lines": dd.AssetOut(OrderLines),
        }
    )
    def shop() -> dict[str, pl.DataFrame]:
        return {}

    assert dd.quarantine_spec(shop, asset_key="orders").key == dg.AssetKey("orders_quarantine")
    with pytest.raises(errors.InvalidArgumentsError, match="'lines' is declared without a"):
        dd.quarantine_spec(OrderLines, shop, asset_key="lines")


def test_a_definition_no_decorator_of_the_package_built_needs_its_schema() -> None:
    """A hand-wired asset (`dd.wiring`) writes a quarantine the package cannot see declared."""

    @dg.asset(name="orders")
    def hand_wired() -> None:
        return None

    with pytest.raises(errors.InvalidArgumentsError) as refused:
        dd.quarantine_spec(hand_wired)

    assert str(refused.value) == (
        "quarantine_spec: it reads the schema from a definition that dd.asset, dd.multi_asset "
        "or dd.collection_asset built, and the definition of 'orders' is not one. Pass the "
        "schema its rows follow first, as in dd.quarantine_spec(Orders, orders)."
    )
    spec = dd.quarantine_spec(SmallOrders, hand_wired)
    assert (spec.key, _tab(spec)) == (dg.AssetKey("orders_quarantine"), QUARANTINE_COLUMNS)


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        (
            lambda: dd.quarantine_spec(SmallOrders),  # type: ignore[call-overload]
            "it needs the asset whose quarantine the spec declares. Pass its definition, "
            "dd.quarantine_spec(orders), or the schema and the asset's key, "
            "dd.quarantine_spec(Orders, 'orders').",
        ),
        (
            lambda: dd.quarantine_spec(_orders(), _orders()),  # type: ignore[call-overload]
            "it takes a schema first and the asset second, and was given a definition first. "
            "Pass the definition alone, dd.quarantine_spec(orders), or the schema and then the "
            "asset, dd.quarantine_spec(Orders, orders).",
        ),
    ],
    ids=["schema-alone", "definition-twice"],
)
def test_a_call_without_its_asset_or_with_it_twice_is_refused(call: Any, problem: str) -> None:
    with pytest.raises(errors.InvalidArgumentsError) as refused:
        call()
    assert str(refused.value) == f"quarantine_spec: {problem}"

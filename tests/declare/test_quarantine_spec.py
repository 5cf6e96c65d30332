"""`quarantine_spec`: the quarantine in the asset graph, and read back by a downstream asset."""

from pathlib import Path

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from tests.asset_support import MIXED, Materialize, SmallOrders, run_tables, value
from tests.schemas import OrderLines

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

"""Partitioned `dd.asset`s: each partition is validated on its own, with its own quarantine file."""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from tests.asset_support import (
    CLEAN,
    MIXED,
    QUIET,
    WRONG_COLUMNS,
    AssetContext,
    Materialize,
    SmallOrders,
    call_tables,
    run_checks,
    run_tables,
    step_error,
    value,
)
from tests.parquet_io_manager import ParquetIOManager

WARN = dg.AssetCheckSeverity.WARN
DAYS = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-03")
"""Two days: 2026-01-01 and 2026-01-02."""
DISTRIBUTORS = dg.StaticPartitionsDefinition(["acme", "globex", "initech"])
# One day by two regions, declared region first: paths and key strings order the dimensions by
# name, so `day` comes first.
ONE_DAY = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-02")
GRID = dg.MultiPartitionsDefinition(
    {"region": dg.StaticPartitionsDefinition(["eu", "us"]), "day": ONE_DAY}
)
EU = dg.MultiPartitionKey({"day": "2026-01-01", "region": "eu"})
US = dg.MultiPartitionKey({"day": "2026-01-01", "region": "us"})

LATER = pl.DataFrame({"order_id": ["c", "e"], "amount": [4.0, 5.0]})
"""Valid on its own, but `c` is also in `CLEAN`: together they break the primary key."""


def _ids(frame: pl.DataFrame) -> list[str]:
    return sorted(frame["order_id"])


# --- one partition, one validation -----------------------------------------------------------


@pytest.mark.parametrize(
    ("partitions_def", "first", "second"),
    [(DAYS, "2026-01-01", "2026-01-02"), (DISTRIBUTORS, "acme", "globex")],
    ids=["daily", "static"],
)
def test_each_partition_is_validated_and_quarantined_on_its_own(
    partitions_def: dg.PartitionsDefinition[str],
    first: str,
    second: str,
    materialize: Materialize,
    warehouse: Path,
) -> None:
    source = {first: MIXED, second: CLEAN}

    @dd.asset(SmallOrders, quarantine=True, partitions_def=partitions_def)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return source[context.partition_key]

    mixed = materialize([orders], partition_key=first)
    clean = materialize([orders], partition_key=second)

    assert _ids(pl.read_parquet(warehouse / "orders" / f"{first}.parquet")) == ["a", "c"]
    assert _ids(pl.read_parquet(warehouse / "orders_quarantine" / f"{first}.parquet")) == ["b", "d"]
    assert _ids(pl.read_parquet(warehouse / "orders" / f"{second}.parquet")) == ["a", "b", "c"]
    # No row of the second day failed: its quarantine is stored empty, so that it can be read.
    assert pl.read_parquet(warehouse / "orders_quarantine" / f"{second}.parquet").is_empty()

    (mixed_table,) = run_tables(mixed, "orders")
    (clean_table,) = run_tables(clean, "orders")
    assert mixed_table.partition == first
    assert value(mixed_table.metadata["dagster/row_count"]) == 2
    assert value(mixed_table.metadata["dataframely/invalid_count"]) == 2
    assert clean_table.partition == second
    assert value(clean_table.metadata["dagster/row_count"]) == 3
    assert "dataframely/invalid_count" not in clean_table.metadata

    failing = {c.check_name: c.severity for c in run_checks(mixed).values() if not c.passed}
    assert failing == {"dy_rule__amount__min": WARN, "dy_rule__amount__nullability": WARN}
    assert all(check.passed for check in run_checks(clean).values())


def test_a_partition_returning_none_stays_unmaterialized(materialize: Materialize) -> None:
    @dd.asset(SmallOrders, quarantine=True, partitions_def=DISTRIBUTORS)
    def supplier_reports(context: dg.AssetExecutionContext) -> pl.DataFrame | None:
        return None if context.partition_key == "globex" else CLEAN

    with dg.DagsterInstance.ephemeral() as instance:
        acme = materialize([supplier_reports], partition_key="acme", instance=instance)
        globex = materialize([supplier_reports], partition_key="globex", instance=instance)

        assert acme.success
        assert globex.success
        assert instance.get_materialized_partitions(supplier_reports.key) == {"acme"}
    assert run_tables(globex, "supplier_reports") == []
    checks = run_checks(globex)
    assert checks
    assert all(check.passed for check in checks.values())
    # A skipped partition's checks are not linked to an earlier materialization.
    assert all(check.target_materialization_data is None for check in checks.values())


def test_a_column_schema_failure_leaves_other_partitions_untouched(
    materialize: Materialize, warehouse: Path
) -> None:
    source = {"2026-01-01": MIXED, "2026-01-02": WRONG_COLUMNS}

    @dd.asset(SmallOrders, quarantine=True, partitions_def=DAYS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return source[context.partition_key]

    materialize([orders], partition_key="2026-01-01")
    written = {
        path: path.read_bytes()
        for path in (
            warehouse / "orders" / "2026-01-01.parquet",
            warehouse / "orders_quarantine" / "2026-01-01.parquet",
        )
    }

    failed = materialize([orders], partition_key="2026-01-02", raise_on_error=False)

    assert step_error(failed) == "ColumnSchemaError"
    assert {path: path.read_bytes() for path in written} == written
    assert sorted(p.relative_to(warehouse).as_posix() for p in warehouse.rglob("*.parquet")) == [
        "orders/2026-01-01.parquet",
        "orders_quarantine/2026-01-01.parquet",
    ]


# --- direct invocation ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("partitions_def", "partition_key", "path"),
    [
        (DAYS, "2026-01-02", "orders_quarantine/2026-01-02.parquet"),
        (DISTRIBUTORS, "globex", "orders_quarantine/globex.parquet"),
        (GRID, "2026-01-01|eu", "orders_quarantine/2026-01-01/eu.parquet"),
        (GRID, US, "orders_quarantine/2026-01-01/us.parquet"),
    ],
    ids=["daily", "static", "multi-string", "multi-key"],
)
def test_a_call_writes_the_partitions_quarantine_file(
    partitions_def: dg.PartitionsDefinition[str],
    partition_key: str,
    path: str,
    quarantine_dir: Path,
    asset_context: AssetContext,
) -> None:
    keys: list[str] = []

    @dd.asset(SmallOrders, quarantine=True, partitions_def=partitions_def)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        keys.append(context.partition_key)
        return MIXED

    (table,) = call_tables(orders(asset_context(partition_key=partition_key)))

    assert keys == [partition_key]
    assert table.value.height == 2
    assert _ids(pl.read_parquet(quarantine_dir / path)) == ["b", "d"]
    assert [
        p.relative_to(quarantine_dir).as_posix() for p in quarantine_dir.rglob("*.parquet")
    ] == [path]


def test_a_partitioned_root_asset_call_takes_only_a_context(
    tmp_path: Path, asset_context: AssetContext
) -> None:
    raw = tmp_path / "raw" / "orders"
    raw.mkdir(parents=True)
    CLEAN.write_parquet(raw / "2026-01-02.parquet")

    @dd.asset(SmallOrders, partitions_def=DAYS)
    def daily_orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return pl.read_parquet(raw / f"{context.partition_key}.parquet")

    (table,) = call_tables(daily_orders(asset_context(partition_key="2026-01-02")))
    assert_frame_equal(table.value, CLEAN)


# --- downstream of a partitioned asset ----------------------------------------------------------


@dataclass
class Downstream:
    """What the assets downstream of the daily `orders` received, and where the run wrote."""

    warehouse: Path
    received: dict[str, Any]
    rollup: dg.ExecuteInProcessResult


@pytest.fixture(scope="module")
def downstream(
    tmp_path_factory: pytest.TempPathFactory, instance: dg.DagsterInstance
) -> Downstream:
    """Two daily partitions of `orders`, then the three kinds of asset downstream of it."""
    warehouse = tmp_path_factory.mktemp("downstream")
    source = {"2026-01-01": CLEAN, "2026-01-02": LATER}
    received: dict[str, Any] = {}

    @dd.asset(SmallOrders, quarantine=True, partitions_def=DAYS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return source[context.partition_key]

    @dd.asset(SmallOrders, quarantine=True, partitions_def=DAYS)
    def priority_orders(context: dg.AssetExecutionContext, orders: pl.DataFrame) -> pl.DataFrame:
        received[f"priority_orders/{context.partition_key}"] = orders
        return orders.with_columns(amount=pl.col("amount") - 2.5)

    @dd.asset(SmallOrders, quarantine=True)
    def rollup(orders: dict[str, pl.DataFrame]) -> pl.DataFrame:
        received["rollup"] = orders
        return pl.concat(orders.values())

    @dd.asset(SmallOrders, quarantine=True)
    def lazy_rollup(orders: dict[str, pl.LazyFrame]) -> pl.LazyFrame:
        received["lazy_rollup"] = orders
        return pl.concat(orders.values())

    resources = {"io_manager": ParquetIOManager(base_dir=str(warehouse))}
    for day in source:
        dg.materialize(
            [orders, priority_orders],
            partition_key=day,
            resources=resources,
            instance=instance,
            run_config=QUIET,
        )
    rollups = dg.materialize(
        [orders, rollup, lazy_rollup],
        selection=[rollup, lazy_rollup],
        resources=resources,
        instance=instance,
        run_config=QUIET,
    )
    return Downstream(warehouse, received, rollups)


def test_a_downstream_asset_with_the_same_partitions_receives_one_frame(
    downstream: Downstream,
) -> None:
    assert_frame_equal(downstream.received["priority_orders/2026-01-01"], CLEAN)
    assert_frame_equal(downstream.received["priority_orders/2026-01-02"], LATER)
    # Validated per partition: two of day one's amounts drop below zero, none of day two's.
    warehouse = downstream.warehouse
    day_one = pl.read_parquet(warehouse / "priority_orders" / "2026-01-01.parquet")
    quarantined = pl.read_parquet(warehouse / "priority_orders_quarantine" / "2026-01-01.parquet")
    assert _ids(day_one) == ["c"]
    assert _ids(quarantined) == ["a", "b"]
    assert _ids(pl.read_parquet(warehouse / "priority_orders" / "2026-01-02.parquet")) == ["c", "e"]
    clean_day = warehouse / "priority_orders_quarantine" / "2026-01-02.parquet"
    assert pl.read_parquet(clean_day).is_empty()  # stored empty, so that it can be read


@pytest.mark.parametrize(
    ("asset", "frame_type"), [("rollup", pl.DataFrame), ("lazy_rollup", pl.LazyFrame)]
)
def test_an_unpartitioned_downstream_asset_receives_a_frame_per_partition(
    asset: str, frame_type: type, downstream: Downstream
) -> None:
    received = downstream.received[asset]
    assert sorted(received) == ["2026-01-01", "2026-01-02"]
    assert {type(frame) for frame in received.values()} == {frame_type}

    # The concatenated frame is validated as one: `c` is in both days, so both copies fail
    # the primary key and go to the quarantine.
    warehouse = downstream.warehouse
    assert _ids(pl.read_parquet(warehouse / f"{asset}.parquet")) == ["a", "b", "e"]
    assert _ids(pl.read_parquet(warehouse / f"{asset}_quarantine.parquet")) == ["c", "c"]
    (table,) = run_tables(downstream.rollup, asset)
    assert value(table.metadata["dagster/row_count"]) == 3


# --- multi-partitioned ----------------------------------------------------------------------


@dataclass
class Grid:
    warehouse: Path
    runs: dict[str, dg.ExecuteInProcessResult]
    received: dict[str, Any]


@pytest.fixture(scope="module")
def grid(tmp_path_factory: pytest.TempPathFactory, instance: dg.DagsterInstance) -> Grid:
    """Both cells of one day, one with bad rows; then an asset downstream of the whole grid."""
    warehouse = tmp_path_factory.mktemp("grid")
    source = {"eu": MIXED, "us": CLEAN}
    received: dict[str, Any] = {}

    @dd.asset(SmallOrders, quarantine=True, partitions_def=GRID)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        cell = context.partition_key.keys_by_dimension  # type: ignore[attr-defined]
        return source[cell["region"]]

    @dd.asset(SmallOrders, quarantine=True, partitions_def=GRID)
    def priority_orders(context: dg.AssetExecutionContext, orders: pl.DataFrame) -> pl.DataFrame:
        received[f"priority_orders/{context.partition_key}"] = orders
        return orders.filter(pl.col("amount") > 1)

    @dd.asset(SmallOrders)
    def eu_orders(orders: dict[dg.MultiPartitionKey, pl.LazyFrame]) -> pl.LazyFrame:
        received["eu_orders"] = orders
        return pl.concat(
            frame for key, frame in orders.items() if key.keys_by_dimension["region"] == "eu"
        )

    @dd.asset(
        SmallOrders,
        quarantine=True,
        partitions_def=ONE_DAY,
        ins={
            "orders": dg.AssetIn(
                partition_mapping=dg.MultiToSingleDimensionPartitionMapping(
                    partition_dimension_name="day"
                )
            )
        },
    )
    def daily_orders(orders: dict[str, pl.DataFrame]) -> pl.DataFrame:
        received["daily_orders"] = orders
        return pl.concat(orders.values())

    resources = {"io_manager": ParquetIOManager(base_dir=str(warehouse))}

    def run(assets: list[Any], **kwargs: Any) -> dg.ExecuteInProcessResult:
        return dg.materialize(
            assets, resources=resources, instance=instance, run_config=QUIET, **kwargs
        )

    runs = {
        "eu": run([orders, priority_orders], partition_key=EU),
        "us": run([orders, priority_orders], partition_key=US),
        "eu_orders": run([orders, eu_orders], selection=[eu_orders]),
        "daily_orders": run(
            [orders, daily_orders], selection=[daily_orders], partition_key="2026-01-01"
        ),
    }
    return Grid(warehouse, runs, received)


def test_a_multi_partition_is_stored_in_dimension_name_order(grid: Grid) -> None:
    warehouse = grid.warehouse
    assert _ids(pl.read_parquet(warehouse / "orders" / "2026-01-01" / "eu.parquet")) == ["a", "c"]
    quarantined = pl.read_parquet(warehouse / "orders_quarantine" / "2026-01-01" / "eu.parquet")
    assert _ids(quarantined) == ["b", "d"]
    assert _ids(pl.read_parquet(warehouse / "orders" / "2026-01-01" / "us.parquet")) == [
        "a",
        "b",
        "c",
    ]
    clean_cell = warehouse / "orders_quarantine" / "2026-01-01" / "us.parquet"
    assert pl.read_parquet(clean_cell).is_empty()  # stored empty, so that it can be read
    (eu_table,) = run_tables(grid.runs["eu"], "orders")
    assert eu_table.partition == "2026-01-01|eu"
    assert value(eu_table.metadata["dagster/row_count"]) == 2


def test_a_multi_partitioned_downstream_asset_receives_one_cell(grid: Grid) -> None:
    assert_frame_equal(
        grid.received["priority_orders/2026-01-01|eu"],
        MIXED.filter(pl.col("order_id").is_in(["a", "c"])),
    )
    assert_frame_equal(grid.received["priority_orders/2026-01-01|us"], CLEAN)
    stored = pl.read_parquet(grid.warehouse / "priority_orders" / "2026-01-01" / "us.parquet")
    assert _ids(stored) == ["b", "c"]


def test_an_unpartitioned_asset_receives_a_flat_dict_keyed_by_multi_partition_key(
    grid: Grid,
) -> None:
    received = grid.received["eu_orders"]
    assert sorted(received) == ["2026-01-01|eu", "2026-01-01|us"]
    assert all(isinstance(key, dg.MultiPartitionKey) for key in received)
    assert {type(frame) for frame in received.values()} == {pl.LazyFrame}
    assert _ids(pl.read_parquet(grid.warehouse / "eu_orders.parquet")) == ["a", "c"]


def test_a_partition_mapping_to_one_dimension_receives_that_days_cells(grid: Grid) -> None:
    received = grid.received["daily_orders"]
    assert sorted(received) == ["2026-01-01|eu", "2026-01-01|us"]
    # Both regions have `a` and `c`: validated together, they fail the primary key.
    warehouse = grid.warehouse
    assert _ids(pl.read_parquet(warehouse / "daily_orders" / "2026-01-01.parquet")) == ["b"]
    quarantined = pl.read_parquet(warehouse / "daily_orders_quarantine" / "2026-01-01.parquet")
    assert _ids(quarantined) == ["a", "a", "c", "c"]

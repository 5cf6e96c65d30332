"""`dd.table_checks` on tables `dd.asset` did not build, read through real IO managers.

A plain `@dg.asset` stored by `PolarsParquetIOManager` (loaded lazily, one partition at a time
when partitioned), and a table written into DuckDB by SQL, outside Dagster, declared as an
external `dg.AssetSpec` and read by `DuckDBPolarsIOManager`. The checks only read: the stored
data is the same afterwards and no quarantine appears.
"""

from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager
from polars.testing import assert_frame_equal

import dagster_dataframely as dd

from .conftest import (
    AMOUNT_MIN,
    DAILY,
    DAY_1,
    DAY_2,
    QUIET,
    Orders,
    duckdb_frame,
    duckdb_tables,
    orders_frame,
    shared_instance,
)

pytestmark = pytest.mark.integration

WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR
COLUMNS = "dy_schema__columns"

_loaded: list[type] = []
"""The type of every object the recording manager loaded, in order."""


class RecordingParquetIOManager(PolarsParquetIOManager):
    """`PolarsParquetIOManager`, noting the type of what it loads."""

    def load_input(self, context: dg.InputContext) -> Any:
        loaded = super().load_input(context)
        _loaded.append(type(loaded))
        return loaded


@pytest.fixture(autouse=True)
def _no_loads_yet() -> None:
    _loaded.clear()


def _checks(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetCheckEvaluation]:
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def _files(directory: Path) -> dict[Path, bytes]:
    return {p.relative_to(directory): p.read_bytes() for p in directory.rglob("*") if p.is_file()}


def test_a_plain_asset_stored_as_parquet_is_checked_from_a_lazy_scan(warehouse: Path) -> None:
    stored = orders_frame(DAY_1)  # two valid rows and one that fails `amount|min`

    @dg.asset
    def orders() -> pl.DataFrame:
        return stored

    checks = dd.table_checks(Orders, orders, severity=WARN)
    manager = RecordingParquetIOManager(base_dir=str(warehouse))
    dg.materialize([orders], resources={"io_manager": manager}, instance=shared_instance())
    files = _files(warehouse)

    result = dg.materialize(
        [orders, checks],
        resources={"io_manager": manager},
        selection=dg.AssetSelection.checks(checks),
        instance=shared_instance(),
        run_config=QUIET,
    )

    assert _loaded == [pl.LazyFrame]
    evaluations = _checks(result)
    assert list(evaluations) == [s.name for s in dd.wiring.check_specs(Orders, asset="orders")]
    failed = evaluations[AMOUNT_MIN]
    assert (failed.passed, failed.severity) == (False, WARN)
    assert failed.metadata["dy_failed_count"].value == 1
    sample = failed.metadata["dy_failed_sample"]
    assert isinstance(sample, dg.TableMetadataValue)
    assert [r.data["order_id"] for r in sample.records] == [f"first-{DAY_1}-eu-bad0"]
    assert [n for n, e in evaluations.items() if not e.passed] == [AMOUNT_MIN]
    assert _files(warehouse) == files  # nothing written, no quarantine
    assert_frame_equal(pl.read_parquet(warehouse / "orders.parquet"), stored)


def test_a_partitioned_parquet_asset_is_checked_one_partition_at_a_time(warehouse: Path) -> None:
    frames = {DAY_1: orders_frame(DAY_1, invalid=0), DAY_2: orders_frame(DAY_2, invalid=2)}

    @dg.asset(partitions_def=DAILY)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames[context.partition_key]

    checks = dd.table_checks(Orders, orders, severity=ERROR)
    manager = RecordingParquetIOManager(base_dir=str(warehouse))

    outcomes = {}
    for day in (DAY_1, DAY_2):
        result = dg.materialize(
            [orders, checks],
            resources={"io_manager": manager},
            partition_key=day,
            instance=shared_instance(),
            run_config=QUIET,
        )
        evaluations = _checks(result)
        assert {e.partition for e in evaluations.values()} == {day}
        outcomes[day] = evaluations[AMOUNT_MIN]

    assert outcomes[DAY_1].passed
    assert not outcomes[DAY_2].passed
    assert outcomes[DAY_2].severity == ERROR
    assert outcomes[DAY_2].metadata["dy_failed_count"].value == 2
    assert _loaded == [pl.LazyFrame, pl.LazyFrame]
    assert sorted(p.name for p in (warehouse / "orders").iterdir()) == [
        f"{DAY_1}.parquet",
        f"{DAY_2}.parquet",
    ]


def _write_by_sql(database: Path) -> pl.DataFrame:
    """`analytics.orders`, created and filled by DuckDB SQL alone; returns what it holds."""
    with duckdb.connect(str(database)) as connection:
        connection.execute(
            """
            create schema analytics;
            create table analytics.orders as
            select * from (values
                ('o-1', date '2026-01-02', timestamp '2026-01-02 10:30:00', 'eu', 12.5),
                ('o-2', date '2026-01-02', timestamp '2026-01-02 11:00:00', 'eu', -3.0),
                ('o-3', date '2026-01-02', timestamp '2026-01-02 12:00:00', 'us', -4.0)
            ) as t(order_id, day, placed_at, region, amount)
            """
        )
        connection.execute("alter table analytics.orders alter amount type double")
    return duckdb_frame(database, "analytics.orders")


def _check_sql_table(database: Path, *, lazy: bool) -> dg.ExecuteInProcessResult:
    """Run only the checks of `analytics.orders`, an external asset read by DuckDB's manager."""
    external = dg.AssetSpec(["analytics", "orders"]).with_io_manager_key("warehouse")
    checks = dd.table_checks(Orders, external, severity=ERROR, lazy=lazy)
    return dg.materialize(
        [external, checks],
        resources={"warehouse": DuckDBPolarsIOManager(database=str(database))},
        selection=dg.AssetSelection.checks(checks),
        instance=shared_instance(),
        run_config=QUIET,
        raise_on_error=False,
    )


def test_a_table_written_by_sql_is_checked_through_the_duckdb_io_manager(
    warehouse: Path,
) -> None:
    database = warehouse / "warehouse.duckdb"
    before = _write_by_sql(database)

    result = _check_sql_table(database, lazy=False)

    assert result.success
    evaluations = _checks(result)
    assert {e.asset_key for e in evaluations.values()} == {dg.AssetKey(["analytics", "orders"])}
    assert evaluations[COLUMNS].passed
    failed = evaluations[AMOUNT_MIN]
    assert (failed.passed, failed.severity) == (False, ERROR)
    assert failed.metadata["dy_failed_count"].value == 2
    assert [n for n, e in evaluations.items() if not e.passed] == [AMOUNT_MIN]
    assert duckdb_tables(database) == {"analytics.orders"}  # no quarantine table
    assert_frame_equal(duckdb_frame(database, "analytics.orders"), before)


def test_duckdb_cannot_load_a_lazy_frame_so_lazy_false_is_needed(warehouse: Path) -> None:
    """What the docs tell a DuckDB user: its manager loads only `pl.DataFrame`."""
    database = warehouse / "warehouse.duckdb"
    _write_by_sql(database)

    result = _check_sql_table(database, lazy=True)

    assert not result.success
    failure = result.failure_data_for_node("analytics__orders__dataframely_checks")
    assert failure is not None
    assert failure.error is not None
    assert failure.error.cause is not None
    assert "does not have a handler for type" in failure.error.cause.message
    assert "LazyFrame" in failure.error.cause.message

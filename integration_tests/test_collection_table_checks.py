"""`dd.table_checks` for a Collection whose members are existing assets: read-only checks.

Plain assets write orders and lines; one check definition loads both tables through their own
IO managers, splits them with the Collection's filters, and reports each member's rule checks
and filter checks on its own asset, without writing or moving a row.
"""

from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd
from dagster_dataframely import errors

from .conftest import QUIET, shared_instance
from .test_collection_asset import FILTER, LINES, ORDERS, OrderBook

pytestmark = pytest.mark.integration


@dg.asset(io_manager_key="parquet")
def orders() -> pl.DataFrame:
    return ORDERS


@dg.asset(io_manager_key="duckdb")
def lines() -> pl.DataFrame:
    return LINES


def evaluations(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], bool]:
    return {
        (e.asset_key.to_user_string(), e.check_name): e.passed
        for e in result.get_asset_check_evaluations()
    }


def test_each_members_checks_report_on_its_stored_table(tmp_path: Path) -> None:
    checks = dd.table_checks(
        OrderBook,
        {"orders": orders, "lines": lines},
        severity=dg.AssetCheckSeverity.WARN,
        lazy=False,  # DuckDBPolarsIOManager loads eager frames only
    )
    result = dg.materialize(
        [orders, lines, checks],
        resources={
            "parquet": PolarsParquetIOManager(base_dir=str(tmp_path)),
            "duckdb": DuckDBPolarsIOManager(database=str(tmp_path / "warehouse.duckdb")),
        },
        instance=shared_instance(),
        run_config=QUIET,
    )
    assert result.success
    found = evaluations(result)
    assert found["orders", "dy_rule__amount__min"] is False
    assert found["orders", FILTER] is True
    assert found["lines", FILTER] is False
    assert found["lines", "dy_rule__quantity__min"] is False
    assert found["lines", "dy_schema__columns"] is True
    (filter_check,) = [
        e
        for e in result.get_asset_check_evaluations()
        if e.check_name == FILTER and e.asset_key == lines.key
    ]
    assert filter_check.metadata["dy_failed_count"].value == 2
    # Read only: the stored table still has every row.
    assert pl.read_parquet(tmp_path / "orders.parquet").height == ORDERS.height


def test_a_collection_needs_an_asset_per_required_member() -> None:
    # A declaration's mistake: a definition error, not the run-time return error.
    with pytest.raises(errors.InvalidArgumentsError, match="'lines'"):
        dd.table_checks(OrderBook, {"orders": orders}, severity=dg.AssetCheckSeverity.WARN)
    with pytest.raises(dg.DagsterInvariantViolationError, match="mapping"):
        dd.table_checks(OrderBook, orders, severity=dg.AssetCheckSeverity.WARN)


def test_partitioned_members_are_checked_one_partition_at_a_time(tmp_path: Path) -> None:
    daily = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-03")
    by_day = {"2026-01-01": LINES.head(1), "2026-01-02": LINES}

    @dg.asset(partitions_def=daily, name="orders")
    def daily_orders() -> pl.DataFrame:
        return ORDERS

    @dg.asset(partitions_def=daily, name="lines")
    def daily_lines(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return by_day[context.partition_key]

    checks = dd.table_checks(
        OrderBook,
        {"orders": daily_orders, "lines": daily_lines},
        severity=dg.AssetCheckSeverity.WARN,
    )
    for day, passed in (("2026-01-01", True), ("2026-01-02", False)):
        result = dg.materialize(
            [daily_orders, daily_lines, checks],
            partition_key=day,
            resources={"io_manager": PolarsParquetIOManager(base_dir=str(tmp_path))},
            instance=shared_instance(),
        )
        (filter_check,) = [
            e
            for e in result.get_asset_check_evaluations()
            if e.check_name == FILTER and e.asset_key == daily_lines.key
        ]
        assert filter_check.passed is passed
        assert filter_check.metadata["dy_partition"].value == day


def test_members_with_other_partitions_are_refused() -> None:
    daily = dg.DailyPartitionsDefinition(start_date="2026-01-01")
    with pytest.raises(dg.DagsterInvariantViolationError, match="same partitions_def"):
        dd.table_checks(
            OrderBook,
            {"orders": orders, "lines": dg.AssetSpec("lines", partitions_def=daily)},
            severity=dg.AssetCheckSeverity.WARN,
        )

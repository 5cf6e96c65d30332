"""The quality policy on real IO managers: `PolarsParquetIOManager` and `DuckDBPolarsIOManager`.

Each item of the policy through `dg.materialize`, with what the manager stored read back
directly (`pl.read_parquet`, a read-only DuckDB connection): a run beyond a fail bound leaves
the last good table and still writes the quarantine, a tolerated rule's check passes, the
metrics are on every materialization, the volume and undeclared-columns checks read the
instance's history, and a blocking check holds back downstream automation.
"""

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

from .conftest import (
    AMOUNT_MIN,
    DAILY,
    DAY_1,
    DAY_2,
    QUIET,
    UNPARTITIONED,
    duckdb_frame,
    duckdb_tables,
    orders_asset,
    orders_frame,
)

pytestmark = pytest.mark.integration

WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR


@dataclass(frozen=True)
class Store:
    """One real IO manager and direct readers of what it stored."""

    name: str
    manager: dg.IOManager | dg.ConfigurableIOManager
    table: Callable[[], pl.DataFrame | None]
    quarantine: Callable[[], pl.DataFrame | None]


def _parquet(warehouse: Path) -> Store:
    def read(name: str) -> pl.DataFrame | None:
        path = warehouse / f"{name}.parquet"
        return pl.read_parquet(path).sort("order_id") if path.exists() else None

    return Store(
        "parquet",
        PolarsParquetIOManager(base_dir=str(warehouse)),
        lambda: read("orders"),
        lambda: read("orders_quarantine"),
    )


def _duckdb(warehouse: Path) -> Store:
    database = warehouse / "warehouse.duckdb"

    def read(table: str) -> pl.DataFrame | None:
        if f"public.{table}" not in duckdb_tables(database):
            return None
        return duckdb_frame(database, f"public.{table}")

    return Store(
        "duckdb",
        DuckDBPolarsIOManager(database=str(database)),
        lambda: read("orders"),
        lambda: read("orders_quarantine"),
    )


@pytest.fixture(params=[_parquet, _duckdb], ids=["parquet", "duckdb"])
def store(request: pytest.FixtureRequest, warehouse: Path) -> Store:
    made: Store = request.param(warehouse)
    return made


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    """An instance of the test's own: the checks that remember read its history."""
    with dg.DagsterInstance.ephemeral() as own:
        yield own


def run(
    assets: list[Any],
    store: Store,
    instance: dg.DagsterInstance,
    *,
    partition_key: str | None = None,
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        assets,
        resources={"io_manager": store.manager},
        instance=instance,
        run_config=QUIET,
        partition_key=partition_key,
        raise_on_error=False,
    )


def stored(read: Callable[[], pl.DataFrame | None]) -> pl.DataFrame:
    """What the manager stored, which must be there."""
    frame = read()
    assert frame is not None
    return frame


def checks(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetCheckEvaluation]:
    return {check.check_name: check for check in result.get_asset_check_evaluations()}


def metadata(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    (event,) = result.get_asset_materialization_events()
    return {key: entry.value for key, entry in event.materialization.metadata.items()}


def error_class(result: dg.ExecuteInProcessResult) -> str:
    failure = result.failure_data_for_node("orders")
    assert failure is not None
    assert failure.error is not None
    return (failure.error.cause or failure.error).cls_name or ""


POLICY = dd.QualityPolicy(rules={"amount|min": dd.Threshold(warn_above=0.25, fail_above=0.5)})
"""`amount|min` tolerates a quarter of the rows failing it, and fails the run above half."""


def test_a_run_beyond_fail_above_keeps_the_last_good_table_and_writes_the_quarantine(
    store: Store, instance: dg.DagsterInstance
) -> None:
    frames = {UNPARTITIONED: orders_frame(DAY_1, tag="good", valid=4, invalid=1)}
    orders = orders_asset(frames, quality_policy=POLICY)

    tolerated = run([orders], store, instance)
    assert tolerated.success
    assert checks(tolerated)[AMOUNT_MIN].passed  # 1 of 5 rows: within warn_above
    good = stored(store.table)
    assert good.height == 4

    frames[UNPARTITIONED] = orders_frame(DAY_1, tag="bad", valid=1, invalid=2)
    refused = run([orders], store, instance)

    assert error_class(refused) == "ThresholdExceededError"
    assert refused.get_asset_materialization_events() == []
    assert stored(store.table).equals(good)
    quarantine = stored(store.quarantine)
    assert sorted(quarantine["order_id"]) == [f"bad-{DAY_1}-eu-bad{i}" for i in range(2)]
    check = checks(refused)[AMOUNT_MIN]
    assert (check.passed, check.severity) == (False, ERROR)
    assert check.metadata["dy_failed_fraction"].value == pytest.approx(2 / 3)


def test_a_chosen_severity_and_blocking_reach_the_checks(
    store: Store, instance: dg.DagsterInstance
) -> None:
    policy = dd.QualityPolicy(severity={"amount|min": ERROR}, blocking=["primary_key"])
    orders = orders_asset({UNPARTITIONED: orders_frame(DAY_1)}, quality_policy=policy)
    assert {spec.name for spec in orders.check_specs if spec.blocking} == {
        "dy_schema__columns",
        "dy_rule__primary_key",
    }
    result = run([orders], store, instance)
    assert result.success  # ERROR, not blocking: the step succeeds with the table written
    assert checks(result)[AMOUNT_MIN].severity == ERROR
    assert stored(store.table).height == 2


def test_the_metrics_are_on_every_materialization(
    store: Store, instance: dg.DagsterInstance
) -> None:
    frames = {day: orders_frame(day, valid=3, invalid=1) for day in (DAY_1, DAY_2)}
    orders = orders_asset(frames, partitions_def=DAILY, metadata={"partition_expr": "day"})
    for day in (DAY_1, DAY_2):
        written = metadata(run([orders], store, instance, partition_key=day))
        assert written["dataframely/invalid_fraction"] == 0.25
        assert written["dataframely/warning_fraction"] == 0.0
        assert written["dagster/partition_row_count"] == 3
        assert written["dagster/row_count"] == 3

    plain = orders_asset({UNPARTITIONED: orders_frame(DAY_1)}, name="plain")
    unpartitioned = metadata(run([plain], store, instance))
    assert unpartitioned["dataframely/invalid_fraction"] == pytest.approx(1 / 3)
    assert "dagster/partition_row_count" not in unpartitioned


def test_the_volume_check_compares_with_the_assets_history(
    store: Store, instance: dg.DagsterInstance
) -> None:
    frames: dict[str, pl.DataFrame] = {}
    orders = orders_asset(
        frames,
        quality_policy=dd.QualityPolicy(volume=dd.VolumeCheck(max_drop=0.5, severity=ERROR)),
    )
    for tag in ("a", "b", "c"):
        frames[UNPARTITIONED] = orders_frame(DAY_1, tag=tag, valid=10, invalid=0)
        assert checks(run([orders], store, instance))["dy_volume"].passed
    good = stored(store.table)

    frames[UNPARTITIONED] = orders_frame(DAY_1, tag="lost", valid=2, invalid=1)
    dropped = run([orders], store, instance)

    assert error_class(dropped) == "RowCountOutOfBoundsError"
    check = checks(dropped)["dy_volume"]
    assert (check.passed, check.severity) == (False, ERROR)
    assert check.metadata["dy_recent_median"].value == 10.0
    assert stored(store.table).equals(good)
    quarantine = stored(store.quarantine)
    assert quarantine["order_id"].to_list() == [f"lost-{DAY_1}-eu-bad0"]


def test_the_undeclared_columns_check_warns_when_the_source_changes(
    store: Store, instance: dg.DagsterInstance
) -> None:
    frames: dict[str, pl.DataFrame] = {}
    orders = orders_asset(frames, quality_policy=dd.QualityPolicy(undeclared_columns="check"))

    frames[UNPARTITIONED] = orders_frame(DAY_1).with_columns(channel=pl.lit("web"))
    first = run([orders], store, instance)
    assert metadata(first)["dataframely/undeclared_columns"] == ["channel"]
    frames[UNPARTITIONED] = orders_frame(DAY_1).with_columns(coupon=pl.lit("X"))
    changed = run([orders], store, instance)

    check = checks(changed)["dy_undeclared_columns"]
    assert (check.passed, check.severity) == (False, WARN)
    assert check.description == "Added: coupon; removed: channel."
    assert "coupon" not in stored(store.table).columns  # dropped, as the spec says


def test_the_blocking_recipe_holds_downstream_automation_back(
    store: Store, instance: dg.DagsterInstance
) -> None:
    frames = {UNPARTITIONED: orders_frame(DAY_1)}
    orders = orders_asset(frames, quality_policy=dd.QualityPolicy(blocking=["amount|min"]))

    @dg.asset(
        deps=[orders],
        automation_condition=dg.AutomationCondition.eager()
        & dg.AutomationCondition.all_deps_blocking_checks_passed(),
    )
    def report() -> None:
        """Reads the orders table, so it must wait for its blocking checks."""

    defs = dg.Definitions(assets=[orders, report], resources={"io_manager": store.manager})
    tick = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    assert run([orders], store, instance).success
    tick = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=tick.cursor)
    assert tick.get_num_requested(report.key) == 0
    frames[UNPARTITIONED] = orders_frame(DAY_1, tag="clean", invalid=0)
    assert run([orders], store, instance).success
    tick = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=tick.cursor)
    assert tick.get_num_requested(report.key) == 1

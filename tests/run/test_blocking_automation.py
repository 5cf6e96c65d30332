"""The blocking recipe: downstream automation waits for a validated asset's blocking checks.

A downstream asset with `AutomationCondition.eager() & all_deps_blocking_checks_passed()` must
not be requested after a batch that failed a blocking rule check, and must be after a clean
one. Evaluated by Dagster's own automation evaluation (`dg.evaluate_automation_conditions`, the
same code the daemon's ticks run), over real materializations on one instance.
"""

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from tests.asset_support import QUIET, SmallOrders
from tests.parquet_io_manager import ParquetIOManager

RECIPE = dg.AutomationCondition.eager() & dg.AutomationCondition.all_deps_blocking_checks_passed()
BAD = pl.DataFrame({"order_id": ["a", "b", "c"], "amount": [1.0, -1.0, 2.0]})
CLEAN = pl.DataFrame({"order_id": ["d", "e"], "amount": [3.0, 4.0]})


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.ephemeral() as own:
        yield own


def pipeline(
    policy: dd.QualityPolicy | None, batch: dict[str, pl.DataFrame], warehouse: Path
) -> tuple[dg.AssetsDefinition, dg.AssetsDefinition, dg.Definitions]:
    @dd.asset(SmallOrders, quarantine=True, quality_policy=policy)
    def orders() -> pl.DataFrame:
        return batch["now"]

    @dg.asset(deps=[orders], automation_condition=RECIPE)
    def revenue_report() -> None:
        """Stands for whatever must not read a batch that failed a blocking check."""

    defs = dg.Definitions(
        assets=[orders, revenue_report],
        resources={"io_manager": ParquetIOManager(base_dir=str(warehouse))},
    )
    return orders, revenue_report, defs


def _batch(
    defs: dg.Definitions, orders: dg.AssetsDefinition, instance: dg.DagsterInstance
) -> dg.ExecuteInProcessResult:
    """One batch: `orders` alone, as its own schedule or sensor would run it."""
    return dg.materialize([orders], resources=defs.resources, instance=instance, run_config=QUIET)


def test_a_failed_blocking_check_holds_the_downstream_back_until_a_clean_batch(
    instance: dg.DagsterInstance, warehouse: Path
) -> None:
    batch = {"now": BAD}
    orders, report, defs = pipeline(dd.QualityPolicy(blocking=["amount|min"]), batch, warehouse)
    first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    assert first.get_num_requested(report.key) == 0  # its dependency is missing

    bad = _batch(defs, orders, instance)
    assert bad.success  # a partial write at WARN: the table holds the valid rows
    held = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
    assert held.get_num_requested(report.key) == 0

    batch["now"] = CLEAN
    _batch(defs, orders, instance)
    released = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=held.cursor)
    assert released.get_num_requested(report.key) == 1


def test_without_a_blocking_rule_the_same_batch_lets_the_downstream_run(
    instance: dg.DagsterInstance, warehouse: Path
) -> None:
    """The control: it is the blocking rule, not the failed check alone, that holds it back."""
    orders, report, defs = pipeline(None, {"now": BAD}, warehouse)
    first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    _batch(defs, orders, instance)
    after = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
    assert after.get_num_requested(report.key) == 1


def test_a_blocking_rule_at_error_stops_the_downstream_in_the_same_run(
    instance: dg.DagsterInstance, warehouse: Path
) -> None:
    policy = dd.QualityPolicy(
        blocking=["amount|min"], severity={"amount|min": dg.AssetCheckSeverity.ERROR}
    )
    orders, report, defs = pipeline(policy, {"now": BAD}, warehouse)
    result = dg.materialize(
        [orders, report],
        resources=defs.resources,
        instance=instance,
        run_config=QUIET,
        raise_on_error=False,
    )
    written = {event.asset_key for event in result.get_asset_materialization_events()}
    assert written == {orders.key}
    assert report.key not in written

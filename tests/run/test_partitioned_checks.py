"""A partitioned asset's checks are partitioned too: each evaluation belongs to one partition.

Without it the catalog mixes every partition's results in one check history ("Partition —"), so
yesterday's failure hides behind today's pass. With it, Dagster records the step's partition on
each evaluation, and the package names the partition on each result (`dy_partition`), which a
direct invocation (no event log) shows too.
"""

import warnings
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely import wiring
from tests.asset_support import (
    CLEAN,
    MIXED,
    WRONG_COLUMNS,
    AssetContext,
    Materialize,
    SmallOrders,
    call_checks,
    collect,
    step_error,
    value,
)

pytestmark = [
    pytest.mark.usefixtures("clean_environment"),
    # Dagster warns that partitioned check specs are a preview feature; that is its message to
    # the user, asserted once below, and noise in every other test.
    pytest.mark.filterwarnings("ignore::dagster.PreviewWarning"),
]

DAYS = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-03")
GRID = dg.MultiPartitionsDefinition(
    {
        "region": dg.StaticPartitionsDefinition(["eu", "us"]),
        "day": dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-02"),
    }
)
SOURCE = {"2026-01-01": MIXED, "2026-01-02": CLEAN}
PARTITION = "dy_partition"


def _evaluations(instance: dg.DagsterInstance, run_id: str) -> dict[str, dg.AssetCheckEvaluation]:
    """The check evaluations of one run as the instance's event log stored them, by name."""
    evaluations = {}
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        assert entry.dagster_event is not None
        evaluation = entry.dagster_event.event_specific_data
        assert isinstance(evaluation, dg.AssetCheckEvaluation)
        evaluations[evaluation.check_name] = evaluation
    return evaluations


@pytest.fixture
def own_instance() -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.ephemeral() as instance:
        yield instance


# --- the specs -------------------------------------------------------------------------------


def test_a_partitioned_asset_declares_every_check_with_its_partitions() -> None:
    @dd.asset(SmallOrders, quarantine=True, partitions_def=DAYS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return SOURCE[context.partition_key]

    specs = list(orders.check_specs)
    assert [spec.name for spec in specs] == [
        spec.name for spec in wiring.check_specs(SmallOrders, asset="orders")
    ]
    assert all(spec.partitions_def == DAYS for spec in specs)


def test_an_unpartitioned_asset_keeps_unpartitioned_checks() -> None:
    @dd.asset(SmallOrders)
    def orders() -> pl.DataFrame:
        return CLEAN

    assert all(spec.partitions_def is None for spec in orders.check_specs)
    assert all(spec.partitions_def is None for spec in wiring.check_specs(SmallOrders, asset="o"))


def test_wiring_check_specs_take_the_partitions() -> None:
    specs = wiring.check_specs(
        SmallOrders, asset="orders", check_granularity="schema", partitions_def=GRID
    )
    assert [spec.name for spec in specs] == ["dy_schema__columns", "dy_schema__rules"]
    assert all(spec.partitions_def == GRID for spec in specs)


def test_dagster_says_partitioned_checks_are_a_preview() -> None:
    with pytest.warns(dg.PreviewWarning, match="partitions_def on an AssetCheckSpec"):
        wiring.check_specs(SmallOrders, asset="orders", partitions_def=DAYS)


def test_declaring_and_running_a_partitioned_asset_raises_no_preview_warning() -> None:
    # dd.asset chose the preview feature, not its user: a suite that turns warnings into errors
    # must still declare and run a partitioned asset.
    with warnings.catch_warnings():
        warnings.simplefilter("error", dg.PreviewWarning)

        @dd.asset(SmallOrders, partitions_def=DAYS)
        def orders() -> pl.DataFrame:
            return CLEAN

        result = dg.materialize([orders], partition_key="2026-01-02")

    assert result.success
    assert all(spec.partitions_def == DAYS for spec in orders.check_specs)


def test_each_partitions_evaluations_carry_that_partition(
    materialize: Materialize, own_instance: dg.DagsterInstance
) -> None:
    @dd.asset(SmallOrders, quarantine=True, partitions_def=DAYS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return SOURCE[context.partition_key]

    mixed = materialize([orders], partition_key="2026-01-01", instance=own_instance)
    clean = materialize([orders], partition_key="2026-01-02", instance=own_instance)

    first = _evaluations(own_instance, mixed.run_id)
    second = _evaluations(own_instance, clean.run_id)
    assert set(first) == set(second) == {spec.name for spec in orders.check_specs}
    assert {e.partition for e in first.values()} == {"2026-01-01"}
    assert {e.partition for e in second.values()} == {"2026-01-02"}
    assert {value(e.metadata[PARTITION]) for e in first.values()} == {"2026-01-01"}
    assert {value(e.metadata[PARTITION]) for e in second.values()} == {"2026-01-02"}
    # Each partition keeps its own outcome: the first day's failure is not the second's.
    assert not first["dy_rule__amount__min"].passed
    assert second["dy_rule__amount__min"].passed
    # And each evaluation points at its own partition's materialization.
    targets = {e.target_materialization_data for e in (*first.values(), *second.values())}
    assert None not in targets
    assert len({t.run_id for t in targets if t is not None}) == 2


def test_an_asset_without_a_context_still_names_its_partition(
    materialize: Materialize, own_instance: dg.DagsterInstance
) -> None:
    @dd.asset(SmallOrders, partitions_def=DAYS)
    def orders() -> pl.DataFrame:
        return CLEAN

    run = materialize([orders], partition_key="2026-01-02", instance=own_instance)

    evaluations = _evaluations(own_instance, run.run_id)
    assert {e.partition for e in evaluations.values()} == {"2026-01-02"}
    assert {value(e.metadata[PARTITION]) for e in evaluations.values()} == {"2026-01-02"}


def test_a_skipped_partitions_passing_checks_carry_the_partition(
    materialize: Materialize, own_instance: dg.DagsterInstance
) -> None:
    @dd.asset(SmallOrders, quarantine=True, partitions_def=DAYS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame | None:
        return None if context.partition_key == "2026-01-02" else MIXED

    materialize([orders], partition_key="2026-01-01", instance=own_instance)
    skipped = materialize([orders], partition_key="2026-01-02", instance=own_instance)

    evaluations = _evaluations(own_instance, skipped.run_id)
    assert evaluations
    assert all(e.passed for e in evaluations.values())
    assert {e.partition for e in evaluations.values()} == {"2026-01-02"}
    assert {value(e.metadata[PARTITION]) for e in evaluations.values()} == {"2026-01-02"}
    assert own_instance.get_materialized_partitions(orders.key) == {"2026-01-01"}


def test_a_column_schema_failure_is_recorded_on_its_partition(
    materialize: Materialize, own_instance: dg.DagsterInstance
) -> None:
    @dd.asset(SmallOrders, partitions_def=DAYS)
    def orders() -> pl.DataFrame:
        return WRONG_COLUMNS

    failed = materialize(
        [orders], partition_key="2026-01-02", instance=own_instance, raise_on_error=False
    )

    assert step_error(failed) == "ColumnSchemaError"
    evaluations = _evaluations(own_instance, failed.run_id)
    gate = evaluations["dy_schema__columns"]
    assert not gate.passed
    assert gate.partition == "2026-01-02"
    assert value(gate.metadata[PARTITION]) == "2026-01-02"


def test_a_multi_partition_is_named_as_dagster_writes_its_key(
    materialize: Materialize, own_instance: dg.DagsterInstance
) -> None:
    @dd.asset(SmallOrders, partitions_def=GRID)
    def orders() -> pl.DataFrame:
        return CLEAN

    run = materialize([orders], partition_key="2026-01-01|us", instance=own_instance)

    evaluations = _evaluations(own_instance, run.run_id)
    assert {e.partition for e in evaluations.values()} == {"2026-01-01|us"}
    assert {value(e.metadata[PARTITION]) for e in evaluations.values()} == {"2026-01-01|us"}


def test_an_unpartitioned_run_names_no_partition(materialize: Materialize) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return MIXED

    run = materialize([orders])

    evaluations = run.get_asset_check_evaluations()
    assert evaluations
    assert all(e.partition is None and PARTITION not in e.metadata for e in evaluations)


# --- direct invocation -----------------------------------------------------------------------


def test_a_call_names_its_partition_on_every_result(
    asset_context: AssetContext, quarantine_dir: Path
) -> None:
    @dd.asset(SmallOrders, quarantine=True, partitions_def=DAYS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return SOURCE[context.partition_key]

    checks = call_checks(orders(asset_context(partition_key="2026-01-01")))

    assert set(checks) == {spec.name for spec in orders.check_specs}
    assert {value(c.metadata[PARTITION]) for c in checks.values()} == {"2026-01-01"}
    assert not checks["dy_rule__amount__min"].passed
    assert (quarantine_dir / "orders_quarantine" / "2026-01-01.parquet").exists()


def test_a_skipped_call_names_its_partition(asset_context: AssetContext) -> None:
    @dd.asset(SmallOrders, partitions_def=DAYS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame | None:
        return None

    checks = call_checks(orders(asset_context(partition_key="2026-01-02")))

    assert checks
    assert all(c.passed for c in checks.values())
    assert {value(c.metadata[PARTITION]) for c in checks.values()} == {"2026-01-02"}


def test_a_call_without_a_partition_key_names_none() -> None:
    @dd.asset(SmallOrders, partitions_def=DAYS)
    def orders() -> pl.DataFrame:
        return CLEAN

    checks = call_checks(orders())

    assert checks
    assert all(PARTITION not in c.metadata for c in checks.values())


# --- hand-wired ------------------------------------------------------------------------------


def test_a_hand_wired_asset_records_each_partition(
    materialize: Materialize, own_instance: dg.DagsterInstance
) -> None:
    @dg.asset(
        partitions_def=DAYS,
        check_specs=wiring.check_specs(SmallOrders, asset="orders", partitions_def=DAYS),
        metadata=wiring.schema_metadata(SmallOrders),
    )
    def orders(context: dg.AssetExecutionContext) -> wiring.AssetYield:
        yield from wiring.validation_results(
            SmallOrders,
            SOURCE[context.partition_key],
            valid_key=context.asset_key,
            quarantine_writer=wiring.delegating_writer(context),
            partition_key=context.partition_key,
        )

    run = materialize([orders], partition_key="2026-01-01", instance=own_instance)

    evaluations = _evaluations(own_instance, run.run_id)
    assert set(evaluations) == {spec.name for spec in orders.check_specs}
    assert {e.partition for e in evaluations.values()} == {"2026-01-01"}
    assert {value(e.metadata[PARTITION]) for e in evaluations.values()} == {"2026-01-01"}


def test_check_results_over_a_stored_partition_record_it(
    materialize: Materialize, own_instance: dg.DagsterInstance
) -> None:
    @dg.asset(partitions_def=DAYS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return SOURCE[context.partition_key]

    @dg.multi_asset_check(
        specs=wiring.check_specs(SmallOrders, asset="orders", partitions_def=DAYS),
        can_subset=False,
    )
    def orders_checks(
        context: dg.AssetCheckExecutionContext, orders: pl.DataFrame
    ) -> Iterator[dg.AssetCheckResult]:
        yield from wiring.check_results(
            SmallOrders,
            orders,
            asset_key=dg.AssetKey("orders"),
            severity=dg.AssetCheckSeverity.WARN,
            partition_key=context.partition_key,
        )

    run = materialize([orders, orders_checks], partition_key="2026-01-01", instance=own_instance)

    evaluations = _evaluations(own_instance, run.run_id)
    assert {e.partition for e in evaluations.values()} == {"2026-01-01"}
    assert {value(e.metadata[PARTITION]) for e in evaluations.values()} == {"2026-01-01"}
    assert not evaluations["dy_rule__amount__min"].passed


def test_check_results_name_the_partition_they_are_given() -> None:
    results = collect(
        wiring.check_results(
            SmallOrders,
            MIXED,
            asset_key=dg.AssetKey("orders"),
            severity=dg.AssetCheckSeverity.WARN,
            partition_key="2026-01-01",
        )
    )
    assert {value(r.metadata[PARTITION]) for r in call_checks(results).values()} == {"2026-01-01"}
    unnamed = call_checks(
        wiring.check_results(
            SmallOrders, MIXED, asset_key=dg.AssetKey("o"), severity=dg.AssetCheckSeverity.WARN
        )
    )
    assert all(PARTITION not in r.metadata for r in unnamed.values())

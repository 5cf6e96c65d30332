"""A partitioned asset's checks are partitioned too: each evaluation belongs to one partition.

Without it the catalog mixes every partition's results in one check history ("Partition —"), so
yesterday's failure hides behind today's pass. With it, Dagster records the step's partition on
each evaluation, and the package names the partition on each result (`dy_partition`), which a
direct invocation (no event log) shows too.
"""

import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely import wiring
from tests.asset_support import (
    ALL_INVALID,
    CLEAN,
    MIXED,
    QUIET,
    WRONG_COLUMNS,
    AssetContext,
    Materialize,
    SmallOrders,
    call_checks,
    collect,
    first_failure,
    step_error,
    value,
)
from tests.parquet_io_manager import ParquetIOManager

pytestmark = [
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


def test_a_call_of_an_asset_without_a_context_names_its_partition(
    asset_context: AssetContext,
) -> None:
    """Dagster takes the context of a function that declares none; the package reads it."""

    @dd.asset(SmallOrders, partitions_def=DAYS)
    def orders() -> pl.DataFrame:
        return MIXED.filter(pl.col("amount") >= 0)

    for checks in (
        call_checks(orders(asset_context(partition_key="2026-01-02"))),
        dd.testing.call_asset(orders, partition_key="2026-01-02").checks,
    ):
        assert set(checks) == {spec.name for spec in orders.check_specs}
        assert {value(c.metadata[PARTITION]) for c in checks.values()} == {"2026-01-02"}


@pytest.mark.parametrize(
    ("partitions_def", "key"),
    [
        (DAYS, "not-a-date"),
        (DAYS, "2026-01-03"),  # the end date is excluded
        (DAYS, "2025-12-31"),
        (dg.DailyPartitionsDefinition(start_date="2026-01-01"), "2999-01-01"),  # not yet
        (dg.StaticPartitionsDefinition(["eu", "us"]), "apac"),
        (GRID, "2026-01-01|apac"),
        (GRID, "eu|2026-01-01"),  # dimensions in name order: day, then region
    ],
)
def test_a_call_refuses_a_partition_the_asset_does_not_have(
    asset_context: AssetContext,
    instance: dg.DagsterInstance,
    partitions_def: dg.PartitionsDefinition[str],
    key: str,
) -> None:
    calls: list[str] = []

    @dd.asset(SmallOrders, partitions_def=partitions_def)
    def orders() -> pl.DataFrame:
        calls.append("called")
        return CLEAN

    @dd.asset(SmallOrders, name="with_context", quarantine=True, partitions_def=partitions_def)
    def with_context(context: dg.AssetExecutionContext) -> pl.DataFrame:
        calls.append("called")
        return CLEAN

    with pytest.raises(dg.DagsterUnknownPartitionError):
        dg.materialize([orders], partition_key=key, instance=instance)
    for asset in (orders, with_context):
        with pytest.raises(dd.errors.UnknownPartitionKeyError) as raised:
            list(asset(asset_context(partition_key=key)))
        assert raised.value.partition_key == key
        with pytest.raises(dg.DagsterUnknownPartitionError, match=key.replace("|", r"\|")):
            dd.testing.call_asset(asset, partition_key=key)
    assert calls == []
    assert raised.value.first_key == partitions_def.get_first_partition_key()


def test_a_call_accepts_any_key_of_dynamic_partitions() -> None:
    """Their keys live in an instance, which a direct call usually lacks."""

    @dd.asset(SmallOrders, partitions_def=dg.DynamicPartitionsDefinition(name="stores"))
    def orders() -> pl.DataFrame:
        return CLEAN

    call = dd.testing.call_asset(orders, partition_key="store-7")
    assert {value(c.metadata[PARTITION]) for c in call.checks.values()} == {"store-7"}


# A direct call equals a run of the same partition: generated keys (known or not), frames
# (every outcome) and the ways an asset is declared and called.

CANDIDATE_KEYS = {
    "daily": (DAYS, ["2026-01-01", "2026-01-02", "2026-01-03", "not-a-date", "2025-12-31"]),
    "static": (dg.StaticPartitionsDefinition(["eu", "us"]), ["eu", "us", "apac"]),
    "multi": (GRID, ["2026-01-01|eu", "2026-01-01|us", "2026-01-02|eu", "eu|2026-01-01"]),
}
FRAMES = {
    "clean": CLEAN,
    "mixed": MIXED,
    "all invalid": ALL_INVALID,
    "wrong columns": WRONG_COLUMNS,
}
FORMS = ("no context", "context", "quarantine", "multi-asset")


def _declared(form: str, partitions_def: dg.PartitionsDefinition[str], frame: Any) -> Any:
    """The asset of one form, returning `frame`."""
    if form == "no context":

        @dd.asset(SmallOrders, name="orders", partitions_def=partitions_def)
        def plain() -> pl.DataFrame | None:
            return frame

        return plain
    if form == "multi-asset":

        @dd.multi_asset(outs={"orders": dd.AssetOut(SmallOrders)}, partitions_def=partitions_def)
        def several() -> dict[str, pl.DataFrame | None]:
            return {"orders": frame}

        return several

    @dd.asset(
        SmallOrders, name="orders", quarantine=form == "quarantine", partitions_def=partitions_def
    )
    def with_context(context: dg.AssetExecutionContext) -> pl.DataFrame | None:
        return frame

    return with_context


def _shown(metadata: Any) -> dict[str, Any]:
    """Metadata as plain values, without the quarantine's address (a run and a call store it
    in different places)."""
    return {k: value(v) for k, v in metadata.items() if "address" not in k}


def _verdict_of_run(result: dg.ExecuteInProcessResult) -> tuple[Any, ...]:
    error = first_failure(result)
    (materialization,) = result.get_asset_materialization_events() or [None]
    rows = None
    if materialization is not None:
        rows = materialization.materialization.metadata["dagster/row_count"].value
    checks = {
        e.check_name: (e.passed, e.severity, _shown(e.metadata))
        for e in result.get_asset_check_evaluations()
    }
    return error, rows, checks


def _verdict_of_call(events: list[Any], error: Exception | None) -> tuple[Any, ...]:
    tables = [e for e in events if isinstance(e, dg.MaterializeResult)]
    rows = None
    if tables:
        assert tables[0].metadata is not None
        rows = value(tables[0].metadata["dagster/row_count"])
    checks = {
        e.check_name: (e.passed, e.severity, _shown(e.metadata))
        for e in events
        if isinstance(e, dg.AssetCheckResult)
    }
    return (type(error).__name__ if error is not None else None), rows, checks


@settings(max_examples=30, deadline=None)
@given(
    kind=st.sampled_from(sorted(CANDIDATE_KEYS)),
    pick=st.integers(min_value=0, max_value=4),
    frame=st.sampled_from([*FRAMES, "skipped"]),
    form=st.sampled_from(FORMS),
    through_call_asset=st.booleans(),
)
def test_a_direct_call_equals_a_run_of_the_same_partition(
    instance: dg.DagsterInstance,
    kind: str,
    pick: int,
    frame: str,
    form: str,
    through_call_asset: bool,
) -> None:
    partitions_def, candidates = CANDIDATE_KEYS[kind]
    key = candidates[pick % len(candidates)]
    asset = _declared(form, partitions_def, FRAMES.get(frame))
    with tempfile.TemporaryDirectory() as warehouse:
        try:
            run: Any = dg.materialize(
                [asset],
                partition_key=key,
                instance=instance,
                resources={"io_manager": ParquetIOManager(base_dir=warehouse)},
                raise_on_error=False,
                run_config=QUIET,
            )
        except dg.DagsterUnknownPartitionError as refused:
            run = refused
        events: list[Any] = []
        error: Exception | None = None
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", str(Path(warehouse) / "q"))
            try:
                if through_call_asset:
                    call = dd.testing.call_asset(asset, partition_key=key)
                    events = [call.materialization, *call.checks.values()]
                    error = call.error
                else:
                    context = dg.build_asset_context(partition_key=key, instance=instance)
                    for event in asset(context):
                        events.append(event)
            except (dd.errors.ValidationFailedError, dg.DagsterUnknownPartitionError) as raised:
                error = raised

    if isinstance(run, dg.DagsterUnknownPartitionError):
        assert isinstance(error, dd.errors.UnknownPartitionKeyError)
        assert events == []
        return
    assert partitions_def.has_partition_key(key)
    ran = _verdict_of_run(run)
    called = _verdict_of_call([e for e in events if e is not None], error)
    assert called == ran
    assert {checked[2][PARTITION] for checked in ran[2].values()} == {key}


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

"""Backfills of `pipeline`'s three assets on dagster-dask, each step on a Dask worker process.

The instance is in PostgreSQL, the tables and quarantines on the loopback S3 server, written
through `QuarantineAwareIOManager(staged_writes=True)` around dagster-polars' manager. What is
stored is read straight from S3 with s3fs and Polars; what the runs reported, from the
instance's event log. Each test writes under a prefix of its own; the volume check's history
is the instance's, so each test backfills partitions the others leave alone after the first
backfill (`first`), which every test may read.
"""

import functools
import os
import signal
import time
from collections.abc import Callable, Mapping
from typing import Any

import dagster as dg
import polars as pl
import pytest
import s3fs
from polars.testing import assert_frame_equal

from integration_tests.s3.support import S3Endpoint

from . import pipeline
from .conftest import Cluster, Run, backfill, base_dir, finish, run_backfill

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

EVERY = pipeline.PARTITIONS
WAIT_SECONDS = 240.0
"""The longest a test waits for a run it started to reach a point (a hold, a step's end)."""


@functools.cache
def filesystem(s3: S3Endpoint) -> s3fs.S3FileSystem:
    """One s3fs client for the module's reads (a new one costs more than a read), which keeps no
    listing: every read asks the server."""
    return s3fs.S3FileSystem(
        skip_instance_cache=True, use_listings_cache=False, **s3.storage_options()
    )


def stored(s3: S3Endpoint, base: str, table: str, partition: str) -> pl.DataFrame | None:
    """The stored object of `table` (an asset key path) for the partition, None if absent."""
    try:
        with filesystem(s3).open(f"{base}/{table}/{partition}.parquet", "rb") as file:
            return pl.read_parquet(file)
    except FileNotFoundError:
        return None


def quarantine_of(table: str) -> str:
    return f"{table}_quarantine"


def split(frame: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The valid and the invalid rows of an input frame (each invalid row has an id `-bad`)."""
    bad = pl.col("order_id").str.contains("-bad")
    return frame.filter(~bad), frame.filter(bad)


def assert_partition_holds(s3: S3Endpoint, base: str, partition: str, tag: str) -> None:
    """Every table and quarantine of the partition is exactly the split of its input rows."""
    assert_tables_hold(s3, base, partition, {}, default=tag)


def assert_tables_hold(
    s3: S3Endpoint, base: str, partition: str, tags: Mapping[str, str], *, default: str
) -> None:
    """Each table and its quarantine are exactly the split of the input rows of one tag: the
    table's in `tags`, else `default`."""
    for table in pipeline.TABLES:
        frame = pipeline.inputs(partition, tags.get(table, default))[table]
        valid, invalid = split(frame)
        table_rows = stored(s3, base, table, partition)
        quarantine_rows = stored(s3, base, quarantine_of(table), partition)
        assert table_rows is not None, f"{table} {partition} was not written"
        assert quarantine_rows is not None, f"{quarantine_of(table)} {partition} was not written"
        assert_frame_equal(table_rows.sort("order_id"), valid.sort("order_id"))
        assert_frame_equal(
            quarantine_rows.select(frame.columns).sort("order_id"), invalid.sort("order_id")
        )


@pytest.fixture(scope="module")
def first(s3: S3Endpoint, cluster: Cluster) -> tuple[str, dict[str, Run]]:
    """A backfill of every partition, input `first`: where it stored, and its runs."""
    base = base_dir(s3, "first")
    runs = run_backfill(cluster, "first", [(p, "first") for p in EVERY], base)
    return base, runs


def test_a_backfill_stores_each_partitions_rows_exactly(
    s3: S3Endpoint, first: tuple[str, dict[str, Run]]
) -> None:
    base, runs = first
    assert sorted(runs) == EVERY
    assert all(run.success for run in runs.values()), [r for r in runs.values() if not r.success]
    for partition in EVERY:
        assert_partition_holds(s3, base, partition, "first")


def events(instance: dg.DagsterInstance, run_id: str, kind: dg.DagsterEventType) -> list[Any]:
    """The event-specific data of every event of `kind` in the run, from the event log."""
    return [
        entry.dagster_event.event_specific_data
        for entry in instance.all_logs(run_id, of_type=kind)
        if entry.dagster_event is not None
    ]


def materialized(instance: dg.DagsterInstance, run_id: str) -> dict[str, str | None]:
    """Each asset the run materialized (as its key path) and the partition it names."""
    found: dict[str, str | None] = {}
    for data in events(instance, run_id, dg.DagsterEventType.ASSET_MATERIALIZATION):
        path = data.materialization.asset_key.to_user_string()
        assert path not in found, f"{path} materialized twice in run {run_id}"
        found[path] = data.materialization.partition
    return found


def test_every_check_and_materialization_names_its_partition(
    instance: dg.DagsterInstance, first: tuple[str, dict[str, Run]]
) -> None:
    _, runs = first
    planned_checks: set[tuple[str, str]] | None = None
    for partition, run in runs.items():
        assert materialized(instance, run.run_id) == dict.fromkeys(pipeline.TABLES, partition)
        planned = {
            (spec.asset_key.to_user_string(), spec.check_name)
            for spec in events(
                instance, run.run_id, dg.DagsterEventType.ASSET_CHECK_EVALUATION_PLANNED
            )
        }
        evaluations = events(instance, run.run_id, dg.DagsterEventType.ASSET_CHECK_EVALUATION)
        evaluated = [(e.asset_key.to_user_string(), e.check_name) for e in evaluations]
        # One evaluation per planned check, each naming this run's partition.
        assert sorted(evaluated) == sorted(planned)
        assert {e.partition for e in evaluations} == {partition}
        planned_checks = planned_checks or planned
        assert planned == planned_checks  # the same checks in every partition
    assert planned_checks is not None
    assert ("orders", "dy_volume") in planned_checks
    assert {asset for asset, _ in planned_checks} == set(pipeline.TABLES)


def volume(instance: dg.DagsterInstance, run: Run) -> Any:
    (evaluation,) = [
        e
        for e in events(instance, run.run_id, dg.DagsterEventType.ASSET_CHECK_EVALUATION)
        if e.check_name == "dy_volume" and e.asset_key == dg.AssetKey("orders")
    ]
    return evaluation


def test_the_volume_check_compares_each_partition_with_its_own_history(
    s3: S3Endpoint,
    cluster: Cluster,
    instance: dg.DagsterInstance,
    first: tuple[str, dict[str, Run]],
) -> None:
    # After `first`: partition 0 has 3 valid rows, 1 has 10 and 2 has 20 (pipeline.SIZES).
    small, middle, large = EVERY[0:3]
    base = base_dir(s3, "volume")
    tags = {small: "first", middle: "first", large: "drop"}
    runs = run_backfill(cluster, "volume", list(tags.items()), base)
    assert all(run.success for run in runs.values())  # a volume breach warns
    # The small partition's 3 rows match its own history, far below the table's other days.
    assert volume(instance, runs[small]).passed
    assert volume(instance, runs[middle]).passed
    dropped = volume(instance, runs[large])
    assert not dropped.passed
    assert dropped.severity == dg.AssetCheckSeverity.WARN
    assert pipeline.valid_rows(large, "drop") < pipeline.valid_rows(large, "first") / 2
    for partition, tag in tags.items():
        assert_partition_holds(s3, base, partition, tag)


def wait_for(condition: Callable[[], bool], what: str, process: Any = None) -> None:
    """Until `condition` holds; the bound only stops a broken run from hanging the suite."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert process is None or all(p.poll() is None for p in process), f"exited before {what}"
        assert time.monotonic() < deadline, f"no {what} in {WAIT_SECONDS:.0f} s"
        time.sleep(0.1)


STEP_TABLES = {
    "orders": ["orders"],
    "channels": ["web", "shop"],
    "book": ["book/orders", "book/refunds"],
}
"""The tables each step of `pipeline`'s job writes, by step key."""


def steps_with(instance: dg.DagsterInstance, run_id: str, kind: dg.DagsterEventType) -> set[str]:
    """The steps of the run with an event of `kind`."""
    return {str(entry.step_key) for entry in instance.all_logs(run_id, of_type=kind)}


def steps_settled(instance: dg.DagsterInstance, run_id: str, *, held: str | None) -> bool:
    """Every step the failed run started has ended, except `held`, lost with its worker."""
    started = steps_with(instance, run_id, dg.DagsterEventType.STEP_START)
    ended = steps_with(instance, run_id, dg.DagsterEventType.STEP_SUCCESS) | steps_with(
        instance, run_id, dg.DagsterEventType.STEP_FAILURE
    )
    return started - {held} <= ended


def failure_errors(instance: dg.DagsterInstance, run_id: str) -> dict[str, list[str]]:
    """Each failed step's error class names, its causes' included."""
    failures: dict[str, list[str]] = {}
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_FAILURE):
        error = entry.dagster_event.step_failure_data.error
        names = failures.setdefault(str(entry.step_key), [])
        while error is not None:
            names.append(error.cls_name or "")
            error = error.cause or error.context
    return failures


def observed(instance: dg.DagsterInstance, run_id: str) -> set[str]:
    return {
        data.asset_observation.asset_key.to_user_string()
        for data in events(instance, run_id, dg.DagsterEventType.ASSET_OBSERVATION)
    }


def run_id_of(instance: dg.DagsterInstance, job: str, partition: str) -> str | None:
    runs = instance.get_runs(dg.RunsFilter(job_name=job, tags={"dagster/partition": partition}))
    return runs[0].run_id if runs else None


def test_two_overlapping_backfills_never_interleave_and_every_other_partition_completes(
    s3: S3Endpoint, cluster: Cluster, instance: dg.DagsterInstance
) -> None:
    shared = EVERY[6:8]
    only_a, only_b = EVERY[3:6], EVERY[8:10]
    base = base_dir(s3, "overlap")
    # Backfill A's two processes each start with a shared partition and hold its `orders` step
    # (after STEP_START, before its writes) until backfill B is over, out of its worker's
    # thread pool, so every worker keeps running the other steps.
    holds = [f"overlap_a_{index}-{partition}" for index, partition in enumerate(shared)]
    for name in holds:  # seceded: the steps placed on a held worker run beside the hold
        (cluster.signals / f"hold-{name}").write_text("secede")
    a = backfill(cluster, "overlap_a", [(p, "a") for p in [*shared, *only_a]], base, processes=2)
    try:
        wait_for(
            lambda: all((cluster.signals / f"holding-{name}").exists() for name in holds),
            "hold of A's shared steps",
            a,
        )
        # A's other steps of the shared partitions end first, so what B may write is certain.
        for index, partition in enumerate(shared):
            run_id = run_id_of(instance, f"overlap_a_{index}", partition)
            assert run_id is not None
            wait_for(
                lambda r=run_id: (
                    {"channels", "book"}
                    <= steps_with(instance, r, dg.DagsterEventType.STEP_SUCCESS)
                ),
                "end of A's other steps",
                a,
            )
        b_runs = run_backfill(cluster, "overlap_b", [(p, "b") for p in [*shared, *only_b]], base)
        # B stopped inside A's `orders` writes, before writing anything of `orders`.
        for partition in shared:
            run = b_runs[partition]
            assert not run.success
            failed = failure_errors(instance, run.run_id)
            assert set(failed) == {"orders"}
            assert "ConcurrentRunError" in failed["orders"]
            assert "orders" not in materialized(instance, run.run_id)
            assert "orders_quarantine" not in observed(instance, run.run_id)
            for table in ("orders", "orders_quarantine"):
                assert stored(s3, base, table, partition) is None  # A holds, B refused
        assert all(b_runs[p].success for p in only_b)
    finally:
        for name in holds:
            (cluster.signals / f"release-{name}").touch()
        for process in a:
            process.wait()
    a_runs = finish(a)
    assert all(run.success for run in a_runs.values())
    # Nothing torn: each table and its quarantine are one run's rows, whole. `orders` of a
    # shared partition is A's (B never wrote it); the other tables B rewrote after A's step ended.
    for partition in only_a:
        assert_partition_holds(s3, base, partition, "a")
    for partition in only_b:
        assert_partition_holds(s3, base, partition, "b")
    for partition in shared:
        assert_tables_hold(s3, base, partition, {"orders": "a"}, default="b")


def test_a_worker_killed_inside_a_step_leaves_the_last_good_table_and_a_reexecution_completes(
    s3: S3Endpoint, cluster: Cluster, instance: dg.DagsterInstance
) -> None:
    killed, other = EVERY[12:14]
    base = base_dir(s3, "killed")
    earlier = run_backfill(cluster, "killed_first", [(killed, "first"), (other, "first")], base)
    assert all(run.success for run in earlier.values())
    hold = f"killed_0-{killed}"
    (cluster.signals / f"hold-{hold}").touch()
    second = backfill(cluster, "killed", [(killed, "second"), (other, "second")], base)
    try:
        holding = cluster.signals / f"holding-{hold}"
        # Only the held run's process must live: the other partition's run may end first.
        wait_for(holding.exists, "hold of the step", second[:1])
        pid = int(holding.read_text())
        (worker,) = [w for w in cluster.workers if w.pid == pid]  # a worker process, not a run's
        os.kill(pid, signal.SIGKILL)
        worker.wait()
        runs = finish(second)
    finally:
        (cluster.signals / f"release-{hold}").touch()
        for process in second:
            process.wait()
    cluster.start_worker()  # as a deployment replaces a lost worker
    cluster.wait_for_workers()
    assert not runs[killed].success
    dead = instance.get_run_by_id(runs[killed].run_id)
    assert dead is not None
    assert dead.status == dg.DagsterRunStatus.FAILURE
    assert "orders" not in steps_with(instance, dead.run_id, dg.DagsterEventType.STEP_SUCCESS)
    # The scheduler may have given the killed worker a step of the other run too (a one-task
    # step is placed at once, not queued): that run fails the same way. dagster-dask fails a
    # run at its first lost task and returns, while the run's steps that other workers started
    # go on and write: wait until each has ended, as a deployment must before re-executing
    # (the concurrent-run guard no longer counts a failed run).
    failed = {partition: run for partition, run in runs.items() if not run.success}
    wait_for(
        lambda: all(
            steps_settled(instance, run.run_id, held="orders" if partition == killed else None)
            for partition, run in failed.items()
        ),
        "end of the failed runs' other steps",
    )
    # Nothing is torn: each table holds what its step wrote in this backfill if that step
    # succeeded, else the earlier backfill's rows, whole (the killed step wrote nothing).
    for partition, run in runs.items():
        succeeded = steps_with(instance, run.run_id, dg.DagsterEventType.STEP_SUCCESS)
        kept = {
            table: "first"
            for step, tables in STEP_TABLES.items()
            if step not in succeeded
            for table in tables
        }
        assert "orders" in kept or partition != killed
        assert_tables_hold(s3, base, partition, kept, default="second")
    # A re-execution of each failed run runs what failed, with the backfill's tags given again,
    # and leaves the partition as an undisturbed run does.
    index = {killed: 0, other: 1}
    reexecutions = finish(
        [
            cluster.run_process(
                pipeline.run_arguments(
                    [(partition, "second")],
                    job=f"killed_{index[partition]}",
                    base_dir=base,
                    address=cluster.address,
                    reexecute=run.run_id,
                )
            )
            for partition, run in failed.items()
        ]
    )
    for partition, reexecution in reexecutions.items():
        assert reexecution.success
        succeeded = steps_with(instance, runs[partition].run_id, dg.DagsterEventType.STEP_SUCCESS)
        rerun = {
            table
            for step, tables in STEP_TABLES.items()
            if step not in succeeded
            for table in tables
        }
        assert set(materialized(instance, reexecution.run_id)) == rerun
    for partition in (killed, other):
        assert_partition_holds(s3, base, partition, "second")

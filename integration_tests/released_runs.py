"""Two run processes released into one partition's step together, round after round.

Each of two processes (`A` and `B`, `start`) executes one run per round, each round a partition
of its own, on the Dagster instance the test serialized into the environment, so the two runs
of a round reach the same instance from two processes as two run workers do. Inside the step,
the asset's input `gate` is loaded first: its loader touches `<directory>/<partition>/gate-<me>`
and waits for the other process's file, so both runs leave input loading, and reach the
package's check before writing, within a few milliseconds of each other. Nothing else orders
them: either may announce, read and decide first.

A round whose mode is `announced` holds each run once more, right after the package stored its
announcement and before it reads the other runs, until the other run has announced too: both
then read each other, and the tie is decided by creation order alone.

Each round names its executor: `in_process` runs the step in the run's process, `multiprocess`
in a child process that rebuilds the job (`race_job_multiprocess`) and reaches the instance
from there.
"""

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
from upath import UPath

import dagster_dataframely as dd
from dagster_dataframely._store import concurrent_runs

from .conftest import DAY_1, Orders, assert_quarantine, assert_table, orders_frame

INSTANCE = "DAGSTER_DATAFRAMELY_TEST_RELEASED_INSTANCE"
DIRECTORY = "DAGSTER_DATAFRAMELY_TEST_RELEASED_DIR"
RUNNER = "DAGSTER_DATAFRAMELY_TEST_RELEASED_RUNNER"
ROUNDS = "DAGSTER_DATAFRAMELY_TEST_RELEASED_ROUNDS"

RELEASED, ANNOUNCED = "released", "announced"
"""Modes of a round: both runs released into the step together; and also held after announcing."""
IN_PROCESS, MULTIPROCESS = "in_process", "multiprocess"
"""Executors of a round: the step in the run's process, or in a child process."""
MODE_TAG = "released_runs/mode"
RUNNER_TAG = "released_runs/runner"
PARTITIONS = dg.StaticPartitionsDefinition([f"round-{number}" for number in range(1, 13)])
WAIT_SECONDS = 240.0


Round = tuple[str, str, str]
"""One round: its partition, its mode and its executor."""


def frame_of(runner: str, partition: str) -> pl.DataFrame:
    """The rows `runner` returns for `partition`: tagged with both, and different counts."""
    valid, invalid = (2, 1) if runner == "A" else (3, 2)
    return orders_frame(DAY_1, tag=f"{runner}-{partition}", valid=valid, invalid=invalid)


def _other(runner: str) -> str:
    return "B" if runner == "A" else "A"


def _meet(directory: Path, name: str, runner: str) -> None:
    """Touch `<name>-<runner>` in `directory`, then wait for the other runner's."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}-{runner}").touch()
    theirs = directory / f"{name}-{_other(runner)}"
    deadline = time.monotonic() + WAIT_SECONDS
    while not theirs.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{theirs} did not appear in {WAIT_SECONDS:.0f} s")
        time.sleep(0.001)


class GateLoader(dg.IOManager):
    """Loads the `gate` input once the other process's run of the partition has reached it."""

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        raise NotImplementedError("gate is an external asset")

    def load_input(self, context: dg.InputContext) -> int:
        if context.step_context.run_tags.get(MODE_TAG) == ANNOUNCED:
            _hold_after_announcing()
        _meet(Path(os.environ[DIRECTORY]) / context.partition_key, "gate", os.environ[RUNNER])
        return 0


class ParquetFiles(dg.UPathIOManager):
    """Parquet files under the race's directory (`<asset>/<partition>.parquet`)."""

    extension = ".parquet"

    def dump_to_path(self, context: dg.OutputContext, obj: pl.DataFrame, path: UPath) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        obj.write_parquet(str(path))

    def load_from_path(self, context: dg.InputContext, path: UPath) -> pl.DataFrame:
        return pl.read_parquet(str(path))


@dd.asset(
    Orders,
    quarantine=True,
    partitions_def=PARTITIONS,
    ins={"gate": dg.AssetIn("gate", input_manager_key="gate")},
)
def orders(context: dg.AssetExecutionContext, gate: int) -> pl.DataFrame:
    return frame_of(context.run.tags[RUNNER_TAG], context.partition_key)


def _hold_after_announcing() -> None:
    """From now on, hold each run of a round of mode `announced` right after it stored its
    announcement, in the step's process (the gate arms it there, before the check).

    Wraps the function through which the package stores every word of a run, in this process
    only; the words themselves are stored unchanged.
    """
    store = concurrent_runs.report_step_engine_event
    if getattr(store, "holds_after_announcing", False):
        return

    def store_then_hold(
        instance: dg.DagsterInstance,
        run: dg.DagsterRun,
        step_key: str,
        message: str,
        metadata: Mapping[str, str],
    ) -> None:
        store(instance, run, step_key, message, metadata)
        announcing = concurrent_runs.Word.ANNOUNCED.value in metadata.values()
        if announcing and run.tags.get(MODE_TAG) == ANNOUNCED:
            partition = run.tags["dagster/partition"]
            _meet(Path(os.environ[DIRECTORY]) / partition, "announced", run.tags[RUNNER_TAG])

    store_then_hold.holds_after_announcing = True  # type: ignore[attr-defined]
    concurrent_runs.report_step_engine_event = store_then_hold  # type: ignore[assignment]


def _race_job(executor: dg.ExecutorDefinition) -> dg.JobDefinition:
    """The asset's job on `executor`, storing under the race's directory."""
    definitions = dg.Definitions(
        assets=[dg.AssetSpec("gate"), orders],
        jobs=[dg.define_asset_job("race", selection=[orders], executor_def=executor)],
        resources={
            "io_manager": ParquetFiles(base_path=UPath(os.environ[DIRECTORY]) / "warehouse"),
            "gate": GateLoader(),
        },
    )
    return definitions.resolve_job_def("race")


def race_job_in_process() -> dg.JobDefinition:
    """Each step in the run's own process."""
    return _race_job(dg.in_process_executor)


def race_job_multiprocess() -> dg.JobDefinition:
    """Each step in a child process, which rebuilds the job from this function."""
    return _race_job(dg.multiprocess_executor)


JOBS = {IN_PROCESS: race_job_in_process, MULTIPROCESS: race_job_multiprocess}


def start(
    instance: dg.DagsterInstance, runner: str, rounds: Sequence[Round], *, directory: Path
) -> subprocess.Popen[bytes]:
    """Start runner `runner`'s process: one run per round of `rounds`, in order."""
    environment = {
        **os.environ,
        INSTANCE: dg.serialize_value(instance.get_ref()),
        DIRECTORY: str(directory),
        RUNNER: runner,
        ROUNDS: json.dumps(list(rounds)),
    }
    log = (directory / f"runner-{runner}.log").open("wb")
    return subprocess.Popen(
        [sys.executable, "-c", f"from {__name__} import run_rounds; run_rounds()"],
        env=environment,
        cwd=Path(__file__).resolve().parent.parent,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # so the test can stop the runner and its steps' processes
    )


def run_rounds() -> None:
    """Execute this runner's run of each round on the instance the environment names."""
    reference: Any = dg.deserialize_value(os.environ[INSTANCE])
    runner = os.environ[RUNNER]
    with dg.DagsterInstance.from_ref(reference) as instance:
        for partition, mode, executor in json.loads(os.environ[ROUNDS]):
            dg.execute_job(
                dg.reconstructable(JOBS[executor]),
                instance=instance,
                tags={RUNNER_TAG: runner, MODE_TAG: mode, "dagster/partition": partition},
                raise_on_error=False,
            )


def race(instance: dg.DagsterInstance, rounds: Sequence[Round], directory: Path) -> None:
    """Run `rounds` in two runner processes and wait for both; a failed runner shows its log.
    Any process still running at the end (a runner, a step's child) is killed."""
    runners = [start(instance, runner, rounds, directory=directory) for runner in "AB"]
    try:
        for runner, process in zip("AB", runners, strict=True):
            code = process.wait(WAIT_SECONDS * len(rounds))
            log = (directory / f"runner-{runner}.log").read_text(errors="replace")
            assert code == 0, f"runner {runner} exited with {code}:\n{log[-4000:]}"
    finally:
        for process in runners:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def assert_one_writer(
    instance: dg.DagsterInstance, directory: Path, partition: str, mode: str
) -> str:
    """Exactly one of the partition's two runs wrote, and the stored pair is its rows; the other
    failed with `ConcurrentRunError` naming it and materialized nothing. In a round of mode
    `announced`, the writer is the run created first. Returns the writer's runner name."""
    records = instance.get_run_records(filters=dg.RunsFilter(tags={"dagster/partition": partition}))
    assert len(records) == 2, [record.dagster_run.run_id for record in records]
    statuses = {record.dagster_run.status for record in records}
    assert statuses == {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE}, statuses
    (writer,) = [r for r in records if r.dagster_run.status == dg.DagsterRunStatus.SUCCESS]
    (loser,) = [r for r in records if r.dagster_run.status == dg.DagsterRunStatus.FAILURE]
    (failure,) = instance.all_logs(
        loser.dagster_run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE
    )
    assert failure.dagster_event is not None
    error = failure.dagster_event.step_failure_data.error
    assert error is not None
    cause = error.cause or error
    assert cause.cls_name == "ConcurrentRunError", cause.to_string()
    assert f"Run {writer.dagster_run.run_id} is writing" in cause.message
    loser_materialized = instance.all_logs(
        loser.dagster_run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION
    )
    assert loser_materialized == []
    name = writer.dagster_run.tags[RUNNER_TAG]
    table = pl.read_parquet(directory / "warehouse" / "orders" / f"{partition}.parquet")
    quarantine = directory / "warehouse" / "orders_quarantine" / f"{partition}.parquet"
    assert_table(table, frame_of(name, partition))
    assert_quarantine(pl.read_parquet(quarantine), frame_of(name, partition))
    if mode == ANNOUNCED:
        first = min(records, key=lambda r: (r.create_timestamp, r.dagster_run.run_id))
        assert first.dagster_run.run_id == writer.dagster_run.run_id, (
            "of two runs that announced together, the later-created wrote"
        )
    return name

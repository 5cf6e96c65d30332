"""The run guards on a Dagster instance stored in PostgreSQL, each step in a process of its own.

A deployment keeps its runs and events in PostgreSQL (`dagster-postgres`) and runs each step in
a process of its own; the concurrent-run guard and the quarantine's observations read and write
that storage from the step's process. Two runs of one partition of `postgres_race.orders` start
together on such an instance. Run A holds its table write until run B is over: B must fail with
`ConcurrentRunError` before writing anything, and the stored table and quarantine must be A's,
whole, with one observation of A's quarantine write.

Two run processes are then released into the step together, round after round
(`released_runs`), each step in a process of its own: in every round exactly one writes and the
other stops with `ConcurrentRunError` before writing; when both announced before either read,
the one created first writes.

Skipped, with the reason, where PostgreSQL is not installed; `.ci/run` installs it.
"""

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage

from . import released_runs
from .conftest import DAY_1, assert_quarantine, assert_table
from .postgres_race import DIRECTORY, HOLD_A, frame_of, run_in_process
from .postgres_server import PostgresServer, running_server, why_not_runnable

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(600),
    pytest.mark.skipif(why_not_runnable() is not None, reason=str(why_not_runnable())),
]

STARTED_SECONDS = 240.0
"""How long the test waits for run A's step, in its own process, to reach its table write."""
FINISHED_SECONDS = 240.0
"""How long the test waits for a run's process to end once nothing holds it."""


@pytest.fixture(scope="session")
def server() -> Iterator[PostgresServer]:
    """One server for the whole session; each test empties its database (`instance`)."""
    with running_server() as started:
        yield started


@pytest.fixture
def instance(server: PostgresServer) -> Iterator[dg.DagsterInstance]:
    """A fresh instance on an empty database, its runs and events stored in PostgreSQL."""
    with server.fresh_instance() as created:
        assert isinstance(created.run_storage, PostgresRunStorage)
        assert isinstance(created.event_log_storage, PostgresEventLogStorage)
        yield created


@pytest.fixture
def race_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The race's directory, named in the environment every step's process inherits."""
    monkeypatch.setenv(DIRECTORY, str(tmp_path))
    return tmp_path


@pytest.fixture
def launch(instance: dg.DagsterInstance) -> Iterator[Callable[[str], "subprocess.Popen[bytes]"]]:
    """Start a run of the partition in its own process; any still running at the end is killed."""
    started: list[subprocess.Popen[bytes]] = []

    def start(run: str) -> "subprocess.Popen[bytes]":
        started.append(run_in_process(instance, run))
        return started[-1]

    yield start
    for process in started:
        if process.poll() is None:  # the run and its step's process: a session of their own
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _finish(runs: dict[str, "subprocess.Popen[bytes]"]) -> dict[str, bool]:
    """Wait for each run's process; whether each run succeeded, by run."""
    return {run: process.wait(FINISHED_SECONDS) == 0 for run, process in runs.items()}


def _failure_class(instance: dg.DagsterInstance, run_tag: str) -> str:
    """The class of the error that failed the asset's step in the run tagged `run_tag`."""
    (run,) = instance.get_runs(filters=dg.RunsFilter(tags={"run": run_tag}))
    (failure,) = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
    assert failure.dagster_event is not None
    error = failure.dagster_event.step_failure_data.error
    assert error is not None
    cause = error.cause or error
    return cause.cls_name or ""


def _observed_quarantine_runs(instance: dg.DagsterInstance) -> list[str]:
    """The runs whose quarantine writes the instance recorded as observations, oldest first."""
    records = instance.fetch_observations(dg.AssetKey("orders_quarantine"), limit=10).records
    return sorted(
        instance.get_run_by_id(record.run_id).tags["run"]  # type: ignore[union-attr]
        for record in records
    )


def _wait_for(path: Path, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} did not appear in {seconds:.0f} s"
        time.sleep(0.1)


def _stored(race_dir: Path, asset: str) -> pl.DataFrame | None:
    path = race_dir / "warehouse" / asset / f"{DAY_1}.parquet"
    return pl.read_parquet(path) if path.exists() else None


def test_the_second_of_two_runs_of_a_partition_fails_before_writing(
    instance: dg.DagsterInstance, race_dir: Path, launch: Callable[[str], "subprocess.Popen[bytes]"]
) -> None:
    (race_dir / HOLD_A).touch()
    run_a = launch("A")
    _wait_for(race_dir / "holding", STARTED_SECONDS)  # A wrote its quarantine, holds its table
    b_result = _finish({"B": launch("B")})
    (race_dir / "release").touch()
    results = {**_finish({"A": run_a}), **b_result}

    assert results == {"A": True, "B": False}
    assert _failure_class(instance, "B") == "ConcurrentRunError"
    table, quarantine = _stored(race_dir, "orders"), _stored(race_dir, "orders_quarantine")
    assert table is not None
    assert quarantine is not None
    assert_table(table, frame_of("A"))
    assert_quarantine(quarantine, frame_of("A"))
    assert _observed_quarantine_runs(instance) == ["A"]


RELEASED_ROUNDS = [
    ("round-1", released_runs.RELEASED, released_runs.IN_PROCESS),
    ("round-2", released_runs.RELEASED, released_runs.IN_PROCESS),
    ("round-3", released_runs.ANNOUNCED, released_runs.IN_PROCESS),
    ("round-4", released_runs.RELEASED, released_runs.MULTIPROCESS),
]


def test_of_two_runs_released_into_the_step_together_exactly_one_writes(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    released_runs.race(instance, RELEASED_ROUNDS, tmp_path)

    for partition, mode, _ in RELEASED_ROUNDS:
        released_runs.assert_one_writer(instance, tmp_path, partition, mode)

"""Run monitoring ends a run whose step will never finish, and frees its partition.

A run on dagster-celery whose Celery worker dies whole stays "started" for ever: its run
process is alive and waits for the step's task with no timeout, and its step has already said
that it writes the partition, so every other run of that partition stops with
`ConcurrentRunError`. Run monitoring's check of the run worker's health does not see it (the
run process is healthy); its maximum runtime does. This test starts such a run (`hung_run`, its
step waiting as that run process waits) with the tag `dagster/max_runtime`, shows that it
blocks the partition, then starts Dagster's own daemon (`dagster-daemon run`) on an instance
with run monitoring enabled, which marks the run failed once the runtime has passed; the next
run of the partition then writes. docs/scaling-out.md names what ends such a run on each
executor.
"""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from . import hung_run
from .conftest import DAY_1, QUIET, assert_table, orders_frame

pytestmark = [pytest.mark.integration, pytest.mark.timeout(400)]

ROOT = Path(__file__).resolve().parent.parent
MAX_RUNTIME_SECONDS = 5
WAIT_SECONDS = 240.0
INSTANCE_YAML = """
run_monitoring:
  enabled: true
  poll_interval_seconds: 1
telemetry:
  enabled: false
compute_logs:
  module: dagster._core.storage.noop_compute_log_manager
  class: NoOpComputeLogManager
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Dagster home on SQLite whose `dagster.yaml` enables run monitoring, polling each second."""
    directory = tmp_path / "home"
    directory.mkdir()
    (directory / "dagster.yaml").write_text(INSTANCE_YAML)
    monkeypatch.setenv(hung_run.HOME, str(directory))
    monkeypatch.setenv(hung_run.WAREHOUSE, str(tmp_path / "warehouse"))
    return directory


@pytest.fixture
def processes() -> Iterator[list["subprocess.Popen[bytes]"]]:
    """Every process the test starts, each in a session of its own, killed at the end."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _start(command: list[str], home: Path, log: Path) -> "subprocess.Popen[bytes]":
    with log.open("wb") as output:
        return subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "DAGSTER_HOME": str(home)},
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_for(what: str, condition: Callable[[], bool], log: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"no {what} in {WAIT_SECONDS:.0f} s:\n{log.read_text()}"
        time.sleep(0.2)


def _run(instance: dg.DagsterInstance, tag: str) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [hung_run.orders],
        resources=hung_run.resources(),
        partition_key=DAY_1,
        instance=instance,
        tags={"hung_run": tag},
        run_config=QUIET,
        raise_on_error=False,
    )


def test_run_monitorings_maximum_runtime_ends_a_hung_run_and_frees_its_partition(
    home: Path, tmp_path: Path, processes: list["subprocess.Popen[bytes]"]
) -> None:
    run_log, daemon_log = tmp_path / "run.log", tmp_path / "daemon.log"
    code = "from integration_tests.hung_run import execute; execute()"
    command = [sys.executable, "-c", code, str(MAX_RUNTIME_SECONDS)]
    processes.append(_start(command, home, run_log))
    with dg.DagsterInstance.from_config(str(home)) as instance:

        def hung() -> dg.DagsterRun | None:
            runs = instance.get_runs(filters=dg.RunsFilter(tags={"hung_run": hung_run.HANG}))
            return runs[0] if runs else None

        def writing() -> bool:
            run = hung()
            if run is None:
                return False
            events = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
            return any("this run writes it" in (e.message or "") for e in events)

        _wait_for("hung run inside its step", writing, run_log)
        blocked = _run(instance, "blocked")
        # The hung run's process is alive and its step never ends: the partition is its.
        assert not blocked.success
        failure = blocked.failure_data_for_node("orders")
        assert failure is not None
        assert failure.error is not None
        cause = failure.error.cause or failure.error
        assert cause.cls_name == "ConcurrentRunError"
        run = hung()
        assert run is not None
        assert run.status == dg.DagsterRunStatus.STARTED

        daemon = [sys.executable, "-m", "dagster._daemon", "run", "--empty-workspace"]
        processes.append(_start(daemon, home, daemon_log))

        def ended() -> bool:
            run = hung()
            return run is not None and run.status == dg.DagsterRunStatus.FAILURE

        _wait_for("end of the hung run", ended, daemon_log)
        messages = [e.message or "" for e in instance.all_logs(run.run_id)]
        assert any(f"maximum runtime of {MAX_RUNTIME_SECONDS}" in m for m in messages), messages
        assert processes[0].poll() is None  # the run process still waits, as Celery's would

        freed = _run(instance, "freed")

    assert freed.success
    table = pl.read_parquet(tmp_path / "warehouse" / "orders" / f"{DAY_1}.parquet")
    assert_table(table, orders_frame(DAY_1, tag="freed"))

"""One Dask cluster, one PostgreSQL instance and one S3 server on 127.0.0.1 for the folder.

The cluster is a `distributed` scheduler and `WORKERS` worker processes of one thread each,
started as a remote cluster is and addressed by the scheduler's address (`cluster: existing:`).
Each worker preloads `pipeline`, gets the S3 endpoint and credentials from its environment, and
reaches the instance through the reference each step is handed. The scheduler gives up on a
task whose worker died (`allowed-failures` 0) instead of running it again on another worker,
so a killed step fails its run, as Dagster would report it.

`dagster_dask` and `distributed` are imported here so that an environment without them (the
version jobs, which lack the `distributed` dependency group) leaves the folder uncollected
(see `collectable.py`).
"""

import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import dagster_dask  # noqa: F401  (the folder needs it: see the module's docstring)
import distributed
import pytest
import yaml
from dagster._core.instance.ref import InstanceRef
from moto.server import ThreadedMotoServer
from tests.warm_server import Forked, WarmServer

from integration_tests.postgres_server import PostgresServer, running_server, why_not_runnable
from integration_tests.s3.support import S3Endpoint, empty_and_delete

from . import pipeline

ROOT = Path(__file__).resolve().parent.parent.parent
WORKERS = 3
STARTUP_SECONDS = 120.0
BUCKET = "dd-distributed"
LOOPBACK = "127.0.0.1"


@pytest.fixture(scope="package")
def s3() -> Iterator[S3Endpoint]:
    """moto's S3 server on loopback, with the variables every client reads set for the folder."""
    werkzeug = logging.getLogger("werkzeug")
    level = werkzeug.level
    werkzeug.setLevel(logging.WARNING)  # moto's server logs one line per request otherwise
    with pytest.MonkeyPatch.context() as env:
        for variable in ("AWS_ENDPOINT_URL_S3", "AWS_PROFILE", "AWS_SESSION_TOKEN"):
            env.delenv(variable, raising=False)
        missing = Path(tempfile.gettempdir()) / "dd-distributed-absent-aws-config"
        settings = {
            "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": str(missing),
            "AWS_SHARED_CREDENTIALS_FILE": str(missing),
            "AWS_ACCESS_KEY_ID": "AKIATESTDDKEY0002",
            "AWS_SECRET_ACCESS_KEY": "dd-distributed-secret",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_REGION": "us-east-1",
            "AWS_MAX_ATTEMPTS": "1",
        }
        for name, value in settings.items():
            env.setenv(name, value)
        server = ThreadedMotoServer(ip_address=LOOPBACK, port=0, verbose=False)
        server.start()
        try:
            url = f"http://{LOOPBACK}:{server.get_host_and_port()[1]}"
            env.setenv("AWS_ENDPOINT_URL", url)
            endpoint = S3Endpoint(
                url, settings["AWS_ACCESS_KEY_ID"], settings["AWS_SECRET_ACCESS_KEY"],
                "us-east-1", True, BUCKET,
            )  # fmt: skip
            endpoint.client().create_bucket(Bucket=BUCKET)
            yield endpoint
            empty_and_delete(endpoint.client(), BUCKET)
        finally:
            server.stop()
            werkzeug.setLevel(level)


@pytest.fixture(scope="package")
def postgres() -> Iterator[PostgresServer]:
    reason = why_not_runnable()
    if reason is not None:
        pytest.skip(reason)
    with running_server() as started:
        yield started


@pytest.fixture(scope="package")
def instance(postgres: PostgresServer) -> Iterator[dg.DagsterInstance]:
    """The folder's instance, its runs and events in PostgreSQL (dagster-dask refuses an
    ephemeral one); each test reads only the runs it started."""
    with postgres.fresh_instance() as created:
        yield created


def without_creating_tables(reference: InstanceRef) -> InstanceRef:
    """The instance as the cluster's processes open it: its tables are there already.

    With dagster-postgres' default `should_autocreate_tables`, every `DagsterInstance.from_ref`
    (one per step on a worker, one per run process) lists the database's tables for each of
    its three storages: 6 connections and about 50 ms of CPU. A deployment whose migrations run
    apart (`dagster instance migrate`) sets it to false the same way.
    """
    storage = reference.storage_data
    assert storage is not None
    config = yaml.safe_load(storage.config_yaml)
    config["should_autocreate_tables"] = False
    return reference._replace(storage_data=storage._replace(config_yaml=yaml.safe_dump(config)))


@dataclass
class RunProcess:
    """A backfill's run process (`pipeline.main`), forked from a warm server: `pid`, `poll` and
    `wait` as on `subprocess.Popen`, and what it printed."""

    forked: Forked
    output: Path

    @property
    def pid(self) -> int:
        return self.forked.pid

    def poll(self) -> int | None:
        return self.forked.poll()

    def wait(self) -> int:
        return self.forked.wait()

    def printed(self, stream: str = "stdout") -> str:
        return (self.output / stream).read_text()


@dataclass
class Cluster:
    """The running cluster, and what a run process needs to use it."""

    address: str
    environment: dict[str, str]
    signals: Path
    outputs: Path
    workers: list["subprocess.Popen[bytes]"] = field(default_factory=list)
    # NOTE: a run process is forked from one of these servers (tests/warm_server.py), which
    # imported Dagster, Polars, dagster-dask and `pipeline` once: a fresh interpreter spent
    # about 3 s of CPU on those imports before its first run. A server runs one child at a
    # time, so there are as many as run processes at once (5, in the overlap test).
    servers: list[tuple[WarmServer, RunProcess | None]] = field(default_factory=list)

    def run_process(self, arguments: Sequence[str]) -> RunProcess:
        """`python -m pipeline arguments...` (see `pipeline.run_arguments`), in the cluster's
        environment, on a server whose last child has ended."""
        free = next(
            (
                i
                for i, (_, child) in enumerate(self.servers)
                if child is None or child.poll() is not None
            ),
            None,
        )
        if free is None:
            environment = self.environment
            self.servers.append((WarmServer(lambda: environment, STARTUP_SECONDS), None))
            free = len(self.servers) - 1
        server = self.servers[free][0]
        output = Path(tempfile.mkdtemp(dir=self.outputs))
        forked = server.start(
            str(ROOT), str(output), self.environment, module=pipeline.MODULE, argv=arguments
        )
        child = RunProcess(forked, output)
        self.servers[free] = (server, child)
        return child

    def stop_run_processes(self) -> None:
        """Kill every run process still running, then their servers."""
        for server, child in self.servers:
            if child is not None and child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
            server.stop()

    def start_worker(self) -> None:
        """One more worker of one thread, listening on loopback only."""
        command = [sys.executable, "-m", "distributed.cli.dask_worker", self.address]
        command += ["--nthreads", "1", "--no-nanny", "--memory-limit", "0", "--no-dashboard"]
        command += ["--host", LOOPBACK, "--preload", pipeline.MODULE]
        self.workers.append(
            subprocess.Popen(
                command,
                env=self.environment,
                cwd=ROOT,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        )

    def wait_for_workers(self) -> None:
        """Until every live worker has joined the scheduler."""
        alive = sum(worker.poll() is None for worker in self.workers)
        with distributed.Client(self.address, timeout=STARTUP_SECONDS) as client:
            client.wait_for_workers(alive, timeout=STARTUP_SECONDS)


@pytest.fixture(scope="package")
def cluster(
    s3: S3Endpoint, instance: dg.DagsterInstance, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    """A scheduler and `WORKERS` workers on loopback; every process is killed at the end."""
    folder = tmp_path_factory.mktemp("dask")
    signals = folder / "signals"
    signals.mkdir()
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "POLARS_MAX_THREADS": "1",
        "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0",
        # NOTE: Dask's own diagnostics, which a deployment may turn down the same way: each
        # worker samples its threads' stacks every 10 ms for the dashboard's profile (which no
        # one opens here), and each process checks its event loop's lag every 20 ms. Idle, a
        # worker spent 3 % of a core on them, and every step's deep Dagster stacks were sampled.
        "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
        "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
        pipeline.SIGNALS: str(signals),
        pipeline.INSTANCE: dg.serialize_value(without_creating_tables(instance.get_ref())),
    }
    scheduler_file = folder / "scheduler.json"
    scheduler = subprocess.Popen(
        [
            *(sys.executable, "-m", "distributed.cli.dask_scheduler", "--port", "0"),
            *("--host", LOOPBACK, "--no-dashboard", "--scheduler-file", str(scheduler_file)),
        ],
        env=environment,
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    started: Cluster | None = None
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not scheduler_file.exists():
            assert scheduler.poll() is None, "the Dask scheduler exited at startup"
            assert time.monotonic() < deadline, "the Dask scheduler did not start"
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        assert address.startswith(f"tcp://{LOOPBACK}:"), address
        outputs = folder / "run-processes"
        outputs.mkdir()
        started = Cluster(address, environment, signals, outputs)
        for _ in range(WORKERS):
            started.start_worker()
        started.wait_for_workers()
        yield started
    finally:
        if started is not None:
            started.stop_run_processes()
        for process in [*(started.workers if started else []), scheduler]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


# Backfills.


@dataclass(frozen=True)
class Run:
    """One run a backfill's process executed, as it printed it."""

    partition: str
    run_id: str
    success: bool


def backfill(
    cluster: Cluster,
    name: str,
    runs: Sequence[tuple[str, str]],
    base_dir: str,
    *,
    processes: int = WORKERS,
) -> list[RunProcess]:
    """Start a backfill of `runs` ((partition, input tag) pairs): `processes` run processes
    taking the runs in turn, each with its own job, `<name>_<index>`."""
    return [
        cluster.run_process(
            pipeline.run_arguments(
                runs[index::processes],
                job=f"{name}_{index}",
                base_dir=base_dir,
                address=cluster.address,
            )
        )
        for index in range(min(processes, len(runs)))
    ]


def finish(processes: Sequence[RunProcess]) -> dict[str, Run]:
    """Wait for a backfill's processes; every run they executed, by partition."""
    runs: dict[str, Run] = {}
    for process in processes:
        code = process.wait()
        assert code == 0, f"a run process exited with {code}:\n{process.printed('stderr')}"
        for line in process.printed().splitlines():
            run = Run(**json.loads(line))
            assert run.partition not in runs
            runs[run.partition] = run
    return runs


def run_backfill(
    cluster: Cluster, name: str, runs: Sequence[tuple[str, str]], base_dir: str
) -> dict[str, Run]:
    return finish(backfill(cluster, name, runs, base_dir))


def base_dir(s3: S3Endpoint, test: str) -> str:
    """A prefix of the folder's bucket of its own for one test."""
    return f"s3://{s3.shared_bucket}/{test}"

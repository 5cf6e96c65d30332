"""One backfill on one and on several Dask workers, and on the multiprocess executor.

A `dd.asset` partitioned by day (the demo's `Orders` schema, quarantine on) reads each
partition's `--rows` input rows (the demo's order lines, shuffled: unsorted keys, about 1.4%
invalid) from a parquet file and writes its table and quarantine with dagster-polars'
`PolarsParquetIOManager` wrapped in `QuarantineAwareIOManager(staged_writes=True)`, into a
temporary directory, on a Dagster instance kept there (SQLite). `--partitions` partitions are
backfilled one run per partition, as Dagster's backfills launch them, by as many run processes
as there are workers (`--runners` to change it), each taking the next partition when its run
ends:

- `dask`: `dagster_dask`'s executor against a `distributed` cluster this script starts on
  127.0.0.1 (a scheduler process and `N` worker processes of one thread each, addressed as
  `cluster: existing: address:`, as a remote cluster is);
- `multiprocess`: Dagster's multiprocess executor, each run's step in a process of its own
  (`--start-method`, `forkserver` by default, its server started before the clock).

Every process gets `POLARS_MAX_THREADS` (`--polars-threads`, 1 by default), so one worker
stands for one core of a bigger machine and `N` workers can use `N` cores. Start-up is left
out of the clock: the cluster is up, each worker has imported the job's module, and each run
process has imported everything and executed one warm-up run (a partition of 1,000 rows of
its own) before the partitions are handed out. For each variant the
script prints the wall time of the backfill, the rows per second overall and per worker,
the ratio to linear (the rows per second at `N` over `N` times those of the same executor at
one worker), and what the steps took: their summed time, the workers' busy share (summed
step time over `N` times the wall time) and the per-step ratio (summed step time at one
worker over that at `N`: how much a step slows down beside others). The time a run spends
outside its step (launching, the plan, the event log) is in the wall time and not in the
steps'. Each partition's table and quarantine must hold exactly its input rows, or the script
stops. It asserts no time.

    .venv/bin/python -m benchmarks.scale_out [--workers 1 2] [--partitions 32] [--rows 500000]
"""

import argparse
import datetime
import functools
import importlib
import itertools
import json
import os
import selectors
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "examples") not in sys.path:  # the demo package is not installed, only tested
    sys.path.insert(0, str(ROOT / "examples"))

import dagster as dg  # noqa: E402
import polars as pl  # noqa: E402
from dagster_dask import dask_executor  # noqa: E402
from dagster_polars import PolarsParquetIOManager  # noqa: E402

import dagster_dataframely as dd  # noqa: E402
from dagster_dataframely_demo._data import order_lines  # noqa: E402
from dagster_dataframely_demo.schema import Orders  # noqa: E402

DIRECTORY = "DAGSTER_DATAFRAMELY_BENCH_SCALE_OUT_DIR"
"""The environment variable naming the variant's directory: `inputs/` and `warehouse/`."""
DAYS = dg.StaticPartitionsDefinition(
    [(datetime.date(2020, 1, 1) + datetime.timedelta(days=day)).isoformat() for day in range(1000)]
)
"""One partition a day, declared statically: dagster-dask 0.29.27 cannot submit a run of a
time-window-partitioned asset to distributed 2026.8 (see the Scaling out page)."""
WARM_UP = DAYS.get_partition_keys()[::-1]
"""The partitions of the run processes' warm-up runs (1,000 rows each): the last ones."""
EXECUTORS = ("dask", "multiprocess")
INSTANCE = "DAGSTER_DATAFRAMELY_BENCH_INSTANCE"
"""The environment variable holding the serialized reference to the runs' instance."""


@dd.asset(Orders, quarantine=True, partitions_def=DAYS)
def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
    """The partition's input rows, as an upstream extract would hand them over."""
    return pl.read_parquet(
        Path(os.environ[DIRECTORY]) / "inputs" / f"{context.partition_key}.parquet"
    )


def backfill_job(executor: str, runner: int) -> dg.JobDefinition:
    """The backfill's job for one run process, rebuilt in every run and worker process.

    Named after its run process: dagster-dask names each Dask task `<job>.<step>`, and
    `distributed` runs two tasks of one name once, so two runs of one job at once on one
    cluster would share a step, the second run succeeding without writing its partition.
    """
    warehouse = Path(os.environ[DIRECTORY]) / "warehouse"
    name = f"backfill_{runner}"
    chosen = dask_executor if executor == "dask" else dg.multiprocess_executor
    definitions = dg.Definitions(
        assets=[orders, dd.quarantine_spec(Orders, orders)],
        jobs=[dg.define_asset_job(name, selection=[orders], executor_def=chosen)],
        resources={
            "io_manager": dd.QuarantineAwareIOManager(
                io_manager=PolarsParquetIOManager(base_dir=str(warehouse)), staged_writes=True
            )
        },
    )
    return definitions.resolve_job_def(name)


def write_inputs(partitions: list[str], rows: int, folder: Path) -> None:
    """Each partition's order lines, shuffled, about 1.4% of them invalid."""
    folder.mkdir(parents=True, exist_ok=True)
    for index, partition in enumerate(partitions):
        frame = order_lines(rows, seed=index, invalid_share=0.014)
        frame.sample(fraction=1.0, shuffle=True, seed=index).write_parquet(
            folder / f"{partition}.parquet"
        )


def runner(executor: str, index: int, run_config: dict[str, Any]) -> None:
    """A run process: one warm-up run, then one run per partition read from stdin."""
    warm_up = WARM_UP[index]
    job = dg.build_reconstructable_job("benchmarks.scale_out", "backfill_job", (executor, index))
    reference = dg.deserialize_value(os.environ[INSTANCE])
    with dg.DagsterInstance.from_ref(reference) as instance:  # type: ignore[arg-type]
        for line in itertools.chain([warm_up], sys.stdin):
            result = dg.execute_job(
                job,
                instance=instance,
                run_config=run_config,
                tags={
                    "dagster/partition": line.strip(),
                    "benchmark": "warm-up" if line == warm_up else "measured",
                },
                raise_on_error=False,
            )
            print("ok" if result.success else f"failed {result.run_id}", flush=True)


def _wait_for(path: Path, process: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the {what} did not start")
        time.sleep(0.1)


@contextmanager
def dask_cluster(
    workers: int, environment: dict[str, str], folder: Path, nice: int
) -> Iterator[str]:
    """A scheduler (at niceness `nice`) and `workers` one-thread worker processes on 127.0.0.1;
    yields the address."""
    from distributed import Client

    scheduler_file = folder / "scheduler.json"
    loopback = ["--host", "127.0.0.1", "--no-dashboard", "--scheduler-file", str(scheduler_file)]
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--port", "0", *loopback],
        env=environment,
        cwd=ROOT,
        stderr=subprocess.DEVNULL,
        preexec_fn=functools.partial(os.nice, nice),
    )
    worker = [sys.executable, "-m", "distributed.cli.dask_worker", "--nthreads", "1", "--no-nanny"]
    worker += ["--memory-limit", "0"]
    processes = [scheduler]
    try:
        _wait_for(scheduler_file, scheduler, "scheduler")
        for _ in range(workers):
            processes.append(
                subprocess.Popen(
                    [*worker, *loopback],
                    env=environment,
                    cwd=ROOT,
                    stderr=subprocess.DEVNULL,
                )
            )
        address = json.loads(scheduler_file.read_text())["address"]
        with Client(address) as client:
            client.wait_for_workers(workers, timeout=120)
            client.run(importlib.import_module, "benchmarks.scale_out")  # imports before the clock
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            process.wait(30)


def backfill(
    executor: str, workers: int, partitions: list[str], arguments: argparse.Namespace, folder: Path
) -> dict[str, float]:
    """One backfill of every partition: its wall time, and its steps' summed time."""
    variant = folder / f"{executor}-{workers}-{time.monotonic_ns()}"
    variant.mkdir()
    (variant / "inputs").symlink_to(folder / "inputs")
    environment = {
        **os.environ,
        DIRECTORY: str(variant),
        "POLARS_MAX_THREADS": str(arguments.polars_threads),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    runners = arguments.runners or workers
    (variant / "instance").mkdir()
    with dg.DagsterInstance.local_temp(tempdir=str(variant / "instance")) as instance:
        environment[INSTANCE] = dg.serialize_value(instance.get_ref())
        if executor == "dask":
            with dask_cluster(workers, environment, variant, arguments.others_nice) as address:
                config: dict[str, Any] = {"cluster": {"existing": {"address": address}}}
                wall = drive(executor, runners, config, partitions, arguments, environment, variant)
        else:
            config = {"max_concurrent": 1, "start_method": {arguments.start_method: {}}}
            wall = drive(executor, runners, config, partitions, arguments, environment, variant)
        steps, without_step = 0.0, []
        for run in instance.get_runs(dg.RunsFilter(tags={"benchmark": "measured"})):
            if run.status != dg.DagsterRunStatus.SUCCESS:
                raise RuntimeError(f"run {run.run_id} ended {run.status}")
            stats = instance.get_run_step_stats(run.run_id)
            if not stats:
                without_step.append(run.tags["dagster/partition"])
            for step in stats:
                steps += (step.end_time or 0.0) - (step.start_time or 0.0)
        if without_step:
            print(f"  runs that succeeded without a step: {sorted(without_step)}", file=sys.stderr)
    check_rows(variant / "warehouse", partitions, arguments.rows)
    return {"wall": wall, "steps": steps}


def drive(
    executor: str,
    runners: int,
    executor_config: dict[str, Any],
    partitions: list[str],
    arguments: argparse.Namespace,
    environment: dict[str, str],
    variant: Path,
) -> float:
    """Start the run processes, wait until each is ready, hand out the partitions; the wall time.

    Each run process logs to `run-process-<n>.log` in the variant's directory; its tail is in
    the error when a run fails. With `--others-nice`, the Dask run processes run at that
    niceness (the multiprocess executor's steps are their children, so never there)."""
    run_config = json.dumps(
        {
            "execution": {"config": executor_config},
            # Dagster's console logger at DEBUG would print every event of every run here.
            "loggers": {"console": {"config": {"log_level": "WARNING"}}},
        }
    )
    command = [sys.executable, "-m", "benchmarks.scale_out", "--run-config", run_config]
    command += ["--runner", executor]
    nice = arguments.others_nice if executor == "dask" else 0
    logs = [variant / f"run-process-{index}.log" for index in range(runners)]
    processes = [
        subprocess.Popen(
            [*command, str(index)],
            env=environment,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log.open("w"),
            text=True,
            bufsize=1,
            preexec_fn=functools.partial(os.nice, nice),
        )
        for index, log in enumerate(logs)
    ]
    try:
        for process in processes:  # each run process's warm-up run
            assert process.stdout is not None
            if (line := process.stdout.readline().strip()) != "ok":
                raise RuntimeError(
                    f"a {executor} warm-up run did not succeed: {line or 'exit'}{_tails(logs)}"
                )
        pending = list(reversed(partitions))
        with selectors.DefaultSelector() as selector:
            started = time.perf_counter()
            for process in processes:
                _hand_out(process, pending, selector)
            while selector.get_map():
                for key, _ in selector.select():
                    process = key.data
                    line = process.stdout.readline().strip()
                    if line != "ok":
                        raise RuntimeError(
                            f"a {executor} run did not succeed: {line or 'exit'}{_tails(logs)}"
                        )
                    selector.unregister(process.stdout)
                    _hand_out(process, pending, selector)
            wall = time.perf_counter() - started
    finally:
        for process in processes:
            if process.stdin is not None and not process.stdin.closed:
                process.stdin.close()
        for process in processes:
            process.wait(60)
    return wall


def _tails(logs: list[Path]) -> str:
    """The end of each run process's log, for an error."""
    return "".join(f"\n--- {log.name}:\n{log.read_text()[-3000:]}" for log in logs)


def _hand_out(
    process: subprocess.Popen[str], pending: list[str], selector: selectors.BaseSelector
) -> None:
    """The next partition to an idle run process, or the end of its input."""
    assert process.stdin is not None
    assert process.stdout is not None
    if pending:
        process.stdin.write(pending.pop() + "\n")
        process.stdin.flush()
        selector.register(process.stdout, selectors.EVENT_READ, process)
    else:
        process.stdin.close()


def check_rows(warehouse: Path, partitions: list[str], rows: int) -> None:
    """Each partition's table and quarantine hold exactly its input rows, or the script stops."""
    wrong = {}
    for partition in partitions:
        files = [
            warehouse / name / f"{partition}.parquet" for name in ("orders", "orders_quarantine")
        ]
        stored = sum(
            pl.scan_parquet(path).select(pl.len()).collect().item()
            for path in files
            if path.exists()
        )
        if stored != rows:
            wrong[partition] = stored
    if wrong:
        raise RuntimeError(f"partitions not holding their {rows} input rows: {wrong}")


def main(arguments: argparse.Namespace) -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the cluster and run processes
    partitions = DAYS.get_partition_keys()[: arguments.partitions]
    measured: dict[tuple[str, int], list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="scale-out-bench-") as name:
        folder = Path(name)
        write_inputs(partitions, arguments.rows, folder / "inputs")
        write_inputs(
            WARM_UP[: max(arguments.runners or 0, *arguments.workers)], 1_000, folder / "inputs"
        )
        for _ in range(arguments.repeat):
            for workers in arguments.workers:
                for executor in arguments.executors:
                    result = backfill(executor, workers, partitions, arguments, folder)
                    measured.setdefault((executor, workers), []).append(result)
                    print(f"  {executor} x{workers}: {result['wall']:.1f} s", file=sys.stderr)
    total = len(partitions) * arguments.rows
    print(
        f"{len(partitions)} partitions of {arguments.rows:,} rows ({total:,} rows), "
        f"POLARS_MAX_THREADS={arguments.polars_threads}, run processes: "
        f"{arguments.runners or 'one per worker'}, Dask scheduler and run processes at niceness "
        f"{arguments.others_nice}, median of {arguments.repeat}, "
        f"on {os.cpu_count()} cores"
    )
    print(
        "| Executor | Workers | Wall | Rows/s | Rows/s per worker | Ratio to linear "
        "| Steps' time | Busy share | Per-step ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (executor, workers), results in measured.items():
        wall = statistics.median(result["wall"] for result in results)
        steps = statistics.median(result["steps"] for result in results)
        base = measured.get((executor, 1))
        speed = total / wall
        if base:
            base_wall = statistics.median(result["wall"] for result in base)
            base_steps = statistics.median(result["steps"] for result in base)
            linear = f"{speed / (workers * total / base_wall):.2f}"
            per_step = f"{base_steps / steps:.2f}"
        else:
            linear = per_step = "-"
        print(
            f"| {executor} | {workers} | {wall:.1f} s | {speed:,.0f} | {speed / workers:,.0f} "
            f"| {linear} | {steps:.1f} s | {steps / (workers * wall):.0%} | {per_step} |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--partitions", type=int, default=32)
    parser.add_argument("--rows", type=int, default=500_000, help="rows per partition")
    parser.add_argument("--executors", nargs="+", choices=EXECUTORS, default=list(EXECUTORS))
    parser.add_argument("--runners", type=int, help="run processes (default: one per worker)")
    parser.add_argument("--polars-threads", type=int, default=1)
    parser.add_argument(
        "--others-nice",
        type=int,
        default=0,
        help="niceness of the Dask scheduler and run processes (workers get the cores first)",
    )
    parser.add_argument("--start-method", choices=("forkserver", "spawn"), default="forkserver")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--runner", nargs=2, metavar=("EXECUTOR", "INDEX"))
    parser.add_argument("--run-config", default="{}")
    arguments = parser.parse_args()
    if arguments.runner:
        executor, index = arguments.runner
        runner(executor, int(index), json.loads(arguments.run_config))
    else:
        main(arguments)

"""The partitioned pipeline the Dask workers run, and the run processes that backfill it.

Every Dask worker imports this module (`--preload`) and rebuilds the job from `backfill_job`
for each step it runs (dagster-dask hands it a reconstructable job), so building the job is
kept cheap. Nothing is shared with the test but the instance, the S3 server and files: the
rows of each partition come from `inputs`, a function of the partition and of the run's
`input` tag, so the test knows them without reading anything the run wrote; the S3 endpoint
and credentials come from the environment; a file `hold-<job>-<partition>` in the directory
`SIGNALS` names makes that run's `orders` step write its process id to
`holding-<job>-<partition>` and wait for `release-<job>-<partition>`. A hold file holding the
word `secede` makes the step leave its worker's thread pool first (`distributed.secede`), so the
tasks the scheduler already placed on that worker run meanwhile instead of queueing behind it.

A backfill is one or more run processes (`python -m` this module with `run_arguments`), each
executing one run per partition in turn, as a Dagster run worker does; each process has a job
of its own name, because dagster-dask names a step's Dask task `<job>.<step>` and two runs of
one job at once would share their tasks.
"""

import datetime as dt
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import dagster as dg
import dataframely as dy
import distributed
import polars as pl
from dagster_dask import dask_executor
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

MODULE = "integration_tests.distributed.pipeline"
SIGNALS = "DAGSTER_DATAFRAMELY_TEST_DIST_SIGNALS"
"""The environment variable naming the directory of the hold and release files."""
INSTANCE = "DAGSTER_DATAFRAMELY_TEST_DIST_INSTANCE"
"""The environment variable holding the serialized reference to the runs' instance."""
HOLD_SECONDS = 300.0
DAYS = dg.StaticPartitionsDefinition(
    [(dt.date(2026, 1, 1) + dt.timedelta(days=day)).isoformat() for day in range(24)]
)
"""Day keys, declared statically: dagster-dask cannot submit a run of a time-window partition."""
PARTITIONS = DAYS.get_partition_keys()
SIZES = (3, 10, 20)
"""Valid rows of the `orders` input, by partition index modulo 3: partitions differ in size."""


class Orders(dy.Schema):
    """An order; a negative amount is invalid."""

    order_id = dy.String(primary_key=True)
    region = dy.String(nullable=False)
    amount = dy.Float64(nullable=False, min=0.0)


class Refunds(dy.Schema):
    """A refund of an order; a refund of nothing is invalid."""

    order_id = dy.String(primary_key=True)
    amount = dy.Float64(nullable=False, min=0.01)


class Book(dy.Collection):
    """An order book: orders and their refunds."""

    orders: dy.LazyFrame[Orders]
    refunds: dy.LazyFrame[Refunds]


def valid_rows(partition: str, tag: str) -> int:
    """How many valid rows `orders` gets; the `drop` input keeps a third of them."""
    size = SIZES[PARTITIONS.index(partition) % 3]
    return size // 3 if tag == "drop" else size


def inputs(partition: str, tag: str) -> dict[str, pl.DataFrame]:
    """Each table's input rows for this partition and input tag, by asset key path.

    Every id names the tag, the partition and the table, so a stored row tells which run of
    which partition wrote it. Each frame has valid rows, then 1 or 2 invalid ones.
    """
    index = PARTITIONS.index(partition)
    invalid = 1 + index % 2

    def frame(table: str, valid: int, minimum: float) -> pl.DataFrame:
        ids = [f"{tag}-{partition}-{table}-ok{i}" for i in range(valid)]
        ids += [f"{tag}-{partition}-{table}-bad{i}" for i in range(invalid)]
        amounts = [minimum + i for i in range(valid)] + [-1.0 - i for i in range(invalid)]
        return pl.DataFrame(
            {"order_id": ids, "region": ["eu", "us"] * (len(ids) // 2) + ["eu"] * (len(ids) % 2)},
        ).with_columns(amount=pl.Series(amounts, dtype=pl.Float64))

    refunds = frame("refunds", 2 + index % 3, 1.0).drop("region")
    return {
        "orders": frame("orders", valid_rows(partition, tag), 0.0),
        "web": frame("web", 4, 0.0),
        "shop": frame("shop", 5 + index % 2, 0.0),
        "book/orders": frame("book-orders", 3, 0.0),
        "book/refunds": refunds,
    }


def _hold(context: dg.AssetExecutionContext) -> None:
    """Wait for the test's release if it asked this run's step to hold; see the module."""
    directory = Path(os.environ[SIGNALS])
    name = f"{context.run.job_name}-{context.partition_key}"
    hold = directory / f"hold-{name}"
    if not hold.exists():
        return
    if hold.read_text() == "secede":
        # distributed places a step on a worker when it is submitted (a task of its own name
        # is never queued on the scheduler), so a held step would block the steps placed
        # behind it; seceded, it is a long-running task and the worker runs them.
        distributed.secede()
    written = directory / f"writing-{name}"
    written.write_text(str(os.getpid()))
    written.rename(directory / f"holding-{name}")  # whole when it appears
    deadline = time.monotonic() + HOLD_SECONDS
    while not (directory / f"release-{name}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


@dd.asset(
    Orders,
    quarantine=True,
    partitions_def=DAYS,
    quality_policy=dd.QualityPolicy(volume=dd.VolumeCheck(max_drop=0.5)),
)
def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
    _hold(context)
    return inputs(context.partition_key, context.run.tags["input"])["orders"]


@dd.multi_asset(
    outs={
        "web": dd.AssetOut(Orders, quarantine=True),
        "shop": dd.AssetOut(Orders, quarantine=True),
    },
    partitions_def=DAYS,
)
def channels(context: dg.AssetExecutionContext) -> dict[str, pl.DataFrame]:
    frames = inputs(context.partition_key, context.run.tags["input"])
    return {"web": frames["web"], "shop": frames["shop"]}


@dd.collection_asset(Book, key_prefix="book", quarantine=True, partitions_def=DAYS)
def book(context: dg.AssetExecutionContext) -> dict[str, pl.DataFrame]:
    frames = inputs(context.partition_key, context.run.tags["input"])
    return {"orders": frames["book/orders"], "refunds": frames["book/refunds"]}


ASSETS = [orders, channels, book]
TABLES = ["orders", "web", "shop", "book/orders", "book/refunds"]
"""Every validated table, as its asset key path."""


def backfill_job(name: str, base_dir: str) -> dg.JobDefinition:
    """The three assets as job `name`, stored under `base_dir` with staged writes."""
    definitions = dg.Definitions(
        assets=ASSETS,
        jobs=[dg.define_asset_job(name, selection=ASSETS, executor_def=dask_executor)],
        resources={
            "io_manager": dd.QuarantineAwareIOManager(
                io_manager=PolarsParquetIOManager(base_dir=base_dir), staged_writes=True
            )
        },
    )
    return definitions.resolve_job_def(name)


def run_arguments(
    runs: Sequence[tuple[str, str]],
    *,
    job: str,
    base_dir: str,
    address: str,
    reexecute: str | None = None,
) -> list[str]:
    """The command-line arguments of a run process for `runs` ((partition, input tag) pairs, in
    order) as job `job`, on the cluster at `address`.

    With `reexecute`, the process re-executes that failed run from its failure instead (one
    pair: its partition and input tag). It prints one JSON line per run: partition, run id,
    success.
    """
    arguments = {
        "runs": list(runs),
        "job": job,
        "base_dir": base_dir,
        "address": address,
        "reexecute": reexecute,
    }
    return [json.dumps(arguments)]


def main() -> None:
    """A run process: one run per partition, one after another (see `run_arguments`)."""
    arguments = json.loads(sys.argv[1])
    job = dg.build_reconstructable_job(
        MODULE, "backfill_job", (arguments["job"], arguments["base_dir"])
    )
    cluster = {"existing": {"address": arguments["address"]}}
    run_config = {"execution": {"config": {"cluster": cluster}}}
    reference = dg.deserialize_value(os.environ[INSTANCE])
    with dg.DagsterInstance.from_ref(reference) as instance:  # type: ignore[arg-type]
        for partition, tag in arguments["runs"]:
            options = None
            if arguments["reexecute"]:
                options = dg.ReexecutionOptions.from_failure(arguments["reexecute"], instance)
            result = dg.execute_job(
                job,
                instance=instance,
                run_config=run_config,
                # A re-execution keeps `dagster/partition` but not the parent's own tags.
                tags={"dagster/partition": partition, "input": tag},
                reexecution_options=options,
                raise_on_error=False,
            )
            line = {"partition": partition, "run_id": result.run_id, "success": result.success}
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()

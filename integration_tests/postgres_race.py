"""The job two runs of one partition race in, loadable by each run's and each step's process.

Each run is a process of its own (`run_in_process`, as a Dagster run worker is), and the
multiprocess executor runs every step in a new Python process, which rebuilds the job from
`race_job` and reaches the same Dagster instance (stored in PostgreSQL) from there. Where the
runs store their rows, and whether run A holds its table write, come from the environment the
test sets, since these processes share nothing else with the test. Files in that directory
are the only signals between the processes: run A touches `holding` once its quarantine is
written and it is about to write its table, then waits for the test to touch `release`.
"""

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
from upath import UPath

import dagster_dataframely as dd

from .conftest import DAY_1, Orders, orders_frame

INSTANCE = "DAGSTER_DATAFRAMELY_TEST_RACE_INSTANCE"
"""The environment variable holding the serialized reference to the instance the runs use."""
DIRECTORY = "DAGSTER_DATAFRAMELY_TEST_RACE_DIR"
"""The environment variable naming the race's directory: the warehouse, and the signals."""
HOLD_A = "hold-a"
"""A file whose presence makes run A hold its table write until `release` appears."""
HOLD_SECONDS = 300.0
PARTITIONS = dg.StaticPartitionsDefinition([DAY_1])


def frame_of(run: str) -> pl.DataFrame:
    """The rows run `run` returns: its tag in every id, and different counts for A and B."""
    return orders_frame(
        DAY_1, tag=run, valid=2 if run == "A" else 3, invalid=1 if run == "A" else 2
    )


class HoldingParquetIOManager(dg.UPathIOManager):
    """Parquet files under `base_path`; run A's table write can be held between two signals."""

    extension = ".parquet"

    def __init__(self, base_path: UPath, signals: Path) -> None:
        super().__init__(base_path=base_path)
        self.signals = signals

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        run_a_table = (
            context.asset_key == dg.AssetKey("orders")
            and obj.height > 0
            and obj["order_id"][0].startswith("A-")
        )
        if run_a_table and (self.signals / HOLD_A).exists():
            (self.signals / "holding").touch()
            deadline = time.monotonic() + HOLD_SECONDS
            while not (self.signals / "release").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
        path.parent.mkdir(parents=True, exist_ok=True)
        obj.write_parquet(str(path))

    def load_from_path(self, context: dg.InputContext, path: UPath) -> pl.DataFrame:
        return pl.read_parquet(str(path))


@dd.asset(Orders, quarantine=True, partitions_def=PARTITIONS)
def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
    return frame_of(context.run.tags["run"])


def race_job() -> dg.JobDefinition:
    """The asset's job, each step in a process of its own, storing under the race's directory."""
    directory = Path(os.environ[DIRECTORY])
    definitions = dg.Definitions(
        assets=[orders, dd.quarantine_spec(Orders, orders)],
        jobs=[
            dg.define_asset_job("race", selection=[orders], executor_def=dg.multiprocess_executor)
        ],
        resources={
            "io_manager": HoldingParquetIOManager(UPath(directory / "warehouse"), directory)
        },
    )
    return definitions.resolve_job_def("race")


def run_in_process(instance: dg.DagsterInstance, run: str) -> "subprocess.Popen[bytes]":
    """Start run `run` of the partition in a Python process of its own; it exits 0 on success.

    Not in a thread of the test's process: two runs executing in one process at once deadlock
    in Dagster (each run calls `logging.config.dictConfig`, which takes logging's module lock
    and then each handler's lock, while the other run's event handler holds its own lock and
    waits for the module lock).
    """
    environment = {**os.environ, INSTANCE: dg.serialize_value(instance.get_ref())}
    return subprocess.Popen(
        [sys.executable, "-c", f"from {__name__} import execute; execute({run!r})"],
        env=environment,
        cwd=Path(__file__).resolve().parent.parent,
        start_new_session=True,  # so the test can stop the run and its step's process together
    )


def execute(run: str) -> None:
    """Execute run `run` of the partition on the instance the environment names (a run worker)."""
    reference = dg.deserialize_value(os.environ[INSTANCE])
    with dg.DagsterInstance.from_ref(reference) as instance:  # type: ignore[arg-type]
        result = dg.execute_job(
            dg.reconstructable(race_job),
            instance=instance,
            tags={"run": run, "dagster/partition": DAY_1},
            raise_on_error=False,
        )
    sys.exit(0 if result.success else 1)

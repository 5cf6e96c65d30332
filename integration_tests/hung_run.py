"""A run whose step never finishes while its run process stays alive, for run monitoring to end.

This is what a run on dagster-celery becomes when the Celery worker running its step dies
whole: the run's own process waits for the task's result with no timeout, so the run stays
"started", and its step has already said that it writes the partition, so every other run of
that partition stops with `ConcurrentRunError`. Here the step itself waits, past the package's
check, for a file nobody creates (`python -c "from integration_tests.hung_run import execute;
execute()"`); the run process is as alive as the Celery run worker is.
"""

import os
import sys
import time

import dagster as dg
import polars as pl
from upath import UPath

import dagster_dataframely as dd

from .conftest import DAY_1, Orders, orders_frame

HOME = "DAGSTER_DATAFRAMELY_TEST_HUNG_HOME"
"""The environment variable naming the instance's directory (its `dagster.yaml`)."""
WAREHOUSE = "DAGSTER_DATAFRAMELY_TEST_HUNG_WAREHOUSE"
HANG = "hang"
"""The value of the run tag `hung_run` that makes the step wait."""
HANG_SECONDS = 600.0
PARTITIONS = dg.StaticPartitionsDefinition([DAY_1])


class ParquetFiles(dg.UPathIOManager):
    extension = ".parquet"

    def dump_to_path(self, context: dg.OutputContext, obj: pl.DataFrame, path: UPath) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        obj.write_parquet(str(path))

    def load_from_path(self, context: dg.InputContext, path: UPath) -> pl.DataFrame:
        return pl.read_parquet(str(path))


@dd.asset(Orders, quarantine=True, partitions_def=PARTITIONS)
def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
    if context.run.tags.get("hung_run") == HANG:
        deadline = time.monotonic() + HANG_SECONDS
        while time.monotonic() < deadline:  # the result of a task no worker runs
            time.sleep(0.5)
    return orders_frame(DAY_1, tag=context.run.tags.get("hung_run", "run"))


def resources() -> dict[str, object]:
    return {"io_manager": ParquetFiles(base_path=UPath(os.environ[WAREHOUSE]))}


def hung_job() -> dg.JobDefinition:
    definitions = dg.Definitions(
        assets=[orders],
        jobs=[dg.define_asset_job("hung", selection=[orders])],
        resources=resources(),
    )
    return definitions.resolve_job_def("hung")


def execute() -> None:
    """The run that hangs, with a maximum runtime of `sys.argv[1]` seconds."""
    with dg.DagsterInstance.from_config(os.environ[HOME]) as instance:
        dg.execute_job(
            dg.reconstructable(hung_job),
            instance=instance,
            tags={"hung_run": HANG, "dagster/partition": DAY_1, "dagster/max_runtime": sys.argv[1]},
            raise_on_error=False,
        )

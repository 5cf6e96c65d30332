"""The table-wide key check's cost against the size of the partitions definition.

`keys_across_partitions=True` reads the key columns of every stored partition after each run.
What it costs should follow what is stored, not how many partitions the definition could hold:
an hourly asset started years ago has tens of thousands of partitions, few of them stored. This
declares one `dd.asset` on an hourly definition of `--partitions` partitions (60,000 by default,
about 6.8 years) with and without the check, stores `--stored` of its partitions (the last ones,
each through one run without the check), then times runs of one partition with the check and
without it, interleaved, on dagster-polars' `PolarsParquetIOManager` and on
`DuckDBPolarsIOManager`, and prints the median of `--repeat` for each. Every run with the check
must report the stored partitions' one repeated key (every stored partition holds order 0), or
the script stops.

Run it against another commit's code by pointing `PYTHONPATH` at that commit's `src`
(`git archive <commit> src | tar -x -C /tmp/old`, then `PYTHONPATH=/tmp/old/src`).

    .venv/bin/python -m benchmarks.keys_check_definition [--partitions 60000] [--stored 1 100]
"""

import argparse
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

START = datetime(2019, 1, 1)
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


class Orders(dy.Schema):
    placed_at = dy.Datetime()
    order_id = dy.Int64(primary_key=True)


def _assets(hours: dg.HourlyPartitionsDefinition) -> dict[bool, dg.AssetsDefinition]:
    """The same asset with the check and without it; each partition stores orders 0 to 9."""

    def declare(check: bool) -> dg.AssetsDefinition:
        @dd.asset(
            Orders,
            name="orders",
            partitions_def=hours,
            keys_across_partitions=check,
            metadata={"partition_expr": "placed_at"},
        )
        def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
            start = hours.time_window_for_partition_key(context.partition_key).start
            placed = start.replace(tzinfo=None)
            return pl.DataFrame(
                {
                    "placed_at": [placed + timedelta(minutes=m) for m in range(10)],
                    "order_id": range(10),
                },
                schema={"placed_at": pl.Datetime("us"), "order_id": pl.Int64},
            )

        return orders

    return {False: declare(False), True: declare(True)}


def _run(asset: dg.AssetsDefinition, manager: Any, key: str, instance: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = dg.materialize(
        [asset],
        resources={"io_manager": manager},
        partition_key=key,
        instance=instance,
        run_config=QUIET,
    )
    seconds = time.perf_counter() - started
    checks = [
        e for e in result.get_asset_check_evaluations() if e.check_name.endswith("partitions")
    ]
    return seconds, checks[0] if checks else None


def measure(partitions: int, stored: int, repeat: int, store: str) -> tuple[float, float]:
    """The median run with and without the check, `stored` partitions stored."""
    hours = dg.HourlyPartitionsDefinition(
        start_date=START.strftime("%Y-%m-%d-%H:%M"),
        end_date=(START + timedelta(hours=partitions)).strftime("%Y-%m-%d-%H:%M"),
    )
    keys = hours.get_partition_keys()
    assert len(keys) == partitions, len(keys)
    assets = _assets(hours)
    with tempfile.TemporaryDirectory(prefix="keys-check-definition-") as folder:
        manager: Any = (
            PolarsParquetIOManager(base_dir=str(Path(folder) / "tables"))
            if store == "parquet"
            else DuckDBPolarsIOManager(database=str(Path(folder) / "warehouse.duckdb"))
        )
        with dg.DagsterInstance.ephemeral() as instance:
            for key in keys[-stored:]:
                _run(assets[False], manager, key, instance)
            times: dict[bool, list[float]] = {False: [], True: []}
            for _ in range(repeat):
                for check in (False, True):
                    seconds, evaluation = _run(assets[check], manager, keys[-1], instance)
                    times[check].append(seconds)
                    if check:
                        found = evaluation.metadata["dy_repeated_keys"].value
                        assert found == (10 if stored > 1 else 0), found
    return statistics.median(times[False]), statistics.median(times[True])


def main(partitions: int, stored: list[int], repeat: int, stores: list[str]) -> None:
    print(f"An hourly definition of {partitions:,} partitions; median of {repeat} runs each")
    print("| Manager | Stored partitions | Without the check | With the check | Ratio |")
    print("|---|---:|---:|---:|---:|")
    for store in stores:
        for count in stored:
            without, with_check = measure(partitions, count, repeat, store)
            print(
                f"| {store} | {count:,} | {without:.2f} s | {with_check:.2f} s "
                f"| {with_check / without:.2f}x |",
                flush=True,
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=60_000)
    parser.add_argument("--stored", type=int, nargs="+", default=[1, 100])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--stores", nargs="+", default=["parquet", "duckdb"])
    arguments = parser.parse_args()
    main(arguments.partitions, arguments.stored, arguments.repeat, arguments.stores)

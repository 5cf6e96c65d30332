"""What reading a single-run backfill's history costs when its run starts.

Not a test: it prints the figures the Quality policy page quotes. An instance holds `--runs`
materializations of each of `--days` daily partitions (with a row count and undeclared
columns); a range over all of them reads what its volume check (`compare_with="partition"`,
then `"asset"`) and its undeclared-columns check compare with. The package reads the range's
partitions together, a page at a time (`read_range_history`); the baseline asks the instance
once per partition, as a run of each partition alone would. Both give the same histories
(checked); the ratio is the package's time over the baseline's.

    python -m benchmarks.range_history --days 30 365
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import dagster as dg
import dataframely as dy

import dagster_dataframely as dd
from dagster_dataframely._model.asset_settings import OutputSettings
from dagster_dataframely._model.schema import read_schema
from dagster_dataframely._run.checks.history import Series, read_range_history
from dagster_dataframely._run.checks.registry import series_of
from dagster_dataframely._run.validated_output import ValidatedOutput

KEY = dg.AssetKey("orders")


class Orders(dy.Schema):
    order_id = dy.String(primary_key=True)


class _Context:
    """What `read_range_history` reads of a context: its instance."""

    def __init__(self, instance: dg.DagsterInstance) -> None:
        self.instance = instance


def _filled(instance: dg.DagsterInstance, days: Sequence[str], runs: int) -> None:
    for run in range(runs):
        for day in days:
            instance.report_runless_asset_event(
                dg.AssetMaterialization(
                    KEY,
                    partition=day,
                    metadata={
                        "dagster/row_count": 100 + run,
                        "dataframely/undeclared_columns": ["channel"],
                    },
                )
            )


Remembered = tuple[tuple[Any, ...], tuple[Any, ...]]
"""A day's row counts and undeclared-column lists, newest first."""


def _one_query_each(
    instance: dg.DagsterInstance, days: Sequence[str], window: int, asset_wide: bool
) -> dict[str, Remembered]:
    """The baseline: one query per partition, as a run of each partition alone makes."""

    def metadata(record: dg.EventLogRecord, name: str) -> Any:
        materialization = record.asset_materialization
        assert materialization is not None
        return materialization.metadata[name].value

    asset_counts: tuple[int, ...] = ()
    if asset_wide:
        records = instance.fetch_materializations(KEY, limit=window).records
        asset_counts = tuple(metadata(r, "dagster/row_count") for r in records)
    found = {}
    for day in days:
        limit = 1 if asset_wide else window
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=KEY, asset_partitions=[day]), limit=limit
        ).records
        counts = asset_counts or tuple(metadata(r, "dagster/row_count") for r in records)
        columns = (metadata(records[0], "dataframely/undeclared_columns"),)
        found[day] = (counts, columns)
    return found


def _values(history: Mapping[Series, Sequence[Any]], series: Sequence[Series]) -> Remembered:
    counts, columns = (tuple(point.value for point in history[s]) for s in series)
    return counts, columns


def _median_seconds(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--days", type=int, nargs="+", default=[30, 365])
    parser.add_argument("--runs", type=int, default=5, help="materializations of each day")
    parser.add_argument("--window", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=7)
    arguments = parser.parse_args()
    info = read_schema(Orders)
    print("| days | compare_with | one query per partition | read together | ratio |")
    print("| ---: | --- | ---: | ---: | ---: |")
    for count in arguments.days:
        days = dg.DailyPartitionsDefinition(start_date="2020-01-01").get_partition_keys()[:count]
        with dg.DagsterInstance.ephemeral() as instance:
            _filled(instance, days, arguments.runs)
            context = _Context(instance)
            for compare_with in ("partition", "asset"):
                volume = dd.VolumeCheck(
                    max_drop=0.5, window=arguments.window, compare_with=compare_with
                )
                policy = dd.QualityPolicy(volume=volume, undeclared_columns="check")
                settings = OutputSettings.of(quality_policy=policy).resolve(info)
                series = series_of(ValidatedOutput("orders", KEY, info, settings, False, False))
                asset_wide = compare_with == "asset"
                together = read_range_history(context, KEY, days, series)
                assert together is not None
                baseline = _one_query_each(instance, days, arguments.window, asset_wide)
                assert {day: _values(together.of(day), series) for day in days} == baseline
                before = _median_seconds(
                    functools.partial(
                        _one_query_each, instance, days, arguments.window, asset_wide
                    ),
                    arguments.repeat,
                )
                now = _median_seconds(
                    functools.partial(read_range_history, context, KEY, days, series),
                    arguments.repeat,
                )
                print(
                    f"| {count} | {compare_with} | {before:.3f} s | {now:.3f} s | "
                    f"{now / before:.2f}x |"
                )


if __name__ == "__main__":
    main()

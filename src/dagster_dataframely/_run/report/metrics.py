"""Each declared column's metrics as numbers on the materialization, so Dagster plots them.

The statistics tables are what a person reads; Dagster neither plots a table nor lets a check
read one back. So every figure of them that is a number becomes a float of its own, under
`dataframely/metric/<column>/<metric>` (`names.metric_key`), which the Plots switch of the
asset's Metadata section (Overview tab) draws over time and the anomaly check reads as a
series. They are read off the tables already computed: no pass over the rows of their own.
Their count is bounded by the schema (a fixed set per dtype group, per declared column), never
by the data; a sensitive column has its null fraction only, which shows no value.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model import names
from dagster_dataframely._model.schema import SchemaInfo
from dagster_dataframely._run.checks.metric_names import METRICS
from dagster_dataframely._run.split.valid_rows import ValidRows

from .statistics import StatisticsTables, staged_statistics, statistics_tables

_FROM_STATISTIC = {
    "mean": "mean",
    "std": "std",
    "min": "min",
    "median": "p50",
    "max": "max",
    "distinct_count": "n_unique",
    "min_length": "min_len",
    "max_length": "max_len",
    "true_fraction": "true_rate",
}
"""The statistic of the tables each metric is, where it is one as it stands."""

_PER_VALUE = {"empty_fraction": "n_empty", "zero_fraction": "n_zero", "mean_length": "sum_len"}
"""The metrics that are a count (or a sum) per non-null value: a statistic over `count`."""


def metric_values(statistics: Mapping[str, dg.TableMetadataValue]) -> dict[str, float]:
    """The metrics of every column of the statistics tables, by materialization metadata key.

    A metric without a value (no non-null value to take a mean of, a NaN) is left out, so a
    plot has no false zero; a masked statistic is never a metric.
    """
    metrics: dict[str, float] = {}
    # NOTE: a sensitive column's figures are never computed, so it gets none of them.
    figures: dict[str, dict[str, Any]] = {}
    if isinstance(statistics, StatisticsTables):
        for (column, statistic), value in statistics.figures.items():
            figures.setdefault(column, {})[statistic] = value
    for group, table in statistics.items():
        for record in table.records:
            column = str(record.data["column"])
            cells = {**record.data, **figures.get(column, {})}
            for metric in METRICS.get(group, ()):
                value = _metric(metric, cells)
                if value is not None:
                    metrics[names.metric_key(column, metric)] = value
    return metrics


def column_metrics(rows: ValidRows, columns: Sequence[str], info: SchemaInfo) -> dict[str, float]:
    """The metrics of `columns` of `rows`, as a materialization of them records them.

    Only those columns are measured: a column's statistics read that column alone, so they
    are the figures the materialization records, at the cost of the watched columns.
    """
    order = rows.collect_schema().names()
    # `pl.nth`, not `pl.col`: a column named `*` or `^a.*$` would select other columns.
    chosen = rows.select(pl.nth(order.index(column)) for column in dict.fromkeys(columns))
    if isinstance(chosen, pl.LazyFrame):
        return metric_values(staged_statistics(chosen, info.distinct_columns, info.sensitive))
    return metric_values(statistics_tables(chosen, info.distinct_columns, info.sensitive))


def _metric(metric: str, cells: Mapping[str, Any]) -> float | None:
    values, nulls = cells["count"], cells["null_count"]
    rows = values + nulls
    if metric == "null_fraction":
        return nulls / rows if rows else None
    if metric in _PER_VALUE:
        counted = cells.get(_PER_VALUE[metric])
        return counted / values if values and _is_number(counted) else None
    value = cells.get(_FROM_STATISTIC[metric])
    # NOTE: a masked cell is text (`MASK`), so a sensitive column gives none of these.
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    return float(value) if math.isfinite(value) else None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)

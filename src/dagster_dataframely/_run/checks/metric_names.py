"""Which metrics a column records, by its dtype group: what the anomaly check may watch.

The statistics tables group columns by dtype (`dtype_group`), and each group's metrics are a
fixed set (`METRICS`), so what a materialization records is bounded by the schema alone, and a
declaration can refuse a metric its column never records before any run.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

METRICS: Mapping[str, tuple[str, ...]] = {
    "numeric": ("null_fraction", "mean", "std", "min", "median", "max", "zero_fraction"),
    "temporal": ("null_fraction",),
    "string": (
        "null_fraction",
        "distinct_count",
        "min_length",
        "max_length",
        "mean_length",
        "empty_fraction",
    ),
    "boolean": ("null_fraction", "true_fraction"),
}
"""The metrics each dtype group's column records, in order (a sensitive column: the first)."""


def dtype_group(dtype: pl.DataType) -> str | None:
    """The statistics table a column of `dtype` is in; None for a nested or `Null` column."""
    if dtype.is_numeric():
        return "numeric"
    if dtype.is_temporal():
        return "temporal"
    if isinstance(dtype, pl.String | pl.Categorical | pl.Enum | pl.Binary):
        return "string"
    if isinstance(dtype, pl.Boolean):
        return "boolean"
    return None


def recorded_metrics(dtype: pl.DataType, *, sensitive: bool) -> tuple[str, ...]:
    """The metrics a column of `dtype` records; a sensitive one's null fraction only."""
    group = dtype_group(dtype)
    metrics = METRICS[group] if group is not None else ()
    return metrics[:1] if sensitive else metrics

"""Summary statistics of the written rows, as one Dagster table per dtype group.

Every statistic of every column comes from a single lazy `select`, so a materialization pays for
one query over the frame, not one per column or per statistic (a text column with many distinct
values in no order, or a large one with few, has its count in a query of its own, run beside
it). The string group shows counts and byte lengths only: a statistic that shows a value would
copy real data into the event log. A sensitive column shows its counts of values and nulls
only, every other statistic `MASK`, and none of them is computed.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model.shown_values import MASK
from dagster_dataframely._run.checks import tables
from dagster_dataframely._run.checks.metric_names import dtype_group

from .distinct import DistinctCount

_Statistics = Callable[[pl.Expr, pl.DataType], dict[str, pl.Expr]]

_TYPES: dict[str, dict[str, str]] = {
    "numeric": {
        "count": "int",
        "null_count": "int",
        "mean": "float",
        "std": "float",
        "min": "number",
        "p50": "float",
        "max": "number",
    },
    "temporal": {
        "count": "int",
        "null_count": "int",
        "min": "string",
        "max": "string",
        "span": "string",
    },
    "string": {
        "count": "int",
        "null_count": "int",
        "n_unique": "int",
        "min_len": "int",
        "max_len": "int",
        "n_empty": "int",
    },
    "boolean": {
        "count": "int",
        "null_count": "int",
        "n_true": "int",
        "n_false": "int",
        "true_rate": "float",
    },
}
"""Each group's statistic columns, in table order, with the type the table schema shows."""

Figures = dict[tuple[str, str], Any]
"""Statistics no table shows, by (column, statistic): `n_zero`, `sum_len`, for the metrics."""


class StatisticsTables(dict[str, dg.TableMetadataValue]):
    """The tables by dtype group, and the `figures` computed in the same query that none shows."""

    def __init__(self, tables: Mapping[str, dg.TableMetadataValue], figures: Figures) -> None:
        super().__init__(tables)
        self.figures = figures


def statistics_tables(
    frame: pl.DataFrame | pl.LazyFrame, distinct: Collection[str] = (), masked: Collection[str] = ()
) -> StatisticsTables:
    """Return a table per dtype group in `frame`, keyed `numeric`, `temporal`, `string`, `boolean`.

    A group has a table when the frame has a column of it, even with zero rows: the table then
    shows a count of 0 and None for every statistic that needs a value. Each table has a row per
    column, in the frame's order; nested and `Null` columns appear in no table.

    - `count` counts non-null values and `null_count` nulls, as Python ints.
    - `mean`, `std` (sample, ddof 1), `p50` (exact median) and `true_rate` are rounded to 4 places.
    - `min` and `max` are exact, except that a `Decimal` shows as a float; a temporal one is ISO
      8601 text (a `Duration` is in Polars' form) and `span` is `max - min` in Polars' form (`8d`).
    - `n_unique` counts distinct non-null values; `min_len`, `max_len` and `n_empty` are in bytes.
    - Floats follow Polars: `min` and `max` skip NaN, while `mean`, `std` and `p50` can be NaN.

    `distinct` names columns whose non-null values are known to be all different (a single-column
    primary key, a `unique=True` column of rows that passed validation): their `n_unique` is their
    `count`. Other text columns are counted as cheaply as their layout allows (see `distinct`),
    which can take a query of its own per column, run beside the statistics query.

    `masked` names the sensitive columns: their row has `count` and `null_count`, and `MASK` in
    every other statistic, which could show a value or give one away on a few rows.

    The same query computes what the metrics need and no table shows (`figures`): a number
    column's count of zeros (`n_zero`), a text column's summed byte length (`sum_len`).

    A `LazyFrame` is rows a streamed split staged: its query runs on the streaming engine, and
    a text column's distinct values are counted in passes over it (see `distinct`).
    """
    columns = [
        _Column.plan(
            frame,
            position,
            name,
            dtype,
            group,
            known_distinct=name in distinct,
            masked=name in masked,
        )
        for position, (name, dtype) in enumerate(frame.collect_schema().items())
        if (group := dtype_group(dtype))
    ]
    if not columns:
        return StatisticsTables({}, {})
    exprs = {key: expr for column in columns for key, expr in column.exprs().items()}
    result = (
        _staged_results(frame, exprs, columns)
        if isinstance(frame, pl.LazyFrame)
        else _results(frame, exprs, columns)
    )
    result |= {c.counting.key: c.counting.resolve(result) for c in columns if c.counting}
    rows: dict[str, list[dict[str, tables.Cell]]] = {}
    for column in columns:
        rows.setdefault(column.group, []).append(column.row(result))
    # NOTE: the spec fixes each table's columns, so the figures only the metrics need (a
    # number's zeros, a text's summed length) are computed in the same query but kept apart.
    figures = {
        (column.name, stat): result[f"{column.position}:{stat}"]
        for column in columns
        for stat in column.statistics
        if stat not in _TYPES[column.group]
    }
    return StatisticsTables(
        {
            group: tables.records_value(rows[group], {"column": "string"} | types)
            for group, types in _TYPES.items()
            if group in rows
        },
        figures,
    )


def _results(
    frame: pl.DataFrame, exprs: Mapping[str, pl.Expr], columns: list[_Column]
) -> dict[str, Any]:
    count_queries = [
        q for c in columns if c.counting and (q := c.counting.query(frame)) is not None
    ]
    # One query set, so Polars can run the partitioned counts beside the statistics query.
    done = pl.collect_all([frame.lazy().select(**exprs), *count_queries])
    result: dict[str, Any] = {}
    for collected in done:
        result |= collected.row(0, named=True)
    return result


def _staged_results(
    rows: pl.LazyFrame, exprs: Mapping[str, pl.Expr], columns: list[_Column]
) -> dict[str, Any]:
    result: dict[str, Any] = rows.select(**exprs).collect(engine="streaming").row(0, named=True)
    for column in columns:
        if column.counting is not None and column.counting.strategy == "passes":
            result[column.counting.key] = column.counting.count_in_passes(rows)
    return result


@dataclass(frozen=True)
class _Column:
    """One column's statistics: expressions keyed by its position, and how to count its values."""

    name: str
    group: str
    position: int
    statistics: dict[str, pl.Expr]
    counting: DistinctCount | None
    masked: bool = False
    """A sensitive column's: `statistics` holds its counts only, and the row shows `MASK`."""

    @classmethod
    def plan(
        cls,
        frame: pl.DataFrame | pl.LazyFrame,
        position: int,
        name: str,
        dtype: pl.DataType,
        group: str,
        *,
        known_distinct: bool,
        masked: bool = False,
    ) -> _Column:
        # `pl.nth`, not `pl.col`: a column named `*` or `^a.*$` would select other columns.
        column = pl.nth(position)
        # NOTE: every group counts its values and nulls, a masked column's only those.
        counts = {"count": column.count(), "null_count": column.null_count()}
        if masked:
            return cls(name, group, position, counts, None, masked=True)
        statistics = counts | _STATISTICS[group](column, dtype)
        counting = None
        if "n_unique" in _TYPES[group]:
            key = f"{position}:n_unique"
            counting = DistinctCount.plan(frame, position, key, known=known_distinct)
        return cls(name, group, position, statistics, counting)

    def exprs(self) -> dict[str, pl.Expr]:
        exprs = {f"{self.position}:{stat}": expr for stat, expr in self.statistics.items()}
        return exprs | (self.counting.exprs if self.counting else {})

    def row(self, results: Mapping[str, Any]) -> dict[str, tables.Cell]:
        """The table row, its cells in the group's column order."""
        cells: dict[str, tables.Cell] = {"column": self.name}
        for stat in _TYPES[self.group]:
            hidden = self.masked and stat not in self.statistics
            cells[stat] = MASK if hidden else results[f"{self.position}:{stat}"]
        return cells


def streams_exactly(dtype: pl.DataType) -> bool:
    """Whether staged rows of `dtype` get their statistics on the streaming engine, unread.

    The string group's statistics are counts and byte lengths, integers the streaming engine
    gives exactly as the in-memory one does, and its columns are the largest; a float statistic
    (a mean, a deviation) can differ in its last bits with the order of its sums, so the other
    groups' columns are read into memory, one at a time, as the in-memory path reads them.
    """
    return dtype_group(dtype) == "string"


def _numeric(column: pl.Expr, dtype: pl.DataType) -> dict[str, pl.Expr]:
    if isinstance(dtype, pl.Decimal):
        return _decimal(column, dtype)
    return {
        "mean": _rounded(column.mean()),
        "std": _rounded(column.std()),
        "min": column.min(),
        "p50": _rounded(column.median()),
        "max": column.max(),
        "n_zero": (column == 0).sum(),
    }


def _decimal(column: pl.Expr, dtype: pl.Decimal) -> dict[str, pl.Expr]:
    # NOTE: the integers are what Polars stores: reading them, where a cast to Float64 would convert
    # every value, is exact up to the last step.
    units = column.to_physical()
    scale = 10.0 ** (dtype.scale or 0)
    return {
        "mean": _rounded(units.mean() / scale),
        "std": _rounded(units.std() / scale),
        "min": column.min().cast(pl.Float64),
        "p50": _rounded(_median_units(units, dtype) / scale),
        "max": column.max().cast(pl.Float64),
        "n_zero": (units == 0).sum(),
    }


_EXACT_IN_FLOAT = 15
"""Digits every integer below 10**15 has exactly as a `Float64` (2**53 is about 9.007e15)."""


def _median_units(units: pl.Expr, dtype: pl.Decimal) -> pl.Expr:
    # NOTE: Polars stores a Decimal as Int128, whose selection is several times slower than an
    # Int64's (0.2 s against 0.04 s of CPU at 5M rows); with at most 15 digits every value, and the
    # sum of the two middle ones, is exact in an Int64 and a Float64.
    if dtype.precision is not None and dtype.precision <= _EXACT_IN_FLOAT:
        return units.cast(pl.Int64).median()
    return units.median()


def _temporal(column: pl.Expr, dtype: pl.DataType) -> dict[str, pl.Expr]:
    low, high = column.min(), column.max()
    return {
        "min": tables.cell_expr(low, dtype),
        "max": tables.cell_expr(high, dtype),
        "span": (high - low).dt.to_string("polars"),
    }


def _string(column: pl.Expr, dtype: pl.DataType) -> dict[str, pl.Expr]:
    if isinstance(dtype, pl.Binary):
        lengths = column.bin.size()
    elif isinstance(dtype, pl.Categorical | pl.Enum):
        lengths = column.cat.len_bytes()  # measures each category once, not each row
    else:
        lengths = column.str.len_bytes()
    return {
        "min_len": lengths.min(),
        "max_len": lengths.max(),
        "n_empty": (lengths == 0).sum(),
        "sum_len": lengths.cast(pl.UInt64).sum(),
    }


def _boolean(column: pl.Expr, dtype: pl.DataType) -> dict[str, pl.Expr]:
    n_true = column.sum()
    return {
        "n_true": n_true,
        "n_false": column.count() - n_true,
        "true_rate": _rounded(column.mean()),
    }


def _rounded(statistic: pl.Expr) -> pl.Expr:
    # NOTE: in Float64, so a Float32 column shows no f32 noise.
    return statistic.cast(pl.Float64).round(4)


# NOTE: each group's own statistics; `_Column.plan` adds the counts of values and nulls.
_STATISTICS: dict[str, _Statistics] = {
    "numeric": _numeric,
    "temporal": _temporal,
    "string": _string,
    "boolean": _boolean,
}


def staged_statistics(
    valid: pl.LazyFrame, distinct: Collection[str] = (), masked: Collection[str] = ()
) -> StatisticsTables:
    """`statistics_tables` of staged rows, one column at a time, in the same tables.

    A column's statistics read that column alone, so computing them column by column gives the
    same values as one query over the frame; only the tables' rows are put back together, in
    the frame's column order within each table. A text column is never held at all: its
    statistics stream (`streams_exactly`); any other is read into memory alone.
    """
    # Zero rows give every table of the frame, in the tables' order, with their schemas.
    tables = statistics_tables(valid.clear().collect(), distinct, masked)
    records: dict[str, list[dg.TableRecord]] = {group: [] for group in tables}
    figures: Figures = {}
    for position, dtype in enumerate(valid.collect_schema().dtypes()):
        # `pl.nth`: a column named `*` or `^a.*$` would select other columns by name.
        column = valid.select(pl.nth(position))
        rows = column if streams_exactly(dtype) else column.collect(engine="streaming")
        one = statistics_tables(rows, distinct, masked)
        figures |= one.figures
        for group, table in one.items():
            records[group].extend(table.records)
    return StatisticsTables(
        {
            group: dg.MetadataValue.table(records[group], table.schema)
            for group, table in tables.items()
        },
        figures,
    )

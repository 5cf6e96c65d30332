"""Exact counts of distinct values, without paying Polars' full price when the layout allows.

Polars' exact `n_unique` on millions of order ids costs more than every other statistic
together: its hash table outgrows the CPU's caches. A column sorted either way is counted by
its runs; any other is cut by its hash into parts (`parts_for`), each counted exactly and the
counts added (equal values hash equal, so each lies in one part; the hash only decides where a
value is counted). From `GROUPED_FROM` values a text column of few long values is counted by
a `group_by` of its own, on every thread; few short ones by `n_unique` (`INLINE_BYTES`). Staged
rows are counted on the streaming engine, one hash part per pass (`passes`), so only that
part's values are held (`benchmarks/validation.py --order random`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

import polars as pl

_SAMPLE_SIZE = 4096
_MANY_DISTINCT = 0.9
"""Share of distinct values in a sample above which a column is worth the cheaper counts.

With fewer distinct values Polars' `n_unique` keeps a small table and is the cheapest exact
count; cutting such a column into parts only adds the cost of the cut.
"""

ROWS_PER_PART = 32_768
"""About how many values each part holds, so that its table stays in the CPU's cache.

Measured on shuffled order ids (CPU seconds): at 1M rows 32 parts 0.063, 64 parts 0.101,
`n_unique` 0.094; at 5M rows 64 parts 0.34, 128 parts 0.31, `n_unique` 1.0. A fixed count
that suits one size is too many parts for a smaller column, too few for a larger one.
"""

GROUPED_FROM = 100_000
"""Rows from which a text column with few distinct long values is counted by a `group_by`.

The valid rows of `benchmarks/validation.py` at 5M rows shuffled in memory: every statistic
took 2.0-2.8 s with `n_unique` and 1.6-1.9 s grouped (medians of 7 interleaved runs, two
sittings); in generator order 1.0-1.2 s either way. Below it the query of its own does not
pay: over 2,000 shuffled emails, the statistics took 5.9 ms grouped against 4.8 ms at 20k
rows, 16.2 against 15.6 ms at 100k, and 30.8 against 38.4 ms at 200k (medians of 15).
"""

INLINE_BYTES = 12
"""The longest value Polars keeps inside its view: a column of few such values is counted by
`n_unique` in the statistics query, not grouped, as hashing and comparing them reads no buffer.

The valid rows of `benchmarks/validation.py` at 1M shuffled rows (5 to 900 values of at most
12 bytes in three columns): every statistic took 0.84x-0.94x the time from a `DataFrame`
(medians of 15, three alternations), the same from a scan.
"""

DISTINCT_PER_PASS = 4_000_000
"""About how many distinct values one pass over a staged text column holds in its table.

At 30M staged rows, 15M distinct order ids: 4 passes took 8.1 s and held 526 MiB, 8 passes
8.8 s and 350 MiB; one pass over all of them held 1.7 GiB.
"""

MAX_PARTS = 256
"""The most parts a column is cut into: beyond it the cut costs more than the smaller tables
save (at 5M shuffled ids, 1024 parts 0.7 s against 64 parts' 0.39 s)."""


def parts_for(values: int) -> int:
    """How many parts a column of `values` non-null values is cut into by its hash.

    The power of two nearest `values / ROWS_PER_PART`, from 1 to `MAX_PARTS`. Any count
    gives the exact sum; this one only decides how fast it comes.
    """
    wanted = max(1.0, values / ROWS_PER_PART)
    return min(MAX_PARTS, 1 << round(math.log2(wanted)))


Strategy = Literal["known", "sorted", "partitioned", "grouped", "exact", "passes"]


@dataclass(frozen=True)
class DistinctCount:
    """How one column's count of distinct non-null values is obtained, and from which results.

    `exprs` join the statistics query, under keys unique to this column; a partitioned or
    grouped count also runs `query`, its own query over that column alone, beside the
    statistics query; a count in passes runs `count_in_passes` after it.
    `resolve` turns the results into the count.
    """

    column: pl.Expr
    key: str
    strategy: Strategy
    parts: int = 1
    """How many parts a partitioned count cuts the column into by its hash."""

    @classmethod
    def plan(
        cls, frame: pl.DataFrame | pl.LazyFrame, position: int, key: str, *, known: bool
    ) -> DistinctCount:
        """Pick the cheapest exact way to count the column at `position` of `frame`.

        `known` says the column's non-null values are all different (say a single-column
        primary key of rows that passed validation): the count is then the non-null count.
        A `LazyFrame` is staged rows, counted on the streaming engine.
        """
        if known:
            return cls(pl.nth(position), key, "known")
        if isinstance(frame, pl.LazyFrame):
            return cls._plan_staged(frame, position, key)
        series = frame.to_series(position)
        if not isinstance(series.dtype, pl.String | pl.Binary):
            return cls(pl.nth(position), key, "exact")
        values = len(series) - series.null_count()
        sample = series.gather_every(max(1, len(series) // _SAMPLE_SIZE)).drop_nulls()
        if not _many_distinct(sample):
            grouped = values >= GROUPED_FROM and _longest(sample) > INLINE_BYTES
            return cls(pl.nth(position), key, "grouped" if grouped else "exact")
        if _is_sorted(series):
            return cls(pl.nth(position), key, "sorted")
        return cls(pl.nth(position), key, "partitioned", parts_for(values))

    @classmethod
    def _plan_staged(cls, rows: pl.LazyFrame, position: int, key: str) -> DistinctCount:
        column = pl.nth(position)
        if not isinstance(rows.collect_schema().dtypes()[position], pl.String | pl.Binary):
            return cls(column, key, "exact")
        estimate = rows.select(column.approx_n_unique()).collect(engine="streaming").item()
        return cls(column, key, "passes", max(1, math.ceil(estimate / DISTINCT_PER_PASS)))

    @property
    def exprs(self) -> dict[str, pl.Expr]:
        if self.strategy == "known":
            return {self.key: self.column.count()}
        if self.strategy == "passes":
            return {}
        if self.strategy == "exact":
            return {self.key: self.column.n_unique() - self.column.has_nulls().cast(pl.UInt32)}
        # A stretch of nulls is one run, every null hashes alike and nulls form one group, so
        # each of these counts includes null as one more value when there are nulls.
        nulls = {f"{self.key}:nulls": self.column.has_nulls()}
        if self.strategy == "sorted":
            return nulls | {f"{self.key}:runs": self.column.rle_id().max().fill_null(-1) + 1}
        return nulls

    def query(self, frame: pl.DataFrame) -> pl.LazyFrame | None:
        """A partitioned or grouped count's own query; None for the others.

        Partitioned: each part's exact count, summed. Grouped: the number of groups.
        """
        if self.strategy not in ("partitioned", "grouped"):
            return None
        column = frame.lazy().select(value=self.column)
        if self.strategy == "grouped":
            return column.group_by("value").agg().select(pl.len().alias(self.key))
        value = pl.col("value")
        part = (value.hash() % self.parts).alias("part")
        return (
            column.group_by(part)
            .agg(value.n_unique())
            .select(pl.col("value").sum().alias(self.key))
        )

    def count_in_passes(self, rows: pl.LazyFrame) -> int:
        """A count in passes: the distinct non-null values of each hash part, one pass each.

        Equal values hash equal, so each distinct value is counted in exactly one part. The
        passes run one after the other, so only one part's values are held at a time.
        """
        value = pl.col("value")
        column = rows.select(value=self.column)
        return sum(
            _as_int(
                column.filter(value.is_not_null() & (value.hash() % self.parts == part))
                .select(value.n_unique())
                .collect(engine="streaming")
                .item()
            )
            for part in range(self.parts)
        )

    def resolve(self, results: Mapping[str, object]) -> int:
        """The count, from the statistics query's results and this column's own query's."""
        if self.strategy in ("known", "exact", "passes"):
            return _as_int(results[self.key])
        counted = results[f"{self.key}:runs" if self.strategy == "sorted" else self.key]
        return _as_int(counted or 0) - bool(results[f"{self.key}:nulls"])


def _many_distinct(sample: pl.Series) -> bool:
    return len(sample) > 1 and sample.n_unique() >= _MANY_DISTINCT * len(sample)


def _longest(sample: pl.Series) -> int:
    return _as_int(sample.cast(pl.Binary).bin.size().max() or 0)


def _is_sorted(series: pl.Series) -> bool:
    nulls_last = series.has_nulls() and series[-1] is None
    return any(series.is_sorted(descending=down, nulls_last=nulls_last) for down in (False, True))


def _as_int(value: object) -> int:
    return cast(int, value)

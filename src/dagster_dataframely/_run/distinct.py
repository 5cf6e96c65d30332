"""Exact counts of distinct values, without paying Polars' full price when the layout allows.

Counting the distinct values of a text column with many of them is the most expensive
statistic by far: Polars' exact `n_unique` on millions of order ids costs more than every
other statistic together. Hashing is several times
cheaper but can merge two values, so on its own it is not exact. The runs of a column (maximal
stretches of one repeated value) give the missing half of an exact count:

- every distinct value starts at least one run, so `distinct <= runs`;
- equal values hash equal, so `hashes <= distinct`.

When `hashes == runs`, both bounds meet and the count is exact, with no value compared twice.
That happens whenever each value sits in one stretch: a column sorted either way, lines
grouped by their order, or values that are all different. Otherwise the column is counted
exactly by a second query over that column alone (see `exact_counts`). A column known to
be sorted needs no hashing at all: its runs are its distinct values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, cast

import polars as pl

_SAMPLE_SIZE = 4096
_MANY_DISTINCT = 0.9
"""Share of distinct values in a sample above which a column is worth the runs check.

With fewer distinct values Polars' exact count is cheap already, and values that repeat in an
unsorted column make the check fail anyway, so it would only add its own cost.
"""

Strategy = Literal["known", "sorted", "runs", "exact"]


@dataclass(frozen=True)
class DistinctCount:
    """How one column's count of distinct non-null values is obtained, and from which results.

    `exprs` join the statistics query, under keys unique to this column; `resolve` turns
    their values into the count, or None when the runs did not prove it and `exact_counts`
    (a query of its own) must answer.
    """

    column: pl.Expr
    key: str
    strategy: Strategy

    @classmethod
    def plan(cls, frame: pl.DataFrame, position: int, key: str, *, known: bool) -> DistinctCount:
        """Pick the cheapest exact way to count the column at `position` of `frame`.

        `known` says the column's non-null values are all different (say a single-column
        primary key of rows that passed validation): the count is then the non-null count.
        """
        if known:
            return cls(pl.nth(position), key, "known")
        series = frame.to_series(position)
        if not isinstance(series.dtype, pl.String | pl.Binary) or not _many_distinct(series):
            return cls(pl.nth(position), key, "exact")
        return cls(pl.nth(position), key, "sorted" if _is_sorted(series) else "runs")

    @property
    def exprs(self) -> dict[str, pl.Expr]:
        if self.strategy == "known":
            return {self.key: self.column.count()}
        if self.strategy == "exact":
            return {self.key: self.exact}
        # `rle_id` counts a stretch of nulls as one run and `hash` maps every null to one
        # value, so both bounds include null as one more value when there are nulls.
        exprs = {
            f"{self.key}:runs": self.column.rle_id().max().fill_null(-1) + 1,
            f"{self.key}:nulls": self.column.has_nulls(),
        }
        if self.strategy == "runs":
            exprs[f"{self.key}:hashes"] = self.column.hash().n_unique()
        return exprs

    @property
    def exact(self) -> pl.Expr:
        """Polars' exact count; `n_unique` counts null as a value, so it is taken off again."""
        return self.column.n_unique() - self.column.has_nulls().cast(pl.UInt32)

    def resolve(self, results: Mapping[str, object]) -> int | None:
        if self.strategy in ("known", "exact"):
            return _as_int(results[self.key])
        runs = _as_int(results[f"{self.key}:runs"])
        if self.strategy == "runs" and runs != _as_int(results[f"{self.key}:hashes"]):
            return None
        return runs - bool(results[f"{self.key}:nulls"])


def exact_counts(frame: pl.DataFrame, pending: list[DistinctCount]) -> dict[str, int]:
    """The counts the runs check could not prove, in one `collect_all` over `frame`.

    These columns have many distinct values in no order, where the `n_unique` expression is at
    its slowest and a frame-level `unique` over the one column, on the streaming engine, is
    several times cheaper (`benchmarks/validation.py --breakdown`). Null is one of the unique
    rows when there are nulls.
    """
    if not pending:
        return {}
    queries = [frame.lazy().select(plan.column).unique().select(pl.len()) for plan in pending]
    counted = pl.collect_all(queries, engine="streaming")
    return {
        plan.key: _as_int(count.item()) - frame.select(plan.column).to_series().has_nulls()
        for plan, count in zip(pending, counted, strict=True)
    }


def _many_distinct(series: pl.Series) -> bool:
    """Whether an evenly spread sample of the column is nearly all different values."""
    sample = series.gather_every(max(1, len(series) // _SAMPLE_SIZE)).drop_nulls()
    return len(sample) > 1 and sample.n_unique() >= _MANY_DISTINCT * len(sample)


def _is_sorted(series: pl.Series) -> bool:
    """Sorted either way, nulls at one end. Stops at the first value out of order."""
    nulls_last = series.has_nulls() and series[-1] is None
    return any(series.is_sorted(descending=down, nulls_last=nulls_last) for down in (False, True))


def _as_int(value: object) -> int:
    """A count Polars returned as a Python int, typed as one."""
    return cast(int, value)

"""The split: a frame's columns checked, its rows split into valid and invalid, warnings kept.

One gate (the column schema, read without running the plan), then the user's plan run once and
split by Dataframely's own `Schema.filter`, then the rows that failed only warning rules moved
back to the valid side. A Collection's members are split together in `collection_split`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import dataframely as dy
import polars as pl
from dataframely import FailureInfo
from dataframely.filter_result import FilterResult

from dagster_dataframely._model.schema import SchemaInfo, dataframely_rules
from dagster_dataframely._model.shown_values import dtype_text
from dagster_dataframely._run.returned import Frame
from dagster_dataframely._upstream import evaluated_rules

from .failures import Failures
from .regex_rules import regex_outcomes
from .valid_rows import ValidRows


def column_problems(info: SchemaInfo, frame: Frame) -> list[dict[str, str]]:
    """Every declared column that is missing or has another dtype; extra columns are fine.

    Reads `collect_schema()` only, so a LazyFrame's plan does not run. A dtype matches when
    Dataframely's own column accepts it, exactly as `Schema.filter(cast=False)` would. A
    sensitive column's dtypes are given masked (`dtype_text`): an `Enum` prints its values.
    """
    actual = frame.collect_schema()
    problems = []
    for name, column in info.columns.items():
        dtype = actual.get(name)
        if dtype is None or not column.validate_dtype(dtype):
            masked = name in info.sensitive
            problems.append(
                {
                    "column": name,
                    "expected": dtype_text(column.dtype, sensitive=masked),
                    "actual": "missing" if dtype is None else dtype_text(dtype, sensitive=masked),
                }
            )
    return problems


def split_rows(
    info: SchemaInfo, frame: Frame, *, keep_valid_rows: bool = True
) -> FilterResult[Any]:
    """Dataframely's split of `frame` into valid and invalid rows, running the user's plan once.

    `Schema.filter` returns two plans over one input, and `collect_all` runs the input once
    only where Polars can prove the two share it. It cannot for a non-deterministic step
    (`shuffle`, `sample`), an IO plugin source or a pyarrow dataset, and a source whose data
    changes between two reads is never safe to read twice: each side then sees other rows, so
    rows land in both the table and the quarantine, or in neither. So a `LazyFrame`'s schema
    columns are collected first, alone, on the streaming engine (then `contiguous`), and the
    split runs over its rows; a `DataFrame` already is rows.

    The split is `filter`'s own plan (`evaluated_rules`), its regex rules given as evaluated
    ahead (`regex_outcomes`), run once on the in-memory engine into the rows plus a `Boolean`
    per rule, then cut by that mask with two eager filters: the same rows and outcomes as
    `filter(...).collect_all(engine="streaming")`, for less time (`benchmarks/validation.py`).
    A (deterministic) rule gives a row one outcome, on whichever side it lands.

    Without `keep_valid_rows` (nothing is written: the read-only checks), the valid side is
    only counted, a frame of no column and their number of rows (`counted_rows`), and a
    `LazyFrame`'s valid rows are never collected (`_split_counting`).
    """
    if not keep_valid_rows and isinstance(frame, pl.LazyFrame):
        return _split_counting(info, frame)
    names = info.schema.column_names()
    # NOTE: a plan's undeclared columns are never computed nor read, as `filter(cast=False)`'s own
    # projection would skip them: no row of the split keeps one.
    columns = (
        frame.select(names)
        if isinstance(frame, pl.DataFrame)
        else contiguous(frame.select(names).collect(engine="streaming"))
    )
    plan, rules, passed = evaluated_rules(
        info.schema, columns.lazy(), dataframely_rules(info.schema), regex_outcomes(columns, info)
    )
    if not rules:
        # As `filter` answers a rule-less schema: every row valid, a failure frame of no columns.
        valid_rows = columns if keep_valid_rows else counted_rows(columns.height)
        return FilterResult(cast(dy.DataFrame[Any], valid_rows), FailureInfo(pl.LazyFrame(), []))
    evaluated = plan.collect(engine="in-memory")
    mask = evaluated.get_column(passed)
    valid = (
        evaluated.select(columns.columns).filter(mask)
        if keep_valid_rows
        else counted_rows(int(mask.sum()))
    )
    invalid = evaluated.filter(~mask).drop(passed)
    # `filter`'s own result type: the valid rows, typed as rows of the schema.
    return FilterResult(cast(dy.DataFrame[Any], valid), FailureInfo(invalid.lazy(), rules))


def counted_rows(height: int) -> pl.DataFrame:
    """Valid rows that were only counted: a frame of `height` rows and no column.

    What a split that writes nothing keeps of its valid side: `row_count` and the outcome read
    only their number (`keep_warning_only_rows` adds to it).
    """
    return pl.DataFrame(height=height)


def _split_counting(info: SchemaInfo, frame: pl.LazyFrame) -> FilterResult[Any]:
    columns = frame.select(info.schema.column_names())
    plan, rules, passed = evaluated_rules(info.schema, columns, dataframely_rules(info.schema))
    if not rules:
        count = collect_once({"rows": columns.select(pl.len())})["rows"].item()
        return FilterResult(
            cast(dy.DataFrame[Any], counted_rows(count)), FailureInfo(pl.LazyFrame(), [])
        )
    # NOTE: one `.cache()` runs the user's plan once for both plans, so they see the same rows, and
    # the valid rows are streamed past, never held.
    shared = plan.cache()
    got = collect_once(
        {"invalid": shared.filter(~pl.col(passed)).drop(passed), "rows": shared.select(pl.len())}
    )
    invalid = got["invalid"]
    valid = counted_rows(got["rows"].item() - invalid.height)
    return FilterResult(cast(dy.DataFrame[Any], valid), FailureInfo(invalid.lazy(), rules))


def contiguous(rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` with one chunk per column, as a plan's rows from the streaming engine are not.

    The streaming engine returns a chunk per morsel (41 per column at 5M rows of a parquet
    file), and the rules run slower over many chunks: at 5M rows of `benchmarks/validation.py`
    read from a scan, joining them costs about 0.2 s and the rules then take about 0.5 s less.
    A `DataFrame` the user passes is left as it is: joining its chunks would copy it while the
    caller still holds it.
    """
    return rows.rechunk() if rows.n_chunks() > 1 else rows


_NO_SUBPLAN_ELIMINATION = pl.QueryOptFlags(comm_subplan_elim=False)
"""The query set without Polars' common-subplan elimination; explicit caches still hold."""


def collect_once(frames: Mapping[str, Frame]) -> dict[str, pl.DataFrame]:
    """Every frame's rows, each lazy plan run once, all of them in one streaming query set.

    Run together, plans that share a source (a Collection's members, a range's outputs) read
    it once. Polars 1.x panics while planning a cache over a random filter (a `shuffle` or
    `sample` in a predicate) that two plans read (`cse/cache_states.rs`, "entered unreachable
    code"); polars 2.1 plans it. The panic comes before anything is read, and the query set is
    planned again without common-subplan elimination, where every `.cache()`, the shared
    inputs' included, is still evaluated once.
    """
    lazy = {name: frame for name, frame in frames.items() if isinstance(frame, pl.LazyFrame)}
    try:
        rows = pl.collect_all(lazy.values(), engine="streaming")
    except pl.exceptions.PanicException:
        rows = pl.collect_all(
            lazy.values(), engine="streaming", optimizations=_NO_SUBPLAN_ELIMINATION
        )
    # One frame at a time, so that at most one frame is held twice.
    collected = {name: contiguous(rows.pop(0)) for name in lazy}
    return {
        name: frame if isinstance(frame, pl.DataFrame) else collected[name]
        for name, frame in frames.items()
    }


def keep_warning_only_rows(
    valid: ValidRows, failures: Failures, warning_rules: frozenset[str]
) -> tuple[ValidRows, Failures]:
    """The rows to write and the failures to quarantine, once warning rules no longer block.

    A row is quarantined when a rule that is not a warning failed it, or could not decide it
    (an unknown outcome is no proof the row is valid). The other invalid rows are appended to
    `valid`, after its rows. The quarantined `Failures` count only the rules that block: a rule
    that is not a warning fails only quarantined rows, so its count is the same as in
    `failures`. Without warning rules both arguments come back unchanged.
    """
    if not warning_rules or not failures.invalid_count:
        return valid, failures
    blocking = [rule.name for rule in failures.info.rules if rule.name not in warning_rules]
    quarantined = (
        pl.any_horizontal(pl.col(name).fill_null(False).not_() for name in blocking)
        if blocking
        else pl.repeat(False, pl.len())
    )
    mask = failures.outcomes.select(quarantined).to_series()
    kept = failures.outcomes.filter(~mask).select(*failures.info.columns)
    written: ValidRows = valid
    if kept.height and isinstance(valid, pl.DataFrame) and not valid.width:
        written = counted_rows(valid.height + kept.height)  # valid rows only counted
    elif kept.height and isinstance(valid, pl.LazyFrame):
        written = pl.concat([valid, kept.lazy()], how="vertical")
    elif kept.height and isinstance(valid, pl.DataFrame):
        written = pl.concat([valid, kept], how="vertical", rechunk=False)
    return written, Failures(
        info=failures.info,
        outcomes=failures.outcomes.filter(mask),
        counts={rule: n for rule, n in failures.counts.items() if rule not in warning_rules},
    )

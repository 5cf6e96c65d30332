"""The split: a frame's columns checked, its rows split into valid and invalid, warnings kept.

One gate (the column schema, read without running the plan), then the user's plan run once and
split by Dataframely's own `Schema.filter`, then the rows that failed only warning rules moved
back to the valid side. A Collection's members are split together in `collection_split`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl
from dataframely.filter_result import FilterResult

from dagster_dataframely._model.schema import SchemaInfo

from .failures import Failures
from .valid_rows import ValidRows

Frame = pl.DataFrame | pl.LazyFrame


def column_problems(info: SchemaInfo, frame: Frame) -> list[dict[str, str]]:
    """Every declared column that is missing or has another dtype; extra columns are fine.

    Reads `collect_schema()` only, so a LazyFrame's plan does not run. A dtype matches when
    Dataframely's own column accepts it, exactly as `Schema.filter(cast=False)` would.
    """
    actual = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
    problems = []
    for name, column in info.columns.items():
        dtype = actual.get(name)
        if dtype is None or not column.validate_dtype(dtype):
            problems.append(
                {
                    "column": name,
                    "expected": str(column.dtype),
                    "actual": "missing" if dtype is None else str(dtype),
                }
            )
    return problems


def split_rows(info: SchemaInfo, frame: Frame) -> FilterResult[Any]:
    """Dataframely's split of `frame` into valid and invalid rows, running the user's plan once.

    `Schema.filter` returns two plans over one input, and `collect_all` runs the input once
    only where Polars can prove the two share it. It cannot for a non-deterministic step
    (`shuffle`, `sample`), an IO plugin source or a pyarrow dataset, and a source whose data
    changes between two reads is never safe to read twice: each side then sees other rows, so
    rows land in both the table and the quarantine, or in neither. So a `LazyFrame` is
    collected first, alone, on the streaming engine, and the split runs over its rows; a
    `DataFrame` already is rows. Both sides then come from one `collect_all` over fixed rows,
    so a (deterministic) rule gives a row the same outcome on either side.
    """
    rows = frame if isinstance(frame, pl.DataFrame) else frame.collect(engine="streaming")
    return info.schema.filter(rows.lazy(), cast=False).collect_all(engine="streaming")


def collect_once(frames: Mapping[str, Frame]) -> dict[str, pl.DataFrame]:
    """Every frame's rows, each lazy plan run once, all of them in one streaming query set.

    Run together, plans that share a source (a Collection's members, a range's outputs) read
    it once.
    """
    lazy = {name: frame for name, frame in frames.items() if isinstance(frame, pl.LazyFrame)}
    collected = dict(zip(lazy, pl.collect_all(lazy.values(), engine="streaming"), strict=True))
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
    if kept.height and isinstance(valid, pl.LazyFrame):
        written = pl.concat([valid, kept.lazy()], how="vertical")
    elif kept.height and isinstance(valid, pl.DataFrame):
        written = pl.concat([valid, kept], how="vertical", rechunk=False)
    return written, Failures(
        info=failures.info,
        outcomes=failures.outcomes.filter(mask),
        counts={rule: n for rule, n in failures.counts.items() if rule not in warning_rules},
    )

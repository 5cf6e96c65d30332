"""The streamed split (`streaming=True`): a `LazyFrame` validated without holding its rows.

The plan runs once, on the streaming engine, into a local staging file that every later pass
reads. Each rule is evaluated as Dataframely evaluates it (`with_columns` of
`expr.fill_null(True)`): a rule read as row by row (`rule_shape`) while the rows are staged,
into a `Boolean` column; any other (the primary key, by hashes of the key; a `.over()` rule, over
hash parts of its window's keys; an aggregate) over the staged rows on the in-memory engine,
keeping only the positions of the rows it fails. What Polars cannot plan, or the streamed split
cannot tell, is decided by the in-memory path itself (`split_rows`), with its own errors. Memory
grows with the invalid rows, not the table: the valid rows are a filter of the staged ones,
which the IO manager sinks.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from dagster_dataframely._model.schema import PRIMARY_KEY_RULE, SchemaInfo, dataframely_rules

from .failures import Failures
from .rule_shape import is_elementwise, window_keys
from .split import contiguous, split_rows
from .staging import Staging, scan_staged

_POSITION = "dy_row"
"""The row-position column of the staged frame; `dy_` is reserved, so no schema column has it."""

_RULE = "dy_rule_"
"""The prefix of the staged columns of each row-by-row rule's outcome (`dy_rule_0`, ...)."""

_FIRST = "dy_first"
"""The staged column that is True on the returned frame's first row only; never written.

The streaming engine repeats a one-row frame beside a longer column instead of refusing it
(polars 1.44 and 2.1), so a rule misread as row by row that returns several values would
stage that row several times. Each copy would then say it is the first row.
"""

_PART = "dy_part"
"""The column of each row's hash part for a window rule (`window_keys`), never written."""


def validated_in_memory(asset: str) -> str:
    """The step's log line for a `streaming=True` output whose function returned a `DataFrame`.

    Its rows are in memory already, so they are validated there, as without `streaming`; a
    user who expects them staged would otherwise see no sign of it.
    """
    return (
        f"{asset}: streaming=True, but the function returned a DataFrame, whose rows are in "
        f"memory already, so they were validated in memory. Return a LazyFrame (such as "
        f"pl.scan_parquet(...)) to have them staged on local disk and validated without "
        f"holding them."
    )


def streamed_split(
    info: SchemaInfo, frame: pl.LazyFrame, staging: Staging, *, asset: str
) -> tuple[pl.LazyFrame, Failures]:
    """The valid rows (a scan of the staged rows) and the failures, reading `frame` once.

    The same split as the in-memory path's (`split_rows`, Dataframely's
    `Schema.filter(frame, cast=False)`): the same rule outcomes, the valid rows and the invalid
    rows each in the frame's order, the schema's columns only, and the same error for a rule
    it refuses. The row-by-row rules run once, while the plan is staged, into columns of the
    staged rows; the valid rows are then a filter on them (and on the rows a whole-frame rule
    failed), so they are never written to a file of their own: the IO manager sinks them from
    the staged rows. `asset` names the output in a `StreamingStagingError`.
    """
    written = {name: rule.expr for name, rule in dataframely_rules(info.schema).items()}
    rules = {name: expr.fill_null(True) for name, expr in written.items()}
    columns = list(info.columns)
    dtypes = _outcome_dtypes(frame, columns, rules)
    row_by_row = [
        name
        for name in rules
        if dtypes is not None and dtypes[name] == pl.Boolean and is_elementwise(written[name])
    ]
    source, staged = _stage(frame, columns, [rules[name] for name in row_by_row], staging, asset)
    if dtypes is None:  # Polars cannot plan a rule over these columns
        return _in_memory_split(info, source, rules)
    outcomes = dict(zip(row_by_row, staged, strict=False))  # none when staged without rules
    height: int = scan_staged(source).select(pl.len()).collect().item()
    whole_frame: list[pl.Expr] = []
    refused: _Refused | None = None
    for name, rule in rules.items():  # in Dataframely's order, as its errors come
        if name in outcomes:
            continue
        failed = _failed_rows(info, name, rule, written[name], source, height)
        if failed is None:
            return _in_memory_split(info, source, rules, without_rows=False)
        if isinstance(failed, _Refused):
            refused = refused or failed
        elif dtypes[name] == pl.Boolean:  # another dtype is refused below
            outcomes[name] = _whole_frame_outcome(failed)
            if failed is True or (isinstance(failed, pl.Series) and len(failed)):
                whole_frame.append(outcomes[name])
    if refused is not None:
        # Raises the in-memory path's error; should it not, the in-memory path decides.
        refused.beside_rows.collect(engine="in-memory")
        return _in_memory_split(info, source, rules, without_rows=False)
    if any(dtype != pl.Boolean for dtype in dtypes.values()):
        return _in_memory_split(info, source, rules)
    rows = scan_staged(source).with_row_index(_POSITION)
    passed = _all([*staged, *whole_frame])
    # Each rule's outcome is read again only for the rows that failed one, in the schema's order.
    by_rule = {rule.name: outcomes[rule.name] for rule in info.rules}
    invalid = contiguous(
        rows.filter(~passed).select(*columns, **by_rule).collect(engine="streaming")
    )
    counts = _counts(invalid, list(by_rule))
    return rows.filter(passed).select(columns), Failures(info=info, outcomes=invalid, counts=counts)


def _outcome_dtypes(
    frame: pl.LazyFrame, columns: Sequence[str], rules: Mapping[str, pl.Expr]
) -> dict[str, pl.DataType] | None:
    schema = frame.collect_schema()
    empty = pl.LazyFrame(schema={column: schema[column] for column in columns})
    try:
        return dict(empty.select(**rules).collect_schema())
    except pl.exceptions.PolarsError:
        return None


def _stage(
    frame: pl.LazyFrame,
    columns: Sequence[str],
    row_by_row: Sequence[pl.Expr],
    staging: Staging,
    asset: str,
) -> tuple[Path, list[pl.Expr]]:
    # NOTE: added as Dataframely adds them (`with_columns`), so a scalar is broadcast and an error
    # names the rule as the in-memory path does. A rule that fails while staging, or gives another
    # number of values than rows (Polars repeats a one-row frame instead of refusing it: `_FIRST`
    # shows it), has the frame staged again without rules.
    plan = frame.select(columns)
    names = [f"{_RULE}{index}" for index in range(len(row_by_row))]
    outcomes = dict(zip(names, row_by_row, strict=True))
    if outcomes and _evaluate_without_rows(plan, outcomes):
        first = plan.with_row_index(_FIRST).with_columns(pl.col(_FIRST) == 0)
        try:
            source = staging.sink(first.with_columns(**outcomes), "returned", asset=asset)
        except pl.exceptions.PolarsError:
            pass
        else:
            if _rows_are_the_frames(source):
                return source, [pl.col(name) for name in names]
            source.unlink()
    return staging.sink(plan, "returned", asset=asset), []


def _evaluate_without_rows(plan: pl.LazyFrame, outcomes: Mapping[str, pl.Expr]) -> bool:
    # NOTE: a rule that fails whatever the rows hold (`.str` on an integer) stays out of the staging
    # pass: it fails over the staged rows with the in-memory path's error, without reading the plan
    # twice.
    empty = pl.LazyFrame(schema=plan.collect_schema())
    try:
        empty.with_columns(**outcomes).collect()
    except pl.exceptions.PolarsError:
        return False
    return True


def _rows_are_the_frames(source: Path) -> bool:
    rows, firsts = scan_staged(source).select(pl.len(), pl.col(_FIRST).sum()).collect().row(0)
    return bool(firsts == min(rows, 1))


def _all(conditions: Iterable[pl.Expr]) -> pl.Expr:
    listed = list(conditions)
    return pl.all_horizontal(listed) if listed else pl.lit(True)


Failed = pl.Series | bool
"""The staged rows a whole-frame rule fails: their positions (`UInt32`, ascending), or whether
it fails every row (True) or none (False), so that a scalar's outcome is one value."""


@dataclass(frozen=True, slots=True)
class _Refused:
    """A rule the in-memory path refuses for the length of its result: the rule beside the rows.

    Polars' in-memory engine evaluates every rule before it compares their lengths with the
    rows, so an error evaluating a later rule comes first: this one is raised after them, by
    evaluating `beside_rows` again.
    """

    beside_rows: pl.LazyFrame


def _whole_frame_outcome(failed: Failed) -> pl.Expr:
    if isinstance(failed, bool):
        return pl.lit(not failed)
    return ~pl.col(_POSITION).is_in(failed.implode())


def _failed_rows(
    info: SchemaInfo, name: str, rule: pl.Expr, written: pl.Expr, source: Path, height: int
) -> Failed | _Refused | None:
    # NOTE: `written` is the rule as the schema wrote it (`rule` with nulls filled): its form
    # decides the primary key's and a window rule's cheaper ways.
    rows = scan_staged(source)
    if name == PRIMARY_KEY_RULE and _is_key_uniqueness(written, info.primary_key):
        return _repeated_keys(rows, list(info.primary_key), rule)
    keys = window_keys(written)
    if keys and (parts := _window_parts(height)) > 1:
        by_parts = _failed_by_parts(rows, sorted(keys), rule, parts)
        if by_parts is not None:
            return by_parts
    outcome = _evaluated(rows, name, rule, height)
    if outcome is None or isinstance(outcome, _Refused):
        return outcome
    if outcome.dtype != pl.Boolean:
        return False  # the in-memory path refuses it once every rule's length is checked
    failing = outcome.not_()
    count = failing.sum()
    if count in (0, height):  # no row, or every row (a scalar's fail), kept as one value
        return bool(count)
    return failing.arg_true().cast(pl.UInt32)


def _evaluated(
    rows: pl.LazyFrame, name: str, rule: pl.Expr, height: int
) -> pl.Series | _Refused | None:
    # NOTE: on the in-memory engine, as the in-memory path: the streaming engine gives some
    # expressions another length (`pl.len() < pl.lit(0).filter(...)`).
    outcome = rows.select(rule.alias(name)).collect(engine="in-memory").to_series()
    if len(outcome) == height:
        return outcome
    # NOTE: another length (an aggregate's one value, `head(3)`) is evaluated again beside the
    # rows, as Dataframely does: a scalar is broadcast, another length refused with the in-memory
    # path's own error. One value that is no scalar (`head(1)`) is refused alone but broadcast
    # beside rules sharing a subexpression with it: the in-memory path's own plan decides (None).
    beside_rows = rows.with_columns(rule.alias(name)).select(name)
    try:
        return beside_rows.collect(engine="in-memory").to_series()
    except pl.exceptions.PolarsError:
        return None if len(outcome) == 1 else _Refused(beside_rows)


def _is_key_uniqueness(expr: pl.Expr, key: Sequence[str]) -> bool:
    # NOTE: compared with Polars' own `meta.eq`: a Dataframely that checked the key another way has
    # its rule evaluated over the whole frame.
    return bool(key) and expr.meta.eq(pl.struct(list(key)).is_unique())


def _in_memory_split(
    info: SchemaInfo, source: Path, rules: Mapping[str, pl.Expr], *, without_rows: bool = True
) -> tuple[pl.LazyFrame, Failures]:
    # NOTE: a rule Polars cannot plan, or whose result is no Boolean, is refused whatever the rows
    # hold: zero rows raise its error without reading a row. Where zero rows could decide otherwise,
    # the staged rows themselves are split.
    staged = scan_staged(source).select(list(info.columns))
    empty = staged.clear().collect()
    if without_rows and _decided_without_rows(empty, rules):
        split_rows(info, empty)  # raises the in-memory path's error
    split = split_rows(info, staged)
    return split.result.lazy(), Failures.from_failure_info(info, split.failure)


def _decided_without_rows(empty: pl.DataFrame, rules: Mapping[str, pl.Expr]) -> bool:
    plan = empty.lazy().with_columns(**rules)
    try:
        plan.collect_schema()
    except pl.exceptions.PolarsError:
        return True
    try:
        plan.collect()
    except pl.exceptions.PolarsError:
        return False
    return True


ROWS_PER_WINDOW_PART = 4_000_000
"""About how many rows a window rule is evaluated over at once, so that its groups' memory
stays near what 4M rows need (at 10M rows, 15M orders' windows over all rows peaked 856 MiB)."""

_MAX_WINDOW_PARTS = 16
"""Each part is one pass over the rule's columns in memory to pick its rows: beyond this, the
passes cost more than the smaller groups save."""


def _window_parts(height: int) -> int:
    return min(_MAX_WINDOW_PARTS, max(1, math.ceil(height / ROWS_PER_WINDOW_PART)))


def _failed_by_parts(
    rows: pl.LazyFrame, keys: list[str], rule: pl.Expr, parts: int
) -> pl.Series | None:
    # NOTE: equal keys hash equal, so each group falls whole in one part, in its own order, and only
    # one part's groups are in memory. A part whose result is not one value per row, or an error,
    # sends the rule to the whole frame.
    part = (pl.struct(keys).hash() % parts).cast(pl.UInt8).alias(_PART)
    read = rows.select(part, *dict.fromkeys(rule.meta.root_names())).collect(engine="streaming")
    failed = []
    for index in range(parts):
        in_part = read.get_column(_PART) == index
        part_rows = read.filter(in_part)
        try:
            outcome = part_rows.select(rule).to_series()
        except pl.exceptions.PolarsError:
            return None
        if len(outcome) != part_rows.height or outcome.dtype != pl.Boolean:
            return None
        failed.append(in_part.arg_true().filter(~outcome))
    return pl.concat(failed).sort().cast(pl.UInt32)


def _repeated_keys(rows: pl.LazyFrame, key: list[str], rule: pl.Expr) -> pl.Series:
    # NOTE: equal keys hash equal: only the rows whose hash repeats are compared exactly, by
    # Dataframely's own rule. Sorting the hashes holds 16 bytes per row, where grouping by the key
    # would hold the key.
    hashes = rows.select(pl.struct(key).hash()).collect(engine="streaming").to_series()
    ordered = hashes.sort()
    repeated = ordered.filter(ordered == ordered.shift(1)).unique()
    del ordered
    candidates = hashes.is_in(repeated.implode()).arg_true().cast(pl.UInt32)
    del hashes
    if candidates.is_empty():
        return candidates
    picked = (
        rows.with_row_index(_POSITION)
        .filter(pl.col(_POSITION).is_in(candidates.implode()))
        .select(_POSITION, *key)
        .collect(engine="streaming")
    )
    return picked.filter(~rule).get_column(_POSITION)


def _counts(invalid: pl.DataFrame, rules: list[str]) -> dict[str, int]:
    if not rules or not invalid.height:
        return {}
    totals = invalid.select((~pl.col(rules)).sum()).row(0, named=True)
    return {rule: count for rule, count in totals.items() if count}

"""`dd.evaluate_suggestion`: suggest on one part of a table, validate the rest, relax what fails."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import dataframely as dy
import polars as pl

from dagster_dataframely._suggest.column_rules import MARGIN, ColumnSuggestion, suggest_column
from dagster_dataframely._suggest.held_out_counts import FailureCounts, count_failures
from dagster_dataframely._suggest.suggest_schema import Suggested, guessed_sensitive, suggest_frame
from dagster_dataframely._suggest.table_source import Source, refused, scan_source

# NOTE: a relaxed bound is recomputed with this many times the margin; a rule that still fails
# held-out rows beyond the tolerance after that is dropped.
WIDEN_FACTOR = 3
_BOUND_KINDS = frozenset({"min", "max", "max_length"})
_DROPPED_KINDS = frozenset({"is_in", "check__is_in", "regex", "min_length"})


@dataclasses.dataclass(frozen=True)
class SuggestionReport:
    """A suggestion evaluated on rows it did not see.

    Attributes
    ----------
    code
        The schema's source, suggested from every row, with the rules the evaluation relaxed or
        dropped changed the same way (a comment above each says so).
    rules
        One row per rule that failed held-out rows: `rule`, `held_out_failures` (rows),
        `held_out_share`, `action` (`kept`, `widened`, `relaxed` or `dropped`) and `reason`.
    training_rows, held_out_rows
        How many rows the suggestion saw, and how many it was validated on.
    quarantined_before, quarantined_after
        The held-out rows the suggestion from the training rows would quarantine, before and
        after the relaxation.
    """

    code: str
    rules: pl.DataFrame
    training_rows: int
    held_out_rows: int
    quarantined_before: int
    quarantined_after: int

    @property
    def summary(self) -> pl.DataFrame:
        """The held-out quarantine rate before and after the relaxation, as one small frame."""
        return pl.DataFrame(
            {
                "suggestion": ["as suggested", "after evaluation"],
                "held_out_rows": [self.held_out_rows] * 2,
                "quarantined": [self.quarantined_before, self.quarantined_after],
                "quarantine_rate": [
                    self.quarantined_before / self.held_out_rows,
                    self.quarantined_after / self.held_out_rows,
                ],
            }
        )

    def _repr_html_(self) -> str:
        # NOTE: a notebook shows the report as its two tables.
        return str(self.summary._repr_html_()) + str(self.rules._repr_html_())

    def __str__(self) -> str:
        return f"{self.summary}\n{self.rules}"


@dataclasses.dataclass(frozen=True)
class _Decision:
    column: str
    kind: str
    action: str
    reason: str


def split_frame(
    frame: pl.LazyFrame, *, split_by: str | None, held_out: float, seed: int
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The training rows and the held-out rows: the newest `held_out` share of `split_by`'s
    distinct values (older partitions train), else a seeded random share of the rows."""
    if split_by is None:
        # NOTE: a hash of the row's index with the seed: the same rows every time, lazily. The
        # index is `with_row_index`, which streams: `pl.int_range(pl.len())` made the streaming
        # engine hold every column of the table (1.6 GiB at 20M rows, measured). Cast to UInt64,
        # it hashes as that range's values did, so the split is the same rows as before.
        index = "\x00row" + "_" * max((len(name) for name in frame.collect_schema()), default=0)
        numbered = frame.with_row_index(index)
        bucket = pl.col(index).cast(pl.UInt64).hash(seed) % 10_000
        in_held_out = bucket < int(held_out * 10_000)
        return (numbered.filter(~in_held_out).drop(index), numbered.filter(in_held_out).drop(index))
    values = frame.select(pl.col(split_by).drop_nulls().unique().sort()).collect()
    count = values.height
    first_held_out = values[split_by][max(1, min(count - 1, round(count * (1 - held_out))))]
    is_held_out = pl.col(split_by) >= first_held_out
    return frame.filter(~is_held_out), frame.filter(is_held_out)


def load_schema(code: str, name: str) -> type[dy.Schema]:
    """The schema the suggested code declares."""
    # NOTE: the evaluation validates with the very code it returns, not a copy built another
    # way, so what is reported is what the user pastes; the code is this package's own output.
    namespace: dict[str, Any] = {}
    exec(compile(code, f"<suggested {name}>", "exec"), namespace)
    schema: type[dy.Schema] = namespace[name]
    return schema


def _failures(
    code: str, name: str, rows: pl.LazyFrame, row_count: int | None = None
) -> FailureCounts:
    # NOTE: counted as the rows stream past, never held: the held-out part of a table larger
    # than memory is larger than memory too.
    return count_failures(load_schema(code, name), rows, row_count)


def _split_rule(rule: str) -> tuple[str, str]:
    column, _, kind = rule.rpartition("|")
    return (column, kind) if column else ("", rule)


def _relaxed(
    suggested: Suggested, decisions: Sequence[_Decision], sensitive: Collection[str], margin: float
) -> Suggested:
    by_column: dict[str, list[_Decision]] = {}
    for decision in decisions:
        by_column.setdefault(decision.column, []).append(decision)
    dropped_key = any(decision.kind == "primary_key" for decision in decisions)
    key = () if dropped_key else suggested.primary_key
    columns: list[ColumnSuggestion] = []
    for profile in suggested.profile.columns:
        own = by_column.get(profile.name, [])
        widen = any(decision.action == "widened" for decision in own)
        column = suggest_column(
            profile,
            primary_key=profile.name in key,
            sensitive=profile.name in sensitive,
            margin=margin * WIDEN_FACTOR if widen else margin,
        )
        for decision in own:
            _apply(column, decision)
            column.notes.append(f"evaluation: {decision.action}, {decision.reason}")
        columns.append(column)
    return dataclasses.replace(suggested, primary_key=key, columns=columns)


def _apply(column: ColumnSuggestion, decision: _Decision) -> None:
    if decision.action == "widened":
        return
    kind = decision.kind
    if kind == "nullability":
        column.nullable = True
    elif kind == "nan":
        column.allow_nan = True
    elif kind == "inf":
        column.allow_inf = True
    elif kind in {"is_in", "check__is_in"}:
        column.is_in = None
    elif kind == "regex":
        column.regex = None
    elif kind == "min":
        column.minimum = None
    elif kind == "max":
        column.maximum = None
    elif kind == "min_length":
        column.min_length = None
    elif kind == "max_length":
        column.max_length = None


def _decide(
    counts: Mapping[str, int], rows: int, tolerance: float, widened: Collection[tuple[str, str]]
) -> list[_Decision]:
    decisions = []
    for rule, count in sorted(counts.items()):
        share = count / rows
        if share <= tolerance:
            continue
        column, kind = _split_rule(rule)
        seen = f"{count:,} of {rows:,} held-out rows failed ({share:.2%})"
        if kind in _BOUND_KINDS and (column, kind) not in widened:
            reason = f"{seen}: bound recomputed with {WIDEN_FACTOR}x the margin"
            decisions.append(_Decision(column, kind, "widened", reason))
        elif kind in {"nullability", "nan", "inf"}:
            decisions.append(_Decision(column, kind, "relaxed", f"{seen}: allowed"))
        else:
            decisions.append(_Decision(column, kind, "dropped", f"{seen}: rule removed"))
    return decisions


def evaluate_suggestion(
    source: Source,
    *,
    name: str,
    split_by: str | None = None,
    held_out: float = 0.2,
    seed: int = 0,
    tolerance: float = 0.001,
    sensitive: Collection[str] | None = None,
    margin: float = MARGIN,
    storage_options: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> SuggestionReport:
    """Suggest a schema on part of a table and validate the rest with it, relaxing what fails.

    The table is split into training rows and held-out rows: with `split_by`, the newest
    `held_out` share of that column's distinct values is held out (older partitions train, as
    the schema will meet tomorrow's data); without it a seeded random share of the rows. The
    suggestion from the training rows validates the held-out rows (Dataframely's `filter`), and
    each rule that fails more than `tolerance` of them is widened (a numeric or length bound,
    recomputed with three times the margin), relaxed (nullability, NaN, inf) or dropped
    (`is_in`, `regex`, the primary key, a bound still failing once widened). The returned code
    is suggested from every row with the same changes, each noted above its column.

    Parameters
    ----------
    source
        As for `dd.suggest_schema`.
    name
        The schema's class name.
    split_by
        A column whose order splits old from new (a date, a partition key). `None`: a random
        split.
    held_out
        The share held out: of `split_by`'s distinct values, else of the rows.
    seed
        The random split's seed.
    tolerance
        The share of held-out rows a rule may fail and still be kept as suggested.
    sensitive, margin, storage_options, progress
        As for `dd.suggest_schema`.

    Returns
    -------
    SuggestionReport
        The code, one row per rule that failed held-out rows and what was done, and the
        held-out quarantine before and after. A notebook shows it as a table.

    Raises
    ------
    InvalidArgumentsError
        As `dd.suggest_schema`; or `held_out` not between 0 and 1, `split_by` not a column,
        or a part with no rows.
    """
    if not 0 < held_out < 1:
        raise refused(source, f"held_out={held_out!r} is not a share", "Pass 0 < held_out < 1.")
    frame = scan_source(source, storage_options)
    if split_by is not None and split_by not in frame.collect_schema().names():
        raise refused(source, f"split_by={split_by!r} is not one of its columns", "Name a column.")
    if sensitive is None:
        sensitive = guessed_sensitive(frame.collect_schema().names())
    training, held = split_frame(frame, split_by=split_by, held_out=held_out, seed=seed)
    suggested = suggest_frame(
        training, source, name=name, sensitive=sensitive, margin=margin, progress=progress
    )
    first = _failures(suggested.code(), name, held)
    if first.rows == 0:
        raise refused(source, "no row was held out", "Hold out a larger share, or more rows.")
    held_rows, counts, before = first.rows, first.counts, first.quarantined
    decisions = _decide(counts, held_rows, tolerance, widened=())
    relaxed = _relaxed(suggested, decisions, sensitive, margin)
    second = _failures(relaxed.code(), name, held, held_rows)
    widened = {(d.column, d.kind) for d in decisions if d.action == "widened"}
    still = [
        d for d in _decide(second.counts, held_rows, tolerance, widened) if d.action != "widened"
    ]
    if still:
        decisions = [
            d for d in decisions if (d.column, d.kind) not in {(s.column, s.kind) for s in still}
        ]
        decisions += [
            dataclasses.replace(d, reason=d.reason + " (still failing once widened)") for d in still
        ]
        relaxed = _relaxed(suggested, decisions, sensitive, margin)
        second = _failures(relaxed.code(), name, held, held_rows)
    after = second.quarantined
    if split_by is not None:
        # NOTE: the column that orders old from new grows by construction: tomorrow's rows carry
        # a value no training row had, so its upper bound and its value list cannot hold.
        reason = "split_by column: its newest values are always unseen"
        decisions += [
            _Decision(split_by, kind, "dropped", reason)
            for kind in ("max", "is_in")
            if (split_by, kind) not in {(d.column, d.kind) for d in decisions}
        ]
    whole = suggest_frame(
        frame, source, name=name, sensitive=sensitive, margin=margin, progress=progress
    )
    final = _relaxed(whole, decisions, sensitive, margin)
    decided = {(d.column, d.kind): d for d in decisions}
    rules = pl.DataFrame(
        [
            {
                "rule": rule,
                "held_out_failures": count,
                "held_out_share": count / held_rows,
                "action": decided[_split_rule(rule)].action
                if _split_rule(rule) in decided
                else "kept",
                "reason": decided[_split_rule(rule)].reason
                if _split_rule(rule) in decided
                else f"within the tolerance of {tolerance:.2%}",
            }
            for rule, count in sorted(counts.items())
        ],
        schema={
            "rule": pl.String,
            "held_out_failures": pl.Int64,
            "held_out_share": pl.Float64,
            "action": pl.String,
            "reason": pl.String,
        },
    )
    notes = [
        f"Evaluated: suggested from {suggested.profile.rows:,} rows, validated on "
        f"{held_rows:,} held-out rows: {before:,} quarantined as suggested, {after:,} "
        f"after relaxing {len(decisions)} rule{'' if len(decisions) == 1 else 's'}."
    ]
    return SuggestionReport(
        code=final.code(notes),
        rules=rules,
        training_rows=suggested.profile.rows,
        held_out_rows=held_rows,
        quarantined_before=before,
        quarantined_after=after,
    )

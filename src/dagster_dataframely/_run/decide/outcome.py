"""The outcomes of the failure policy, one type each, decided before anything is written.

Skipped, a column mismatch, a Collection member left unchecked by another's mismatch, or rows
split and classified (clean, aborted, partial, every row invalid, or refused by a check kind).
`emit` turns each into what a run writes, yields and raises.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar, TypeAlias

import polars as pl

from dagster_dataframely._model.collection import CollectionInfo
from dagster_dataframely._model.rule_outcome import kept_in_table, rule_outcomes
from dagster_dataframely._run.checks.kind import Judged
from dagster_dataframely._run.checks.undeclared_columns import undeclared_columns
from dagster_dataframely._run.returned import Frame
from dagster_dataframely._run.split.collection_split import split_collection
from dagster_dataframely._run.split.failures import Failures
from dagster_dataframely._run.split.split import column_problems, keep_warning_only_rows, split_rows
from dagster_dataframely._run.split.streaming import streamed_split
from dagster_dataframely._run.split.valid_rows import ValidRows, row_count
from dagster_dataframely._store.quarantine_writer import QuarantineWriter

from .evaluation import Evaluation, evaluate
from .output_run import OutputRun


@dataclass(frozen=True, slots=True, eq=False)
class Rows:
    """A frame split by the rules: what the checks report, the table gets, the quarantine gets."""

    failures: Failures
    """Every rule's failures, warning rules included: what the checks report."""
    valid: ValidRows
    """The rows the table gets, those that failed only warning rules included; a scan of
    staged rows when they were validated without collecting them."""
    quarantined: Failures
    """The rows a blocking rule failed: what the quarantine gets."""
    evaluation: Evaluation
    """What the output's check kinds judged of these rows."""
    undeclared: tuple[str, ...] | None = None
    """The frame's undeclared columns, when the quality policy reports them."""

    @property
    def warning_count(self) -> int:
        """How many of the table's rows failed a warning rule."""
        return self.failures.invalid_count - self.quarantined.invalid_count


@dataclass(frozen=True, slots=True, eq=False)
class Skipped:
    """The function returned None: nothing is validated or written, and every check passes."""

    run: OutputRun
    fails_step: ClassVar[bool] = False


@dataclass(frozen=True, slots=True, eq=False)
class ColumnMismatch:
    """The frame lacks a declared column or has another dtype: no rule runs, nothing is written."""

    run: OutputRun
    problems: tuple[Mapping[str, str], ...]
    fails_step: ClassVar[bool] = True


@dataclass(frozen=True, slots=True, eq=False)
class Unchecked:
    """The member's columns match, but another member's do not, so no filter or rule ran."""

    run: OutputRun
    fails_step: ClassVar[bool] = False


@dataclass(frozen=True, slots=True, eq=False)
class _RowsSplit:
    """An outcome of a frame whose rows the rules split."""

    run: OutputRun
    rows: Rows


@dataclass(frozen=True, slots=True, eq=False)
class Clean(_RowsSplit):
    """No row failed a blocking rule: the table gets every row."""

    fails_step: ClassVar[bool] = False


@dataclass(frozen=True, slots=True, eq=False)
class Aborted(_RowsSplit):
    """Rows failed and there is no quarantine: nothing is written."""

    fails_step: ClassVar[bool] = True


@dataclass(frozen=True, slots=True, eq=False)
class Partial(_RowsSplit):
    """Some rows failed: the valid ones go to the table, the others through `writer`."""

    writer: QuarantineWriter
    fails_step: ClassVar[bool] = False


@dataclass(frozen=True, slots=True, eq=False)
class AllInvalid(_RowsSplit):
    """Every row failed: the quarantine gets them all, and no table replaces the last good one."""

    writer: QuarantineWriter
    fails_step: ClassVar[bool] = True


@dataclass(frozen=True, slots=True, eq=False)
class Exceeded(_RowsSplit):
    """The quality policy refuses the rows (a rule above `fail_above`, a volume breach at `ERROR`).

    The quarantine still gets the rows a blocking rule failed, through `writer` when there is
    one; no table replaces the last good one.
    """

    writer: QuarantineWriter | None
    fails_step: ClassVar[bool] = True


Outcome: TypeAlias = (
    Skipped | ColumnMismatch | Unchecked | Clean | Aborted | Partial | AllInvalid | Exceeded
)
"""Every outcome; `fails_step` says whether it fails the step and keeps every table unwritten."""

Classified: TypeAlias = Clean | Aborted | Partial | AllInvalid | Exceeded
"""The outcomes of a frame whose rows were split."""


def decide(run: OutputRun, frame: Frame | None) -> Outcome:
    """Decide one output's outcome, running the user's plan once; write nothing.

    The column gate reads `collect_schema()` only, so a mismatched plan never runs.
    """
    if frame is None:
        return Skipped(run)
    info = run.output.info
    problems = column_problems(info, frame)
    if problems:
        return ColumnMismatch(run, tuple(problems))
    undeclared = undeclared_columns(run.output, frame)
    if run.staging is not None and isinstance(frame, pl.LazyFrame):
        asset = run.output.key.to_user_string()
        return classify(run, *streamed_split(info, frame, run.staging, asset=asset), undeclared)
    split = split_rows(info, frame, keep_valid_rows=run.writes_table)
    return classify(run, split.result, Failures.from_failure_info(info, split.failure), undeclared)


Split: TypeAlias = Callable[
    [Mapping[str, Frame | None], Mapping[str, OutputRun]], Mapping[str, Outcome]
]
"""Decide every selected output's outcome from its frame (None to skip); write nothing.

Both mappings are keyed by the selected outputs' names. The default decides each output on
its own; a Collection splits its members jointly with one `Collection.filter`.
"""


def decide_each(
    frames: Mapping[str, Frame | None], runs: Mapping[str, OutputRun]
) -> dict[str, Outcome]:
    """The default `Split`: each output against its own schema."""
    return {name: decide(run, frames[name]) for name, run in runs.items()}


def classify(
    run: OutputRun, valid: ValidRows, failures: Failures, undeclared: tuple[str, ...] | None = None
) -> Classified:
    """The outcome of rows already split into `valid` and `failures` (a Collection's, jointly).

    Warning rules move their rows back to the table here; the class follows the rows a
    blocking rule failed and whether the output has a quarantine, then the quality policy:
    the failure policy's own failures come first, and a policy never moves a row.
    """
    settings = run.output.settings
    kept = kept_in_table(rule_outcomes(run.output.info, settings.warning_rules, settings.policy))
    written, quarantined = keep_warning_only_rows(valid, failures, kept)
    valid_count = row_count(valid)  # one column of staged rows, free for a DataFrame
    # Without a warning-only row to move back, the table is the valid rows themselves.
    written_count = valid_count if written is valid else row_count(written)
    evaluation = evaluate(
        Judged(
            run.output,
            run.history or {},
            failures.counts,
            rows=valid_count + failures.invalid_count,
            written=written_count,
            undeclared=undeclared,
            table=written,
            partition_key=run.partition_key,
            measure=run.measure,
        )
    )
    rows = Rows(failures, written, quarantined, evaluation, undeclared)
    refused = evaluation.fails_run
    if not quarantined.invalid_count:
        return Exceeded(run, rows, run.writer) if refused else Clean(run, rows)
    if run.writer is None:
        return Aborted(run, rows)
    if not written_count:
        return AllInvalid(run, rows, run.writer)
    if refused:
        return Exceeded(run, rows, run.writer)
    return Partial(run, rows, run.writer)


def decide_members(
    info: CollectionInfo, frames: Mapping[str, Frame | None], runs: Mapping[str, OutputRun]
) -> dict[str, Outcome]:
    """Every member's outcome from one joint split; a Collection's `Split` of the pipeline.

    A member with mismatched columns is a column mismatch, and every other member is
    unchecked (its columns passed, no rule ran); a skipped member (optional, or all of them)
    is a skip; every other member's outcome follows its rows as any output's would.
    """
    split = split_collection(info, frames)
    outcomes: dict[str, Outcome] = {}
    for member, run in runs.items():
        if member in split.problems:
            outcomes[member] = ColumnMismatch(run, tuple(split.problems[member]))
        elif split.problems:
            outcomes[member] = Unchecked(run)
        elif member in split.skipped:
            outcomes[member] = Skipped(run)
        else:
            rows = split.splits[member]
            frame = frames.get(member)
            undeclared = undeclared_columns(run.output, frame) if frame is not None else None
            outcomes[member] = classify(run, rows.valid, rows.failures, undeclared)
    return outcomes

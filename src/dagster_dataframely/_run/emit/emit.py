"""Emission: what each outcome of a step writes, yields and raises, under one rule for all.

Every quarantine is written before the first table is yielded (Dagster writes an output when it
is yielded); if any outcome fails the step, no table is written, every output's checks still
report, and the first failure is raised. How results are yielded and which error is raised is
the `Layout`'s (a step's, or a range's). A step whose rows went to a quarantine while every
check passed says so in its log, once. The statistics run in a thread while the quarantines
are written (ADR 0004), and each quarantine frame is built while its samples are (ADR 0006).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import dagster as dg
import polars as pl
from typing_extensions import TypeAliasType

from dagster_dataframely._model import names
from dagster_dataframely._model.row_threshold import describe_bound
from dagster_dataframely._run.checks.kind import Reported
from dagster_dataframely._run.checks.rule_checks import (
    RULE_CHECKS,
    column_schema_result,
    failure_samples,
    output_check_groups,
    partition_metadata,
)
from dagster_dataframely._run.checks.thresholds import RulesVerdict
from dagster_dataframely._run.decide.evaluation import check_results
from dagster_dataframely._run.decide.outcome import (
    Aborted,
    AllInvalid,
    Clean,
    ColumnMismatch,
    Exceeded,
    Outcome,
    Partial,
    Rows,
    Skipped,
    Unchecked,
)
from dagster_dataframely._run.decide.output_run import OutputRun
from dagster_dataframely._run.report.report import materialization_metadata, quarantined_first
from dagster_dataframely._run.report.statistics import staged_statistics, statistics_tables
from dagster_dataframely._run.split.failures import Failures
from dagster_dataframely._run.split.valid_rows import ValidRows
from dagster_dataframely._store.quarantine_writer import QuarantineWriter
from dagster_dataframely._upstream import current_asset_context, document_type_alias
from dagster_dataframely.errors import (
    ColumnSchemaError,
    NoValidRowsError,
    ValidationAbortError,
    ValidationFailedError,
)

AssetYield = TypeAliasType(
    "AssetYield", Iterator[dg.MaterializeResult[pl.DataFrame] | dg.AssetCheckResult]
)
document_type_alias(
    AssetYield,
    """What a validating asset yields: its materialization, if any, then one result per check.

The return annotation of a hand-wired `@dg.asset` whose body is
`yield from validation_results(...)`.""",
)

Returned = Mapping[str, dg.MaterializeResult[Any] | None]
"""The user's own `MaterializeResult` of each output, by output name, when one was returned."""

_Yield = TypeVar("_Yield", covariant=True)


@dataclass(frozen=True, slots=True, eq=False)
class Emission:
    """What one outcome yields, and the error it raises, once its quarantine is written."""

    outcome: Outcome
    checks: list[dg.AssetCheckResult]
    error: ValidationFailedError | None = None
    address: str | None = None
    """Where the quarantine was written, when it was."""
    table: dg.MaterializeResult[ValidRows] | None = None
    """The table's materialization, None when the step writes no table for this outcome."""


class Layout(Protocol[_Yield]):
    """How a step yields its emissions and which error it raises: the one part of the tail
    that differs between a step and a run over a partition range (`range_emit.RangeLayout`)."""

    def yields(self, emissions: Sequence[Emission]) -> Iterator[_Yield]:
        """What the step yields, every quarantine written already."""
        ...

    def error(
        self, failed: Sequence[Emission], emissions: Sequence[Emission]
    ) -> ValidationFailedError:
        """The error the step raises when `failed` (some of `emissions`) fail it."""
        ...


def emit_as(
    layout: Layout[_Yield],
    outcomes: Sequence[Outcome],
    returned: Returned | None = None,
    log: Any = None,
) -> Iterator[_Yield]:
    """Write the step's quarantines, yield each output's materialization and checks, then raise.

    `layout` chooses how the emissions are yielded and which error is raised (`EACH_OUTCOME`
    for a step's outcomes). `outcomes` are the selected outputs' in the order their results are
    yielded; `returned` holds the user's own `MaterializeResult`s, whose metadata, tags and
    data version are copied onto the table's materialization (this package's keys win over the
    user's). `log` is the step's, which warns when rows were quarantined while every check
    passed.
    """
    emissions = _prepare(outcomes, returned)
    failed = [e for e in emissions if e.error is not None]
    if not failed:  # a failing step's error says what happened
        _warn_of_passing_quarantines(emissions, log)
    yield from layout.yields(emissions)
    if failed:
        raise layout.error(failed, emissions)


@dataclass(frozen=True, slots=True)
class _EachOutcome:
    """A step's layout: each outcome's table, then its checks, in the outputs' order."""

    def yields(
        self, emissions: Sequence[Emission]
    ) -> Iterator[dg.MaterializeResult[ValidRows] | dg.AssetCheckResult]:
        """Each outcome's materialization, if it has one, then its check results."""
        for emission in emissions:
            if emission.table is not None:
                yield emission.table
            yield from emission.checks

    def error(
        self, failed: Sequence[Emission], emissions: Sequence[Emission]
    ) -> ValidationFailedError:
        """The first failing output's own error; in a step of several outputs, noting them all."""
        if len(emissions) == 1:
            return first_error(failed)
        shown = ", ".join(repr(e.outcome.run.output.key.to_user_string()) for e in failed)
        return first_error(
            failed,
            f"the outputs that failed this step: {shown}. No table of the step was written "
            "(every output keeps its previous contents); every output's checks were reported, "
            "and the quarantines of outputs with invalid rows were written.",
        )


def first_error(failed: Sequence[Emission], note: str | None = None) -> ValidationFailedError:
    """The first failing outcome's error, with the package's `note` added."""
    first = failed[0].error
    assert first is not None
    if note is not None:
        first.add_note(f"dagster-dataframely: {note}")
    return first


EACH_OUTCOME = _EachOutcome()
"""The layout of a step's outcomes (one per selected output)."""


def _prepare(outcomes: Sequence[Outcome], returned: Returned | None = None) -> list[Emission]:
    # NOTE: nothing is yielded yet: Dagster writes a table when its materialization is yielded,
    # after every quarantine here.
    write_tables = not any(outcome.fails_step for outcome in outcomes)
    # One worker each, so that a quarantine to write never waits behind another's statistics.
    with (
        ThreadPoolExecutor(1, thread_name_prefix="dagster-dataframely") as statistics_pool,
        ThreadPoolExecutor(1, thread_name_prefix="dagster-dataframely") as quarantine_pool,
    ):
        statistics = [
            _start_statistics(statistics_pool, o) if write_tables else None for o in outcomes
        ]
        # Every quarantine is written here, before the first table is yielded.
        emissions = [_report(outcome, write_tables, quarantine_pool) for outcome in outcomes]
        return [
            dataclasses.replace(
                e,
                table=_table(
                    e.outcome, e.address, pending.result() if pending is not None else {}, returned
                ),
            )
            if write_tables and isinstance(e.outcome, Clean | Partial)
            else e
            for e, pending in zip(emissions, statistics, strict=True)
        ]


def _start_statistics(
    pool: ThreadPoolExecutor, outcome: Outcome
) -> Future[Mapping[str, dg.TableMetadataValue]] | None:
    if not isinstance(outcome, Clean | Partial) or not outcome.run.output.settings.statistics:
        return None
    info, valid = outcome.run.output.info, outcome.rows.valid
    if isinstance(valid, pl.LazyFrame):  # staged rows: one column in memory at a time
        return pool.submit(staged_statistics, valid, info.distinct_columns, info.sensitive)
    return pool.submit(statistics_tables, valid, info.distinct_columns, info.sensitive)


def _report(outcome: Outcome, write_tables: bool, pool: ThreadPoolExecutor) -> Emission:
    output = outcome.run.output
    in_partition = partition_metadata(outcome.run.partition_key)
    # NOTE: an outcome that writes nothing (a column mismatch, an abort, an unchecked member, a
    # skip) reports its checks at ERROR, after the match, with its error if it has one.
    error: ValidationFailedError | None = None
    match outcome:
        case ColumnMismatch(problems=problems):
            error = ColumnSchemaError(output.info.name, [dict(p) for p in problems])
        case Aborted(rows=rows):
            error = ValidationAbortError(
                output.info.name, rows.quarantined.invalid_count, rows.quarantined.counts
            )
        case AllInvalid(rows=rows, writer=writer) | Exceeded(rows=rows, writer=writer):
            # NOTE: no table is written, yet the quarantine gets its rows (every row is invalid, or
            # the policy refuses the table, not the rows); no materialization carries its address,
            # so every check does.
            sampled: Mapping[str, dg.TableMetadataValue] | None = None
            written: str | None = None
            if writer is not None and rows.quarantined.invalid_count:
                sampled, written = _write_quarantine(outcome, rows, writer, pool)
            where = {names.QUARANTINE_ADDRESS: written} if written is not None else {}
            checks = outcome_checks(outcome, _ERROR, {**where, **in_partition}, sampled)
            if isinstance(outcome, Exceeded):
                return Emission(outcome, checks, rows.evaluation.error(output, written), written)
            assert written is not None  # every row is invalid, and the writer took them
            error = NoValidRowsError(
                output.info.name, rows.quarantined.invalid_count, rows.quarantined.counts, written
            )
            return Emission(outcome, checks, error, written)
        case Partial(rows=rows, writer=writer):
            tables, address = _write_quarantine(outcome, rows, writer, pool)
            checks = _warned(outcome, address, write_tables, tables)
            return Emission(outcome, checks, address=address)
        # NOTE: a clean outcome's empty quarantine replaces the stored one only beside a table this
        # step writes (`clear_quarantine`), and is otherwise written only where none is stored yet,
        # so it can be read from the first run on.
        case Clean(rows=rows, run=run):
            cleared = None
            if write_tables and run.clear_quarantine and run.writer is not None:
                cleared = run.writer(rows.quarantined.quarantine_frame)
            elif write_tables and run.initial_writer is not None:
                # The first clean run of a partition stores an empty quarantine to be read.
                cleared = run.initial_writer(rows.quarantined.quarantine_frame)
            return Emission(outcome, _warned(outcome, cleared, write_tables), address=cleared)
    return Emission(outcome, outcome_checks(outcome, _ERROR, in_partition), error)


_ERROR = dg.AssetCheckSeverity.ERROR


def _warn_of_passing_quarantines(emissions: Sequence[Emission], log: Any) -> None:
    # NOTE: a rule's check passes with failing rows when the quality policy's threshold tolerates
    # them (`warn_above`), yet the rows still go to the quarantine: a run green everywhere would
    # hide that its table lacks them, so the step says it once, through its log, naming no value.
    lines = [_passing_quarantine_line(e.outcome, e.checks, e.address) for e in emissions]
    said = [line for line in lines if line is not None]
    if not said:
        return
    (log if log is not None else dg.get_dagster_logger()).warning(
        "dagster-dataframely: rows went to a quarantine while every check of their asset "
        "passed; the run is green, and the table does not have them:"
        + "".join(f"\n  - {line}" for line in said)
        + "\nEach materialization leads with them: `dataframely/invalid_count` and "
        "`dataframely/quarantine_address`."
    )


def _passing_quarantine_line(
    outcome: Outcome, checks: Sequence[dg.AssetCheckResult], address: str | None
) -> str | None:
    if not isinstance(outcome, Partial) or not all(check.passed for check in checks):
        return None
    run, rows = outcome.run, outcome.rows
    where = f" of partition {run.partition_key}" if run.partition_key is not None else ""
    went = f" ({address})" if address is not None else ""
    line = (
        f"{describe_bound(rows.quarantined.invalid_count)}{where} of "
        f"{run.output.key.to_user_string()!r} went to its quarantine{went}"
    )
    judged = rows.evaluation.verdicts.get(RULE_CHECKS.name)
    verdicts = judged.rules if isinstance(judged, RulesVerdict) else {}
    check_names = {rule.name: rule.check_name for rule in run.output.info.rules}
    tolerated = [
        f"{check_names.get(v.rule, v.rule)} ({v.failed} of {v.rows} rows failed, "
        f"{v.fraction:.1%}; {v.threshold.describe()})"
        for v in verdicts.values()
        if v.rule in rows.quarantined.counts and v.failed and v.tolerated
    ]
    if tolerated:
        line += ": the quality policy's threshold tolerates " + "; ".join(tolerated)
    return line + "."


def outcome_checks(
    outcome: Outcome,
    severity: dg.AssetCheckSeverity,
    metadata: Mapping[str, Any],
    sample_tables: Mapping[str, dg.TableMetadataValue] | None = None,
) -> list[dg.AssetCheckResult]:
    """An outcome's check results at `severity`, their failure samples made here if not given.

    A column mismatch fails the column-schema check and runs no other; an unchecked member's
    passes alone (the step fails on another member's columns). A skip reports every kind's
    checks over zero rows, as Dagster wants a result for every declared check.
    """
    output = outcome.run.output
    match outcome:
        case ColumnMismatch(problems=problems):
            return [column_schema_result(output.key, [dict(p) for p in problems], metadata)]
        case Unchecked():
            return [column_schema_result(output.key, extra_metadata=metadata)]
        case Skipped():
            failures = Failures.none(output.info)
            return check_results(None, Reported(output, failures, severity, metadata))
        case _:
            failures = outcome.rows.failures
            reported = Reported(output, failures, severity, metadata, sample_tables)
            return check_results(outcome.rows.evaluation, reported)


def _write_quarantine(
    outcome: Outcome, rows: Rows, writer: QuarantineWriter, pool: ThreadPoolExecutor
) -> tuple[Mapping[str, dg.TableMetadataValue], str]:
    # NOTE: the quarantine frame is Polars work, which releases the GIL: it is built in `pool` while
    # the samples become the checks' tables of Python values (the costliest part of a wide schema's
    # checks), the samples taken first so their query does not wait behind it.
    output = outcome.run.output
    samples = rows.failures.samples(output.settings.max_failure_samples)
    quarantine = pool.submit(lambda: rows.quarantined.quarantine_frame)
    tables = failure_samples(output_check_groups(output), samples, rows.failures.info.sensitive)
    return tables, writer(quarantine.result())


def _warned(
    outcome: Outcome,
    address: str | None,
    write_tables: bool,
    sample_tables: Mapping[str, dg.TableMetadataValue] | None = None,
) -> list[dg.AssetCheckResult]:
    # NOTE: without a materialization (another output fails the step), the checks carry where the
    # invalid rows went.
    extra = {names.QUARANTINE_ADDRESS: address} if address is not None and not write_tables else {}
    metadata = {**extra, **partition_metadata(outcome.run.partition_key)}
    return outcome_checks(outcome, dg.AssetCheckSeverity.WARN, metadata, sample_tables)


def _table(
    outcome: Clean | Partial,
    address: str | None,
    statistics: Mapping[str, dg.TableMetadataValue],
    returned: Returned | None,
) -> dg.MaterializeResult[ValidRows]:
    output = outcome.run.output
    rows = outcome.rows
    user = (returned or {}).get(output.name)
    metadata = materialization_metadata(
        rows.valid,
        rows.quarantined,
        output.settings,
        address,
        statistics,
        warning_count=rows.warning_count,
        partitioned=outcome.run.partition_key is not None,
        undeclared=rows.undeclared,
    )
    # NOTE: Dagster does not copy a run's tags onto its materializations, and the anomaly check
    # reads materializations only: the run tag becomes a metadata flag on each one.
    context = current_asset_context()
    if context is not None and context.run.tags.get(names.INCIDENT_TAG) == "true":
        metadata[names.INCIDENT] = True
    return dg.MaterializeResult(
        asset_key=output.key,
        value=_stored_value(outcome.run, rows.valid),
        metadata=quarantined_first({**_user_metadata(user), **metadata}),
        tags=user.tags if user is not None else None,
        data_version=user.data_version if user is not None else None,
    )


def _stored_value(run: OutputRun, valid: ValidRows) -> ValidRows:
    # NOTE: a manager that sinks gets a LazyFrame where the run asks for one
    # (`OutputRun.lazy_table`); a DuckDB table, never handed one, is fitted to the rows first.
    if run.staging is not None or run.lazy_table:
        return valid.lazy()
    if run.fit_table is not None and isinstance(valid, pl.DataFrame):
        return run.fit_table(valid)
    return valid


def _user_metadata(returned: dg.MaterializeResult[Any] | None) -> Mapping[str, Any]:
    if returned is None or not returned.metadata:
        return {}
    return {k: v for k, v in returned.metadata.items() if not names.is_package_metadata_key(k)}

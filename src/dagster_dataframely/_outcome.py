"""The failure policy in two phases: `decide` what a frame's outcome is, then `emit` it.

`decide` computes everything (the column gate, the split, the failures, the warning-only rows,
which of the six outcomes applies and the error the step would raise) and writes nothing.
`emit` writes the quarantine, yields the table's materialization and the check results, and
raises the outcome's error. A single asset does both at once (`run_validation`); a multi-asset
decides every output first, so that one output's failure can keep every table of the step
unwritten (see `_multi_asset`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import dagster as dg
import polars as pl
from dataframely.filter_result import FilterResult
from typing_extensions import TypeAliasType

from . import _names
from ._checks import (
    check_groups,
    check_results_for,
    column_schema_failure,
    column_schema_passed,
    partition_metadata,
)
from ._failures import Failures
from ._quarantine_files import QuarantineWriter
from ._report import materialization_metadata
from ._schema import SchemaInfo
from ._settings import Settings
from ._statistics import statistics_tables
from ._upstream import document_type_alias
from ._warnings import keep_warning_only_rows
from .errors import (
    ColumnSchemaError,
    DagsterDataframelyError,
    NoValidRowsError,
    ValidationAbortError,
)

Frame = pl.DataFrame | pl.LazyFrame

AssetYield = TypeAliasType(
    "AssetYield", Iterator[dg.MaterializeResult[pl.DataFrame] | dg.AssetCheckResult]
)
document_type_alias(
    AssetYield,
    """What a validating asset yields: its materialization, if any, then one result per check.

The return annotation of a hand-wired `@dg.asset` whose body is
`yield from validation_results(...)`.""",
)

OutcomeKind = Literal[
    "skip", "column_mismatch", "clean", "abort", "partial", "all_invalid", "unchecked"
]
"""The six rows of the failure policy's table, in its order but for the skip; then
`unchecked`: the frame's columns match, but no rule ran, because another member of the same
Collection has mismatched columns and the Collection's filters need every member."""

FAILING_KINDS: frozenset[OutcomeKind] = frozenset({"column_mismatch", "abort", "all_invalid"})
"""The outcomes that fail the step, and so write no table."""

OUTCOME_ERRORS = (ColumnSchemaError, ValidationAbortError, NoValidRowsError)
"""The errors `emit` raises for a failing outcome: the data's verdict, not a bug."""


@dataclass(frozen=True, eq=False)
class Outcome:
    """What validating one frame for one asset comes to, before anything is written."""

    kind: OutcomeKind
    info: SchemaInfo
    settings: Settings
    key: dg.AssetKey
    """The asset the table, the checks and the quarantine belong to."""
    partition_key: str | None
    has_writer: bool
    """Whether the asset has a quarantine: `decide` chose between abort and partial on it."""
    problems: tuple[Mapping[str, str], ...] = ()
    """The mismatched columns, for `column_mismatch` only."""
    failures: Failures | None = None
    """Every rule's failures, which the checks report; None for `column_mismatch`."""
    valid: pl.DataFrame | None = None
    """The rows the table gets (with the warning-only rows); None when no rule ran."""
    quarantined: Failures | None = None
    """The rows a blocking rule failed, which the quarantine gets; None when no rule ran."""

    @property
    def fails_step(self) -> bool:
        """Whether the step fails: column mismatch, abort, or no valid rows."""
        return self.kind in FAILING_KINDS

    @property
    def invalid_count(self) -> int:
        """How many rows go to the quarantine (or would, for an abort)."""
        return self.quarantined.invalid_count if self.quarantined is not None else 0

    def quarantine_to_write(
        self, *, clear_quarantine: bool, write_table: bool
    ) -> pl.DataFrame | None:
        """The frame `emit` hands the writer, or None when it writes no quarantine.

        The invalid rows when there are any and the asset has a quarantine (an abort has
        none); with `clear_quarantine`, the empty frame of a clean outcome whose table is
        written, so the quarantine is replaced beside it.
        """
        if not self.has_writer or self.quarantined is None or self.kind == "abort":
            return None
        if self.quarantined.invalid_count or (clear_quarantine and write_table):
            return self.quarantined.quarantine_frame
        return None

    def error(self, quarantine_address: str | None = None) -> DagsterDataframelyError | None:
        """The error the step raises for this outcome, or None when it does not fail.

        `NoValidRowsError` names where the quarantine was written, so it needs the address
        the writer returned.
        """
        if self.kind == "column_mismatch":
            return ColumnSchemaError(self.info.name, [dict(p) for p in self.problems])
        quarantined = self.quarantined
        if quarantined is None:
            return None
        if self.kind == "abort":
            return ValidationAbortError(
                self.info.name, quarantined.invalid_count, quarantined.counts
            )
        if self.kind == "all_invalid":
            return NoValidRowsError(
                self.info.name,
                quarantined.invalid_count,
                quarantined.counts,
                quarantine_address or _names.quarantine_key(self.key).to_user_string(),
            )
        return None


def decide(
    info: SchemaInfo,
    settings: Settings,
    frame: Frame | None,
    *,
    key: dg.AssetKey,
    has_writer: bool,
    partition_key: str | None = None,
) -> Outcome:
    """Decide `frame`'s outcome for the asset `key`, running the user's plan once; write nothing.

    The column gate reads `collect_schema()` only, so a mismatched plan never runs.
    """
    if frame is None:
        return Outcome(
            "skip",
            info,
            settings,
            key,
            partition_key,
            has_writer,
            failures=Failures.none(info),
        )
    problems = column_problems(info, frame)
    if problems:
        return Outcome(
            "column_mismatch",
            info,
            settings,
            key,
            partition_key,
            has_writer,
            problems=tuple(problems),
        )
    collected = split_rows(info, frame)
    return decided(
        info,
        settings,
        key=key,
        valid=collected.result,
        failures=Failures.from_failure_info(info, collected.failure),
        has_writer=has_writer,
        partition_key=partition_key,
    )


def decided(
    info: SchemaInfo,
    settings: Settings,
    *,
    key: dg.AssetKey,
    valid: pl.DataFrame,
    failures: Failures,
    has_writer: bool,
    partition_key: str | None,
) -> Outcome:
    """The outcome of a frame already split into `valid` rows and `failures`.

    For a caller that splits on its own (a Collection's joint filter): the warning rules move
    their rows back to the valid side here, and the outcome follows the rows a blocking rule
    failed.
    """
    # The checks report `failures`, every rule; what is written and quarantined, and the
    # errors, follow `quarantined`, the rows a rule that is not a warning failed.
    written, quarantined = keep_warning_only_rows(valid, failures, settings.warning_rules)
    kind: OutcomeKind
    if not quarantined.invalid_count:
        kind = "clean"
    elif not has_writer:
        kind = "abort"
    elif not written.height:
        kind = "all_invalid"
    else:
        kind = "partial"
    return Outcome(
        kind,
        info,
        settings,
        key,
        partition_key,
        has_writer,
        failures=failures,
        valid=written,
        quarantined=quarantined,
    )


def emit(
    outcome: Outcome,
    *,
    writer: QuarantineWriter | None,
    returned: dg.MaterializeResult[Any] | None = None,
    clear_quarantine: bool = False,
    write_table: bool = True,
) -> AssetYield:
    """Write the outcome's quarantine, yield its materialization and checks, raise its error.

    With `write_table=False` (another output of the same step fails it), a clean or partial
    outcome yields no materialization and computes no statistics: its checks still report,
    with the severity of its own outcome, and its invalid rows are still written to the
    quarantine, whose address the checks then carry. A clean outcome's quarantine is not
    cleared, so it stays beside the table it describes.

    `returned` is the user's own `MaterializeResult`, whose metadata, tags and data version
    are copied onto the table's materialization; this package's keys win over the user's.
    """
    if outcome.has_writer and writer is None:
        raise dg.DagsterInvariantViolationError(
            "dagster-dataframely: an outcome decided with a quarantine was emitted without a "
            "writer. This is a bug; please report it."
        )
    if outcome.kind == "column_mismatch":
        yield column_schema_failure(
            outcome.key,
            [dict(p) for p in outcome.problems],
            partition_metadata(outcome.partition_key),
        )
        raise _error(outcome)
    if outcome.kind == "unchecked":
        # Only the column gate ran, and passed; the step fails on another output's columns.
        yield column_schema_passed(outcome.key, partition_metadata(outcome.partition_key))
        return
    failures, valid, quarantined = outcome.failures, outcome.valid, outcome.quarantined
    assert failures is not None
    if outcome.kind == "skip":
        # Dagster wants a result for every declared check: every rule passes over zero rows.
        yield from _results(outcome, failures, dg.AssetCheckSeverity.ERROR)
        return
    assert valid is not None
    assert quarantined is not None
    if outcome.kind == "abort":
        yield from _results(outcome, failures, dg.AssetCheckSeverity.ERROR)
        raise _error(outcome)
    if outcome.kind == "all_invalid":
        assert writer is not None
        quarantine_address = writer(quarantined.quarantine_frame)
        yield from _results(
            outcome,
            failures,
            dg.AssetCheckSeverity.ERROR,
            **{_names.QUARANTINE_ADDRESS: quarantine_address},
        )
        raise _error(outcome, quarantine_address)
    to_write = outcome.quarantine_to_write(
        clear_quarantine=clear_quarantine, write_table=write_table
    )
    if not write_table:
        written = writer(to_write) if writer and to_write is not None else None
        extra = {_names.QUARANTINE_ADDRESS: written} if written is not None else {}
        yield from _results(outcome, failures, dg.AssetCheckSeverity.WARN, **extra)
        return

    # From here the table is written. The statistics are the costliest report and need only
    # the valid rows: in a thread (Polars releases the GIL) they run while the quarantine is
    # written, not after it. Leaving the block waits for the thread, so a failed write leaves
    # no query running behind it.
    settings = outcome.settings
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dagster-dataframely") as pool:
        statistics = (
            pool.submit(statistics_tables, valid, outcome.info.distinct_columns)
            if settings.statistics
            else None
        )
        # With `clear_quarantine`, a clean run writes the (empty) quarantine frame too.
        address = writer(to_write) if writer and to_write is not None else None
        checks = list(_results(outcome, failures, dg.AssetCheckSeverity.WARN))
        metadata = materialization_metadata(
            valid,
            quarantined,
            settings,
            address,
            statistics.result() if statistics else {},
            warning_count=failures.invalid_count - quarantined.invalid_count,
        )

    yield dg.MaterializeResult(
        asset_key=outcome.key,
        value=valid,
        metadata={**_user_metadata(returned), **metadata},
        tags=returned.tags if returned is not None else None,
        data_version=returned.data_version if returned is not None else None,
    )
    yield from checks


def _error(outcome: Outcome, address: str | None = None) -> DagsterDataframelyError:
    error = outcome.error(address)
    assert error is not None
    return error


def _results(
    outcome: Outcome, failures: Failures, severity: dg.AssetCheckSeverity, **extra: Any
) -> Iterator[dg.AssetCheckResult]:
    settings = outcome.settings
    return check_results_for(
        check_groups(
            outcome.info, settings.check_granularity, settings.schema_rules, settings.warning_rules
        ),
        failures,
        asset_key=outcome.key,
        severity=severity,
        max_failure_samples=settings.max_failure_samples,
        extra_metadata={**extra, **partition_metadata(outcome.partition_key)},
    )


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


def _user_metadata(returned: dg.MaterializeResult[Any] | None) -> Mapping[str, Any]:
    if returned is None or not returned.metadata:
        return {}
    return {k: v for k, v in returned.metadata.items() if not _names.is_package_metadata_key(k)}

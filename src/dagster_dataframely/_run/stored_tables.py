"""The read-only pipeline of stored tables: a run's own decision, reported without a write.

`dd.table_checks` and `dd.wiring.check_results` split a stored table (or a Collection's members)
as a run would, as outputs without a quarantine, and yield the checks a run would report.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import dagster as dg

from dagster_dataframely._model.check_groups import check_groups
from dagster_dataframely._model.collection import CollectionInfo
from dagster_dataframely._model.schema import SchemaInfo
from dagster_dataframely._model.settings import Settings
from dagster_dataframely._run.checks.rule_checks import (
    check_results_for,
    column_schema_result,
    partition_metadata,
)
from dagster_dataframely._run.decide.evaluation import policy_check_results
from dagster_dataframely._run.decide.outcome import (
    ColumnMismatch,
    Outcome,
    Skipped,
    Unchecked,
    decide,
    decide_members,
)
from dagster_dataframely._run.decide.output_run import OutputRun
from dagster_dataframely._run.returned import Frame
from dagster_dataframely._run.split.failures import Failures
from dagster_dataframely.errors import ColumnSchemaError

from .validated_output import ValidatedOutput


def _reading(
    key: dg.AssetKey, info: SchemaInfo, settings: Settings, partition_key: str | None
) -> OutputRun:
    """A stored table as a run decides it: an output without a quarantine, nothing to write."""
    output = ValidatedOutput(
        name=key.to_python_identifier(),
        key=key,
        info=info,
        settings=settings,
        quarantine=False,
        clear_quarantine=False,
    )
    return OutputRun(output, partition_key, writer=None, clear_quarantine=False, writes_table=False)


def _reported(
    outcome: Outcome, severity: dg.AssetCheckSeverity
) -> tuple[list[dg.AssetCheckResult], ColumnSchemaError | None]:
    """A run's outcome as read-only checks report it: its checks at `severity`, and the error
    of a column mismatch, the one outcome that stops them. Nothing is written or raised here.
    """
    output = outcome.run.output
    extra = partition_metadata(outcome.run.partition_key)
    if isinstance(outcome, ColumnMismatch):
        problems = [dict(problem) for problem in outcome.problems]
        error = ColumnSchemaError(output.info.name, problems)
        return [column_schema_result(output.key, problems, extra)], error
    if isinstance(outcome, Unchecked):
        return [column_schema_result(output.key, extra_metadata=extra)], None
    rows = None if isinstance(outcome, Skipped) else outcome.rows
    evaluation = rows.evaluation if rows is not None else None
    settings = output.settings
    results = check_results_for(
        check_groups(
            output.info, settings.check_granularity, settings.schema_rules, settings.warning_rules
        ),
        rows.failures if rows is not None else Failures.none(output.info),
        asset_key=output.key,
        severity=severity,
        max_failure_samples=settings.max_failure_samples,
        extra_metadata=extra,
        policy=settings.policy,
        verdicts=evaluation.rules if evaluation is not None else None,
    )
    return [*results, *policy_check_results(settings.policy, evaluation, output.key, extra)], None


def stored_table_results(
    info: SchemaInfo,
    settings: Settings,
    frame: Frame,
    asset_key: dg.AssetKey,
    severity: dg.AssetCheckSeverity,
    partition_key: str | None,
) -> Iterator[dg.AssetCheckResult]:
    """The results of checking a stored table: a run's own decision, reported without a write.

    The table is split and its outcome classified by the run's code (`decide`), as an output
    without a quarantine; nothing is written, moved or quarantined, and no abort is raised:
    only a column mismatch stops, after its failing result.
    """
    checks, error = _reported(
        decide(_reading(asset_key, info, settings, partition_key), frame), severity
    )
    yield from checks
    if error is not None:
        raise error


def stored_members_results(
    info: CollectionInfo,
    tables: Mapping[str, Frame],
    keys: Mapping[str, dg.AssetKey],
    settings: Mapping[str, Settings],
    severity: dg.AssetCheckSeverity,
    partition_key: str | None,
) -> Iterator[dg.AssetCheckResult]:
    """Every member's results from the run's one joint split of their stored tables.

    `tables`, `keys` and `settings` are by member name. A column mismatch in any member runs
    no rule of any: every member reports its column check, and the first mismatch is raised.
    """
    runs = {
        member: _reading(key, info.members[member].info, settings[member], partition_key)
        for member, key in keys.items()
    }
    outcomes = decide_members(info, tables, runs)
    reports = [_reported(outcomes[member], severity) for member in runs]
    for checks, _ in reports:
        yield from checks
    errors = [error for _, error in reports if error is not None]
    if errors:
        raise errors[0]

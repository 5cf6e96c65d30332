"""The read-only pipeline of stored tables: a run's own decision, reported without a write.

`dd.table_checks` and `dd.wiring.check_results` split a stored table (or a Collection's members)
as a run would, as outputs without a quarantine, and yield the checks a run would report.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import dagster as dg

from dagster_dataframely._model.anomaly_check import split_metric
from dagster_dataframely._model.collection import CollectionInfo
from dagster_dataframely._model.schema import SchemaInfo
from dagster_dataframely._model.settings import Settings
from dagster_dataframely._run.checks.history import read_history
from dagster_dataframely._run.checks.registry import series_of
from dagster_dataframely._run.checks.rule_checks import partition_metadata
from dagster_dataframely._run.decide.outcome import ColumnMismatch, Outcome, decide, decide_members
from dagster_dataframely._run.decide.output_run import OutputRun
from dagster_dataframely._run.emit.emit import outcome_checks
from dagster_dataframely._run.report.metrics import column_metrics
from dagster_dataframely._run.returned import Frame
from dagster_dataframely.errors import ColumnSchemaError

from .validated_output import ValidatedOutput


def _reading(
    key: dg.AssetKey,
    info: SchemaInfo,
    settings: Settings,
    partition_key: str | None,
    context: Any = None,
) -> OutputRun:
    output = ValidatedOutput(name=key.to_python_identifier(), key=key, info=info, settings=settings)
    # NOTE: an anomaly check's history is its own past evaluations (read through the check's
    # `context`); one watching columns measures the valid rows, so those are kept.
    policy = settings.policy
    anomaly = policy.anomaly if policy is not None else None
    measures = anomaly is not None and any(
        column is not None for column, _ in map(split_metric, anomaly.metrics)
    )
    return OutputRun(
        output,
        partition_key,
        writer=None,
        clear_quarantine=False,
        history=read_history(context, key, partition_key, series_of(output)),
        measure=column_metrics,
        writes_table=measures,
    )


def _reported(
    outcomes: Iterable[Outcome], severity: dg.AssetCheckSeverity
) -> Iterator[dg.AssetCheckResult]:
    # NOTE: nothing is written or aborted; a column mismatch, the one outcome that stops the
    # checks, is raised after every output's checks.
    mismatched: list[ColumnMismatch] = []
    for outcome in outcomes:
        yield from outcome_checks(outcome, severity, partition_metadata(outcome.run.partition_key))
        if isinstance(outcome, ColumnMismatch):
            mismatched.append(outcome)
    if mismatched:
        first = mismatched[0]
        raise ColumnSchemaError(first.run.output.info.name, [dict(p) for p in first.problems])


def stored_table_results(
    info: SchemaInfo,
    settings: Settings,
    frame: Frame,
    asset_key: dg.AssetKey,
    severity: dg.AssetCheckSeverity,
    partition_key: str | None,
    context: Any = None,
) -> Iterator[dg.AssetCheckResult]:
    """The results of checking a stored table: a run's own decision, reported without a write.

    The table is split and its outcome classified by the run's code (`decide`), as an output
    without a quarantine; nothing is written, moved or quarantined, and no abort is raised:
    only a column mismatch stops, after its failing result.
    """
    yield from _reported(
        [decide(_reading(asset_key, info, settings, partition_key, context), frame)], severity
    )


def stored_members_results(
    info: CollectionInfo,
    tables: Mapping[str, Frame],
    keys: Mapping[str, dg.AssetKey],
    settings: Mapping[str, Settings],
    severity: dg.AssetCheckSeverity,
    partition_key: str | None,
    context: Any = None,
) -> Iterator[dg.AssetCheckResult]:
    """Every member's results from the run's one joint split of their stored tables.

    `tables`, `keys` and `settings` are by member name. A column mismatch in any member runs
    no rule of any: every member reports its column check, and the first mismatch is raised.
    """
    runs = {
        member: _reading(key, info.members[member].info, settings[member], partition_key, context)
        for member, key in keys.items()
    }
    outcomes = decide_members(info, tables, runs)
    yield from _reported([outcomes[member] for member in runs], severity)

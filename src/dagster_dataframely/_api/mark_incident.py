"""`dd.mark_incident`: mark a materialization as an incident after its run, or clear the mark."""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from dagster_dataframely._model import names
from dagster_dataframely.errors import InvalidArgumentsError

_PAGE = 1000
"""How many of the asset's materializations one query reads while looking for the run's."""


def mark_incident(
    instance: dg.DagsterInstance,
    asset_key: dg.AssetKey | str | Sequence[str],
    run_id: str,
    *,
    partition: str | None = None,
    incident: bool = True,
) -> None:
    """Mark what a finished run materialized as an incident, so it never trains an anomaly band.

    The mark is an asset observation on the asset (on the partition, when one is named) that
    names the run. Every later run's `dd.AnomalyCheck` leaves the marked points out of its
    band, as it does for a run started with the tag `dagster-dataframely/incident=true`; the
    check's `dy_excluded_points` counts them. The latest mark decides: `incident=False` clears a
    mark, or the run tag. The observation shows on the asset's Events tab.

    Parameters
    ----------
    instance
        The Dagster instance the run was recorded on (`context.instance` in an op, a sensor or a
        schedule; `dg.DagsterInstance.get()` in a script).
    asset_key
        The asset whose materialization is marked.
    run_id
        The run that materialized it (the run's page in the UI shows its ID).
    partition
        One partition the run materialized; `None` marks every partition the run materialized
        (an unpartitioned asset's one materialization).
    incident
        `True` marks, `False` clears the mark.

    Raises
    ------
    InvalidArgumentsError
        No such run, or the run materialized no such asset or partition.

    Examples
    --------
    ```python
    import dagster as dg
    import dagster_dataframely as dd

    def mark_yesterdays_spike(instance: dg.DagsterInstance, run_id: str) -> None:
        dd.mark_incident(instance, "orders", run_id, partition="2026-01-05")
    ```
    """
    key = dg.AssetKey.from_coercible(asset_key)
    record = instance.get_run_record_by_id(run_id)
    if record is None:
        raise InvalidArgumentsError(
            "mark_incident",
            f"the instance has no run {run_id!r}",
            "Pass the ID of the run that materialized the asset, as its page in the UI shows it.",
        )
    if not _materialized(instance, key, partition, record) and not _evaluated(
        instance, key, partition, run_id
    ):
        where = f"partition {partition!r} of " if partition is not None else ""
        raise InvalidArgumentsError(
            "mark_incident",
            f"run {run_id!r} materialized (or checked with dd.table_checks) no {where}asset "
            f"{key.to_user_string()!r}",
            "Name an asset (and partition) the run materialized or checked.",
        )
    instance.report_runless_asset_event(
        dg.AssetObservation(
            asset_key=key,
            partition=partition,
            metadata={names.INCIDENT_RUN: run_id, names.INCIDENT: incident},
        )
    )


def _materialized(
    instance: dg.DagsterInstance, key: dg.AssetKey, partition: str | None, record: dg.RunRecord
) -> bool:
    # NOTE: the records filter has no run, so the asset's materializations recorded while the run
    # was on are read, a page at a time, and searched for the run's.
    started = record.start_time or record.create_timestamp.timestamp()
    cursor = None
    while True:
        page = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=key,
                asset_partitions=[partition] if partition is not None else None,
                after_timestamp=started - 1,
                before_timestamp=record.end_time + 1 if record.end_time is not None else None,
            ),
            limit=_PAGE,
            cursor=cursor,
        )
        if any(found.run_id == record.dagster_run.run_id for found in page.records):
            return True
        if not page.has_more:
            return False
        cursor = page.cursor


def _evaluated(
    instance: dg.DagsterInstance, key: dg.AssetKey, partition: str | None, run_id: str
) -> bool:
    # NOTE: a stored table's anomaly check (`dd.table_checks`) learns from its own evaluations,
    # so a run that only checked the table is marked as one that materialized it.
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        event = entry.dagster_event
        evaluation = event.event_specific_data if event is not None else None
        if not isinstance(evaluation, dg.AssetCheckEvaluation) or evaluation.asset_key != key:
            continue
        if partition is None or evaluation.partition == partition:
            return True
    return False

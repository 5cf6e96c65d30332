"""Refuse to write while another run writes the same partition of the same asset.

A run writes the quarantine, then the table. Two runs of one partition at once can interleave
those writes and leave run A's table beside run B's quarantine, with A's metadata describing
rows that are gone. Dagster's concurrency pools can queue such runs (see docs/guarantees.md);
this check is the package's own part: whichever of two overlapping runs checks second stops,
loudly, before writing anything.

Why the second one always notices: each run checks inside its step, after Dagster logged that
step's `STEP_START` and before the step writes. Say A checks first. If A's writes could still
interleave with B's, A's step has not finished when B checks, and A's `STEP_START` (logged
before A checked) and its planned materialization (logged when A was created) are in the
instance for B to see.
"""

from __future__ import annotations

from collections.abc import Container, Set

import dagster as dg

from dagster_dataframely._upstream import planned_partitions
from dagster_dataframely.errors import ConcurrentRunError

_RUNNING = [
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]
_PLANNED = dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED
_STEP_ENDS = {dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE}
_EVENTS = {_PLANNED, dg.DagsterEventType.STEP_START, *_STEP_ENDS}


def check_no_concurrent_run(
    instance: dg.DagsterInstance,
    run_id: str,
    asset: dg.AssetKey,
    step_key: str,
    output: dg.OutputContext,
) -> None:
    """Raise `ConcurrentRunError` if another run is inside the step that writes this partition.

    Only runs Dagster reports as starting, started or canceling are read, one event query each,
    so the cost grows with the number of runs in progress, not with the instance's history.

    Parameters
    ----------
    instance
        The instance of the running step.
    run_id
        The running step's own run, which does not count.
    asset
        The asset the step writes.
    step_key
        The step that writes `asset`; another run writes the asset inside a step of this key.
    output
        The table's output context, for its partition keys.

    Raises
    ------
    ConcurrentRunError
        Another run planned this asset for an overlapping partition and is inside its step.
    """
    ours = set(output.asset_partition_keys) if output.has_asset_partitions else None
    for run in instance.get_runs(filters=dg.RunsFilter(statuses=_RUNNING)):
        if run.run_id == run_id:
            continue
        if _writes_now(instance, run.run_id, asset, step_key, ours):
            shown = None if ours is None else ", ".join(sorted(ours))
            raise ConcurrentRunError(asset.to_user_string(), shown, run.run_id)


def _writes_now(
    instance: dg.DagsterInstance,
    run_id: str,
    asset: dg.AssetKey,
    step_key: str,
    ours: Set[str] | None,
) -> bool:
    """Whether run `run_id` plans `asset` for one of `ours` and is inside step `step_key`."""
    planned = started = ended = False
    for record in instance.get_records_for_run(run_id, of_type=_EVENTS).records:
        event = record.event_log_entry.dagster_event
        if event is None:
            continue
        if event.event_type == _PLANNED:
            mine, partition, partitions = planned_partitions(event, asset)
            planned = planned or (mine and _overlaps(partition, partitions, ours))
        elif event.step_key == step_key:
            started = started or event.event_type == dg.DagsterEventType.STEP_START
            ended = ended or event.event_type in _STEP_ENDS
    return planned and started and not ended


def _overlaps(
    partition: str | None, partitions: Container[str] | None, ours: Set[str] | None
) -> bool:
    """Whether a planned materialization covers one of our partitions (all, if unpartitioned)."""
    if ours is None:
        return True
    if partition is not None:
        return partition in ours
    if partitions is not None:
        return any(key in partitions for key in ours)
    return True

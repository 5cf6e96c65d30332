"""What the instance remembers of an asset: its recent row counts and undeclared columns.

Read once, when a run starts and only when the quality policy compares with the past, through
Dagster's public `DagsterInstance.fetch_materializations`: the volume check takes the median of
recent `dagster/row_count`s, the undeclared-columns check the latest materialization's list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import dagster as dg

from dagster_dataframely._model import names
from dagster_dataframely._model.quality_policy import ResolvedPolicy
from dagster_dataframely._upstream import current_asset_context


@dataclass(frozen=True, slots=True)
class History:
    """An asset's recent materializations, as far as its quality policy needs them."""

    row_counts: tuple[int, ...] = ()
    """The `dagster/row_count` of the recent materializations, newest first."""
    undeclared_columns: tuple[str, ...] | None = None
    """The latest materialization's undeclared columns; None when it recorded none."""


NO_HISTORY = History()
"""A direct call's, or a first run's: nothing to compare with."""


def read_history(
    context: Any, key: dg.AssetKey, partition_key: str | None, policy: ResolvedPolicy | None
) -> History | None:
    """The history `policy`'s checks compare with; None when they compare with nothing past.

    `context` is the asset's (None when its function declares none: the running step's is
    used). A direct call without a context has no instance, so no history.
    """
    if policy is None or not policy.reads_history:
        return None
    context = context if context is not None else current_asset_context()
    if context is None:
        return NO_HISTORY
    instance: dg.DagsterInstance = context.instance
    counts: tuple[int, ...] = ()
    volume = policy.volume
    if volume is not None and volume.reads_history:
        same_partition = volume.compare_with == "partition" and partition_key is not None
        records = instance.fetch_materializations(
            dg.AssetRecordsFilter(
                asset_key=key, asset_partitions=[str(partition_key)] if same_partition else None
            ),
            limit=volume.window,
        ).records
        counts = tuple(
            count for record in records if (count := _metadata(record, names.ROW_COUNT)) is not None
        )
    columns = None
    if policy.undeclared_columns == "check":
        latest = instance.fetch_materializations(key, limit=1).records
        listed = _metadata(latest[0], names.UNDECLARED_COLUMNS) if latest else None
        columns = tuple(str(name) for name in listed) if isinstance(listed, list) else None
    return History(counts, columns)


def _metadata(record: dg.EventLogRecord, key: str) -> Any:
    """One metadata value of a materialization record, unwrapped; None when absent."""
    materialization = record.asset_materialization
    if materialization is None or key not in materialization.metadata:
        return None
    return materialization.metadata[key].value

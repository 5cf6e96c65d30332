"""What the instance remembers of an asset: its recent row counts and undeclared columns.

Read once, when a run starts and only when the quality policy compares with the past, through
Dagster's public `DagsterInstance.fetch_materializations`: the volume check takes the median of
recent `dagster/row_count`s (of the partition, or of the whole asset with
`compare_with="asset"`), the undeclared-columns check the list of the partition's latest
materialization. A run over a partition range reads what a run of each partition alone would
read (`RangeHistory`), so a single-run backfill judges every partition as one run per
partition, in the range's order, would.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
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


@dataclass(frozen=True, slots=True)
class RangeHistory:
    """What one run of each partition of a range, alone and in the range's order, would read.

    Each partition has its own history. With `compare_with="asset"` the row counts are the
    whole asset's, and a partition's own run would come after the runs of the partitions
    before it in the range: so it also sees the rows each of them writes (`of`).
    """

    partitions: Mapping[str | None, History]
    """Each partition's history as the instance holds it when the run starts."""
    asset_wide: bool
    """Whether the row counts are the asset's (`compare_with="asset"`), not the partition's."""
    window: int
    """How many row counts the volume check compares with."""

    def of(self, partition: str | None, written_before: Sequence[int] = ()) -> History:
        """`partition`'s history, after the partitions before it wrote `written_before` rows.

        `written_before` are the row counts of the earlier partitions of the range whose own
        run would have written a table, in the range's order.
        """
        history = self.partitions[partition]
        if not self.asset_wide or not written_before:
            return history
        counts = (*reversed(written_before), *history.row_counts)[: self.window]
        return dataclasses.replace(history, row_counts=counts)


def read_history(
    context: Any, key: dg.AssetKey, partition_key: str | None, policy: ResolvedPolicy | None
) -> History | None:
    """The history `policy`'s checks compare with; None when they compare with nothing past.

    `context` is the asset's (None when its function declares none: the running step's is
    used). A direct call without a context has no instance, so no history.
    """
    histories = read_range_history(context, key, [partition_key], policy)
    return histories.of(partition_key) if histories is not None else None


def read_range_history(
    context: Any,
    key: dg.AssetKey,
    partition_keys: Sequence[str | None],
    policy: ResolvedPolicy | None,
) -> RangeHistory | None:
    """The history of each of `partition_keys` (None: an unpartitioned asset, or no key).

    None when the policy's checks compare with nothing past. The partitions are read together,
    newest first, a page at a time, until each has what its checks compare with (or has no
    more): one query for a run of one partition, and about one for a range, whatever its size.
    """
    if policy is None or not policy.reads_history:
        return None
    volume = policy.volume
    window = volume.window if volume is not None else 1
    context = context if context is not None else current_asset_context()
    if context is None:
        return RangeHistory(dict.fromkeys(partition_keys, NO_HISTORY), False, window)
    instance: dg.DagsterInstance = context.instance
    counts_wanted = volume is not None and volume.reads_history
    asset_wide = counts_wanted and volume is not None and volume.compare_with == "asset"
    columns_wanted = policy.undeclared_columns == "check"
    own_counts = counts_wanted and not asset_wide
    asset_counts: tuple[int, ...] = ()
    if asset_wide:
        asset_counts = _row_counts(_latest(instance, key, [None], window)[None])
    wanted = window if own_counts else 1 if columns_wanted else 0
    latest = _latest(instance, key, partition_keys, wanted)
    histories = {
        partition: History(
            _row_counts(latest[partition]) if own_counts else asset_counts,
            _undeclared(latest[partition]) if columns_wanted else None,
        )
        for partition in partition_keys
    }
    return RangeHistory(histories, asset_wide, window)


def _latest(
    instance: dg.DagsterInstance,
    key: dg.AssetKey,
    partitions: Sequence[str | None],
    count: int,
) -> dict[str | None, list[dg.EventLogRecord]]:
    """The latest `count` materializations of each partition (None: of the whole asset).

    The partitions still short of `count` are read together, newest first, a page of `count`
    records for each at a time: a range costs about one query, and a partition never
    materialized ends the reading of its own records at once.
    """
    found: dict[str | None, list[dg.EventLogRecord]] = {p: [] for p in partitions}
    if not count:
        return found
    if None in found:  # the whole asset: its latest, whichever partition
        found[None] = list(instance.fetch_materializations(key, limit=count).records)
    short = sorted(str(p) for p in partitions if p is not None)
    cursor = None
    while short:
        page = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=key, asset_partitions=short),
            limit=count * len(short),
            cursor=cursor,
        )
        for record in page.records:
            kept = found.get(record.partition_key)
            if kept is not None and len(kept) < count:
                kept.append(record)
        short = [p for p in short if len(found[p]) < count]
        if not page.has_more:
            break
        cursor = page.cursor
    return found


def _row_counts(records: Sequence[dg.EventLogRecord]) -> tuple[int, ...]:
    """The row count each materialization recorded, newest first; one without is left out."""
    return tuple(
        count for record in records if (count := _metadata(record, names.ROW_COUNT)) is not None
    )


def _undeclared(latest: Sequence[dg.EventLogRecord]) -> tuple[str, ...] | None:
    """The undeclared columns the latest materialization listed; None without one or a list."""
    listed = _metadata(latest[0], names.UNDECLARED_COLUMNS) if latest else None
    return tuple(str(name) for name in listed) if isinstance(listed, list) else None


def _metadata(record: dg.EventLogRecord, key: str) -> Any:
    """One metadata value of a materialization record, unwrapped; None when absent."""
    materialization = record.asset_materialization
    if materialization is None or key not in materialization.metadata:
        return None
    return materialization.metadata[key].value

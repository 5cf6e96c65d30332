"""What the instance remembers of an asset: named metric series, per partition.

A check kind asks for the series it compares with (`Series`: a materialization metadata key, such
as `dagster/row_count`, over the latest materializations of the partition or of the whole asset).
Every kind's series are read together, once, when a run starts, through Dagster's public
`DagsterInstance.fetch_materializations`, newest first and a page at a time: one query for a run
of one partition, and about one for a range, whatever its size. A run over a partition range
reads what a run of each partition alone would read (`RangeHistory`), so a single-run backfill
judges every partition as one run per partition, in the range's order, would.

A series may instead be an asset check's own past evaluations (`Series.check`): a check of a
table the package does not write (`dd.table_checks`) has no materialization to learn from.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from dagster_dataframely._model import names
from dagster_dataframely._upstream import check_evaluations, current_asset_context

_MARKS_PAGE = 1000
"""How many asset observations one query of the incident marks reads."""


@dataclass(frozen=True, slots=True)
class Series:
    """A named metric series: one metadata key over an asset's latest materializations."""

    key: str
    """The materialization metadata key whose values make the series."""
    window: int
    """How many of the latest materializations are read; one without `key` gives no point."""
    asset_wide: bool = False
    """The whole asset's latest materializations, whichever partition, not the partition's."""
    reads_marks: bool = False
    """Marks set after a run (`dd.mark_incident`) are read into its points' tags."""
    check: str | None = None
    """The source: None, the asset's materializations; a check's name, that asset check's own
    evaluations (the metadata key on each evaluation), for a check of a table it does not write.
    Its points' tags hold the evaluating run's incident tag."""


@dataclass(frozen=True, slots=True)
class Point:
    """One materialization's value of a series, and where and when it was recorded."""

    value: Any
    partition: str | None
    run_id: str
    timestamp: float
    """When the materialization was recorded (seconds since 1970)."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """The materialization's tags, such as a mark a user set on it."""


History = Mapping[Series, tuple[Point, ...]]
"""One partition's series, each one's points newest first."""


@dataclass(frozen=True, slots=True)
class RangeHistory:
    """What one run of each partition of a range, alone and in the range's order, would read."""

    partitions: Mapping[str | None, History]
    """Each partition's history as the instance holds it when the run starts."""

    def of(
        self, partition: str | None, written_before: Mapping[str, Sequence[Point]] | None = None
    ) -> History:
        """`partition`'s history, after the partitions before it in the range wrote theirs.

        `written_before` are, by metadata key, the points each earlier partition of the range
        whose own run would have written a table records, in the range's order: an asset-wide
        series holds them before the instance's, as it would after a run of each.
        """
        history = self.partitions[partition]
        if not written_before:
            return history
        return {
            series: (*reversed(written_before.get(series.key, ())), *points)[: series.window]
            if series.asset_wide
            else points
            for series, points in history.items()
        }


def read_history(
    context: Any, key: dg.AssetKey, partition_key: str | None, series: Collection[Series]
) -> History | None:
    """`series` of one partition (None: an unpartitioned asset, or no key); None without any.

    `context` is the asset's (None when its function declares none: the running step's is
    used). A direct call without a context has no instance, so no point.
    """
    histories = read_range_history(context, key, [partition_key], series)
    return histories.of(partition_key) if histories is not None else None


def read_range_history(
    context: Any, key: dg.AssetKey, partition_keys: Sequence[str | None], series: Collection[Series]
) -> RangeHistory | None:
    """`series` of each of `partition_keys`, read together; None when no series is asked for."""
    if not series:
        return None
    context = context if context is not None else current_asset_context()
    if context is None:
        return RangeHistory({p: dict.fromkeys(series, ()) for p in partition_keys})
    instance: dg.DagsterInstance = context.instance
    stored = [s for s in series if s.check is None]
    own = max((s.window for s in stored if not s.asset_wide), default=0)
    wide = max((s.window for s in stored if s.asset_wide), default=0)
    asset = _latest(instance, key, [None], wide)[None]
    latest = _latest(instance, key, partition_keys, own)
    records = [*asset, *(record for found in latest.values() for record in found)]
    marks: _Marks = {}
    if records and any(s.reads_marks for s in stored):
        runs = {record.run_id for record in records}
        marks = _run_marks(instance, key, runs, min(record.timestamp for record in records))
    histories: dict[str | None, dict[Series, tuple[Point, ...]]] = {
        partition: {
            s: _points(asset if s.asset_wide else latest[partition], s, marks) for s in stored
        }
        for partition in partition_keys
    }
    for s in series:
        if s.check is not None:
            for partition in partition_keys:
                histories[partition][s] = _evaluated_points(instance, key, partition, s)
    return RangeHistory(histories)


def _evaluated_points(
    instance: dg.DagsterInstance, key: dg.AssetKey, partition: str | None, series: Series
) -> tuple[Point, ...]:
    assert series.check is not None
    check_key = dg.AssetCheckKey(key, series.check)
    found = check_evaluations(
        instance, check_key, partition, series.window, every_partition=series.asset_wide
    )
    runs = {run_id for run_id, *_ in found}
    run_tags = _incident_tags(instance, runs)
    points = [
        Point(metadata[series.key].value, at, run_id, timestamp, run_tags.get(run_id, {}))
        for run_id, at, timestamp, metadata in found
        if series.key in metadata
    ]
    if series.reads_marks and points:
        marks = _run_marks(instance, key, runs, min(p.timestamp for p in points))
        points = [
            dataclasses.replace(p, tags={**p.tags, **_mark(marks, p.run_id, p.partition)})
            for p in points
        ]
    return tuple(points)


def _incident_tags(
    instance: dg.DagsterInstance, runs: Collection[str]
) -> dict[str, dict[str, str]]:
    # NOTE: an evaluation records no run tag: the evaluating runs' tags are read in one query.
    if not runs:
        return {}
    records = instance.get_run_records(dg.RunsFilter(run_ids=list(runs)))
    return {
        record.dagster_run.run_id: {names.INCIDENT_TAG: record.dagster_run.tags[names.INCIDENT_TAG]}
        for record in records
        if names.INCIDENT_TAG in record.dagster_run.tags
    }


def _latest(
    instance: dg.DagsterInstance, key: dg.AssetKey, partitions: Sequence[str | None], count: int
) -> dict[str | None, list[dg.EventLogRecord]]:
    found: dict[str | None, list[dg.EventLogRecord]] = {p: [] for p in partitions}
    if not count:
        return found
    if None in found:  # the whole asset: its latest, whichever partition
        found[None] = list(instance.fetch_materializations(key, limit=count).records)
    # NOTE: the partitions still short of `count` are read together, newest first, a page of
    # `count` records each at a time: a range costs about one query, and a partition never
    # materialized ends the reading of its own records at once.
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


_Marks = Mapping[tuple[str, str | None], tuple[float, bool]]
"""The latest incident mark by (run, partition; None: all the run's), with when it was set."""


def _run_marks(
    instance: dg.DagsterInstance, key: dg.AssetKey, runs: Collection[str], after: float
) -> _Marks:
    # NOTE: a mark is an observation reported after the run it marks, so the marks of the points
    # read are all newer than the oldest of them: only those are read, oldest first, so a later
    # mark (or its clearing) replaces an earlier one.
    marks: dict[tuple[str, str | None], tuple[float, bool]] = {}
    cursor = None
    while True:
        page = instance.fetch_observations(
            dg.AssetRecordsFilter(asset_key=key, after_timestamp=after),
            limit=_MARKS_PAGE,
            cursor=cursor,
            ascending=True,
        )
        for record in page.records:
            observation = record.asset_observation
            metadata = observation.metadata if observation is not None else {}
            if names.INCIDENT_RUN not in metadata or names.INCIDENT not in metadata:
                continue
            run = str(metadata[names.INCIDENT_RUN].value)
            if run in runs:
                marked = bool(metadata[names.INCIDENT].value)
                marks[(run, record.partition_key)] = (record.timestamp, marked)
        if not page.has_more:
            return marks
        cursor = page.cursor


def _mark(marks: _Marks, run_id: str, partition: str | None) -> dict[str, str]:
    # NOTE: a mark of the partition and one of the whole run may both exist: the later decides.
    found = [m for m in (marks.get((run_id, partition)), marks.get((run_id, None))) if m]
    if not found:
        return {}
    return {names.INCIDENT_TAG: "true" if max(found)[1] else "false"}


def _points(
    records: Sequence[dg.EventLogRecord], series: Series, marks: _Marks
) -> tuple[Point, ...]:
    return tuple(
        Point(
            materialization.metadata[series.key].value,
            record.partition_key,
            record.run_id,
            record.timestamp,
            {**(materialization.tags or {}), **_mark(marks, record.run_id, record.partition_key)},
        )
        for record in records[: series.window]
        if (materialization := record.asset_materialization) is not None
        and series.key in materialization.metadata
    )

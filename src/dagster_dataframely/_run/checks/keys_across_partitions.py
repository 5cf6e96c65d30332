"""`keys_across_partitions=True`: the keys stored in more than one partition, after the write.

Dataframely holds a key unique within the frame it is given, so a partitioned asset's key is
unique inside each partition only. This reads every stored partition's key columns and groups
them on the streaming engine (on DuckDB, in one query), so memory grows with the distinct keys,
never with the table's width. A partition without a key column, or without a value in it, takes
no part in that key's check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import dagster as dg
import polars as pl

from dagster_dataframely._model import names
from dagster_dataframely._model.schema import SchemaInfo
from dagster_dataframely._model.shown_values import ShownValues, cut_text
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely._store.manager_kinds.manager_kind import PARTITIONS as _PARTITIONS
from dagster_dataframely._store.step_storage import stored_table
from dagster_dataframely.errors import InvalidArgumentsError, ValidationFailedError

from .history import Series
from .kind import DeclaredCheck, Judged, Reported, Target, When
from .tables import Cell, table_records


def key_sets(info: SchemaInfo) -> tuple[tuple[str, ...], ...]:
    """The keys the check holds unique: the primary key, then each other `unique=` column."""
    keys = [info.primary_key] if info.primary_key else []
    keys += [(name,) for name in sorted(info.distinct_columns) if (name,) != info.primary_key]
    return tuple(keys)


@dataclass(frozen=True, slots=True)
class RepeatedKeys:
    """One key's repeats across partitions: how many keys, where, and a masked sample."""

    key: tuple[str, ...]
    count: int
    """How many distinct keys are stored in more than one partition."""
    partitions: tuple[str, ...]
    """The partitions holding at least one such key, sorted."""
    samples: tuple[dict[str, Cell], ...]
    """Some repeated keys with their partitions, each cell as a sample table shows it (null,
    hex, JSON, cut, sensitive columns masked); none without rows."""


def repeated_in_frames(
    partitions: Mapping[str, pl.LazyFrame], key: Sequence[str], shown: ShownValues, max_samples: int
) -> RepeatedKeys:
    """The keys in more than one of `partitions` (each a lazy scan of one stored partition).

    Two streaming passes that hold only the key columns and a number: every key's lowest and
    highest partition number (a key in one partition has them equal, however often it
    repeats there), then, for the few keys whose differ, the partitions holding them. A null
    is a key value as any other, as in Dataframely's `unique` and `primary_key` rules, but a
    partition with no value in a key column takes no part (`_without_valueless`).
    """
    columns = list(key)
    names = sorted(partitions)  # numbered in name order, so sorted numbers are sorted names
    numbered = [
        partitions[name].select(columns).with_columns(pl.lit(index, pl.UInt32).alias(_PARTITIONS))
        for index, name in enumerate(names)
    ]
    if not numbered:
        return RepeatedKeys(tuple(key), 0, (), ())
    stored = pl.concat(numbered, how="vertical_relaxed")
    spread = pl.col(_PARTITIONS)
    repeated = (
        stored.group_by(columns)
        .agg(spread.min().alias("low"), spread.max().alias("high"))
        .filter(pl.col("low") != pl.col("high"))
        .select(columns)
        .collect(engine="streaming")
    )
    grouped = (
        stored.join(repeated.lazy(), on=columns, how="semi", nulls_equal=True)
        .unique()
        .group_by(columns)
        .agg(spread.sort())
        .collect(engine="streaming")
    )
    grouped = _without_valueless(grouped, numbered, columns).with_columns(
        spread.list.eval(pl.element().replace_strict(range(len(names)), names))
    )
    return repeated_keys_of(grouped, tuple(key), shown, max_samples)


def _without_valueless(
    grouped: pl.DataFrame, numbered: Sequence[pl.LazyFrame], columns: list[str]
) -> pl.DataFrame:
    # NOTE: a partition with no value in a key column (a parquet file written with it all null; in
    # DuckDB, one stored before it was added) takes no part, so that both managers agree. Only the
    # repeated keys with a null can be such a partition's, so only their partitions are read again:
    # none in the usual case.
    spread = pl.col(_PARTITIONS)
    with_null = pl.any_horizontal(pl.col(c).is_null() for c in columns)
    nulled = grouped.filter(with_null)
    if nulled.is_empty():
        return grouped
    suspects = sorted({p for parts in nulled.get_column(_PARTITIONS).to_list() for p in parts})
    valued = (
        pl.concat([numbered[p] for p in suspects], how="vertical_relaxed")
        .group_by(_PARTITIONS)
        .agg(pl.all_horizontal(pl.col(c).is_not_null().any() for c in columns).alias("valued"))
        .filter(pl.col("valued"))
        .collect(engine="streaming")
        .get_column(_PARTITIONS)
        .to_list()
    )
    kept = nulled.with_columns(spread.list.eval(pl.element().filter(pl.element().is_in(valued))))
    return pl.concat([grouped.filter(~with_null), kept.filter(spread.list.len() > 1)])


def repeated_keys_of(
    grouped: pl.DataFrame, key: tuple[str, ...], shown: ShownValues, max_samples: int
) -> RepeatedKeys:
    """The report of `grouped`: one row per repeated key, its partitions as a sorted list.

    The sample's cells are those of every other sample (`table_records`): a null stays null, a
    binary key shows hex, a nested one JSON, a sensitive column `MASK`, and every text, the
    list of partitions too, is cut at `CELL_LIMIT` characters.
    """
    partitions = sorted(
        {str(p) for parts in grouped.get_column(_PARTITIONS).to_list() for p in parts}
    )
    samples: tuple[dict[str, Cell], ...] = ()
    if shown.rows and max_samples > 0:
        sampled = (
            grouped.sort(_PARTITIONS, *key)
            .head(max_samples)
            .select(*key, pl.col(_PARTITIONS).list.join(", "))
        )
        records, _ = table_records(sampled, shown.masked)
        samples = tuple(dict(record.data) for record in records)
    return RepeatedKeys(key, grouped.height, tuple(partitions), samples)


@dataclass(frozen=True, slots=True)
class StoredKeys:
    """The repeats of every key the check holds unique, or why the stored table was not read."""

    reports: tuple[RepeatedKeys, ...] = ()
    not_read: str | None = None
    """`NOT_EVALUATED` in a direct call (the check passes), `UNREADABLE` on a manager this
    check cannot read (it warns)."""
    fails_run: ClassVar[bool] = False

    def error(self, output: ValidatedOutput, address: str | None) -> ValidationFailedError | None:
        return None


class KeysAcrossPartitions:
    """`keys_across_partitions=True`: one check of the whole table, after the run's write."""

    name = "keys_across_partitions"
    when = When.AFTER_WRITE

    def declare(self, target: Target) -> list[DeclaredCheck]:
        """The one table-wide check, not per partition.

        Raises
        ------
        InvalidArgumentsError
            The asset is not partitioned, or its schema has no primary key and no `unique=`
            column.
        """
        if not target.keys_across_partitions:
            return []
        shown = target.key.to_user_string()
        if target.partitions_def is None:
            raise InvalidArgumentsError(
                shown,
                "`keys_across_partitions=True` checks keys across partitions, and the asset has "
                "none",
                "Give the asset a partitions_def, or leave keys_across_partitions out.",
            )
        keys = key_sets(target.info)
        if not keys:
            raise InvalidArgumentsError(
                shown,
                f"`keys_across_partitions=True` needs a key, and schema {target.info.name} has no "
                "primary key and no `unique=True` column",
                "Mark the key columns primary_key=True (or unique=True), or leave "
                "keys_across_partitions out.",
            )
        listed = "; ".join(", ".join(key) for key in keys)
        return [
            DeclaredCheck(
                names.KEYS_ACROSS_PARTITIONS_CHECK,
                f"No key ({listed}) is stored in more than one partition.",
                per_partition=False,
            )
        ]

    def series(self, output: ValidatedOutput) -> tuple[Series, ...]:
        return ()

    def judge(self, judged: Judged) -> StoredKeys | None:
        output, partitions_def = judged.output, judged.partitions_def
        if not output.keys_across_partitions or partitions_def is None:
            return None
        # NOTE: a direct call stores nothing, so there the check passes unevaluated: a test of
        # the asset's rows is not failed by it.
        stored = stored_table(judged.context, output.key)
        if stored is None:
            return StoredKeys(not_read=NOT_EVALUATED)
        kind, output_context = stored.kind, stored.context
        instance = judged.context.instance
        shown, samples = output.shown_values, output.settings.max_failure_samples
        reports: list[RepeatedKeys] = []
        files = None
        for key in key_sets(output.info):
            grouped = kind.repeated_keys(output_context, key, instance)
            if grouped is not None:
                reports.append(repeated_keys_of(grouped, key, shown, samples))
                continue
            if files is None:
                files = kind.stored_partitions(output_context, partitions_def, instance)
            if files is None:
                return StoredKeys(not_read=UNREADABLE)
            # NOTE: a partition stored before a key column was added takes no part in its check.
            scans = {
                name: partition.scan.select(key)
                for name, partition in files.items()
                if partition.columns.issuperset(key)
            }
            reports.append(repeated_in_frames(scans, key, shown, samples))
        return StoredKeys(tuple(reports))

    def results(self, verdict: StoredKeys | None, reported: Reported) -> list[dg.AssetCheckResult]:
        if verdict is None:
            return []
        key = reported.output.key
        if verdict.not_read is None:
            return [_result(key, verdict.reports)]
        # NOTE: unevaluated in a direct call, it passes; unreadable, it warns.
        passed = verdict.not_read == NOT_EVALUATED
        severity = dg.AssetCheckSeverity.ERROR if passed else dg.AssetCheckSeverity.WARN
        return [
            dg.AssetCheckResult(
                check_name=names.KEYS_ACROSS_PARTITIONS_CHECK,
                asset_key=key,
                passed=passed,
                severity=severity,
                description=verdict.not_read,
            )
        ]


KEYS_ACROSS_PARTITIONS = KeysAcrossPartitions()


LISTED_PARTITIONS = 100
"""The most partitions `dy_repeated_key_partitions` lists, the first in sorted order;
`dy_repeated_key_partition_count` counts them all."""


NOT_EVALUATED = (
    "Not evaluated: a direct call stores no partition, and this check reads the partitions a "
    "run has stored."
)
"""The check's description in a direct call (`dd.testing.call_asset` or the function called
with a context), where it passes without reading anything."""

UNREADABLE = (
    "The IO manager stores the table where this check cannot read it: only dagster-polars' path "
    "managers and DuckDB's are read."
)


def _result(asset_key: dg.AssetKey, reports: Sequence[RepeatedKeys]) -> dg.AssetCheckResult:
    count = sum(report.count for report in reports)
    partitions = sorted({p for report in reports for p in report.partitions})
    samples = [sample for report in reports for sample in report.samples]
    metadata: dict[str, Any] = {
        names.REPEATED_KEYS: dg.MetadataValue.int(count),
        # NOTE: the list is bounded, as every value of an event is, never by the data: a key in
        # each of 60,000 hourly partitions would otherwise put a megabyte in one event.
        names.REPEATED_KEY_PARTITIONS: dg.MetadataValue.json(partitions[:LISTED_PARTITIONS]),
        names.REPEATED_KEY_PARTITION_COUNT: dg.MetadataValue.int(len(partitions)),
    }
    if samples:
        metadata[names.REPEATED_KEY_SAMPLE] = dg.MetadataValue.json(samples)
    description = "Every key is stored in one partition only."
    if count:
        # NOTE: cut as a sample's cell is: a key in a year of daily partitions names 365.
        description = (
            f"{count} key(s) stored in more than one partition, in partitions "
            f"{cut_text(', '.join(partitions))}."
        )
    return dg.AssetCheckResult(
        check_name=names.KEYS_ACROSS_PARTITIONS_CHECK,
        asset_key=asset_key,
        passed=count == 0,
        metadata=metadata,
        description=description,
    )

"""Which keys of a partitioned table repeat across its stored partitions, read lazily.

Dataframely validates a primary key (and `unique=` columns) within the frame it is given, so
a partitioned asset's key is unique inside each partition only. This reads the key columns of
every stored partition, each partition's distinct keys once, and groups them on the streaming
engine, so memory grows with the number of distinct keys, never with the table's width; on
DuckDB one query does the same inside the database. A key repeated inside one partition is the
per-partition rule's business and is not counted here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model import names
from dagster_dataframely._model.schema import SchemaInfo
from dagster_dataframely._model.shown_values import MASK, ShownValues, cut_text
from dagster_dataframely._store.stored_keys import PARTITIONS as _PARTITIONS
from dagster_dataframely._store.stored_keys import (
    repeated_in_duckdb,
    stored_partition_scans,
    stored_table,
)

from .validated_output import ValidatedOutput


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
    samples: tuple[dict[str, str], ...]
    """Some repeated keys with their partitions; sensitive columns masked, none without rows."""


def repeated_in_frames(
    partitions: Mapping[str, pl.LazyFrame],
    key: Sequence[str],
    shown: ShownValues,
    max_samples: int,
) -> RepeatedKeys:
    """The keys in more than one of `partitions` (each a lazy scan of one stored partition).

    Two streaming passes: every key's lowest and highest partition number (a key in one
    partition has them equal, however often it repeats there), then, for the few keys whose
    differ, the partitions holding them. Only the key columns and a number are held.
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
        .with_columns(spread.list.eval(pl.element().replace_strict(range(len(names)), names)))
    )
    return repeated_keys_of(grouped, tuple(key), shown, max_samples)


def repeated_keys_of(
    grouped: pl.DataFrame, key: tuple[str, ...], shown: ShownValues, max_samples: int
) -> RepeatedKeys:
    """The report of `grouped`: one row per repeated key, its partitions as a sorted list."""
    partitions = sorted(
        {str(p) for parts in grouped.get_column(_PARTITIONS).to_list() for p in parts}
    )
    samples: list[dict[str, str]] = []
    if shown.rows and max_samples > 0:
        for row in grouped.sort(_PARTITIONS, *key).head(max_samples).iter_rows(named=True):
            sample = {
                column: MASK if column in shown.masked else cut_text(str(row[column]))
                for column in key
            }
            sample[_PARTITIONS] = ", ".join(str(p) for p in row[_PARTITIONS])
            samples.append(sample)
    return RepeatedKeys(key, grouped.height, tuple(partitions), tuple(samples))


def keys_check_result(
    context: Any, output: ValidatedOutput, partitions_def: dg.PartitionsDefinition[str]
) -> dg.AssetCheckResult | None:
    """The table-wide key check of `output`, from its stored partitions after this run's write.

    None in a direct call, which stores nothing. On a manager that is neither a path manager
    of dagster-polars' nor DuckDB's, the check warns that it could not read the table.
    """
    stored = stored_table(context, output.key)
    if stored is None:
        return None
    shown = output.shown_values
    samples = output.settings.max_failure_samples
    reports: list[RepeatedKeys] = []
    for key in key_sets(output.info):
        scans = None
        grouped = repeated_in_duckdb(*stored, key, context.instance)
        if grouped is None:
            scans = stored_partition_scans(
                stored[0], output.key, partitions_def, context.instance, key
            )
        if grouped is not None:
            reports.append(repeated_keys_of(grouped, key, shown, samples))
        elif scans is not None:
            reports.append(repeated_in_frames(scans, key, shown, samples))
        else:
            return dg.AssetCheckResult(
                check_name=names.KEYS_ACROSS_PARTITIONS_CHECK,
                asset_key=output.key,
                passed=False,
                severity=dg.AssetCheckSeverity.WARN,
                description="The IO manager stores the table where this check cannot read it: "
                "only dagster-polars' path managers and DuckDB's are read.",
            )
    return _result(output.key, reports)


def _result(asset_key: dg.AssetKey, reports: Sequence[RepeatedKeys]) -> dg.AssetCheckResult:
    """One check result for every key the check holds unique."""
    count = sum(report.count for report in reports)
    partitions = sorted({p for report in reports for p in report.partitions})
    samples = [sample for report in reports for sample in report.samples]
    metadata: dict[str, Any] = {
        names.REPEATED_KEYS: dg.MetadataValue.int(count),
        names.REPEATED_KEY_PARTITIONS: dg.MetadataValue.json(partitions),
    }
    if samples:
        metadata[names.REPEATED_KEY_SAMPLE] = dg.MetadataValue.json(samples)
    description = "Every key is stored in one partition only."
    if count:
        description = (
            f"{count} key(s) stored in more than one partition, in partitions "
            f"{', '.join(partitions)}."
        )
    return dg.AssetCheckResult(
        check_name=names.KEYS_ACROSS_PARTITIONS_CHECK,
        asset_key=asset_key,
        passed=count == 0,
        metadata=metadata,
        description=description,
    )

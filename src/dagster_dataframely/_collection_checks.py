"""`dd.table_checks` for a Collection: each member's checks, filters included, on stored tables.

The members' tables already exist (written by plain assets, dbt, another tool), one asset per
member. One `@dg.multi_asset_check` loads every member through its own IO manager, splits them
with one `Collection.filter` exactly as `dd.collection_asset` would, and reports each member's
checks: its rule checks and one `dy_filter__<name>` check per filter that constrains it. It
only reads: no row is written, moved or quarantined.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import dagster as dg

from ._checks import (
    asset_check_specs,
    check_groups,
    check_results_for,
    column_schema_failure,
    column_schema_passed,
    partition_metadata,
)
from ._collection import CollectionInfo, split_collection
from ._failures import Failures
from ._settings import Settings
from .errors import CollectionMemberMissingError, ColumnSchemaError, UnknownCollectionMemberError

AssetLike = dg.AssetsDefinition | dg.AssetSpec | dg.AssetKey | str | Sequence[str]


def collection_table_checks(
    info: CollectionInfo,
    assets: Mapping[str, AssetLike],
    targets: Mapping[str, tuple[dg.AssetKey, dg.PartitionsDefinition[str] | None]],
    *,
    settings: Settings,
    severity: dg.AssetCheckSeverity,
    table_type: dg.DagsterType,
    name: str | None,
) -> dg.AssetChecksDefinition:
    """One multi-asset check over every member's stored table; `targets` are their keys.

    Raises
    ------
    UnknownCollectionMemberError
        `assets` names a member the Collection does not have.
    CollectionMemberMissingError
        A required member has no asset.
    dagster.DagsterInvariantViolationError
        The members' assets do not share one partitions definition.
    """
    unknown = [member for member in assets if member not in info.members]
    if unknown:
        raise UnknownCollectionMemberError(info.name, unknown, list(info.members))
    missing = [m for m, member in info.members.items() if m not in assets and not member.optional]
    if missing:
        raise CollectionMemberMissingError(info.name, missing)
    partitions: list[dg.PartitionsDefinition[str] | None] = []
    for _, member_partitions in targets.values():
        if member_partitions not in partitions:  # equal definitions are one
            partitions.append(member_partitions)
    if len(partitions) > 1:
        raise dg.DagsterInvariantViolationError(
            f"table_checks of the Collection {info.name} checks its members together, one "
            "partition at a time, so every member's asset needs the same partitions_def."
        )
    (partitions_def,) = partitions
    specs = [
        spec
        for member, (key, _) in targets.items()
        for spec in asset_check_specs(
            info.members[member].info,
            asset=key,
            check_granularity=settings.check_granularity,
            schema_rules=settings.schema_rules,
            partitions_def=partitions_def,
        )
    ]

    def check_members(
        context: dg.AssetCheckExecutionContext, **tables: Any
    ) -> Iterator[dg.AssetCheckResult]:
        partition_key = str(context.partition_key) if context.has_partition_key else None
        yield from member_check_results(
            info, tables, targets, settings, severity, partition_metadata(partition_key)
        )

    # Dagster matches inputs to parameters by name, and the IO manager learns from each
    # parameter's annotation which frame type to load.
    check_members.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(
                "context",
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                annotation=dg.AssetCheckExecutionContext,
            ),
            *(
                inspect.Parameter(
                    member, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=table_type
                )
                for member in targets
            ),
        ],
        return_annotation=Iterator[dg.AssetCheckResult],
    )
    return dg.multi_asset_check(
        specs=specs,
        name=name or f"{info.name.lower()}__dataframely_checks",
        description=f"{info.name}'s checks on the stored tables of its members.",
        ins={member: dg.AssetIn(key=key) for member, (key, _) in targets.items()},
    )(check_members)


def member_check_results(
    info: CollectionInfo,
    tables: Mapping[str, object],
    targets: Mapping[str, tuple[dg.AssetKey, dg.PartitionsDefinition[str] | None]],
    settings: Settings,
    severity: dg.AssetCheckSeverity,
    extra: Mapping[str, Any],
) -> Iterator[dg.AssetCheckResult]:
    """Every member's check results from one joint split; a column mismatch runs no rule."""
    split = split_collection(info, tables)
    if split.problems:
        for member, (key, _) in targets.items():
            problems = split.problems.get(member)
            yield (
                column_schema_failure(key, problems, extra)
                if problems
                else column_schema_passed(key, extra)
            )
        member, problems = next(iter(split.problems.items()))
        raise ColumnSchemaError(info.members[member].info.schema.__name__, problems)
    for member, (key, _) in targets.items():
        member_info = info.members[member].info
        rows = split.splits.get(member)
        yield from check_results_for(
            check_groups(member_info, settings.check_granularity, settings.schema_rules),
            rows.failures if rows is not None else Failures.none(member_info),
            asset_key=key,
            severity=severity,
            max_failure_samples=settings.max_failure_samples,
            extra_metadata=extra,
        )

"""The check definitions of `dd.table_checks`: a schema's checks on tables stored already.

A team adopting the package has tables written by plain assets, dbt models or tools outside
Dagster. These checks give such a table the same checks `dd.asset` declares (same names,
descriptions and metadata), computed from the stored table as the asset's IO manager loads it;
for a Collection, one check definition loads every member and splits them together. They only
read: no row is written, moved or quarantined.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model.collection import CollectionInfo
from dagster_dataframely._model.keys import coerce_asset_key
from dagster_dataframely._model.schema import SchemaInfo
from dagster_dataframely._model.settings import Settings
from dagster_dataframely._run.stored_tables import stored_members_results, stored_table_results
from dagster_dataframely.errors import InvalidArgumentsError, UnknownCollectionMemberError

from .check_specs import declared_check_specs

TABLE_INPUT = "table"
"""The check op's one input: the stored table, loaded by the asset's IO manager."""


def _is_frame(_: dg.TypeCheckContext, value: object) -> dg.TypeCheck:
    # NOTE: only a Polars frame: a check over a pandas frame or a dict would fail obscurely.
    if isinstance(value, pl.DataFrame | pl.LazyFrame):
        return dg.TypeCheck(success=True)
    return dg.TypeCheck(
        success=False,
        description=(
            f"The IO manager loaded a {type(value).__name__}, not a Polars frame: table_checks "
            "needs an IO manager that stores the table as a Polars DataFrame or LazyFrame. "
            "For a partitioned asset, run the checks for one partition."
        ),
    )


def _table_type(frame_type: type) -> dg.DagsterType:
    # NOTE: dagster-polars reads `typing_type` and scans lazily for a `pl.LazyFrame`; a manager that
    # ignores it (Dagster's pickling ones) hands back the `pl.DataFrame` it stored, which the rules
    # check as well.
    return dg.DagsterType(
        type_check_fn=_is_frame,
        name=f"Stored{frame_type.__name__}",
        description=f"A stored table, loaded as a {frame_type.__name__} where the IO manager can.",
        typing_type=frame_type,
    )


LAZY_TABLE = _table_type(pl.LazyFrame)
EAGER_TABLE = _table_type(pl.DataFrame)


def schema_table_checks(
    info: SchemaInfo,
    key: dg.AssetKey,
    partitions_def: dg.PartitionsDefinition[str] | None,
    *,
    settings: Settings,
    severity: dg.AssetCheckSeverity,
    table_type: dg.DagsterType,
    name: str | None,
) -> dg.AssetChecksDefinition:
    """One multi-asset check whose input is the asset's stored table, loaded by its IO manager."""
    specs = declared_check_specs(info, asset=key, settings=settings, partitions_def=partitions_def)

    def check_table(
        context: dg.AssetCheckExecutionContext, table: pl.DataFrame | pl.LazyFrame
    ) -> Iterator[dg.AssetCheckResult]:
        # Named on each result (`dy_partition`) as `dd.asset` names it, when the run has one.
        partition_key = str(context.partition_key) if context.has_partition_key else None
        yield from stored_table_results(
            info, settings, table, key, severity, partition_key, context
        )

    # The annotation is how an IO manager learns which frame type to load.
    check_table.__annotations__ = {
        "context": dg.AssetCheckExecutionContext,
        TABLE_INPUT: table_type,
        "return": Iterator[dg.AssetCheckResult],
    }
    return dg.multi_asset_check(
        specs=specs,
        name=name or f"{key.to_python_identifier()}__dataframely_checks",
        description=f"{info.name}'s checks on the stored table of {key.to_user_string()}.",
        ins={TABLE_INPUT: dg.AssetIn(key=key)},
    )(check_table)


def collection_table_checks(
    info: CollectionInfo,
    targets: Mapping[str, tuple[dg.AssetKey, dg.PartitionsDefinition[str] | None]],
    *,
    settings: Mapping[str, Settings],
    severity: dg.AssetCheckSeverity,
    table_type: dg.DagsterType,
    name: str | None,
) -> dg.AssetChecksDefinition:
    """One multi-asset check over every member's stored table; `targets` are their keys.

    `settings` are each member's, by member name (its quality policy is its own).

    Raises
    ------
    UnknownCollectionMemberError
        `targets` names a member the Collection does not have.
    InvalidArgumentsError
        A required member has no asset, two members share one asset, or the members' assets
        do not share one partitions definition.
    """
    unknown = [member for member in targets if member not in info.members]
    if unknown:
        raise UnknownCollectionMemberError(info.name, unknown, list(info.members))
    missing = [m for m, member in info.members.items() if m not in targets and not member.optional]
    if missing:
        raise _refused(
            f"the required {'member' if len(missing) == 1 else 'members'} "
            f"{', '.join(repr(m) for m in missing)} of {info.name} "
            f"{'has' if len(missing) == 1 else 'have'} no asset, and the Collection's filters "
            "need every required member",
            "Map each required member to the asset that stores it.",
        )
    first_member: dict[dg.AssetKey, str] = {}
    for member, (key, _) in targets.items():
        if key in first_member:
            raise _refused(
                f"the members {first_member[key]} and {member} of {info.name} are both mapped "
                f"to the asset {key.to_user_string()!r}, and one stored table cannot be two "
                "members (their checks would share names)",
                "Map each member to the asset that stores its own table.",
            )
        first_member[key] = member
    partitions: list[dg.PartitionsDefinition[str] | None] = []
    for _, member_partitions in targets.values():
        if member_partitions not in partitions:  # equal definitions are one
            partitions.append(member_partitions)
    if len(partitions) > 1:
        raise _refused(
            f"the Collection {info.name}'s members are checked together, one partition at a "
            "time, and their assets have different partitions",
            "Give every member's asset the same partitions_def.",
        )
    (partitions_def,) = partitions
    specs = [
        spec
        for member, (key, _) in targets.items()
        for spec in declared_check_specs(
            info.members[member].info,
            asset=key,
            settings=settings[member],
            partitions_def=partitions_def,
        )
    ]

    def check_members(
        context: dg.AssetCheckExecutionContext, **tables: Any
    ) -> Iterator[dg.AssetCheckResult]:
        partition_key = str(context.partition_key) if context.has_partition_key else None
        keys = {member: key for member, (key, _) in targets.items()}
        yield from stored_members_results(
            info, tables, keys, settings, severity, partition_key, context
        )

    # Dagster matches inputs to parameters by name, and the IO manager learns from each
    # parameter's annotation which frame type to load.
    parameters = [("context", dg.AssetCheckExecutionContext), *((m, table_type) for m in targets)]
    check_members.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=kind)
            for name, kind in parameters
        ],
        return_annotation=Iterator[dg.AssetCheckResult],
    )
    return dg.multi_asset_check(
        specs=specs,
        name=name or f"{info.name.lower()}__dataframely_checks",
        description=f"{info.name}'s checks on the stored tables of its members.",
        ins={member: dg.AssetIn(key=key) for member, (key, _) in targets.items()},
    )(check_members)


def table_target(
    asset: dg.AssetsDefinition | dg.AssetSpec | dg.AssetKey | str | Sequence[str],
    partitions_def: dg.PartitionsDefinition[str] | None,
) -> tuple[dg.AssetKey, dg.PartitionsDefinition[str] | None]:
    """The asset's key and partitions, from a definition, a spec or a key.

    Raises
    ------
    InvalidArgumentsError
        `partitions_def` with a definition or spec, or a definition of several assets.
    """
    if isinstance(asset, dg.AssetsDefinition | dg.AssetSpec):
        if partitions_def is not None:
            raise _refused(
                "it takes the partitions from the asset definition or spec",
                "Pass partitions_def= only together with an asset key.",
            )
        if isinstance(asset, dg.AssetSpec):
            return asset.key, asset.partitions_def
        if len(asset.keys) != 1:
            raise _refused(
                f"it needs one asset, but {asset.node_def.name} defines {len(asset.keys)}",
                "Pass the key of the one to check, e.g. "
                "get_asset_key_for_model([my_dbt_assets], 'orders') for a dbt model.",
            )
        return asset.key, asset.partitions_def
    return coerce_asset_key(asset), partitions_def


def _refused(problem: str, fix: str) -> InvalidArgumentsError:
    return InvalidArgumentsError("table_checks", problem, fix)

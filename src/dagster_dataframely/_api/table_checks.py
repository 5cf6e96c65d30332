"""`dd.table_checks`: a schema's checks on a table that `dd.asset` did not build."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dagster as dg
import dataframely as dy
from typing_extensions import Unpack

from dagster_dataframely._declare.table_check_definitions import (
    EAGER_TABLE,
    LAZY_TABLE,
    collection_table_checks,
    schema_table_checks,
    table_target,
)
from dagster_dataframely._model.asset_settings import OutputSettings
from dagster_dataframely._model.collection import collection_rules, read_collection
from dagster_dataframely._model.schema import read_schema
from dagster_dataframely._model.setting_keywords import checked_settings, with_setting_keywords
from dagster_dataframely._model.setting_model import CheckKeywords, EntryPoint
from dagster_dataframely.errors import InvalidArgumentsError


@with_setting_keywords(
    EntryPoint.TABLE_CHECKS,
    order=(
        "severity",
        "lazy",
        "partitions_def",
        "check_granularity",
        "schema_rules",
        "max_failure_samples",
        "warning_rules",
        "quality_policy",
        "name",
    ),
    notes={
        "warning_rules": "Their checks fail at `WARN` whatever `severity` is. Not taken with "
        "a Collection, as `dd.collection_asset` does not take them.",
        "quality_policy": "What reading a stored table can apply: thresholds (one above its "
        "`fail_above` fails at `ERROR`; nothing is raised), severities and blocking. A "
        "`volume` or `undeclared_columns` check raises `ThresholdNotApplicableError`.",
    },
)
def table_checks(
    schema: type[dy.Schema] | type[dy.Collection],
    asset: dg.AssetsDefinition
    | dg.AssetSpec
    | dg.AssetKey
    | str
    | Sequence[str]
    | Mapping[str, dg.AssetsDefinition | dg.AssetSpec | dg.AssetKey | str | Sequence[str]],
    /,
    *,
    severity: dg.AssetCheckSeverity,
    lazy: bool = True,
    partitions_def: dg.PartitionsDefinition[str] | None = None,
    name: str | None = None,
    **settings: Unpack[CheckKeywords],
) -> dg.AssetChecksDefinition:
    """Return the schema's asset checks on an existing asset, run against its stored table.

    One `@dg.multi_asset_check` declares the column-schema check and one check per rule group,
    exactly as `dd.wiring.check_specs` names and describes them, and reports them as
    `dd.wiring.check_results` does. Its input is the asset itself, so the table is loaded by
    the asset's own IO manager (declared on the asset, or with `AssetSpec.with_io_manager_key`
    for an external one), for a partitioned asset one partition at a time. Add the result to
    `dg.Definitions(asset_checks=[...])`; Dagster runs it after each materialization of the
    asset, and on its own from the asset's Checks tab.

    For a `dy.Collection`, pass a mapping from member name to that member's asset: one check
    definition then loads every member's table, splits them together with one
    `Collection.filter` (as `dd.collection_asset` does; this holds every member's rows in
    memory at once), and reports each member's checks on its own asset: its rule checks and
    one `dy_filter__<name>` check per filter that constrains it (see the documentation's
    "Collections" page). An optional member may be left out of the mapping.

    Parameters
    ----------
    schema
        The Dataframely schema the table should follow, or a `dy.Collection` whose members'
        tables should follow it.
    asset
        The asset whose table to check: its definition (a `@dg.asset`, one key of a
        `@dbt_assets` passed as the key), an external `dg.AssetSpec`, or its key (a key, its
        parts, or its string as Dagster prints it: `"erp/orders"`). For a
        Collection, a mapping from member name to such an asset; every member's asset must
        have the same partitions.
    severity
        The severity of a failing rule check. The column-schema check always fails at
        `ERROR`, and on a mismatch no rule runs.
    lazy
        Load the table as a `pl.LazyFrame` (True), so only what the rules need is read where
        the IO manager supports it (`dagster-polars`' managers), or as a `pl.DataFrame`
        (False), for managers that load only eager frames, such as `DuckDBPolarsIOManager`.
    partitions_def
        The asset's partitions, when `asset` is a key. A definition or spec brings its own.
        With partitions the checks are partitioned too, exactly as `dd.asset` partitions its
        own (Dagster's preview feature, without its warning), each run checks the partition it
        runs for, and each result names it under `dy_partition`.
    name
        The check op's name; by default `<asset key>__dataframely_checks`.

    Returns
    -------
    One `dg.AssetChecksDefinition` holding every check.

    Raises
    ------
    InvalidArgumentsError
        A definition of several assets without a key; `partitions_def` together with a
        definition or spec; a Collection without a mapping of members, or with
        `warning_rules`; a mapping with a schema; two members mapped to one asset; members
        whose assets have different partitions; a `quality_policy` that is not a
        `dd.QualityPolicy`. Also a `dg.DagsterInvariantViolationError`, as before.
    UnknownPolicyRuleError, ThresholdNotApplicableError
        `quality_policy` names a rule the schema lacks, or has a volume or undeclared-columns
        check.
    DagsterDataframelyError
        For a schema or setting this package cannot use.
    """
    checked = checked_settings(EntryPoint.TABLE_CHECKS, settings)
    if isinstance(schema, type) and issubclass(schema, dy.Collection):
        if not isinstance(asset, Mapping) or checked.get("warning_rules") is not None:
            raise InvalidArgumentsError(
                "table_checks",
                f"the Collection {schema.__name__} takes a mapping from member name to that "
                "member's asset, and no warning_rules",
                "Pass {member: asset, ...} and leave warning_rules out.",
            )
        collection = read_collection(schema)
        given = OutputSettings.of(**checked)
        known = collection_rules(collection)
        return collection_table_checks(
            collection,
            {member: table_target(target, partitions_def) for member, target in asset.items()},
            settings={
                member: given.resolve(
                    collection.members[member].info, known_rules=known, writes=False
                )
                for member in asset
                if member in collection.members
            },
            severity=severity,
            table_type=LAZY_TABLE if lazy else EAGER_TABLE,
            name=name,
        )
    if isinstance(asset, Mapping):
        raise InvalidArgumentsError(
            "table_checks",
            "it takes a mapping of assets only with a dy.Collection",
            "Pass the one asset whose table follows the schema.",
        )
    info = read_schema(schema)
    key, partitions = table_target(asset, partitions_def)
    return schema_table_checks(
        info,
        key,
        partitions,
        settings=OutputSettings.of(**checked).resolve(info, writes=False),
        severity=severity,
        table_type=LAZY_TABLE if lazy else EAGER_TABLE,
        name=name,
    )

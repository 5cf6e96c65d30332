"""`dd.table_checks`: a schema's checks on a table that `dd.asset` did not build.

A team adopting the package has tables written by plain assets, dbt models or tools outside
Dagster. These checks give such a table the same checks `dd.asset` declares (same names,
descriptions and metadata), computed from the stored table as the asset's IO manager loads it.
They only read: no row is written, moved or quarantined.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

import dagster as dg
import dataframely as dy
import polars as pl

from ._checks import asset_check_specs
from ._collection import read_collection
from ._collection_checks import collection_table_checks
from ._schema import read_schema
from ._settings import Granularity, SchemaRules, resolve_settings
from ._validate import resolved_check_results
from ._warnings import with_warning_rules

TABLE_INPUT = "table"
"""The check op's one input: the stored table, loaded by the asset's IO manager."""


def _is_frame(_: dg.TypeCheckContext, value: object) -> dg.TypeCheck:
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
    """What the IO manager is asked for (`typing_type`), accepting either frame when loaded.

    A `dagster-polars` manager reads `typing_type` and scans lazily for `pl.LazyFrame`; a
    manager that ignores it (Dagster's own pickling ones) hands back the `pl.DataFrame` it
    stored, which the rules check just as well.
    """
    return dg.DagsterType(
        type_check_fn=_is_frame,
        name=f"Stored{frame_type.__name__}",
        description=f"A stored table, loaded as a {frame_type.__name__} where the IO manager can.",
        typing_type=frame_type,
    )


LAZY_TABLE = _table_type(pl.LazyFrame)
EAGER_TABLE = _table_type(pl.DataFrame)


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
    check_granularity: Granularity | None = None,
    schema_rules: SchemaRules | None = None,
    max_failure_samples: int | None = None,
    warning_rules: Iterable[str] | None = None,
    name: str | None = None,
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
    one `dy_filter__<name>` check per filter that constrains it (see docs/collections.md). An
    optional member may be left out of the mapping.

    Parameters
    ----------
    schema
        The Dataframely schema the table should follow, or a `dy.Collection` whose members'
        tables should follow it.
    asset
        The asset whose table to check: its definition (a `@dg.asset`, one key of a
        `@dbt_assets` passed as the key), an external `dg.AssetSpec`, or its key. For a
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
    check_granularity, schema_rules, max_failure_samples
        As for `dd.asset`; None falls back to the environment, then the default.
    warning_rules
        As for `dd.asset`: the rules (Dataframely's names) whose checks fail at `WARN`, whatever
        `severity` is; their check descriptions say so before any run. Not taken with a
        Collection, as `dd.collection_asset` does not take them.
    name
        The check op's name; by default `<asset key>__dataframely_checks`.

    Returns
    -------
    One `dg.AssetChecksDefinition` holding every check.

    Raises
    ------
    dagster.DagsterInvariantViolationError
        For a definition of several assets without a key, or `partitions_def` given together
        with a definition or spec.
    dagster_dataframely.errors.DagsterDataframelyError
        For a schema or setting this package cannot use.
    """
    settings = resolve_settings(
        check_granularity=check_granularity,
        schema_rules=schema_rules,
        max_failure_samples=max_failure_samples,
    )
    if isinstance(schema, type) and issubclass(schema, dy.Collection):
        if not isinstance(asset, Mapping) or warning_rules is not None:
            raise dg.DagsterInvariantViolationError(
                f"table_checks of the Collection {schema.__name__} takes a mapping from member "
                "name to that member's asset, and no warning_rules."
            )
        return collection_table_checks(
            read_collection(schema),
            asset,
            {member: _target(target, partitions_def) for member, target in asset.items()},
            settings=settings,
            severity=severity,
            table_type=LAZY_TABLE if lazy else EAGER_TABLE,
            name=name,
        )
    if isinstance(asset, Mapping):
        raise dg.DagsterInvariantViolationError(
            "table_checks takes a mapping of assets only with a dy.Collection; pass the one "
            "asset whose table follows the schema."
        )
    info = read_schema(schema)
    settings = with_warning_rules(settings, info, warning_rules)
    key, partitions = _target(asset, partitions_def)
    specs = asset_check_specs(
        schema,
        asset=key,
        check_granularity=settings.check_granularity,
        schema_rules=settings.schema_rules,
        partitions_def=partitions,
        warning_rules=settings.warning_rules,
    )

    def check_table(
        context: dg.AssetCheckExecutionContext, table: pl.DataFrame | pl.LazyFrame
    ) -> Iterator[dg.AssetCheckResult]:
        # Named on each result (`dy_partition`) as `dd.asset` names it, when the run has one.
        partition_key = str(context.partition_key) if context.has_partition_key else None
        yield from resolved_check_results(info, settings, table, key, severity, partition_key)

    # The annotation is how an IO manager learns which frame type to load.
    check_table.__annotations__ = {
        "context": dg.AssetCheckExecutionContext,
        TABLE_INPUT: LAZY_TABLE if lazy else EAGER_TABLE,
        "return": Iterator[dg.AssetCheckResult],
    }
    return dg.multi_asset_check(
        specs=specs,
        name=name or f"{key.to_python_identifier()}__dataframely_checks",
        description=f"{info.name}'s checks on the stored table of {key.to_user_string()}.",
        ins={TABLE_INPUT: dg.AssetIn(key=key)},
    )(check_table)


def _target(
    asset: dg.AssetsDefinition | dg.AssetSpec | dg.AssetKey | str | Sequence[str],
    partitions_def: dg.PartitionsDefinition[str] | None,
) -> tuple[dg.AssetKey, dg.PartitionsDefinition[str] | None]:
    """The asset's key and partitions, from a definition, a spec or a key."""
    if isinstance(asset, dg.AssetsDefinition | dg.AssetSpec):
        if partitions_def is not None:
            raise dg.DagsterInvariantViolationError(
                "table_checks takes the partitions from the asset definition or spec; pass "
                "partitions_def= only together with an asset key."
            )
        if isinstance(asset, dg.AssetSpec):
            return asset.key, asset.partitions_def
        if len(asset.keys) != 1:
            raise dg.DagsterInvariantViolationError(
                f"table_checks needs one asset, but {asset.node_def.name} defines "
                f"{len(asset.keys)}. Pass the key of the one to check, e.g. "
                "get_asset_key_for_model([my_dbt_assets], 'orders') for a dbt model."
            )
        return asset.key, asset.partitions_def
    return dg.AssetKey.from_coercible(asset), partitions_def

"""The quarantine: the frame every writer receives, and the writers that run inside a step."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
from dataframely import FailureInfo

from . import _names
from ._collection import read_collection
from ._columns import quarantine_table_schema
from ._concurrent_runs import check_no_concurrent_run
from ._failures import Failures
from ._io_manager import write_through
from ._observations import quarantine_observation
from ._quarantine_files import QuarantineWriter
from ._schema import SchemaInfo, read_schema
from ._storage_slots import check_quarantine_storage
from ._upstream import (
    DagsterInvalidPropertyError,
    output_context_for,
    output_io_manager,
    running_step,
    source_graph_has,
    source_graph_materializable_keys,
    step_output,
)
from .errors import (
    MultiAssetKeyError,
    QuarantineKeyCollisionError,
    QuarantineStorageCollisionError,
    UnknownCollectionMemberError,
)


def quarantine_frame(schema: type[dy.Schema], failure: FailureInfo) -> pl.DataFrame:
    """Return the invalid rows as a writer receives them, with one rule column per rule.

    For an asset that runs `Schema.filter` itself and wants to write the same quarantine frame
    `dd.asset` would.

    Parameters
    ----------
    schema
        The schema whose `filter` produced `failure`.
    failure
        The failure side of `schema.filter(frame, cast=False)`.

    Returns
    -------
    pl.DataFrame
        The original columns in their own order, then a `String` rule column for every rule,
        named by `check_name`. A rule column's value is `valid`, `invalid` or `unknown`.

    Raises
    ------
    ReservedColumnError
        A column name is in the reserved `dy_` namespace.
    InvalidColumnNameError
        A column name has a character Dagster does not allow in an asset check name.
    InvalidRuleNameError
        A `check=` key has a character Dagster does not allow in an asset check name.
    CheckNameCollisionError
        Two rules produce the same asset check name.

    Examples
    --------
    ```python
    import dataframely as dy
    import polars as pl

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        order_id = dy.String(primary_key=True)
        amount = dy.Float64(min=0.0)


    frame = pl.DataFrame({"order_id": ["A-1", "A-2"], "amount": [12.5, -3.0]})
    _, failure = Orders.filter(frame, cast=False)
    quarantine = dd.wiring.quarantine_frame(Orders, failure)
    print(quarantine)
    assert quarantine["dy_rule__amount__min"].to_list() == ["invalid"]
    ```
    """
    return Failures.from_failure_info(read_schema(schema), failure).quarantine_frame


def delegating_writer(
    context: dg.AssetExecutionContext, asset_key: dg.AssetKey | None = None
) -> QuarantineWriter:
    """Return a writer that hands the invalid rows to the asset's own IO manager.

    The manager receives a copy of the step's output context with only the asset key changed to
    `<name>_quarantine`, so it stores the rows as it stores any asset of that key: partition key,
    definition metadata (a database manager's `partition_expr`) and resource config all carry
    over. `PolarsParquetIOManager` writes a parquet file beside the table, and
    `DuckDBPolarsIOManager` a table beside it. Whatever metadata the manager records for this
    write is discarded, because the quarantine has no materialization.
    When the quarantine is in the asset graph (`quarantine_spec`), each write is logged as an
    observation of its key instead: row count, address, partition and run.

    In a run it first checks, before anything is written, that the quarantine has a place of
    its own (`QuarantineStorageError`, `UnsafePathKeyError`) and that no other run is writing
    the same partition of the asset (`ConcurrentRunError`).

    Parameters
    ----------
    context
        The running asset's context.
    asset_key
        The asset whose invalid rows the writer stores, one of the step's own assets: the
        output of a multi-asset whose IO manager, partition and metadata the quarantine
        takes. `None` means the asset definition's only asset, as a `@dg.asset` has.

    Returns
    -------
    QuarantineWriter
        A writer that takes the invalid rows and returns the quarantine's address: the
        location `QuarantineAwareIOManager` reports, else the quarantine's asset key as a
        string.

    Raises
    ------
    dagster._core.errors.DagsterInvalidPropertyError
        There is no step, which means a direct invocation. Use `file_writer` there.
    MultiAssetKeyError
        `asset_key` is None and the context's asset definition has more than one asset, or
        `asset_key` is not one of the definition's assets.
    QuarantineStorageError
        The IO manager would store the quarantine where the table goes, outside its own base
        directory, or by step output rather than by asset key.
    UnsafePathKeyError
        A path-based IO manager cannot hold the asset or partition key as a path as it is.
    ConcurrentRunError
        Another run is writing the same partition of the asset.
    """
    step = running_step(context)
    key = definition_asset_key(context.assets_def, asset_key)
    assets_def = context.assets_def
    handle = step_output(step, assets_def.get_output_name_for_asset_key(key))
    target = _names.quarantine_key(key)
    table_output = output_context_for(handle, key)
    check_quarantine_storage(
        key, output_io_manager(handle), table_output, output_context_for(handle, target)
    )
    check_no_concurrent_run(context.instance, context.run.run_id, key, step.step.key, table_output)

    def write(frame: pl.DataFrame) -> str:
        output = output_context_for(handle, target)  # only the asset key differs from the table's
        io_manager = output_io_manager(handle)
        try:
            write_through(io_manager, output, frame)
        except Exception as error:
            error.add_note(
                f"dagster-dataframely could not write the quarantine {target.to_user_string()!r} "
                f"(the invalid rows of {key.to_user_string()!r}) through "
                f"{type(io_manager).__name__}; the table of {key.to_user_string()!r} was not "
                "written either, so it keeps its previous contents."
            )
            raise
        # A manager that knows the real location (`QuarantineAwareIOManager`) reports it under
        # the package's own key; otherwise the quarantine's asset key is the address.
        reported = output.get_logged_metadata().get(_names.QUARANTINE_ADDRESS)
        address = str(reported.value) if reported is not None else target.to_user_string()
        if source_graph_has(step, target):  # declared with `quarantine_spec`: give it a history
            partition = output.partition_key if output.has_partition_key else None
            observation = quarantine_observation(
                key,
                row_count=frame.height,
                address=address,
                partition_key=partition,
                run_id=context.run.run_id,
            )
            context.log_event(observation)
        return address

    return write


def validate_quarantine_key(
    context: dg.AssetExecutionContext, asset_key: dg.AssetKey | None = None
) -> None:
    """Raise if another asset in the code location already materializes the quarantine's key.

    Both would write to one table or file, and the later write would replace the earlier one.
    For a partitioned asset, an asset whose key extends the quarantine's
    (`["orders_quarantine", "p1"]`) is refused too: a path-based manager would write it among
    the quarantine's partition files. The code location's graph is checked, not the run's: a
    run of a selection collides with an asset it does not run. Call it at the start of a
    hand-wired asset's function when the asset writes a quarantine, as `dd.asset` does. Under
    direct invocation there is no code location to check, so this does nothing.

    Parameters
    ----------
    context
        The running asset's context.
    asset_key
        The asset whose quarantine to check, one of the step's own assets (an output of a
        multi-asset). `None` means the asset definition's only asset, as a `@dg.asset` has.

    Raises
    ------
    MultiAssetKeyError
        `asset_key` is None and the context's asset definition has more than one asset, or
        `asset_key` is not one of the definition's assets.
    QuarantineKeyCollisionError
        Another asset in the code location materializes `<name>_quarantine`.
    QuarantineStorageCollisionError
        The asset is partitioned and another asset's key extends the quarantine's key.
    """
    try:
        step = running_step(context)
    except DagsterInvalidPropertyError:
        return
    # The code location's graph, not the run's: the other asset need not be in the run.
    key = definition_asset_key(context.assets_def, asset_key)
    materialized = source_graph_materializable_keys(step)
    target = _names.quarantine_key(key)
    if target in materialized:
        raise QuarantineKeyCollisionError(key.to_user_string(), target.to_user_string())
    if context.assets_def.partitions_def is None:
        return
    # A path-based manager stores the partitions as files under the quarantine's key: an asset
    # whose key extends it writes among them.
    depth = len(target.path)
    for other in sorted(materialized, key=lambda k: tuple(k.path)):
        if len(other.path) > depth and other.path[:depth] == target.path:
            raise QuarantineStorageCollisionError(
                key.to_user_string(), target.to_user_string(), other.to_user_string()
            )


def definition_asset_key(
    assets_def: dg.AssetsDefinition, asset_key: dg.AssetKey | None
) -> dg.AssetKey:
    """`asset_key` if the definition has it; without one, the definition's only asset.

    Raises
    ------
    MultiAssetKeyError
        No `asset_key` for a definition of several assets, or one it does not have.
    """
    keys = sorted(k.to_user_string() for k in assets_def.keys)
    if asset_key is None:
        if len(assets_def.keys) != 1:
            raise MultiAssetKeyError(assets_def.node_def.name, keys, None)
        only: dg.AssetKey = next(iter(assets_def.keys))
        return only
    if asset_key not in assets_def.keys:
        raise MultiAssetKeyError(assets_def.node_def.name, keys, asset_key.to_user_string())
    return asset_key


def quarantine_spec(
    schema: type[dy.Schema] | type[dy.Collection],
    asset: dg.AssetsDefinition | dg.AssetKey | str | Sequence[str],
    *,
    asset_key: dg.AssetKey | str | Sequence[str] | None = None,
    partitions_def: dg.PartitionsDefinition | None = None,
    group_name: str | None = None,
    owners: Sequence[str] | None = None,
    tags: Mapping[str, str] | None = None,
) -> dg.AssetSpec:
    """Return an asset spec that puts an asset's quarantine in the asset graph.

    The rows are written by the asset's own step whether or not this spec exists; the spec lets
    a downstream asset declare the quarantine as an input and shows it in the lineage, with its
    own Columns tab (the schema's columns without constraints, then one `String` column per
    rule). It never receives a materialization event, because nothing materializes it; in a
    run, each write is recorded as an observation of the spec's key instead. A downstream asset
    reading it should also declare `deps=[asset]`, so that it runs after the step that writes
    the rows.

    Parameters
    ----------
    schema
        The schema the asset validates against; it gives the spec's Columns tab. For a member
        of a `dd.collection_asset`, the `dy.Collection`: the tab then has a column per filter
        that constrains the member too. The member is the output of the definition that has
        the key (`asset_key`), or the last part of the key `asset`.
    asset
        The asset the invalid rows came from, as its definition or its asset key. Pass a key
        only for an asset you cannot import. A definition also gives the spec its partitions
        and the definition metadata its IO manager reads (such as `partition_expr`).
    asset_key
        With a definition of several assets (a `dd.multi_asset`), the key of the output whose
        quarantine this is; `dd.multi_asset` writes one quarantine per output, so each
        output with `quarantine=True` gets its own spec. `None` for a definition of one asset.
    partitions_def
        The quarantine's partitions, when `asset` is a key.
    group_name
        The spec's group. `None` uses the asset definition's, so the quarantine sits in its
        asset's group; with an asset key, no group is set.
    owners
        The spec's owners. `None` uses the asset definition's; with an asset key, none.
    tags
        The spec's tags, merged over the asset definition's (with an asset key, only these).

    Returns
    -------
    dg.AssetSpec
        A spec keyed `<name>_quarantine` that depends on `asset`, to pass to
        `dg.Definitions(assets=[...])`.

    Raises
    ------
    ReservedColumnError
        A column name is in the reserved `dy_` namespace.
    InvalidColumnNameError
        A column name has a character Dagster does not allow in an asset check name.
    InvalidRuleNameError
        A `check=` key has a character Dagster does not allow in an asset check name.
    CheckNameCollisionError
        Two rules produce the same asset check name.
    dg.DagsterInvariantViolationError
        `asset` is a definition and the call also passes `partitions_def`, or `asset` is a
        key and the call also passes `asset_key`.
    MultiAssetKeyError
        `asset` is a definition of several assets and `asset_key` is None, or is not one of
        them.

    Examples
    --------
    ```python
    import dataframely as dy
    import polars as pl

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        order_id = dy.String(primary_key=True)
        amount = dy.Float64(nullable=False, min=0.0)


    @dd.asset(Orders, quarantine=True)
    def orders(raw_orders: pl.DataFrame) -> pl.DataFrame:
        return raw_orders.select("order_id", "amount")


    spec = dd.quarantine_spec(Orders, orders)
    print(spec.key)  # AssetKey(['orders_quarantine'])
    ```

    Pass the spec, not its key, to `dg.Definitions(assets=[...])` with `orders`. A downstream
    asset can then declare `orders_quarantine` as an input.
    """
    carried: dict[str, Any] = {}
    inherited: dict[str, Any] = {}
    if isinstance(asset, dg.AssetsDefinition):
        if partitions_def is not None:
            raise dg.DagsterInvariantViolationError(
                "quarantine_spec takes the partitions from the asset definition; pass "
                "partitions_def= only together with an asset key."
            )
        key = definition_asset_key(
            asset, dg.AssetKey.from_coercible(asset_key) if asset_key is not None else None
        )
        partitions_def = asset.partitions_def
        carried = _io_manager_metadata(asset.metadata_by_key.get(key, {}))
        inherited = {
            "group_name": asset.group_names_by_key.get(key),
            "owners": asset.owners_by_key.get(key),
            "tags": asset.tags_by_key.get(key),
        }
    elif asset_key is not None:
        raise dg.DagsterInvariantViolationError(
            "quarantine_spec takes asset_key= only together with an asset definition; with "
            "an asset key, pass the output's own key as `asset`."
        )
    else:
        key = dg.AssetKey.from_coercible(asset)
    info = _quarantined_schema(schema, asset, key)
    return dg.AssetSpec(
        key=_names.quarantine_key(key),
        deps=[key],
        description=f"Invalid rows from {key.to_user_string()}, with one column per rule.",
        metadata={
            **carried,
            _names.COLUMN_SCHEMA: quarantine_table_schema(info),
            _names.QUARANTINE_OF: key.to_user_string(),
        },
        partitions_def=partitions_def,
        group_name=group_name or inherited.get("group_name"),
        owners=owners if owners is not None else inherited.get("owners"),
        tags={**(inherited.get("tags") or {}), **(tags or {})},
    )


def _quarantined_schema(
    schema: type[dy.Schema] | type[dy.Collection], asset: object, key: dg.AssetKey
) -> SchemaInfo:
    """The schema whose rows the quarantine holds: a Collection member's has its filters.

    Raises
    ------
    UnknownCollectionMemberError
        `schema` is a Collection and `key` is none of its members' assets.
    """
    if not (isinstance(schema, type) and issubclass(schema, dy.Collection)):
        return read_schema(schema)
    collection = read_collection(schema)
    member = (
        asset.get_output_name_for_asset_key(key)
        if isinstance(asset, dg.AssetsDefinition)
        else key.path[-1]
    )
    if member not in collection.members:
        raise UnknownCollectionMemberError(collection.name, [member], list(collection.members))
    return collection.members[member].info


def _io_manager_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The asset's own definition metadata, for the IO manager reading its quarantine.

    The quarantine is written with the asset's definition metadata (a database manager's
    `partition_expr` and `schema`, say), so a read must see the same; the package's and
    Dagster's own keys describe the asset itself and stay behind.
    """
    return {
        name: value
        for name, value in metadata.items()
        if not name.startswith(("dagster/", _names.PACKAGE_METADATA_PREFIX))
    }

"""`quarantine_spec`: an asset's quarantine in the asset graph, with its own Columns tab."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, overload

import dagster as dg
import dataframely as dy

from dagster_dataframely._model import names
from dagster_dataframely._model.collection import read_collection
from dagster_dataframely._model.columns_tab import quarantine_table_schema
from dagster_dataframely._model.keys import coerce_asset_key, definition_asset_key, quarantine_key
from dagster_dataframely._model.return_hints import distinct_names
from dagster_dataframely._model.schema import SchemaInfo, read_schema
from dagster_dataframely.errors import InvalidArgumentsError, UnknownCollectionMemberError

from .declared_outputs import DeclaredOutput, declared_output


@overload
def quarantine_spec(
    asset: dg.AssetsDefinition,
    /,
    *,
    asset_key: dg.AssetKey | str | Sequence[str] | None = None,
    group_name: str | None = None,
    owners: Sequence[str] | None = None,
    tags: Mapping[str, str] | None = None,
) -> dg.AssetSpec: ...


@overload
def quarantine_spec(
    *,
    asset: dg.AssetsDefinition,
    asset_key: dg.AssetKey | str | Sequence[str] | None = None,
    group_name: str | None = None,
    owners: Sequence[str] | None = None,
    tags: Mapping[str, str] | None = None,
) -> dg.AssetSpec: ...


@overload
def quarantine_spec(
    schema: type[dy.Schema] | type[dy.Collection],
    asset: dg.AssetsDefinition | dg.AssetKey | str | Sequence[str],
    *,
    asset_key: dg.AssetKey | str | Sequence[str] | None = None,
    partitions_def: dg.PartitionsDefinition | None = None,
    group_name: str | None = None,
    owners: Sequence[str] | None = None,
    tags: Mapping[str, str] | None = None,
) -> dg.AssetSpec: ...


def quarantine_spec(
    schema: type[dy.Schema] | type[dy.Collection] | dg.AssetsDefinition | None = None,
    asset: dg.AssetsDefinition | dg.AssetKey | str | Sequence[str] | None = None,
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

    Pass the definition alone, `quarantine_spec(orders)`, and the spec reads the schema the
    decorator validates against (from its argument or from the return hint); pass a schema
    before it, `quarantine_spec(Orders, orders)`, and it must be that one. With an asset key,
    which says nothing of the schema, the schema comes first: `quarantine_spec(Orders,
    "orders")`.

    Parameters
    ----------
    schema
        The schema the asset validates against; it gives the spec's Columns tab. For a member
        of a `dd.collection_asset`, the `dy.Collection`: the tab then has a column per filter
        that constrains the member too. The member is the output of the definition that has
        the key (`asset_key`), or the last part of the key `asset`. Leave it out to pass a
        `dd.asset`, `dd.multi_asset` or `dd.collection_asset` definition alone, in its place.
    asset
        The asset the invalid rows came from, as its definition or its asset key (a key, its
        parts, or its string as Dagster prints it: `"fleet/flights"`). Pass a key only for an
        asset you cannot import. A definition also gives the spec its partitions
        and the definition metadata its IO manager reads (such as `partition_expr`).
    asset_key
        With a definition of several assets (a `dd.multi_asset`), the key of the output whose
        quarantine this is; `dd.multi_asset` writes one quarantine per output, so each
        output with `quarantine=True` gets its own spec. A key, or its string as Dagster
        prints it (`"fleet/flights"`). `None` for a definition of one asset.
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
    ReservedColumnError, InvalidColumnNameError, InvalidRuleNameError, CheckNameCollisionError
        A column or rule name this package cannot use: in the reserved `dy_` namespace, with a
        character Dagster does not allow in a check name, or one check name for two rules.
    dg.DagsterInvariantViolationError
        `asset` is a definition and the call also passes `partitions_def`.
    InvalidArgumentsError
        The definition was declared without a quarantine (no run writes one); `schema` is not
        the one the definition validates against (a Collection member: not its Collection);
        the definition alone is one no decorator of this package built, so its schema is
        unknown; no asset, or an asset key without a schema; or `asset` is a key and the call
        also passes `asset_key`.
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


    spec = dd.quarantine_spec(orders)
    print(spec.key)  # AssetKey(['orders_quarantine'])
    print(dd.quarantine_spec(Orders, orders).key == spec.key)  # True
    ```

    Pass the spec, not its key, to `dg.Definitions(assets=[...])` with `orders`. A downstream
    asset can then declare `orders_quarantine` as an input.
    """
    if isinstance(schema, dg.AssetsDefinition):
        if asset is not None:
            raise _refused(
                "it takes a schema first and the asset second, and was given a definition first",
                "Pass the definition alone, dd.quarantine_spec(orders), or the schema and then "
                "the asset, dd.quarantine_spec(Orders, orders).",
            )
        schema, asset = None, schema
    if asset is None:
        raise _refused(
            "it needs the asset whose quarantine the spec declares",
            "Pass its definition, dd.quarantine_spec(orders), or the schema and the asset's "
            "key, dd.quarantine_spec(Orders, 'orders').",
        )
    carried: dict[str, Any] = {}
    declared: DeclaredOutput | None = None
    if isinstance(asset, dg.AssetsDefinition):
        if partitions_def is not None:
            raise dg.DagsterInvariantViolationError(
                "quarantine_spec takes the partitions from the asset definition; pass "
                "partitions_def= only together with an asset key."
            )
        key = definition_asset_key(asset, asset_key)
        declared = declared_output(asset, key)
        if declared is not None and not declared.output.quarantine:
            raise _refused(
                f"the asset {key.to_user_string()!r} is declared without a quarantine, so no "
                f"run writes {quarantine_key(key).to_user_string()!r} and the spec would be a "
                "node nothing fills",
                "Declare the asset with quarantine=True (on dd.asset, on its dd.AssetOut in a "
                "dd.multi_asset, or on dd.collection_asset), or leave the spec out.",
            )
        partitions_def = asset.partitions_def
        carried = _io_manager_metadata(asset.metadata_by_key.get(key, {}))
        group_name = group_name or asset.group_names_by_key.get(key)
        owners = owners if owners is not None else asset.owners_by_key.get(key)
        tags = {**(asset.tags_by_key.get(key) or {}), **(tags or {})}
    elif asset_key is not None:
        raise _refused(
            "it takes asset_key= only together with an asset definition",
            "With an asset key, pass the output's own key as `asset`.",
        )
    else:
        key = coerce_asset_key(asset)
    info = _quarantined_schema(schema, asset, key, declared)
    return dg.AssetSpec(
        key=quarantine_key(key),
        deps=[key],
        description=f"Invalid rows from {key.to_user_string()}, with one column per rule.",
        metadata={
            **carried,
            names.COLUMN_SCHEMA: quarantine_table_schema(info),
            names.QUARANTINE_OF: key.to_user_string(),
        },
        partitions_def=partitions_def,
        group_name=group_name or None,
        owners=owners,
        tags=dict(tags or {}),
    )


def _quarantined_schema(
    schema: type[dy.Schema] | type[dy.Collection] | None,
    asset: object,
    key: dg.AssetKey,
    declared: DeclaredOutput | None,
) -> SchemaInfo:
    if schema is None:
        if declared is None:
            raise _refused(
                "it reads the schema from a definition that dd.asset, dd.multi_asset or "
                f"dd.collection_asset built, and the definition of {key.to_user_string()!r} is "
                "not one",
                "Pass the schema its rows follow first, as in "
                f"dd.quarantine_spec(Orders, {_call_arguments(asset, key)}).",
            )
        return declared.output.info
    info = _given_schema(schema, asset, key)
    if declared is not None:
        _require_declared_schema(info, schema, declared, key, asset)
    return info


def _given_schema(
    schema: type[dy.Schema] | type[dy.Collection], asset: object, key: dg.AssetKey
) -> SchemaInfo:
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


def _require_declared_schema(
    given: SchemaInfo,
    schema: type[dy.Schema] | type[dy.Collection],
    declared: DeclaredOutput,
    key: dg.AssetKey,
    asset: object,
) -> None:
    expected = declared.output.info
    same_filters = [r.name for r in given.filters] == [r.name for r in expected.filters]
    if given.schema is expected.schema and same_filters:
        return
    # NOTE: a Collection's member is declared with the filters that constrain it, which only
    # the Collection gives the quarantine's tab: for such a member, the Collection is wanted.
    collection = declared.collection
    wanted: type = collection if collection is not None else expected.schema
    kind = "Collection" if collection is not None else "schema"
    wanted_name, given_name = distinct_names(wanted, schema)
    raise _refused(
        f"the asset {key.to_user_string()!r} is declared with the {kind} {wanted_name}, not "
        f"{given_name}, so the spec's Columns tab would not list the columns of its quarantine",
        f"Pass {wanted_name}, or the definition alone, whose schema the spec then reads: "
        f"dd.quarantine_spec({_call_arguments(asset, key)}).",
    )


def _call_arguments(asset: object, key: dg.AssetKey) -> str:
    # NOTE: Dagster keeps no function name; a one-asset definition is named as its key ends
    # (the function's name unless `name=` replaced it), a multi-asset by its op (the function's).
    if not isinstance(asset, dg.AssetsDefinition) or len(asset.keys) == 1:
        return key.path[-1]
    return f"{asset.node_def.name}, asset_key={key.to_user_string()!r}"


def _io_manager_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    # NOTE: the quarantine is written with the asset's definition metadata (a database manager's
    # `partition_expr` and `schema`), so its read must see the same; the package's and Dagster's own
    # keys describe the asset itself.
    return {
        name: value
        for name, value in metadata.items()
        if not name.startswith(("dagster/", names.PACKAGE_METADATA_PREFIX))
    }


def _refused(problem: str, fix: str) -> InvalidArgumentsError:
    return InvalidArgumentsError("quarantine_spec", problem, fix)

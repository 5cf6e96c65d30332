"""Every key the package resolves: an output's, a definition's asset, a quarantine's, a partition's.

An asset key is part of the contract with users (the catalog, the IO manager's paths and
tables), so each mapping is made here once: a key from what a caller passes, a name under a
prefix, the one asset of a definition, `<name>` to `<name>_quarantine` and back, and a
partition key as a run hands it to the asset.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from dagster_dataframely.errors import InvalidArgumentsError, MultiAssetKeyError

QUARANTINE_SUFFIX = "_quarantine"

CoercibleKey = dg.AssetKey | str | Sequence[str]
"""An asset key as a caller may pass it: the key, its user string, or its parts."""


def coerce_asset_key(key: CoercibleKey) -> dg.AssetKey:
    """The asset key a caller means, read as Dagster's `AssetSelection.assets` reads one.

    A string is the form Dagster prints (`AssetKey.to_user_string`): `"fleet/plane_flights"`
    is `AssetKey(["fleet", "plane_flights"])`. Dagster refuses a `/` inside one key part, so
    no key is lost by reading the string this way; `AssetKey.from_coercible` would make it one
    part, a key no asset can have. A sequence is the key's parts.
    """
    if isinstance(key, str):
        return dg.AssetKey.from_user_string(key)
    return dg.AssetKey.from_coercible(key)


def output_key(
    name: str,
    *,
    key: dg.AssetKey | None = None,
    key_prefix: str | Sequence[str] | None = None,
    default_prefix: str | Sequence[str] | None = None,
) -> dg.AssetKey:
    """The key of an asset named `name`: `key` if given, else `name` under its prefix.

    `default_prefix` stands in when the output has no prefix of its own (a Collection member
    under the decorator's `key_prefix`). A string prefix is one key part, as Dagster reads it.
    """
    if key is not None:
        return key
    prefix = key_prefix if key_prefix is not None else default_prefix
    parts = [prefix] if isinstance(prefix, str) else list(prefix or [])
    return dg.AssetKey([*parts, name])


def definition_asset_key(
    assets_def: dg.AssetsDefinition, asset_key: CoercibleKey | None
) -> dg.AssetKey:
    """`asset_key` (coerced) if the definition has it; without one, the definition's only asset.

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
    key = coerce_asset_key(asset_key)
    if key not in assets_def.keys:
        raise MultiAssetKeyError(assets_def.node_def.name, keys, key.to_user_string())
    return key


def quarantine_key(asset_key: dg.AssetKey) -> dg.AssetKey:
    """Return the key an asset's invalid rows are written under: same prefix, `_quarantine` name.

    This and `quarantined_asset_key` are the only places that map between the two keys.
    """
    *prefix, name = asset_key.path
    return dg.AssetKey([*prefix, name + QUARANTINE_SUFFIX])


def quarantined_asset_key(key: dg.AssetKey) -> dg.AssetKey | None:
    """Return the asset whose quarantine `key` would be, or None if `key` cannot be one.

    A key that ends in `_quarantine` is only a candidate: whether the asset it names really
    declares a quarantine is for the caller to check against the asset graph.
    """
    *prefix, name = key.path
    if not name.endswith(QUARANTINE_SUFFIX) or name == QUARANTINE_SUFFIX:
        return None
    return dg.AssetKey([*prefix, name.removesuffix(QUARANTINE_SUFFIX)])


def run_partition_key(
    partitions_def: dg.PartitionsDefinition[str] | None, partition_key: str, *, function: str
) -> str:
    """`partition_key` as a run hands it to the asset: a `dg.MultiPartitionKey` when multi.

    A run of a multi-partitioned asset gives `context.partition_key` as a `dg.MultiPartitionKey`
    (with `keys_by_dimension`), whereas `dg.build_asset_context` keeps the string it is given;
    parsed here, a direct call sees what a run sees, and its quarantine file gets one directory
    per dimension, as the IO manager lays out the same partition in a run.

    Raises
    ------
    InvalidArgumentsError
        A multi-partition key string without one key per dimension. `function` names the call.
    """
    if not isinstance(partitions_def, dg.MultiPartitionsDefinition) or isinstance(
        partition_key, dg.MultiPartitionKey
    ):
        return partition_key
    dimensions = partitions_def.partition_dimension_names
    if len(partition_key.split("|")) != len(dimensions):
        raise InvalidArgumentsError(
            function,
            f"the partition key {partition_key!r} is not one of a multi-partitioned asset, "
            f"whose keys have one key per dimension ({', '.join(dimensions)})",
            f"Join one key per dimension with '|', in that order: "
            f"{'|'.join(f'<{name}>' for name in dimensions)}.",
        )
    return partitions_def.get_partition_key_from_str(partition_key)

"""Every asset key the package resolves: an output's, a definition's asset, a quarantine's.

An asset key is part of the contract with users (the catalog, the IO manager's paths and
tables), so each mapping is made here once: a name under a prefix, the one asset of a
definition, and `<name>` to `<name>_quarantine` and back.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from dagster_dataframely.errors import MultiAssetKeyError

QUARANTINE_SUFFIX = "_quarantine"


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

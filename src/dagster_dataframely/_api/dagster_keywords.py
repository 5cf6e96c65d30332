"""The types of the `@dg.asset` / `@dg.multi_asset` keywords the front-ends pass on unchanged.

Written once here so `dd.asset`, `dd.multi_asset` and `dd.collection_asset` declare them alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeAlias

import dagster as dg

AssetDeps: TypeAlias = Iterable[
    dg.AssetKey
    | str
    | Sequence[str]
    | dg.AssetSpec
    | dg.AssetsDefinition
    | dg.SourceAsset
    | dg.AssetDep
]
"""What `deps=` takes: the assets a step depends on without loading them."""

OP_KEYWORDS = (
    "ins",
    "deps",
    "config_schema",
    "required_resource_keys",
    "resource_defs",
    "hooks",
    "partitions_def",
    "op_tags",
    "retry_policy",
    "pool",
)
"""The keywords every front-end passes on to Dagster's decorator as they are."""

MULTI_ASSET_KEYWORDS = (
    *OP_KEYWORDS,
    "name",
    "description",
    "group_name",
    "backfill_policy",
    "code_version",
    "can_subset",
)
"""What a multi-output front-end passes on besides: the op's own name, description, version."""


def passed_on(arguments: Mapping[str, object], names: Iterable[str]) -> dict[str, object]:
    """The arguments among `names` the front-end was called with (its `locals()` on entry)."""
    return {name: arguments[name] for name in names if name in arguments}

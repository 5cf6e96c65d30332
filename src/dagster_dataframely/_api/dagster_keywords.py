"""The `@dg.asset` / `@dg.multi_asset` keywords the front-ends pass on unchanged.

Written once here so `dd.asset`, `dd.multi_asset` and `dd.collection_asset` declare them alike:
the multi-output front-ends take them as `**keywords: Unpack[OpKeywords]`, and
`with_op_keywords` gives them the signature and Parameters paragraphs they had when each wrote
the list out.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import Any, ForwardRef, TypeAlias, TypedDict, TypeVar

import dagster as dg

from dagster_dataframely._model.setting_keywords import described, signed

T = TypeVar("T", bound=Callable[..., object])

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


class OpKeywords(TypedDict, total=False):
    """`@dg.multi_asset`'s keywords a multi-output front-end passes on, in its signature's order."""

    name: str | None
    ins: Mapping[str, dg.AssetIn] | None
    deps: AssetDeps | None
    description: str | None
    config_schema: Mapping[str, Any] | None
    required_resource_keys: Set[str] | None
    resource_defs: Mapping[str, object] | None
    hooks: Set[dg.HookDefinition] | None
    partitions_def: dg.PartitionsDefinition[str] | None
    op_tags: Mapping[str, Any] | None
    group_name: str | None
    backfill_policy: dg.BackfillPolicy | None
    retry_policy: dg.RetryPolicy | None
    code_version: str | None
    pool: str | None


# NOTE: the others are each asset's own: its name (its key), and its description, group, backfill
# policy and code version, which `dd.asset` passes on with its `dg.AssetOut`.
OP_KEYWORDS = tuple(
    name
    for name in OpKeywords.__annotations__
    if name not in ("name", "description", "group_name", "backfill_policy", "code_version")
)
"""The keywords every front-end passes on to Dagster's decorator as they are."""


class MultiAssetKeywords(OpKeywords, total=False):
    """`dd.multi_asset`'s: a run may select some outputs (a Collection's members go together)."""

    can_subset: bool


_DEFAULTS: Mapping[str, object] = {"can_subset": False}
"""The keywords whose default is not `None`."""

_PARAGRAPHS = {
    "name": "The op's name. `None` uses the function's name.",
    "description": "Passed to `@dg.multi_asset` unchanged: the op's description. Each {item}'s "
    "own description comes from its `outs` entry, else its schema's docstring.",
    "config_schema": "Passed to `@dg.multi_asset` unchanged. Only a mapping is accepted.",
    "partitions_def": "Passed to `@dg.multi_asset` unchanged. Every {item}'s checks and "
    "quarantine are partitioned the same way, and each partition is validated on its own.",
}
"""The Parameters paragraphs of the keywords that do more than pass on; `{item}` is what each
asset of the step is to the front-end (an output, a member)."""


def with_op_keywords(
    keywords: type, *, item: str, after: Mapping[str, str] | None = None
) -> Callable[[T], T]:
    """Give the function `keywords`' fields as keyword-only parameters in place of `**keywords`.

    They follow the function's own keyword-only parameters in the TypedDict's order, except
    where `after` places one after another; settings in the same `**` are added by
    `with_setting_keywords` above. `_PARAGRAPHS` describe the keywords that need it.
    """

    def sign(function: T) -> T:
        names = list(keywords.__annotations__)
        for name, anchor in (after or {}).items():
            names.remove(name)
            names.insert(names.index(anchor) + 1, name)
        added = [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=_DEFAULTS.get(name),
                annotation=_text(keywords.__annotations__[name]),
            )
            for name in names
        ]
        parameters = signed(function, lambda own: own + added)
        paragraphs = {name: text.format(item=item) for name, text in _PARAGRAPHS.items()}
        function.__doc__ = described(function.__doc__ or "", parameters, paragraphs)
        return function

    return sign


def _text(annotation: object) -> str:
    """An annotation as the source wrote it (this module's annotations are postponed)."""
    return annotation.__forward_arg__ if isinstance(annotation, ForwardRef) else str(annotation)


def passed_on(arguments: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """The arguments among `names` the front-end was called with (its `locals()` on entry)."""
    return {name: arguments[name] for name in names if name in arguments}

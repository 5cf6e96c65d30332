"""One builder: declared outputs and the user's function in, a Dagster asset definition out.

One output becomes a real `@dg.asset` (what `context.asset_key`, direct invocation and a
returned `MaterializeResult` rely on), several a `@dg.multi_asset`, as Dagster makes `@asset`
the one-output case of its multi-asset builder. Either way the compute function is the one
wrapper of `_run.compute`; the decorators differ only in how the function's return is read
and, for a Collection, how the outputs are split.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import dagster as dg

from dagster_dataframely._model.collection import CollectionInfo
from dagster_dataframely._run.compute import PrepareInput, Step, compute_function
from dagster_dataframely._run.decide.outcome import Split, decide_each, decide_members
from dagster_dataframely._run.returned import collection_members, one_output, output_mapping
from dagster_dataframely._run.scope.scope import scope_for
from dagster_dataframely._run.split.collection_split import share_input
from dagster_dataframely._upstream import with_sibling_checks

from .declared_outputs import remember_outputs
from .output_declaration import ASSET_OUT_KEYWORDS, VALID_ROWS, Declaration


def build_asset(
    declaration: Declaration, function: Callable[..., object], op: Mapping[str, Any]
) -> dg.AssetsDefinition:
    """`dd.asset`: a `@dg.asset` whose compute is the wrapper around `function`.

    `op` holds `@dg.asset`'s parameters that are not the asset's own attributes (`ins`,
    `deps`, `resource_defs`, ...); the attributes come from the declared `dg.AssetOut`.
    """
    output = declaration.output
    step = Step(
        op_name=output.key.to_python_identifier(),
        outputs=(output,),
        unpack=one_output(output.name),
        partitions_def=op.get("partitions_def"),
        always_takes_context=False,
        selects_outputs=False,
        errors_name_op=False,
        scope=scope_for(op.get("partitions_def")),
    )
    compute = compute_function(function, step)

    def build(check_specs: Sequence[dg.AssetCheckSpec]) -> dg.AssetsDefinition:
        return dg.asset(
            compute,
            **_asset_attributes(declaration.out),
            check_specs=list(check_specs),
            output_required=False,
            dagster_type=VALID_ROWS if output.hands_lazy_table else None,
            **_set(op),
        )

    # Dagster builds the asset with its first check; the others are copies of that check's
    # output (`_upstream.with_sibling_checks`), the same definition for far less.
    first, *siblings = declaration.check_specs
    built = with_sibling_checks(build([first]), siblings)
    return remember_outputs(
        built if built is not None else build(declaration.check_specs), step.outputs
    )


def build_multi_asset(
    declarations: Sequence[Declaration], function: Callable[..., object], op: Mapping[str, Any]
) -> dg.AssetsDefinition:
    """`dd.multi_asset`: a `@dg.multi_asset` with one output per declaration."""
    op_name = _op_name(function, op)
    names = [d.output.name for d in declarations]
    built = _multi_asset(declarations, function, op, output_mapping(op_name, names))
    return remember_outputs(built, [d.output for d in declarations])


def build_collection_asset(
    info: CollectionInfo,
    declarations: Sequence[Declaration],
    function: Callable[..., object],
    op: Mapping[str, Any],
) -> dg.AssetsDefinition:
    """`dd.collection_asset`: one output per member, the members split together."""
    unpack = collection_members(info, _op_name(function, op))
    split = functools.partial(decide_members, info)
    built = _multi_asset(declarations, function, op, unpack, split, share_input)
    return remember_outputs(built, [d.output for d in declarations], collection=info.collection)


def _multi_asset(
    declarations: Sequence[Declaration],
    function: Callable[..., object],
    op: Mapping[str, Any],
    unpack: Callable[[object], Mapping[str, object]],
    split: Split = decide_each,
    prepare_input: PrepareInput | None = None,
) -> dg.AssetsDefinition:
    step = Step(
        op_name=_op_name(function, op),
        outputs=tuple(d.output for d in declarations),
        unpack=unpack,
        partitions_def=op.get("partitions_def"),
        always_takes_context=True,
        selects_outputs=True,
        errors_name_op=True,
        scope=scope_for(op.get("partitions_def")),
        split=split,
        prepare_input=prepare_input,
    )
    return dg.multi_asset(
        outs={d.output.name: d.out for d in declarations},
        check_specs=[spec for d in declarations for spec in d.check_specs],
        **_set(op),
    )(compute_function(function, step))


def _asset_attributes(out: dg.AssetOut) -> dict[str, Any]:
    # NOTE: the completed key stands for `key_prefix`, which it includes.
    kept = (name for name in ASSET_OUT_KEYWORDS if name != "key_prefix")
    return {"key": out.key, **{name: getattr(out, name) for name in kept}}


def _op_name(function: Callable[..., object], op: Mapping[str, Any]) -> str:
    return str(op.get("name") or getattr(function, "__name__", "multi_asset"))


def _set(op: Mapping[str, Any]) -> dict[str, Any]:
    # NOTE: None leaves Dagster's own default.
    return {name: value for name, value in op.items() if value is not None}

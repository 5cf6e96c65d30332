"""Characterization tests: the shape of each upstream API `_upstream.py` relies on.

A failure here means a Dagster or Dataframely release changed something this package reaches
for outside their public API; the message says which access and what changed.
"""

import dagster as dg

from dagster_dataframely._upstream import current_asset_context


def test_current_asset_context_is_the_running_assets_context_and_none_outside_a_step(
    instance: dg.DagsterInstance,
) -> None:
    seen: dict[str, object] = {}

    @dg.asset
    def probe(context: dg.AssetExecutionContext) -> None:
        current = current_asset_context()
        seen["same"] = current is context
        seen["keys"] = current.assets_def.keys if current is not None else None

    @dg.op
    def plain_op() -> None:
        current = current_asset_context()
        seen["op has an assets_def"] = current is not None and current.has_assets_def

    dg.materialize([probe], instance=instance)
    dg.GraphDefinition(name="plain", node_defs=[plain_op]).to_job().execute_in_process(
        instance=instance
    )

    assert seen == {"same": True, "keys": {probe.key}, "op has an assets_def": False}, (
        "dg.AssetExecutionContext.get() no longer returns the running step's context: "
        "dd.asset cannot keep the Columns tab on the materialization"
    )
    assert current_asset_context() is None, (
        "dg.AssetExecutionContext.get() outside a step no longer raises "
        "DagsterInvariantViolationError"
    )

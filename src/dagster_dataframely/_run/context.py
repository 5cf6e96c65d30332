"""What a step's context says about the run: the partition it validates, the outputs it selects.

A direct invocation has no step: its partition key comes from the context the caller built, and
it selects every output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dagster_dataframely._upstream import current_asset_context, running_step

from .output import ValidatedOutput


def partition_key(context: Any) -> str | None:
    """The partition a run or call validates, from the asset's context or the running step's.

    An asset without a quarantine keeps the signature its author wrote, so it may receive no
    context; a run still has one, which the step sets for its compute function.
    """
    if context is None:
        context = current_asset_context()
    if context is None or not context.has_partition_key:
        return None
    key: str = context.partition_key
    return key


def selected_outputs(
    context: Any, outputs: Sequence[ValidatedOutput]
) -> tuple[ValidatedOutput, ...]:
    """The outputs a run of a multi-asset writes, in declaration order; all of them in a call.

    A direct invocation has no step to select from, and its context cannot say.
    """
    if running_step(context) is None:
        return tuple(outputs)
    selected = set(context.op_execution_context.selected_output_names)
    return tuple(output for output in outputs if output.name in selected)

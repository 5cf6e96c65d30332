"""What a step's context says about the run: the partition it validates, the outputs it selects.

A direct invocation has no step: its partition key comes from the context the caller built
(even one Dagster took for a function that declares none), which is checked as a run's would
be, and it selects every output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg

from dagster_dataframely._upstream import current_asset_context, running_step
from dagster_dataframely.errors import InvalidArgumentsError, UnknownPartitionKeyError

from .validated_output import ValidatedOutput


def partition_key(context: Any) -> str | None:
    """The partition a run or call validates, from the asset's context or the running step's.

    An asset without a quarantine keeps the signature its author wrote, so it may receive no
    context; a run still has one, which the step sets for its compute function.
    """
    context = context if context is not None else current_asset_context()
    if context is None or not context.has_partition_key:
        return None
    key: str = context.partition_key
    return key


def check_call_partition(
    context: Any, partitions_def: dg.PartitionsDefinition[str], asset: str
) -> None:
    """Refuse a direct call's partition key that is not one of the asset's, as a run is refused.

    A run of an unknown key never starts; a direct call's context holds any key it is given.
    A dimension of dynamic partitions is not checked: its keys live in an instance, which a
    direct call usually lacks. Nothing in a run, or in a call without a partition key.

    Raises
    ------
    UnknownPartitionKeyError
        The key is not a partition of `partitions_def`.
    """
    if context is None or running_step(context) is not None or not context.has_partition_key:
        return
    key = context.partition_key
    if not _has_key(partitions_def, key):
        raise UnknownPartitionKeyError(asset, key, _first_key(partitions_def))


def check_call_names_partition(
    partitions_def: dg.PartitionsDefinition[str] | None, asset: str, *, function: str
) -> None:
    """Refuse a call of a partitioned asset that names no partition, as a launched run is refused.

    Dagster's UI and `dagster asset materialize` launch no run of a partitioned asset without a
    partition; a call without one would validate the frame as no partition's (no
    `dy_partition`, the quarantine unpartitioned). `function` names the call in the message.

    Raises
    ------
    InvalidArgumentsError
        `partitions_def` is set.
    """
    if partitions_def is None:
        return
    first = _first_key(partitions_def)
    example = "one of its partition keys" if first is None else f"such as {str(first)!r}"
    raise InvalidArgumentsError(
        function,
        f"{asset!r} is partitioned ({type(partitions_def).__name__}) and the call names no "
        "partition; a run of it is launched for a partition, and a call without one would "
        "validate the frame as belonging to no partition",
        f"Pass `partition_key=`, {example}, the partition a run would validate.",
    )


def _has_key(definition: dg.PartitionsDefinition[str], key: str) -> bool:
    if isinstance(definition, dg.MultiPartitionsDefinition):
        # A multi-partition key is its dimensions' keys joined with `|`, in dimension order.
        parts = str(key).split("|")
        dimensions = definition.partitions_defs
        return len(parts) == len(dimensions) and all(
            _has_key(dimension.partitions_def, part)
            for dimension, part in zip(dimensions, parts, strict=True)
        )
    if isinstance(definition, dg.DynamicPartitionsDefinition):
        return True
    return definition.has_partition_key(key)


def _first_key(definition: dg.PartitionsDefinition[str]) -> str | None:
    dimensions = (
        [d.partitions_def for d in definition.partitions_defs]
        if isinstance(definition, dg.MultiPartitionsDefinition)
        else [definition]
    )
    if any(isinstance(d, dg.DynamicPartitionsDefinition) for d in dimensions):
        return None
    return definition.get_first_partition_key()


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

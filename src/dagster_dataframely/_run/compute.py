"""The one compute wrapper: what every validated asset's step runs around the user's function.

In order: check each selected output's quarantine key and make its writer, add the Columns
tabs, call the user's function once, read its value per output, decide every outcome (the
`split`, where a Collection splits its members jointly), then `emit`. `dd.asset`,
`dd.multi_asset` and `dd.collection_asset` differ only in the `Step` they pass. A run over a
partition range is one of the step's scopes (`scope`): it decides each partition on its own
and lays out `emit`'s results per partition (`partition_range`, `range_emit`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._run.decide.evaluation import stored_results
from dagster_dataframely._run.decide.outcome import Split, decide_each
from dagster_dataframely._run.decide.output_run import OutputRun
from dagster_dataframely._run.emit.emit import emit_as
from dagster_dataframely._run.report.metrics import column_metrics
from dagster_dataframely._run.scope.scope import Scope, ScopeOf, StepEvent
from dagster_dataframely._store.bare_managers import warn_of_unfiltered
from dagster_dataframely._store.delegating import validate_quarantine_key
from dagster_dataframely._store.step_storage import sinks_lazy_table, table_fit_for
from dagster_dataframely._store.upstream_previews import warn_of_upstream_previews
from dagster_dataframely._store.writer_choice import can_clear, initial_writer_for, writer_for
from dagster_dataframely._upstream import current_asset_context, direct_invocation_context

from .context import check_call_partition, partition_key, selected_outputs
from .report.materialization_columns import ColumnsTabs
from .returned import Frame, Unpack, unwrap
from .signature import ComputeSignature
from .split.staging import Staging
from .split.streaming import validated_in_memory
from .validated_output import ValidatedOutput

PrepareInput = Callable[[object], object]
"""What one of the user's inputs becomes before the function receives it."""


@dataclass(frozen=True, slots=True)
class Step:
    """How one decorator's function maps onto its outputs: the plug points of the pipeline."""

    op_name: str
    outputs: tuple[ValidatedOutput, ...]
    unpack: Unpack
    partitions_def: dg.PartitionsDefinition[str] | None
    always_takes_context: bool
    """The wrapper takes Dagster's context even when no quarantine needs it (to read the
    selection); `dd.asset`'s function may be called without one."""
    selects_outputs: bool
    """The run writes only the outputs its context selects (a multi-asset's subset); `dd.asset`
    has one output, always written."""
    errors_name_op: bool
    """A refused partition key or return names the op and the output, with the multi-asset
    errors; `dd.asset`'s name its asset key, with the errors the spec names for one asset."""
    scope: ScopeOf
    """What a run is over: its one partition, or a range of them (`scope.scope_for`)."""
    split: Split = decide_each
    prepare_input: PrepareInput | None = None
    """Applied to each input before the call: a Collection shares its lazy inputs across
    members (`collection_split.share_input`). None passes them as loaded."""


StepYield = Iterator[StepEvent]
"""What the compute wrapper yields: a step's results, or a range's per partition."""


def compute_function(function: Callable[..., object], step: Step) -> Callable[..., StepYield]:
    """Wrap `function` in the generator Dagster runs: its inputs, and a context when needed."""
    needs_context = step.always_takes_context or any(output.quarantine for output in step.outputs)
    signature = ComputeSignature.of(function, needs_context=needs_context)

    @functools.wraps(function)
    def compute(*args: Any, **kwargs: Any) -> StepYield:
        context, call = signature.bind(function, args, kwargs, step.prepare_input)
        # NOTE: an asset without a quarantine keeps its author's signature, so it may receive no
        # context, yet a direct invocation may have been given one (Dagster takes it) that names
        # the partition; in a run, such an asset's context is the running step's, read where needed.
        context = context if context is not None else direct_invocation_context()
        if step.partitions_def is not None:
            shown = step.op_name if step.errors_name_op else step.outputs[0].key.to_user_string()
            check_call_partition(context, step.partitions_def, shown)
        selected = selected_outputs(context, step.outputs) if step.selects_outputs else step.outputs
        scope = step.scope(context)
        staging = Staging()
        # The function's own context if it takes one, else Dagster's for this step.
        step_context = context if context is not None else current_asset_context()
        try:
            runs = {
                o.name: _start(context, step_context, o, step, scope, staging) for o in selected
            }
            warn_of_unfiltered(
                step_context, [(o.name, o.key.to_user_string(), o.shown_values) for o in selected]
            )
            warn_of_upstream_previews(
                step_context,
                {o.key for o in step.outputs},
                frozenset().union(*(o.info.sensitive for o in selected)),
            )
            tabs = ColumnsTabs.add(selected)
            values = step.unpack(call())
            tabs.keep_returned(values)
            frames: dict[str, Frame | None] = {}
            returned: dict[str, dg.MaterializeResult[Any] | None] = {}
            for output in selected:
                frames[output.name], returned[output.name] = unwrap(
                    values.get(output.name),
                    output.key,
                    output=output.name,
                    op_name=step.op_name if step.errors_name_op else None,
                )
            for name, run in runs.items():
                # Staging is set only in a run, whose manager sinks a LazyFrame.
                if run.staging is not None and isinstance(frames[name], pl.DataFrame):
                    assert step_context is not None
                    step_context.log.info(validated_in_memory(run.output.key.to_user_string()))
            outcomes = scope.decide(step.split, frames, runs)
            log = step_context.log if step_context is not None else None
            yield from emit_as(scope.layout, outcomes, returned, log)
            # NOTE: Dagster stored each yielded table before resuming here: the kinds that read
            # the stored table read this run's.
            for output in selected:
                yield from stored_results(output, step_context, step.partitions_def)
        finally:
            # Dagster has written every yielded table by now, from the staged rows too.
            staging.remove()

    signature.apply(compute)
    return compute


def _start(
    context: Any,
    step_context: Any,
    output: ValidatedOutput,
    step: Step,
    scope: Scope,
    staging: Staging,
) -> OutputRun:
    # NOTE: a refused range or partition, the quarantine key and the writer come first, so a refused
    # run calls nothing.
    scope.check(output)
    writer = initial = None
    if output.quarantine:
        validate_quarantine_key(context, output.key)
        writer = writer_for(context, output.key, step.partitions_def)
        initial = initial_writer_for(context, output.key, writer)
    partition = partition_key(context) if step.partitions_def is not None else None
    lazy = output.hands_lazy_table and sinks_lazy_table(step_context, output.key)
    run = OutputRun(
        output,
        partition,
        writer,
        clear_quarantine=output.clear_quarantine and can_clear(context),
        initial_writer=initial,
        fit_table=table_fit_for(context, output.key),
        staging=staging if lazy and output.settings.streaming else None,
        lazy_table=lazy,
        measure=column_metrics,
    )
    return scope.with_history(run)

"""What one run of a step is over: its one partition (or none), or a range of partitions.

The plug point of `Step` for a single-run backfill, chosen once where the step is built
(`scope_for`) and asked at each run which one it is. The two differ only in how storage is
checked before the function runs, which history the quality policy reads, how the outputs'
frames are decided (the range's per partition) and the `emit.Layout` of the results; every
other part of the run, the emission's tail included, is the same code. Both refuse a row
outside their partitions where a database manager stores them, read by `row_partitions`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

import dagster as dg

from dagster_dataframely._run.checks.history import read_history
from dagster_dataframely._run.checks.registry import series_of
from dagster_dataframely._run.decide.outcome import Outcome, Split
from dagster_dataframely._run.decide.output_run import OutputRun
from dagster_dataframely._run.emit.emit import EACH_OUTCOME, Layout
from dagster_dataframely._run.returned import Frame
from dagster_dataframely._run.split.valid_rows import ValidRows
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely._store.step_storage import (
    check_partition_storage,
    stores_partitions_in_database,
)
from dagster_dataframely._upstream import current_asset_context

from .partition_range import PartitionRange
from .row_partitions import RowPartitions

StepEvent = (
    dg.MaterializeResult[ValidRows]
    | dg.AssetCheckResult
    | dg.AssetCheckEvaluation
    | dg.Output[None]
)
"""One thing a step yields: a table, a check's result, or (over a range) a check's output and
its evaluation in one partition."""


@dataclass(frozen=True, slots=True)
class OneStep:
    """A run of one partition, or of an unpartitioned asset: the step as Dagster runs it."""

    context: Any
    partitions_def: dg.PartitionsDefinition[str] | None

    def check(self, output: ValidatedOutput) -> None:
        """A partition a database manager could not find the rows of is refused."""
        if self.partitions_def is not None:
            check_partition_storage(
                self.context, output.key, self.partitions_def, quarantine=output.quarantine
            )

    def with_history(self, run: OutputRun) -> OutputRun:
        """`run` with its partition's (or the asset's) history."""
        key, partition = run.output.key, run.partition_key
        history = read_history(self.context, key, partition, series_of(run.output))
        return dataclasses.replace(run, history=history)

    def decide(
        self, split: Split, frames: Mapping[str, Frame | None], runs: Mapping[str, OutputRun]
    ) -> list[Outcome]:
        """The step's split, one outcome per output in the order of `runs`.

        Raises
        ------
        PartitionRangeError
            A database manager stores the partition, and some rows fall outside it.
        """
        outcomes = split(self._within_partition(frames, runs), runs)
        return [outcomes[name] for name in runs]

    def _within_partition(
        self, frames: Mapping[str, Frame | None], runs: Mapping[str, OutputRun]
    ) -> Mapping[str, Frame | None]:
        context = self.context if self.context is not None else current_asset_context()
        if self.partitions_def is None or context is None or not context.has_partition_key:
            return frames
        # NOTE: their plans run here, once each, and the split gets their rows.
        held = {
            name: frame
            for name, frame in frames.items()
            if stores_partitions_in_database(
                self.context, runs[name].output.key, quarantine=runs[name].output.quarantine
            )
        }
        if not held:
            return frames
        rows = RowPartitions(
            context.assets_def.metadata_by_key, (context.partition_key,), self.partitions_def
        )
        (checked,) = rows.sliced(held, runs).values()
        return {**frames, **checked}

    @property
    def layout(self) -> Layout[StepEvent]:
        """Each outcome's table, then its checks."""
        return EACH_OUTCOME


Scope: TypeAlias = OneStep | PartitionRange
"""What a run is over, as the compute wrapper asks it: each refuses an output it cannot store
(`check`), gives a run its history (`with_history`), decides every outcome (`decide`) and says
how `emit`'s tail yields them (`layout`)."""

ScopeOf = Callable[[Any], Scope]
"""The scope of one run, from the call's context (None when the function takes none)."""


def scope_for(partitions_def: dg.PartitionsDefinition[str] | None) -> ScopeOf:
    """A step's scope: a partitioned asset's run may be a range (a single-run backfill)."""
    if partitions_def is None:
        return lambda context: OneStep(context, None)

    def scope(context: Any) -> Scope:
        span = PartitionRange.of_run(context, partitions_def)
        return span if span is not None else OneStep(context, partitions_def)

    return scope

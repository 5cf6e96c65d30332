"""A run over a partition range (a single-run backfill): each partition decided alone.

A manager that stores a range in one write (a `DbIOManager`, such as DuckDB's) stores the
partitions together; each row's partition is still read from the asset's `partition_expr`
(`row_partitions`), and each partition's rows get their own outcome and history, as a run of it
alone would (`history.RangeHistory`). Before the function runs, a manager that would store the
range as several writes, or an asset without a `partition_expr`, is refused.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model import names
from dagster_dataframely._run.checks.history import Point, read_range_history
from dagster_dataframely._run.checks.registry import series_of
from dagster_dataframely._run.decide.outcome import Classified, Clean, Outcome, Partial, Split
from dagster_dataframely._run.decide.output_run import OutputRun
from dagster_dataframely._run.returned import Frame
from dagster_dataframely._run.split.valid_rows import row_count
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely._store.quarantine_writer import QuarantineWriter
from dagster_dataframely._store.step_storage import output_stores, table_output
from dagster_dataframely._store.storage_slots import check_range_storage
from dagster_dataframely._upstream import current_asset_context, running_step

from .range_emit import RangeLayout
from .row_partitions import RowPartitions


@dataclass(frozen=True, eq=False)
class PartitionRange:
    """The partitions one run materializes together, and the step that reports them."""

    context: dg.AssetExecutionContext
    keys: tuple[str, ...]
    """The range's partition keys in order, as Dagster gives them (a multi-partition's are
    `dg.MultiPartitionKey`s)."""
    partitions_def: dg.PartitionsDefinition[str]

    @classmethod
    def of_run(
        cls, context: Any, partitions_def: dg.PartitionsDefinition[str] | None
    ) -> PartitionRange | None:
        """The range the running step materializes; None for one partition, or outside a run.

        A direct invocation has no step to report partitions on, and keeps the behaviour of a
        call without a partition key.
        """
        if partitions_def is None:
            return None
        context = context if context is not None else current_asset_context()
        if context is None or running_step(context) is None:
            return None
        if context.has_partition_key or not context.has_partition_key_range:
            return None
        return cls(context, tuple(context.partition_keys), partitions_def)

    def check(self, output: ValidatedOutput) -> None:
        """Refuse, before the function runs, an output whose range cannot be stored or split.

        Raises
        ------
        PartitionRangeError
            The output has no usable `partition_expr`, or its IO manager (or its quarantine's)
            stores each partition in a place of its own.
        """
        rows = self._rows
        rows.partition_expr(output)
        handle = table_output(self.context, output.key)
        assert handle is not None  # `of_run` made this range inside a step
        stores = output_stores(handle, output.key, output.quarantine)
        check_range_storage(output.key, rows.shown, *stores)

    def decide(
        self, split: Split, frames: Mapping[str, Frame | None], runs: Mapping[str, OutputRun]
    ) -> list[Outcome]:
        """Every output's outcome in every partition, each partition's rows split on their own.

        By output (in the order of `runs`), then by partition in the range's order, as
        `layout` regroups them.
        `split` is the step's own (a Collection's members split jointly in each partition).
        Each partition's run keeps the output's settings, names its partition, writes its
        invalid rows through the output's one quarantine of the whole range, and compares with
        the history a run of that partition alone would read: its own, or with
        `compare_with="asset"` the asset's, after the partitions before it in the range that
        such runs would have written.
        """
        quarantines = {
            name: _RangeQuarantine(run.writer) for name, run in runs.items() if run.writer
        }
        # NOTE: the row counts each output's earlier partitions would have written, each in a
        # run of its own: a history of the whole asset has them before the next partition's run.
        written: dict[str, list[Point]] = {name: [] for name in runs}
        by_key: dict[str, Mapping[str, Outcome]] = {}
        for key, sliced in self._rows.sliced(frames, runs).items():
            partition_runs = {
                name: dataclasses.replace(
                    run,
                    partition_key=key,
                    writer=quarantines[name].write if name in quarantines else None,
                    history=(
                        run.range_history.of(key, {names.ROW_COUNT: written[name]})
                        if run.range_history is not None
                        else run.history
                    ),
                )
                for name, run in runs.items()
            }
            outcomes = by_key[key] = split(sliced, partition_runs)
            if not any(outcome.fails_step for outcome in outcomes.values()):
                for name, outcome in outcomes.items():
                    if isinstance(outcome, Clean | Partial):
                        count = row_count(outcome.rows.valid)
                        written[name].append(
                            Point(count, key, self.context.run.run_id, time.time())
                        )
        for name, quarantine in quarantines.items():
            quarantine.frames = [
                outcome.rows.quarantined.quarantine_frame
                for outcome in (by_key[key][name] for key in self.keys)
                if isinstance(outcome, Classified)
            ]
        return [by_key[key][name] for name in runs for key in self.keys]

    def with_history(self, run: OutputRun) -> OutputRun:
        """`run` with what a run of each partition alone would remember (`decide` picks)."""
        series = series_of(run.output)
        history = read_range_history(self.context, run.output.key, self.keys, series)
        return dataclasses.replace(run, range_history=history)

    @property
    def layout(self) -> RangeLayout:
        """Per output, one table of the range and each partition's check evaluations."""
        return RangeLayout(self.context)

    @property
    def _rows(self) -> RowPartitions:
        return RowPartitions(
            self.context.assets_def.metadata_by_key, self.keys, self.partitions_def
        )


@dataclass(eq=False)
class _RangeQuarantine:
    """One output's quarantine of the whole range, written once for all of its partitions.

    The manager stores the range in one write, so the first partition to write its invalid
    rows writes every partition's (`frames`, set once every partition is decided), and the
    others get the same address.
    """

    writer: QuarantineWriter
    frames: list[pl.DataFrame] = field(default_factory=list)
    address: str | None = None

    def write(self, frame: pl.DataFrame) -> str:
        """Write the range's invalid rows, `frame`'s among them, on the first call only."""
        if self.address is None:
            rows = pl.concat(self.frames, how="vertical") if self.frames else frame
            self.address = self.writer(rows)
        return self.address

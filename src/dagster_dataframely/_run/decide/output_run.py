"""One run of a validated output: its declaration and what the step's context gives it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from dagster_dataframely._run.checks.history import History, RangeHistory
from dagster_dataframely._run.checks.kind import Measure
from dagster_dataframely._run.split.staging import Staging
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely._store.quarantine_writer import QuarantineWriter


@dataclass(frozen=True, slots=True, eq=False)
class OutputRun:
    """One selected output in one run or call: its declaration and what the context gives it."""

    output: ValidatedOutput
    partition_key: str | None
    writer: QuarantineWriter | None
    """Where its invalid rows go; None without a quarantine, so any invalid row aborts."""
    clear_quarantine: bool
    """Whether a clean outcome replaces the quarantine with an empty frame here."""
    history: History | None = None
    """What the instance remembers of the asset, when its quality policy compares with it."""
    range_history: RangeHistory | None = None
    """In a run over a partition range, what a run of each partition alone would remember;
    `PartitionRange.decide` gives each partition's run its own `history` from it."""
    initial_writer: Callable[[pl.DataFrame], str | None] | None = None
    """Writes a clean outcome's empty quarantine where none is stored yet, so a reader finds
    one; None where the package cannot tell (a direct call, a manager it cannot ask)."""
    fit_table: Callable[[pl.DataFrame], pl.DataFrame] | None = None
    """Prepares the stored table for the valid rows before Dagster writes them (a DuckDB table
    gains the frame's new columns), and returns them as the manager must receive them."""
    staging: Staging | None = None
    """Where a returned `LazyFrame` is staged to be validated without collecting it; None to
    collect it (`streaming` off, or a direct call, which has no IO manager to sink to)."""
    lazy_table: bool = False
    """Whether the IO manager receives the valid rows as a `LazyFrame`, which it sinks: an
    output's `hands_lazy_table` stored by a manager that sinks one (dagster-polars')."""
    measure: Measure | None = None
    """Measures the rows' columns as the materialization records them, for the anomaly check."""
    writes_table: bool = True
    """False where nothing is written (the read-only checks of a stored table): the valid rows
    are then only counted, so a lazy table's valid rows are never collected."""

"""One validated output: what the run needs of its declaration, and what one run gives it.

`dd.asset`'s one output, each output of a `dd.multi_asset` and each member of a
`dd.collection_asset` are the same thing to the run: a key, a schema read once, resolved
settings and whether invalid rows have a quarantine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import dagster as dg
import polars as pl

from dagster_dataframely._model.schema import SchemaInfo
from dagster_dataframely._model.settings import Settings
from dagster_dataframely._model.shown_values import ShownValues
from dagster_dataframely._store.quarantine_writer import QuarantineWriter

from .policy.history import History, RangeHistory
from .split.staging import Staging


@dataclass(frozen=True, slots=True, eq=False)
class ValidatedOutput:
    """One asset whose frame the run validates, as its declaration resolved it."""

    name: str
    """The op output's name: the key of the mapping a multi-asset's function returns."""
    key: dg.AssetKey
    info: SchemaInfo
    settings: Settings
    quarantine: bool
    clear_quarantine: bool
    keys_across_partitions: bool = False
    """Whether a run checks the key over every stored partition after writing its own."""

    @property
    def shown_values(self) -> ShownValues:
        """What the event log may show of this output's values."""
        return ShownValues.of(self.info, self.settings)

    @property
    def hands_lazy_table(self) -> bool:
        """Whether a manager that sinks a `LazyFrame` receives the valid rows as one.

        A streaming output's rows are staged, not held; and a manager handed a `DataFrame` may
        record its rows (dagster-polars' `table` and `stats`), which an output whose values
        stay out of the event log must not let it. Its type says so (`VALID_ROWS`), since
        dagster-polars chooses between sinking and writing by the output's type.
        """
        return self.settings.streaming or self.shown_values.hides_values


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
    writes_table: bool = True
    """False where nothing is written (the read-only checks of a stored table): the valid rows
    are then only counted, so a lazy table's valid rows are never collected."""

"""One validated output: what the run needs of its declaration.

`dd.asset`'s one output, each output of a `dd.multi_asset` and each member of a
`dd.collection_asset` are the same thing to the run: a key, a schema read once, resolved
settings and whether invalid rows have a quarantine.
"""

from __future__ import annotations

from dataclasses import dataclass

import dagster as dg

from dagster_dataframely._model.schema import SchemaInfo
from dagster_dataframely._model.settings import Settings
from dagster_dataframely._model.shown_values import ShownValues


@dataclass(frozen=True, slots=True, eq=False)
class ValidatedOutput:
    """One asset whose frame the run validates, as its declaration resolved it."""

    name: str
    """The op output's name: the key of the mapping a multi-asset's function returns."""
    key: dg.AssetKey
    info: SchemaInfo
    settings: Settings
    quarantine: bool = False
    clear_quarantine: bool = False
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

"""Keep each validated asset's Columns tab in a run, where a materialization would replace it.

An IO manager may record its own `dagster/column_schema` (dagster-polars' has every column
nullable), replacing a yielded `MaterializeResult`'s, while metadata added through the step's
context is merged after both: so the schema's tab goes there before the user's function runs,
and one the user returned is added again after it. A direct invocation has nothing to fill.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import dagster as dg

from dagster_dataframely._model import names
from dagster_dataframely._model.columns_tab import columns_tab
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely._upstream import current_asset_context


@dataclass(frozen=True, slots=True)
class ColumnsTabs:
    """The outputs of the running step whose Columns tab this package added to its context."""

    context: dg.AssetExecutionContext | None
    outputs: tuple[ValidatedOutput, ...]

    @classmethod
    def add(cls, outputs: Sequence[ValidatedOutput]) -> ColumnsTabs:
        """Add each output's Columns tab to the running step's context, before the user's call."""
        context = current_asset_context()
        if context is None or not context.has_assets_def:
            return cls(None, ())
        added = tuple(o for o in outputs if o.key in context.assets_def.keys)
        for output in added:
            tab = columns_tab(output.info, output.settings.warning_rules)
            context.add_asset_metadata({names.COLUMN_SCHEMA: tab}, asset_key=output.key)
        return cls(context, added)

    def keep_returned(self, values: Mapping[str, object]) -> None:
        """Add again a `dagster/column_schema` the user returned on an output's result."""
        if self.context is None:
            return
        for output in self.outputs:
            value = values.get(output.name)
            if isinstance(value, dg.MaterializeResult) and value.metadata:
                returned = value.metadata.get(names.COLUMN_SCHEMA)
                if returned is not None:
                    self.context.add_asset_metadata(
                        {names.COLUMN_SCHEMA: returned}, asset_key=output.key
                    )

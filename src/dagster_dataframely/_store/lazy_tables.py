"""Whether a run's IO manager writes the table from a `LazyFrame`, by sinking it.

A `streaming=True` output hands its IO manager a `LazyFrame` of the staged valid rows, which
only a manager that sinks one can write without collecting it: dagster-polars' managers do
(`sink_df_to_path`, chosen by the output's type). Any other manager gets the rows validated in
memory, as a `DataFrame`, exactly as without `streaming`.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from dagster_dataframely._upstream import output_io_manager, running_step, step_output

from .io_manager import QuarantineRouter


def sinks_lazy_table(context: Any, asset_key: dg.AssetKey) -> bool:
    """Whether the running step's IO manager for `asset_key` sinks a `LazyFrame`; False in a call.

    Behind `QuarantineAwareIOManager`, the manager that stores the table decides.
    """
    if context is None:  # a direct call without a context: no IO manager writes the table
        return False
    step = running_step(context)
    if step is None:
        return False
    handle = step_output(step, context.assets_def.get_output_name_for_asset_key(asset_key))
    manager = output_io_manager(handle)
    table = manager.table.manager if isinstance(manager, QuarantineRouter) else manager
    return isinstance(table, dg.UPathIOManager) and callable(
        getattr(table, "sink_df_to_path", None)
    )

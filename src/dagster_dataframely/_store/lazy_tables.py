"""Whether a run's IO manager writes the table from a `LazyFrame`, by sinking it.

dagster-polars' path managers write a `LazyFrame` by sinking it (`sink_df_to_path`, chosen by
the output's type), and record only its path and column types, where a `DataFrame` also gets
its first rows and `DataFrame.describe()` recorded. So such a manager receives the valid rows
as a `LazyFrame` whenever the output asks for one (`ValidatedOutput.hands_lazy_table`): a
`streaming=True` output's staged rows, which it writes without collecting them, and the rows of
an output whose values stay out of the event log. Any other manager gets a `DataFrame`.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from dagster_dataframely._upstream import output_io_manager, running_step, step_output

from .manager_kinds.kind_choice import kind_of


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
    return kind_of(output_io_manager(handle)).sinks_lazy

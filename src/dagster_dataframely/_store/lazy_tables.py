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
    return sinks_lazy(manager.table.manager if isinstance(manager, QuarantineRouter) else manager)


def sinks_lazy(manager: dg.IOManager) -> bool:
    """Whether `manager` writes a `LazyFrame` by sinking it: a path manager of dagster-polars'."""
    return isinstance(manager, dg.UPathIOManager) and callable(
        getattr(manager, "sink_df_to_path", None)
    )


def records_dagster_polars_metadata(manager: dg.IOManager) -> bool:
    """Whether `manager`'s metadata is dagster-polars' own: of a `LazyFrame`, path and types."""
    get_metadata = getattr(type(manager), "get_metadata", None)
    return _from_dagster_polars(get_metadata)


def _from_dagster_polars(code: object) -> bool:
    return str(getattr(code, "__module__", "")).split(".")[0] == "dagster_polars"

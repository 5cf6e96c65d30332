"""What a run asks the step's own IO managers before it writes: where, and what is stored.

Dagster writes a table itself, with the manager bound to the output, after the asset yields
it; the package writes only the quarantine. Before the function runs, a database manager must
have the `partition_expr` it finds a partition's rows by. Two things have to be settled before
the writes, with that same manager: a DuckDB table the frame outgrew gets its new columns (its
insert is by position and would fail after the slice was deleted), and whether the quarantine
already has anything stored for the run's partition (a first clean run writes an empty one so
that a reader finds it). Whether a database manager stores the partition at all decides whether
the run refuses rows outside it, and whether the manager sinks a `LazyFrame` what it is handed.
All look through `QuarantineAwareIOManager` to the manager it wraps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model.keys import definition_asset_key, quarantine_key
from dagster_dataframely._upstream import (
    StepOutput,
    current_asset_context,
    output_context_for,
    output_io_manager,
    running_step,
    step_output,
)

from .manager_kinds.kind_choice import kind_of
from .manager_kinds.manager_kind import Store
from .storage_slots import check_partition_column, database_stores


def table_output(context: Any, asset_key: dg.AssetKey | None) -> StepOutput | None:
    """The running step's output of `asset_key` (the definition's only asset for None).

    None under direct invocation, which has no step. `context` may be None: an asset with no
    quarantine receives no context, and then the running step's own is looked up, which is
    another asset's when the asset is called directly inside that asset's step.
    """
    if context is None:
        context = current_asset_context()
        if (
            context is None
            or not context.has_assets_def
            or asset_key not in context.assets_def.keys
        ):
            return None
    step = running_step(context)
    if step is None:
        return None
    key = definition_asset_key(context.assets_def, asset_key)
    return step_output(step, context.assets_def.get_output_name_for_asset_key(key))


def output_stores(
    handle: StepOutput, asset_key: dg.AssetKey, quarantine: bool
) -> tuple[dg.IOManager, dg.OutputContext, dg.OutputContext | None]:
    """The step output's manager, its table's output context, and its quarantine's if it has one."""
    return (
        output_io_manager(handle),
        output_context_for(handle, asset_key),
        output_context_for(handle, quarantine_key(asset_key)) if quarantine else None,
    )


def check_partition_storage(
    context: Any,
    asset_key: dg.AssetKey,
    partitions_def: dg.PartitionsDefinition[str],
    *,
    quarantine: bool,
) -> None:
    """In a run of one partition, refuse a database manager that could not find its rows.

    Nothing under direct invocation, which writes through no manager.

    Raises
    ------
    MissingPartitionExprError
        A database manager stores the table or the quarantine, and the asset has no usable
        `partition_expr`.
    """
    handle = table_output(context, asset_key)
    if handle is None:
        return
    check_partition_column(asset_key, partitions_def, *output_stores(handle, asset_key, quarantine))


def stores_partitions_in_database(
    context: Any, asset_key: dg.AssetKey, *, quarantine: bool
) -> bool:
    """Whether a database manager stores the run's partition of the table or of its quarantine.

    Such a manager keeps a row outside the partition beside the rows a rerun replaces, so the
    run refuses one (`scope.OneStep`). False under direct invocation, which has no manager.
    """
    handle = table_output(context, asset_key)
    if handle is None:
        return False
    return bool(database_stores(*output_stores(handle, asset_key, quarantine)))


def table_fit_for(
    context: Any, asset_key: dg.AssetKey
) -> Callable[[pl.DataFrame], pl.DataFrame] | None:
    """In a run whose table a DuckDB manager stores as it is, fit that table to each frame first.

    None elsewhere: a file is replaced whole, and `QuarantineAwareIOManager` fits its own writes.
    """
    handle = table_output(context, asset_key)
    if handle is None:
        return None
    return kind_of(output_io_manager(handle)).table_fit(output_context_for(handle, asset_key))


def quarantine_stored_check(context: Any, asset_key: dg.AssetKey) -> Callable[[], bool] | None:
    """A check of whether the run's partition of the quarantine of `asset_key` is stored.

    A path-based manager has its file; a DuckDB manager has the table (a partition of an
    existing table reads as empty, never as an error). None for any other manager, which the
    package cannot ask.
    """
    handle = table_output(context, asset_key)
    if handle is None:
        return None
    output = output_context_for(handle, quarantine_key(asset_key))
    store = kind_of(output_io_manager(handle)).quarantine_store(output)
    return store.kind.stored_check(store.context)


def sinks_lazy_table(context: Any, asset_key: dg.AssetKey) -> bool:
    """Whether the running step's IO manager for `asset_key` sinks a `LazyFrame`; False in a call.

    dagster-polars' path managers write a `LazyFrame` by sinking it (`sink_df_to_path`, chosen by
    the output's type), and record only its path and column types, where a `DataFrame` also gets
    its first rows and `DataFrame.describe()` recorded. So such a manager receives the valid rows
    as a `LazyFrame` whenever the output asks for one (`ValidatedOutput.hands_lazy_table`): a
    `streaming=True` output's staged rows, which it writes without collecting them, and the rows
    of an output whose values stay out of the event log. Any other manager gets a `DataFrame`.
    Behind `QuarantineAwareIOManager`, the manager that stores the table decides.
    """
    handle = table_output(context, asset_key)
    return handle is not None and kind_of(output_io_manager(handle)).sinks_lazy


def stored_table(context: Any, asset_key: dg.AssetKey) -> Store | None:
    """The store of `asset_key`'s table in the running step, whose kind reads what is stored;
    None in a direct call. Behind `QuarantineAwareIOManager`, its table's manager's."""
    handle = table_output(context, asset_key)
    if handle is None:
        return None
    manager = output_io_manager(handle)
    return kind_of(manager).table_store(output_context_for(handle, asset_key))

"""The writer that runs inside a step: the asset's own IO manager stores its invalid rows.

`delegating_writer` hands the rows to the IO manager bound to the asset's output, under the
key `<name>_quarantine`, after checking that the quarantine has a place of its own and that no
other run writes the same partition. `validate_quarantine_key` refuses a quarantine key that
another asset of the code location materializes.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg
import polars as pl

from dagster_dataframely._model import names
from dagster_dataframely._model.keys import coerce_asset_key, definition_asset_key, quarantine_key
from dagster_dataframely._upstream import (
    DagsterInvalidPropertyError,
    output_context_for,
    output_io_manager,
    running_step,
    source_graph_has,
    source_graph_materializable_keys,
)
from dagster_dataframely.errors import (
    NoRunningStepError,
    QuarantineKeyCollisionError,
    QuarantineStorageCollisionError,
)

from .concurrent_runs import claim_partition
from .manager_kinds.kind_choice import kind_of
from .manager_kinds.router import write_through
from .manager_metadata import shown_manager_metadata
from .quarantine_writer import QuarantineWriter
from .step_storage import table_output
from .storage_slots import check_quarantine_storage
from .write_errors import shown_write_failure

QUARANTINE_FRAME = dg.PythonObjectDagsterType(pl.DataFrame, name="QuarantineFrame")
"""The type a quarantine write reports to the IO manager: the invalid rows, in memory."""


def delegating_writer(
    context: dg.AssetExecutionContext, asset_key: dg.AssetKey | str | Sequence[str] | None = None
) -> QuarantineWriter:
    """Return a writer that hands the invalid rows to the asset's own IO manager.

    The manager receives a copy of the step's output context with only the asset key changed to
    `<name>_quarantine`, so it stores the rows as it stores any asset of that key: partition key,
    definition metadata (a database manager's `partition_expr`) and resource config all carry
    over. `PolarsParquetIOManager` writes a parquet file beside the table, and
    `DuckDBPolarsIOManager` a table beside it. A DuckDB quarantine's slice is replaced in one
    transaction, in a table given first every column the frame brings, so a rule added to the
    schema, or a failed insert, never empties it. Whatever metadata the manager records for
    this write is discarded, because the quarantine has no materialization (but for the
    address, read from it after the values the asset may not show are gone).
    When the quarantine is in the asset graph (`quarantine_spec`), each write is logged as an
    observation of its key instead: row count, address, partition and run.

    In a run it first checks, before anything is written, that the quarantine has a place of
    its own (`QuarantineStorageError`, `UnsafePathKeyError`) and that no other run is writing
    the same partition of the asset (`ConcurrentRunError`): of runs that reach this point for
    one partition together, the one created first writes and the others stop.

    Parameters
    ----------
    context
        The running asset's context.
    asset_key
        The asset whose invalid rows the writer stores, one of the step's own assets: the
        output of a multi-asset whose IO manager, partition and metadata the quarantine
        takes: its key, or its string as Dagster prints it (`"sales/orders"`). `None` means
        the asset definition's only asset, as a `@dg.asset` has.

    Returns
    -------
    QuarantineWriter
        A writer that takes the invalid rows and returns the quarantine's address: the
        location `QuarantineAwareIOManager` reports, else the quarantine's asset key as a
        string.

    Raises
    ------
    DagsterInvalidPropertyError
        There is no step, which means a direct invocation: use `file_writer` there. Exactly
        Dagster's class, as the spec names it; its message is `NoRunningStepError`'s.
    MultiAssetKeyError
        `asset_key` is None and the context's asset definition has more than one asset, or
        `asset_key` is not one of the definition's assets.
    QuarantineStorageError
        The IO manager would store the quarantine where the table goes, outside its own base
        directory, or by step output rather than by asset key.
    UnsafePathKeyError
        A path-based IO manager cannot hold the asset or partition key as a path as it is.
    ConcurrentRunError
        Another run is writing the same partition of the asset, or reached this point for it
        at the same moment and was created first.
    StorageWriteError
        From the writer, when the IO manager fails to write the rows of an output of `dd.asset`,
        `dd.multi_asset` or `dd.collection_asset` whose settings hide values (a sensitive
        column, or `row_sample=0`): its error, whose message may quote one, is left out. Any
        other failure is the manager's own error, with a note.
    """
    key_given = coerce_asset_key(asset_key) if asset_key is not None else None
    handle = table_output(context, key_given)
    if handle is None:
        # The spec names Dagster's own class here, so raise exactly that one, with the
        # package's message saying what to use instead.
        raise DagsterInvalidPropertyError(NoRunningStepError("delegating_writer").message)
    step = handle.step
    key = definition_asset_key(context.assets_def, key_given)
    target = quarantine_key(key)
    table_context = output_context_for(handle, key)
    check_quarantine_storage(
        key, output_io_manager(handle), table_context, output_context_for(handle, target)
    )
    claim_partition(context.instance, context.run, key, step.step.key, table_context)

    def write(frame: pl.DataFrame) -> str:
        # The asset key differs from the table's, and the type: the rows are a DataFrame, which
        # a manager that sinks a streamed table must write, not sink.
        output = output_context_for(handle, target, dagster_type=QUARANTINE_FRAME)
        io_manager = output_io_manager(handle)
        name = type(io_manager).__name__
        writer = kind_of(io_manager).quarantine_writer(staged=False, name=name)
        # A failure's message, like the metadata below, shows only what the asset may show.
        with shown_write_failure(
            output.definition_metadata,
            asset=target.to_user_string(),
            manager=name,
            note=f"dagster-dataframely could not write the quarantine {target.to_user_string()!r} "
            f"(the invalid rows of {key.to_user_string()!r}) through "
            f"{name}; the table of {key.to_user_string()!r} was not "
            "written either, so it keeps its previous contents.",
        ):
            write_through(writer, output, frame)
        # What the manager recorded, with only the values the asset may show: whatever is
        # read from it now or later can never carry a quarantined row the settings hide.
        logged = shown_manager_metadata(
            output.get_logged_metadata(), output.definition_metadata, frame.schema
        )
        # A manager that knows the real location (`QuarantineAwareIOManager`) reports it under
        # the package's own key; otherwise the quarantine's asset key is the address.
        reported = logged.get(names.QUARANTINE_ADDRESS)
        address = str(reported.value) if reported is not None else target.to_user_string()
        # NOTE: nothing materializes a quarantine declared with `quarantine_spec`, so each write
        # (of zero rows too) is an observation of its key: its history in the catalog.
        if source_graph_has(step, target):
            partition = output.partition_key if output.has_partition_key else None
            observation = dg.AssetObservation(
                target,
                partition=partition,
                metadata={
                    names.ROW_COUNT: frame.height,
                    names.QUARANTINE_ADDRESS: address,
                    names.QUARANTINE_OF: key.to_user_string(),
                    names.RUN: dg.MetadataValue.dagster_run(context.run.run_id),
                },
            )
            context.log_event(observation)
        return address

    return write


def validate_quarantine_key(
    context: dg.AssetExecutionContext, asset_key: dg.AssetKey | str | Sequence[str] | None = None
) -> None:
    """Raise if another asset in the code location already materializes the quarantine's key.

    Both would write to one table or file, and the later write would replace the earlier one.
    For a partitioned asset, an asset whose key extends the quarantine's
    (`["orders_quarantine", "p1"]`) is refused too: a path-based manager would write it among
    the quarantine's partition files. The code location's graph is checked, not the run's: a
    run of a selection collides with an asset it does not run. Call it at the start of a
    hand-wired asset's function when the asset writes a quarantine, as `dd.asset` does. Under
    direct invocation there is no code location to check, so this does nothing.

    Parameters
    ----------
    context
        The running asset's context.
    asset_key
        The asset whose quarantine to check, one of the step's own assets (an output of a
        multi-asset), as a key or its string (`"sales/orders"`). `None` means the asset
        definition's only asset, as a `@dg.asset` has.

    Raises
    ------
    MultiAssetKeyError
        `asset_key` is None and the context's asset definition has more than one asset, or
        `asset_key` is not one of the definition's assets.
    QuarantineKeyCollisionError
        Another asset in the code location materializes `<name>_quarantine`.
    QuarantineStorageCollisionError
        The asset is partitioned and another asset's key extends the quarantine's key.
    """
    step = running_step(context)
    if step is None:
        return
    # The code location's graph, not the run's: the other asset need not be in the run.
    key = definition_asset_key(context.assets_def, asset_key)
    materialized = source_graph_materializable_keys(step)
    target = quarantine_key(key)
    if target in materialized:
        raise QuarantineKeyCollisionError(key.to_user_string(), target.to_user_string())
    if context.assets_def.partitions_def is None:
        return
    # A path-based manager stores the partitions as files under the quarantine's key: an asset
    # whose key extends it writes among them.
    depth = len(target.path)
    for other in sorted(materialized, key=lambda k: tuple(k.path)):
        if len(other.path) > depth and other.path[:depth] == target.path:
            raise QuarantineStorageCollisionError(
                key.to_user_string(), target.to_user_string(), other.to_user_string()
            )

"""Which writer a validating asset's invalid rows get: the IO manager, a file, or memory.

In a run the step provides the asset's own IO manager. A direct invocation has no step: its
quarantine goes to a parquet file under the quarantine directory, or to memory inside
`dd.testing.call_asset`, under the partition key of the context the caller built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model.keys import run_partition_key
from dagster_dataframely._model.settings import read_quarantine_dir
from dagster_dataframely._upstream import running_step
from dagster_dataframely.errors import QuarantineDirError

from .capture import capturing_writer, is_capturing
from .delegating import delegating_writer
from .files import file_writer
from .quarantine_writer import QuarantineWriter
from .step_storage import quarantine_stored_check


def writer_for(
    context: Any, key: dg.AssetKey, partitions_def: dg.PartitionsDefinition[str] | None
) -> QuarantineWriter:
    """The asset's own IO manager in a run; in a call, memory inside `capturing_quarantine()`,
    else a parquet file under the quarantine directory, read when rows need writing."""
    if running_step(context) is not None:
        return delegating_writer(context, key)
    # NOTE: `dg.build_asset_context(partition_key="2026-01-01|eu")` keeps a plain string where a run
    # has a `dg.MultiPartitionKey`.
    partition_key = (
        run_partition_key(partitions_def, context.partition_key, function="build_asset_context")
        if context.has_partition_key
        else None
    )
    captured = capturing_writer(key, partition_key)
    if captured is not None:
        return captured

    def write_file(frame: pl.DataFrame) -> str:
        directory = read_quarantine_dir()  # read only when invalid rows need writing
        if directory is None:
            raise QuarantineDirError(key.to_user_string())
        return file_writer(key, directory, partition_key)(frame)

    return write_file


def initial_writer_for(
    context: Any, key: dg.AssetKey, writer: QuarantineWriter
) -> Callable[[pl.DataFrame], str | None] | None:
    """In a run, `writer` for the empty quarantine of a clean outcome when none is stored yet.

    A reader of the quarantine (`quarantine_spec`) then finds one from the first run on, with
    its columns and no rows. Once one is stored, a clean run writes nothing, as the failure
    policy says, so earlier rows stay unless `clear_quarantine=True`. None in a direct call,
    which writes no quarantine on a clean call, and for a manager the package cannot ask.
    """
    stored = quarantine_stored_check(context, key)
    if stored is None:
        return None

    def write_if_none_stored(frame: pl.DataFrame) -> str | None:
        return None if stored() else writer(frame)

    return write_if_none_stored


def can_clear(context: Any) -> bool:
    """Whether a clean run or call can replace the quarantine with an empty one.

    Always in a run, where the IO manager writes it. In a direct call only where a quarantine
    was written to be replaced: a quarantine directory, or the test helper's memory.
    """
    if running_step(context) is not None:
        return True
    return is_capturing() or read_quarantine_dir() is not None

"""What a validating asset's context gives it: the quarantine writer and the partition.

In a run the step provides both: the asset's own IO manager writes the quarantine. A direct
invocation has no step: its quarantine goes to a parquet file under the quarantine directory,
or to memory inside `dd.testing.call_asset`, and its partition key comes from the context the
caller built.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
import polars as pl

from ._quarantine import delegating_writer
from ._quarantine_capture import capturing_writer, is_capturing
from ._quarantine_files import QuarantineWriter, file_writer
from ._settings import read_quarantine_dir
from ._upstream import DagsterInvalidPropertyError, current_asset_context, running_step
from .errors import QuarantineDirError


def quarantine_writer(
    context: Any, key: dg.AssetKey, partitions_def: dg.PartitionsDefinition[str] | None
) -> QuarantineWriter:
    """The asset's own IO manager in a run; in a call, a parquet file under the quarantine dir,
    or memory inside `capturing_quarantine()` (the test helper's)."""
    try:
        return delegating_writer(context, key)
    except DagsterInvalidPropertyError:
        partition_key = call_partition_key(context, partitions_def)
        captured = capturing_writer(key, partition_key)
        if captured is not None:
            return captured

        def write_file(frame: pl.DataFrame) -> str:
            directory = read_quarantine_dir()  # read only when invalid rows need writing
            if directory is None:
                raise QuarantineDirError(key.to_user_string()) from None
            return file_writer(key, directory, partition_key)(frame)

        return write_file


def call_partition_key(
    context: Any, partitions_def: dg.PartitionsDefinition[str] | None
) -> str | None:
    """The partition key of a direct invocation, a multi-partition key parsed into its dimensions.

    `dg.build_asset_context(partition_key="2026-01-01|eu")` keeps the key a plain string, where a
    run has a `dg.MultiPartitionKey`; parsed, the file gets one directory per dimension, as the
    IO manager lays out the same partition in a run.
    """
    if not context.has_partition_key:
        return None
    partition_key: str = context.partition_key
    if isinstance(partitions_def, dg.MultiPartitionsDefinition) and not isinstance(
        partition_key, dg.MultiPartitionKey
    ):
        return partitions_def.get_partition_key_from_str(partition_key)
    return partition_key


def can_clear(context: Any) -> bool:
    """Whether a clean run or call can replace the quarantine with an empty one.

    Always in a run, where the IO manager writes it. In a direct call only with a quarantine
    directory: without one no call wrote a quarantine file to replace, and a clean call must
    not fail for want of one. Inside `dd.testing.call_asset` the in-memory quarantine stands
    in for the directory, so the call shows the empty frame a run would write.
    """
    try:
        running_step(context)
    except DagsterInvalidPropertyError:
        return is_capturing() or read_quarantine_dir() is not None
    return True


def partition_key(context: Any) -> str | None:
    """The partition a run or call validates, from the asset's context or the running step's.

    An asset without a quarantine keeps the signature its author wrote, so it may receive no
    context; a run still has one, which the step sets for its compute function.
    """
    if context is None:
        context = current_asset_context()
    if context is None or not context.has_partition_key:
        return None
    partition_key: str = context.partition_key
    return partition_key


def selected_outputs(context: Any, outputs: list[str]) -> list[str]:
    """The outputs a run of a multi-asset writes, in declaration order; all of them in a call.

    A direct invocation has no step to select from, and its context cannot say.
    """
    try:
        running_step(context)
    except DagsterInvalidPropertyError:
        return outputs
    selected = set(context.op_execution_context.selected_output_names)
    return [name for name in outputs if name in selected]

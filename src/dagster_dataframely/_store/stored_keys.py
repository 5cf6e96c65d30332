"""The key columns of every stored partition of an asset, read where its IO manager stores it.

The table-wide key check reads these after a run has written its partitions, through the kind
of the manager that stores the table (`manager_kinds`): a lazy scan of each stored partition
(a path manager's files, found by one listing of the asset's folder; a Delta table's
partitions), or one query that groups the keys inside the database and returns only the
repeated ones (DuckDB). Only the partitions the definition holds now count, each named by its
Dagster key, never by a stored value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely import _upstream

from .manager_kinds.kind_choice import kind_of
from .manager_kinds.manager_kind import PARTITIONS, StoredPartition
from .step_storage import table_output

__all__ = [
    "PARTITIONS",
    "StoredPartition",
    "repeated_in_duckdb",
    "stored_partitions",
    "stored_table",
]


def stored_table(
    context: Any, asset_key: dg.AssetKey
) -> tuple[dg.IOManager, dg.OutputContext] | None:
    """The running step's manager storing `asset_key`'s table and its output context; None
    in a direct call. Behind `QuarantineAwareIOManager`, its table's manager and context."""
    handle = table_output(context, asset_key)
    if handle is None:
        return None
    manager = _upstream.output_io_manager(handle)
    store = kind_of(manager).table_store(_upstream.output_context_for(handle, asset_key))
    return store.kind.manager, store.context


def stored_partitions(
    manager: dg.IOManager,
    context: dg.OutputContext,
    partitions_def: dg.PartitionsDefinition,
    instance: dg.DagsterInstance,
) -> dict[str, StoredPartition] | None:
    """Each stored partition the definition holds now, by its partition key, scanned lazily;
    None where the manager cannot be read this way. `context` is the run's output's."""
    return kind_of(manager).stored_partitions(context, partitions_def, instance)


def repeated_in_duckdb(
    manager: dg.IOManager,
    context: dg.OutputContext,
    key: Sequence[str],
    instance: dg.DagsterInstance,
) -> pl.DataFrame | None:
    """The keys stored in more than one partition, grouped where the manager stores them (one
    DuckDB query), their partitions sorted under `PARTITIONS`; None for any other manager."""
    return kind_of(manager).repeated_keys(context, key, instance)

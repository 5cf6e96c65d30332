"""The key columns of every stored partition of an asset, read where its IO manager stores it.

The table-wide key check reads these after a run has written its partitions: from a path
manager (dagster-polars') a lazy scan of each partition's file that selects only the key
columns, so nothing else is read; from DuckDB's manager one query that groups the keys inside
the database and returns only the repeated ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely import _upstream

from .duckdb_tables import connection_of, quoted
from .io_manager import QuarantineRouter
from .step_storage import table_output

PARTITIONS = "dy_partitions"
"""The column of a grouped frame that lists, sorted, the partitions holding one key."""


def stored_table(
    context: Any, asset_key: dg.AssetKey
) -> tuple[dg.IOManager, dg.OutputContext] | None:
    """The running step's manager storing `asset_key`'s table and its output context; None
    in a direct call. Behind `QuarantineAwareIOManager`, its table's manager and context."""
    handle = table_output(context, asset_key)
    if handle is None:
        return None
    manager = _upstream.output_io_manager(handle)
    output = _upstream.output_context_for(handle, asset_key)
    if isinstance(manager, QuarantineRouter):
        return manager.table.manager, manager.table.forward(output)
    return manager, output


def stored_partition_scans(
    manager: dg.IOManager,
    asset_key: dg.AssetKey,
    partitions_def: dg.PartitionsDefinition,
    instance: dg.DagsterInstance,
    key: Sequence[str],
) -> dict[str, pl.LazyFrame] | None:
    """A lazy scan of `key`'s columns in each stored partition's file; None off a path manager.

    Each file is where the manager's own `handle_output` writes that partition, scanned as
    the manager scans it; a partition never written has no file and is left out.
    """
    if not (isinstance(manager, dg.UPathIOManager) and hasattr(manager, "scan_df_from_path")):
        return None
    keys = partitions_def.get_partition_keys(dynamic_partitions_store=instance)
    if not keys:
        return {}
    context = dg.build_output_context(
        asset_key=asset_key,
        asset_partitions_def=partitions_def,
        asset_partition_key_range=dg.PartitionKeyRange(keys[0], keys[-1]),
        instance=instance,
    )
    paths = _upstream.upath_output_locations(manager, context)
    # The manager's own scan, with its storage options (S3's credentials and endpoint).
    scan: Any = manager.scan_df_from_path
    reading = dg.build_input_context(asset_key=asset_key, instance=instance)
    return {
        str(partition): scan(path, reading).select(list(key))
        for partition, path in zip(context.asset_partition_keys, paths, strict=True)
        if path.exists()
    }


def repeated_in_duckdb(
    manager: dg.IOManager, context: dg.OutputContext, key: Sequence[str]
) -> pl.DataFrame | None:
    """The keys stored in more than one partition of a DuckDB table, grouped by one query.

    One row per repeated key, with its partitions (the table's partition column, as text)
    sorted under `PARTITIONS`; None off DuckDB's manager. `context` is the run's output's.
    """
    if not _upstream.is_duckdb_io_manager(manager):
        return None
    table_slice = _upstream.db_table_slice(manager, context)
    dimensions: list[Any] = list(table_slice.partition_dimensions or [])
    table = f"{quoted(table_slice.schema)}.{quoted(table_slice.table)}"
    query = repeated_keys_query(table, dimensions[0].partition_expr, key)
    with connection_of(manager, context, table_slice) as connection:
        grouped: Any = connection.execute(query).pl()
    return pl.DataFrame(grouped)


def repeated_keys_query(table: str, partition_expr: str, key: Sequence[str]) -> str:
    """The DuckDB query of the keys of `table` in more than one partition (`partition_expr`)."""
    part = f"CAST({partition_expr} AS VARCHAR)"
    columns = ", ".join(quoted(column) for column in key)
    return (
        f"SELECT {columns}, list(DISTINCT {part} ORDER BY {part}) AS {PARTITIONS} FROM {table} "
        f"GROUP BY {columns} HAVING count(DISTINCT {part}) > 1"
    )

"""The key columns of every stored partition of an asset, read where its IO manager stores it.

The table-wide key check reads these after a run has written its partitions: from a path
manager (dagster-polars') a lazy scan of each partition's file that selects only the key
columns, so nothing else is read; from DuckDB's manager one query that groups the keys inside
the database and returns only the repeated ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
    manager: dg.IOManager,
    context: dg.OutputContext,
    key: Sequence[str],
    instance: dg.DagsterInstance,
) -> pl.DataFrame | None:
    """The keys stored in more than one partition of a DuckDB table, grouped by one query.

    One row per repeated key, with its partitions (named by their Dagster keys) sorted under
    `PARTITIONS`; None off DuckDB's manager. `context` is the run's output's.
    """
    if not _upstream.is_duckdb_io_manager(manager):
        return None
    table_slice = _upstream.db_table_slice(manager, context)
    table = f"{quoted(table_slice.schema)}.{quoted(table_slice.table)}"
    columns = partition_columns(
        context.asset_partitions_def,
        [d.partition_expr for d in table_slice.partition_dimensions or []],
        instance,
    )
    with connection_of(manager, context, table_slice) as connection:
        return grouped_in_duckdb(connection, table, columns, key)


@dataclass(frozen=True)
class PartitionColumn:
    """One partition dimension as the table stores it: its SQL expression and, for a time
    window dimension, each partition's key with the wall-clock bounds DuckDB's manager writes
    it between (its column holds times, not keys)."""

    expr: str
    windows: pl.DataFrame | None = None


def partition_columns(
    partitions_def: dg.PartitionsDefinition,
    exprs: Sequence[str],
    instance: dg.DagsterInstance | None,
) -> list[PartitionColumn]:
    """Each dimension's column, in the order DuckDB's manager lists them (a multi-partition
    definition's own order, which is also the order of the parts of its keys)."""
    dimensions = (
        [d.partitions_def for d in partitions_def.partitions_defs]
        if isinstance(partitions_def, dg.MultiPartitionsDefinition)
        else [partitions_def]
    )
    return [
        PartitionColumn(expr, _windows(dimension, instance))
        for dimension, expr in zip(dimensions, exprs, strict=True)
    ]


def _windows(
    dimension: dg.PartitionsDefinition, instance: dg.DagsterInstance | None
) -> pl.DataFrame | None:
    """Every partition's key and bounds of a time window dimension; None for another kind.

    The bounds are wall-clock times in the definition's timezone, as DuckDB's manager compares
    its partition column with them.
    """
    if not isinstance(dimension, dg.TimeWindowPartitionsDefinition):
        return None
    keys = dimension.get_partition_keys(dynamic_partitions_store=instance)
    windows = [dimension.time_window_for_partition_key(k) for k in keys]
    return pl.DataFrame(
        {
            _WINDOW_KEY: keys,
            _WINDOW_START: [w.start.replace(tzinfo=None) for w in windows],
            _WINDOW_END: [w.end.replace(tzinfo=None) for w in windows],
        },
        schema={_WINDOW_KEY: pl.String, _WINDOW_START: pl.Datetime, _WINDOW_END: pl.Datetime},
    )


_WINDOW_KEY, _WINDOW_START, _WINDOW_END = "dy_window_key", "dy_window_start", "dy_window_end"


def grouped_in_duckdb(
    connection: Any, table: str, columns: Sequence[PartitionColumn], key: Sequence[str]
) -> pl.DataFrame:
    """The keys of `table` in more than one partition, grouped on `connection` by one query;
    each time window dimension's windows are registered for the query and dropped after it."""
    names = [f"dy_windows_{index}" for index in range(len(columns))]
    registered = [
        (name, column.windows)
        for name, column in zip(names, columns, strict=True)
        if column.windows is not None
    ]
    for name, windows in registered:
        connection.register(name, windows.to_arrow())
    try:
        grouped: Any = connection.execute(repeated_keys_query(table, columns, key)).pl()
    finally:
        for name, _ in registered:
            connection.unregister(name)
    return pl.DataFrame(grouped)


def repeated_keys_query(table: str, columns: Sequence[PartitionColumn], key: Sequence[str]) -> str:
    """The DuckDB query of the keys of `table` in more than one partition.

    A partition is named as Dagster names it: a time window by its key (found by joining the
    registered windows `dy_windows_<i>`), another dimension by its value as text, the parts of
    a multi-partition joined by `|`.
    """
    parts: list[str] = []
    joins: list[str] = []
    for index, column in enumerate(columns):
        as_text = f"CAST({column.expr} AS VARCHAR)"
        if column.windows is None:
            parts.append(as_text)
            continue
        alias = f"dy_w{index}"
        joins.append(
            f"LEFT JOIN dy_windows_{index} AS {alias} ON {column.expr} >= {alias}.{_WINDOW_START} "
            f"AND {column.expr} < {alias}.{_WINDOW_END}"
        )
        parts.append(f"coalesce({alias}.{_WINDOW_KEY}, {as_text})")
    part = f"concat_ws('|', {', '.join(parts)})"
    selected = ", ".join(f"{table}.{quoted(column)}" for column in key)
    grouped = ", ".join(quoted(column) for column in key)
    return (
        f"SELECT {grouped}, list(DISTINCT dy_part ORDER BY dy_part) AS {PARTITIONS} FROM "
        f"(SELECT {selected}, {part} AS dy_part FROM {table} {' '.join(joins)}) "
        f"GROUP BY {grouped} HAVING count(DISTINCT dy_part) > 1"
    )

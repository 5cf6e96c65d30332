"""DuckDB's manager: a database manager whose writes the package can stage, fit and query.

`DuckDBPolarsIOManager` creates a table from the first frame it stores, then deletes the slice
and inserts every later frame by position, each statement committed on its own
(`duckdb_tables`). So the package fits the table to each frame before the write (bound
directly, before Dagster writes; wrapped, inside the write), a staged write or a quarantine's
replaces the slice in one transaction, and the keys stored in more than one partition are
grouped by one query inside the database, which returns only the repeated ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import dagster as dg
import polars as pl

from dagster_dataframely import _upstream
from dagster_dataframely._store.duckdb_tables import (
    connection_of,
    fit_table,
    fitting,
    quoted,
    stored_columns,
    table_exists,
    transactional,
)

from .database_manager import DatabaseManager
from .manager_kind import PARTITIONS


class DuckDBManager(DatabaseManager):
    """The `DbIOManager` a `DuckDBIOManager` builds."""

    @classmethod
    def claims(cls, manager: dg.IOManager) -> bool:
        return _upstream.is_duckdb_io_manager(manager)

    def staged(self, name: str) -> dg.IOManager:
        return transactional(self.manager)

    def table_writer(self, *, staged: bool, name: str) -> dg.IOManager:
        return transactional(self.manager) if staged else fitting(self.manager)

    def quarantine_writer(self, *, staged: bool, name: str) -> dg.IOManager:
        # NOTE: replaced in one transaction, staged or not, in a table grown to fit; an empty
        # one still creates its table, so that it can be read.
        return transactional(self.manager, create_empty=True)

    def table_fit(self, context: dg.OutputContext) -> Callable[[pl.DataFrame], pl.DataFrame]:
        return lambda frame: fit_table(self.manager, context, frame)

    def stored_check(self, context: dg.OutputContext) -> Callable[[], bool]:
        # NOTE: a partition of an existing table reads as empty, never as an error.
        return lambda: table_exists(self.manager, context)

    def repeated_keys(
        self, context: dg.OutputContext, key: Sequence[str], instance: dg.DagsterInstance
    ) -> pl.DataFrame:
        """One row per repeated key, with its partitions (named by their Dagster keys) sorted
        under `PARTITIONS`. No row when no partition stores the key's columns: the manager
        creates no table for a skipped or empty partition, and the package adds a column only
        when a frame with rows brings it."""
        table_slice = _upstream.db_table_slice(self.manager, context)
        table = f"{quoted(table_slice.schema)}.{quoted(table_slice.table)}"
        columns = partition_columns(
            context.asset_partitions_def,
            [d.partition_expr for d in table_slice.partition_dimensions or []],
            instance,
        )
        with connection_of(self.manager, context, table_slice) as connection:
            if not set(key) <= set(stored_columns(connection, table_slice)):
                return pl.DataFrame(
                    schema={**dict.fromkeys(key, pl.Null), PARTITIONS: pl.List(pl.String)}
                )
            return grouped_in_duckdb(connection, table, columns, key)


@dataclass(frozen=True)
class PartitionColumn:
    """One partition dimension as the table stores it: its SQL expression, and the dimension
    whose partitions it holds now (a dynamic one's read from `instance`)."""

    expr: str
    dimension: dg.PartitionsDefinition
    instance: dg.DagsterInstance | None = None


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
        PartitionColumn(expr, dimension, instance)
        for dimension, expr in zip(dimensions, exprs, strict=True)
    ]


def _held_partitions(connection: Any, table: str, column: PartitionColumn) -> pl.DataFrame:
    # NOTE: A time window dimension's are only the windows between the earliest and the latest time
    # stored (a day's margin either side, clipped to the definition), so an hourly definition of
    # years costs what its stored span costs. The bounds are wall-clock times in the definition's
    # timezone, as DuckDB's manager compares its partition column with them.
    dimension = column.dimension
    if not isinstance(dimension, dg.TimeWindowPartitionsDefinition):
        keys = dimension.get_partition_keys(dynamic_partitions_store=column.instance)
        return pl.DataFrame({_KEY: keys}, schema={_KEY: pl.String})
    stored = connection.execute(f"SELECT min({column.expr}), max({column.expr}) FROM {table}")
    keys = _keys_spanning(dimension, *stored.fetchone())
    windows = [dimension.time_window_for_partition_key(k) for k in keys]
    return pl.DataFrame(
        {
            _KEY: keys,
            _WINDOW_START: [w.start.replace(tzinfo=None) for w in windows],
            _WINDOW_END: [w.end.replace(tzinfo=None) for w in windows],
        },
        schema={_KEY: pl.String, _WINDOW_START: pl.Datetime, _WINDOW_END: pl.Datetime},
    )


def _keys_spanning(
    dimension: dg.TimeWindowPartitionsDefinition, earliest: Any, latest: Any
) -> list[str]:
    first, last = dimension.get_first_partition_window(), dimension.get_last_partition_window()
    if earliest is None or first is None or last is None:
        return []
    zone = ZoneInfo(dimension.timezone)
    # NOTE: a day's margin, as a wall-clock time read in the zone may be an hour off at a
    # daylight saving change; a window too many only matches no row.
    start = max(_in_zone(earliest, zone) - timedelta(days=1), first.start)
    end = min(_in_zone(latest, zone) + timedelta(days=1), last.end)
    if start >= end:
        return []
    spanned = dimension.get_partition_keys_in_time_window(dg.TimeWindow(start, end))
    return [key for key in spanned if dimension.has_partition_key(key)]


def _in_zone(value: Any, zone: ZoneInfo) -> datetime:
    moment = value if isinstance(value, datetime) else datetime(value.year, value.month, value.day)
    return moment.replace(tzinfo=zone) if moment.tzinfo is None else moment.astimezone(zone)


_KEY, _WINDOW_START, _WINDOW_END = "dy_partition_key", "dy_window_start", "dy_window_end"


def grouped_in_duckdb(
    connection: Any, table: str, columns: Sequence[PartitionColumn], key: Sequence[str]
) -> pl.DataFrame:
    """The keys of `table` in more than one partition, grouped on `connection` by one query;
    each dimension's held partitions are registered for the query and dropped after it."""
    held = [_held_partitions(connection, table, column) for column in columns]
    names = [f"dy_partitions_{index}" for index in range(len(columns))]
    for name, partitions in zip(names, held, strict=True):
        connection.register(name, partitions.to_arrow())
    try:
        query = repeated_keys_query(
            table,
            [column.expr for column in columns],
            [_WINDOW_START in h.columns for h in held],
            key,
        )
        grouped: Any = connection.execute(query).pl()
    finally:
        for name in names:
            connection.unregister(name)
    return pl.DataFrame(grouped)


def repeated_keys_query(
    table: str, exprs: Sequence[str], windowed: Sequence[bool], key: Sequence[str]
) -> str:
    """The DuckDB query of the keys of `table` in more than one partition.

    A row is named by the partition that holds it, as Dagster names it (joined to the
    registered `dy_partitions_<i>`: a time window dimension (`windowed`) by the window its
    column falls in, another by its value as text, the parts of a multi-partition joined by
    `|`); a row no partition holds takes no part, so no stored value ever names a partition.
    A partition in which a key column holds no value (a partition stored before the column
    was added, whose rows read NULL in it) takes no part in that key's check, as a parquet
    file without the column takes none; elsewhere NULL is a value as any other, as in
    Dataframely's rules.
    """
    joins: list[str] = []
    parts: list[str] = []
    for index, (expr, by_window) in enumerate(zip(exprs, windowed, strict=True)):
        alias = f"dy_p{index}"
        condition = (
            f"{expr} >= {alias}.{_WINDOW_START} AND {expr} < {alias}.{_WINDOW_END}"
            if by_window
            else f"CAST({expr} AS VARCHAR) = {alias}.{_KEY}"
        )
        joins.append(f"JOIN dy_partitions_{index} AS {alias} ON {condition}")
        parts.append(f"{alias}.{_KEY}")
    selected = ", ".join(f"{table}.{quoted(column)}" for column in key)
    grouped = ", ".join(quoted(column) for column in key)
    valued = " AND ".join(f"count({quoted(column)}) > 0" for column in key)
    return (
        f"WITH dy_rows AS (SELECT {selected}, concat_ws('|', {', '.join(parts)}) AS dy_part "
        f"FROM {table} {' '.join(joins)}), "
        f"dy_valued AS (SELECT dy_part FROM dy_rows GROUP BY dy_part HAVING {valued}) "
        f"SELECT {grouped}, list(DISTINCT dy_part ORDER BY dy_part) AS {PARTITIONS} "
        f"FROM dy_rows WHERE dy_part IN (SELECT dy_part FROM dy_valued) "
        f"GROUP BY {grouped} HAVING count(DISTINCT dy_part) > 1"
    )

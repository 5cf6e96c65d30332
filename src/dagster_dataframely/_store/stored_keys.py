"""The key columns of every stored partition of an asset, read where its IO manager stores it.

The table-wide key check reads these after a run has written its partitions: from a path
manager (dagster-polars') a lazy scan of each stored partition's file, found by listing the
asset's folder once, so the cost follows what is stored and not the partitions definition;
from DuckDB's manager one query that groups the keys inside the database and returns only the
repeated ones. Either way only the partitions the definition holds now count, each named by
its Dagster key, never by a stored value.
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import dagster as dg
import polars as pl
from upath import UPath

from dagster_dataframely import _upstream

from .duckdb_tables import connection_of, quoted, stored_columns
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


@dataclass(frozen=True, slots=True)
class StoredPartition:
    """One stored partition's file, scanned lazily as its manager scans it."""

    scan: pl.LazyFrame
    columns: frozenset[str]
    """The columns the file holds: a partition stored before a column was added lacks it."""


def stored_partitions(
    manager: dg.IOManager,
    context: dg.OutputContext,
    partitions_def: dg.PartitionsDefinition,
    instance: dg.DagsterInstance,
) -> dict[str, StoredPartition] | None:
    """Each stored partition's file by its partition key; None off a path manager.

    A partition counts when the definition holds it now (a deleted dynamic partition's file
    is left out) and the manager's own `handle_output` writes it where the file is. The files
    under the asset's folder are listed once, so the cost follows what is stored, not the
    definition; a manager with a layout of its own has each defined partition's file looked
    for instead. `context` is the run's output's.
    """
    if not (isinstance(manager, dg.UPathIOManager) and hasattr(manager, "scan_df_from_path")):
        return None
    if _upstream.upath_lays_out_partitions_as_dagster(manager):
        files = _listed_files(manager, context, partitions_def, instance)
    else:
        files = _probed_files(manager, context.asset_key, partitions_def, instance)
    # The manager's own scan, with its storage options (S3's credentials and endpoint).
    scan: Any = manager.scan_df_from_path
    reading = dg.build_input_context(asset_key=context.asset_key, instance=instance)
    stored: dict[str, StoredPartition] = {}
    for partition, path in sorted(files.items()):
        frame: pl.LazyFrame = scan(path, reading)
        stored[partition] = StoredPartition(frame, frozenset(frame.collect_schema().names()))
    return stored


def _listed_files(
    manager: dg.UPathIOManager,
    context: dg.OutputContext,
    partitions_def: dg.PartitionsDefinition,
    instance: dg.DagsterInstance,
) -> dict[str, UPath]:
    """The stored files of the partitions the definition holds, found by one listing."""
    folder = _upstream.upath_asset_folder(manager, context)
    extension = manager.extension or ""
    found: dict[str, str] = {}  # each file's path, by its path below the folder without extension
    # NOTE: an object store's listing may be cached by an earlier read in this process, and
    # the files written since are not in it.
    folder.fs.invalidate_cache(folder.path)
    for path in folder.fs.find(folder.path):
        relative = posixpath.relpath(path, folder.path)
        if relative.endswith(extension) and len(relative) > len(extension):
            found[path] = relative[: len(relative) - len(extension)]
    holds = _holds_by_dimension(partitions_def, instance)
    held = {key for name in found.values() for key in _held_keys_named(name, holds)}
    located = _upstream.upath_partition_locations(manager, context, sorted(held, key=str))
    # NOTE: a key counts only where the manager writes it to exactly this file, so a name
    # that merely looks like a key (another layout, an escaped `/`) never adds a partition.
    return {str(key): path for key, path in located.items() if path.path in found}


_Holds = Callable[[str], bool]
"""Whether a dimension holds a key now."""


def _holds_by_dimension(
    partitions_def: dg.PartitionsDefinition, instance: dg.DagsterInstance
) -> dict[str | None, _Holds]:
    """Each dimension's `_Holds` by its name (None for a definition of one dimension): a time
    window's key is parsed, no window listed; a static or dynamic dimension's keys (the
    instance's, for a dynamic one) are read once."""

    def holds(dimension: dg.PartitionsDefinition) -> _Holds:
        if isinstance(dimension, dg.TimeWindowPartitionsDefinition):
            return dimension.has_partition_key
        return frozenset(
            dimension.get_partition_keys(dynamic_partitions_store=instance)
        ).__contains__

    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        return {d.name: holds(d.partitions_def) for d in partitions_def.partitions_defs}
    return {None: holds(partitions_def)}


def _held_keys_named(name: str, holds: Mapping[str | None, _Holds]) -> Iterator[Any]:
    """The held partition keys a file named `name` (below the asset's folder) may hold.

    Every reading a layout like Dagster's allows: a leading `/` escaped as `%2F` or not; a
    multi-partition key's parts in the order of their dimension names, joined by `/`, each
    part perhaps holding a `/` itself (every split into one part per dimension); and a part's
    leading or trailing `/`, which a local path drops where it doubles a separator.
    """
    texts = {name, "/" + name[3:]} if name.startswith("%2F") else {name}
    if None in holds:
        yield from (key for text in texts for key in (text, text + "/") if holds[None](key))
        return
    dimensions = sorted(name for name in holds if name is not None)
    for text in texts:
        segments = text.split("/")
        for cuts in itertools.combinations(range(1, len(segments)), len(dimensions) - 1):
            bounds = zip((0, *cuts), (*cuts, len(segments)), strict=True)
            parts = ["/".join(segments[start:end]) for start, end in bounds]
            choices = [
                [
                    shaped
                    for lead in ("", "/")[: 1 if position == 0 else 2]
                    for shaped in (lead + part, lead + part + "/")
                    if holds[dimension](shaped)
                ]
                for position, (dimension, part) in enumerate(zip(dimensions, parts, strict=True))
            ]
            for chosen in itertools.product(*choices):
                yield dg.MultiPartitionKey(dict(zip(dimensions, chosen, strict=True)))


def _probed_files(
    manager: dg.UPathIOManager,
    asset_key: dg.AssetKey,
    partitions_def: dg.PartitionsDefinition,
    instance: dg.DagsterInstance,
) -> dict[str, UPath]:
    """The stored files of the partitions the definition holds, each one looked for."""
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
    return {
        str(partition): path
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
    `PARTITIONS`; None off DuckDB's manager. `context` is the run's output's. No row when no
    partition stores the key's columns: DuckDB's manager creates no table for a skipped or
    empty partition, and the package adds a column only when a frame with rows brings it.
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
    """The partition keys `column`'s dimension holds now; a time window's with its bounds.

    A time window dimension's are only the windows between the earliest and the latest time
    stored (a day's margin either side, clipped to the definition), so an hourly definition of
    years costs what its stored span costs. The bounds are wall-clock times in the definition's
    timezone, as DuckDB's manager compares its partition column with them.
    """
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
    """The keys of `dimension`'s windows that may hold a time from `earliest` to `latest`."""
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
    """A stored time (a `DATE`, a wall-clock `TIMESTAMP`, a `TIMESTAMPTZ`) as a time in `zone`."""
    moment = value if isinstance(value, datetime) else datetime(value.year, value.month, value.day)
    if moment.tzinfo is None:
        return moment.replace(tzinfo=zone)
    return moment.astimezone(zone)


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

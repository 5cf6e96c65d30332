"""Where a run's table and its quarantine land, checked before either is written.

`delegating_writer` hands the quarantine to the asset's own IO manager under the key
`<name>_quarantine`. That is safe only if the manager stores each asset key in a place of its
own: a path-based manager joins the keys into a file path, where a `..`, `.` or empty segment
is resolved away and can make the quarantine's file the table's; and a manager that stores by
step output (`dg.mem_io_manager`) puts both in one slot. The table is written after the
quarantine, so either way the invalid rows would be silently replaced. These checks run when
the writer is made, before the asset's function, so a refused run writes nothing.

A run over a partition range (a single-run backfill) also needs a manager that stores the range
in one write: a path-based manager writes a file per partition and refuses a range only when
its write comes, after the function ran, and a database manager stores a multi-partitioned
range only as one rectangle of keys; `check_range_storage` refuses either first. A database
manager also needs the asset's `partition_expr` for any partition: `check_partition_column`
refuses a run without it before the function runs.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

import dagster as dg
from upath import UPath

from dagster_dataframely.errors import (
    MissingPartitionExprError,
    PartitionKeyTooLongError,
    QuarantineStorageError,
    UnsafePathKeyError,
)

from .files import LOCAL_PROTOCOLS, NAME_MAX
from .manager_kinds.kind_choice import kind_of
from .manager_kinds.manager_kind import Store

PARTITION_EXPR = "partition_expr"
"""The definition metadata a database IO manager stores partitions by, and rows are read by."""


def check_quarantine_storage(
    asset: dg.AssetKey, manager: dg.IOManager, table: dg.OutputContext, quarantine: dg.OutputContext
) -> None:
    """Raise unless the quarantine write lands in a place of its own, inside its manager's base.

    Parameters
    ----------
    asset
        The asset whose rows are validated.
    manager
        The IO manager of the asset's output, which `delegating_writer` writes through.
    table, quarantine
        The output context of the table's write and of the quarantine's.

    Raises
    ------
    QuarantineStorageError
        The manager stores by step output, or would put the quarantine where the table goes
        or outside its base directory.
    UnsafePathKeyError
        A path-based manager would resolve away part of the partition key or asset key.
    PartitionKeyTooLongError
        A local path-based manager would need a file or directory name over 255 bytes.
    """
    table_store, quarantine_store = _stores(manager, table, quarantine)
    shown = asset.to_user_string()
    quarantine_store.kind.check_own_slot(shown, quarantine_store.name)
    stores = (table_store, quarantine_store)
    path_based = [(s, root) for s in stores if (root := s.kind.base()) is not None]
    if not path_based:
        return
    # The quarantine's key is the table's with `_quarantine` added, under the same partition.
    _check_path_keys(shown, table.asset_key, table)
    table_files = _files(table_store)
    for store, root in path_based:
        base = _normalized(root)
        for file in _files(store):
            _refuse_long_names(file, table)
            relative = posixpath.relpath(file[1], base[1])
            if file[0] != base[0] or relative == ".." or relative.startswith("../"):
                raise QuarantineStorageError(
                    shown,
                    store.name,
                    f"it would write {file[1]} outside its base directory {base[1]}",
                )
    shared = table_files & _files(quarantine_store)
    if shared:
        raise QuarantineStorageError(
            shown,
            quarantine_store.name,
            f"it would write the quarantine to {sorted(shared)[0][1]}, the file the table is "
            "written to next, which would replace the invalid rows",
        )


def check_range_storage(
    asset: dg.AssetKey,
    partitions: str,
    manager: dg.IOManager,
    table: dg.OutputContext,
    quarantine: dg.OutputContext | None,
) -> None:
    """Raise unless the table (and the quarantine, when given) can be stored in one write.

    `table` and `quarantine` are the output contexts of a run over several partitions;
    `partitions` names the range for the message. A path-based manager would write one file
    per partition, which Dagster's `UPathIOManager` refuses; any other manager is trusted with
    the range, as a `DbIOManager` stores it with one delete and one insert.

    Raises
    ------
    PartitionRangeError
        A manager of the table or of the quarantine stores each partition in a file of its own,
        or is a database manager and the range of a multi-partitioned asset is no rectangle it
        can store in one write.
    """
    for store in _stores(manager, table, quarantine):
        store.kind.check_range(asset.to_user_string(), partitions, store.name, store.context)


def partition_expr_gaps(
    metadata: Mapping[str, Any], partitions_def: dg.PartitionsDefinition[str]
) -> list[str] | None:
    """What the asset's `partition_expr` lacks: None when a database manager can use it.

    An empty list: there is none (or, for a multi-partition, none that maps dimensions to
    columns); else the dimensions of a multi-partition that have no entry.
    """
    expr = metadata.get(PARTITION_EXPR)
    if not isinstance(partitions_def, dg.MultiPartitionsDefinition):
        return None if isinstance(expr, str) else []
    dimensions = sorted(partitions_def.partition_dimension_names)
    if not isinstance(expr, Mapping):
        return dimensions
    missing = [name for name in dimensions if not isinstance(expr.get(name), str)]
    return missing or None


def check_partition_column(
    asset: dg.AssetKey,
    partitions_def: dg.PartitionsDefinition[str],
    manager: dg.IOManager,
    table: dg.OutputContext,
    quarantine: dg.OutputContext | None,
) -> None:
    """Raise unless a database manager of the table or quarantine can find each partition's rows.

    `table` and `quarantine` (None without one) are the output contexts of a run of one
    partition. A `DbIOManager` deletes and inserts a partition's rows by the column the
    asset's `partition_expr` names, and fails on its first write without it.

    Raises
    ------
    MissingPartitionExprError
        A database manager stores the table or the quarantine, and the asset's
        `partition_expr` is missing or lacks a dimension of a multi-partition.
    """
    for store in database_stores(manager, table, quarantine):
        gaps = partition_expr_gaps(store.context.definition_metadata or {}, partitions_def)
        if gaps is not None:
            raise MissingPartitionExprError(asset.to_user_string(), store.name, gaps)


def database_stores(
    manager: dg.IOManager, table: dg.OutputContext, quarantine: dg.OutputContext | None
) -> list[Store]:
    """The stores of the table and of the quarantine (None without one) that are databases.

    A `DbIOManager` replaces a partition by deleting the rows `partition_expr` puts in it and
    inserting every row it is given, so a row outside the partition outlives every rerun.
    """
    return [store for store in _stores(manager, table, quarantine) if store.kind.partitions_by_expr]


def path_key_problem(key: str) -> str | None:
    """Why a path-based manager would not keep `key` as written, or None if it would.

    One leading `/` is allowed: Dagster's `UPathIOManager` escapes it rather than resolving it.
    """
    segments = key.removeprefix("/").split("/")
    if ".." in segments:
        return "its segment `..` climbs to the parent directory"
    if "." in segments:
        return "its segment `.` names the directory it is in and is dropped"
    if "" in segments:
        return "it has an empty segment (a trailing or doubled `/`, or no text), which is dropped"
    return None


def _stores(
    manager: dg.IOManager, table: dg.OutputContext, quarantine: dg.OutputContext | None
) -> tuple[Store, ...]:
    kind = kind_of(manager)
    if quarantine is None:
        return (kind.table_store(table),)
    return kind.table_store(table), kind.quarantine_store(quarantine)


def _check_path_keys(asset: str, key: dg.AssetKey, context: dg.OutputContext) -> None:
    candidates = ["/".join(key.path)]
    if context.has_asset_partitions:
        candidates.extend(_partition_path(k) for k in context.asset_partition_keys)
    for candidate in candidates:
        problem = path_key_problem(candidate)
        if problem is not None:
            raise UnsafePathKeyError(asset, candidate, problem)


def _refuse_long_names(file: tuple[str, str], table: dg.OutputContext) -> None:
    # NOTE: The manager would fail with a bare `OSError` ("File name too long") after the function
    # ran; an object store has no such limit.
    protocol, path = file
    if protocol not in LOCAL_PROTOCOLS:
        return
    for name in path.split("/"):
        if len(name.encode()) > NAME_MAX:
            keys = table.asset_partition_keys if table.has_asset_partitions else []
            raise PartitionKeyTooLongError(", ".join(keys) or path, name, NAME_MAX)


def _partition_path(partition_key: str) -> str:
    # NOTE: dimension keys by dimension name, as `UPathIOManager` joins them.
    if isinstance(partition_key, dg.MultiPartitionKey):
        return "/".join(k for _, k in sorted(partition_key.keys_by_dimension.items()))
    return partition_key


def _files(store: Store) -> set[tuple[str, str]]:
    return {_normalized(path) for path in store.kind.files(store.context) or ()}


def _normalized(path: UPath) -> tuple[str, str]:
    return path.protocol, posixpath.normpath(path.path)

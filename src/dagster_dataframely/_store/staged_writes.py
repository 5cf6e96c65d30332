"""Staged writes: a failed or killed write leaves the last good table exactly as it was.

The managers most users pick replace a table in ways a crash can cut in half.
`PolarsParquetIOManager` (any `UPathIOManager`) opens the table's own file for writing, so a
process killed or a disk filled mid-write leaves a truncated file where the table was.
`DuckDBPolarsIOManager` (any `DbIOManager`) deletes the slice, then inserts the new rows, each
statement committed on its own, so a crash between the two leaves the slice empty, and a frame
that gained a column fails the insert after the delete went through.

`QuarantineAwareIOManager(staged_writes=True)` writes through `staged(manager)` instead, which
keeps the manager's own layout, reading and metadata, and changes only how the bytes land:

- A file on a local disk is written by the manager to a hidden file beside the table
  (`.dy-staged-<random>.tmp`), flushed to disk, then renamed over the table: a rename within
  one directory is atomic, so a reader finds the old file or the new one, never a part.
- A file on an object store (S3, GCS, Azure, memory) is written by the manager to a local
  temporary file, then uploaded in one request. An object store replaces an object only when
  an upload completes, so an upload cut short leaves the old object; the staging keeps a write
  that fails half way from uploading the half it wrote (fsspec uploads what was buffered when a
  file is closed, even on an exception).
- A DuckDB slice replacement runs in one transaction: add any column the frame brings that the
  table lacks, delete the slice, insert, commit. A crash or error before the commit rolls all of
  it back. Columns the table has and the frame lacks (a rule dropped from the schema, so a
  rule column from the quarantine) are inserted as NULL.

Any other manager is refused when the resource is created, since nothing from outside can make
its writes atomic.
"""

from __future__ import annotations

import contextlib
import copy
import os
import secrets
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
from upath import UPath

from dagster_dataframely import _upstream
from dagster_dataframely.errors import QuarantineIOManagerError, StagedWriteError

from .files import LOCAL_PROTOCOLS

__all__ = ["STAGING_PREFIX", "staged"]

STAGING_PREFIX = ".dy-staged-"
"""The start of a staging file's name: hidden, and never ending in the table's extension."""

# Stores where an object is replaced only when an upload completes, never in parts.
_OBJECT_STORE_PROTOCOLS = frozenset(
    {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "memory"}
)


def staged(manager: dg.IOManager, name: str) -> dg.IOManager:
    """Return an IO manager that writes as `manager` does, replacing a table only when complete.

    Parameters
    ----------
    manager
        The IO manager as Dagster built it: a `UPathIOManager` on a local disk or an object
        store, or the `DbIOManager` a `DuckDBIOManager` builds.
    name
        How errors name the manager (the class the user passed, and the argument).

    Returns
    -------
    A manager to call `handle_output` on; `load_input` should go to `manager` itself.

    Raises
    ------
    QuarantineIOManagerError
        `manager` stores somewhere its writes cannot be staged from outside.
    """
    if isinstance(manager, dg.UPathIOManager):
        return _staged_files(manager, name)
    if _upstream.is_duckdb_io_manager(manager):
        return _TransactionalDuckDB(manager)
    raise QuarantineIOManagerError(
        name,
        "staged_writes=True can make writes atomic only for a UPathIOManager (such as "
        "PolarsParquetIOManager) on a local disk or an object store, and for a "
        "DuckDBIOManager (such as DuckDBPolarsIOManager); this manager writes in its own way, "
        "which nothing outside it can make atomic",
        "Drop staged_writes=True, or store this asset with one of those managers.",
    )


# Files: write elsewhere, then move into place in one step.


def _staged_files(manager: dg.UPathIOManager, name: str) -> dg.IOManager:
    """A copy of a `UPathIOManager` that stages each file: renamed into place or uploaded whole."""
    protocols = manager.fs.protocol
    protocol = protocols if isinstance(protocols, str) else protocols[0]
    if protocol in LOCAL_PROTOCOLS:
        place: Callable[[_Dump, UPath], None] = _replace_local
    elif protocol in _OBJECT_STORE_PROTOCOLS:
        place = _upload_whole
    else:
        raise QuarantineIOManagerError(
            name,
            f"staged_writes=True cannot make a write to a {protocol}:// filesystem atomic: only a "
            f"rename on a local disk and an upload to an object store replace a file in one step",
            "Drop staged_writes=True for this manager, or point it at a local directory or an "
            "object store.",
        )
    dump = manager.dump_to_path

    def dump_to_path(context: dg.OutputContext, obj: Any, path: UPath) -> None:
        place(lambda staging: dump(context=context, obj=obj, path=staging), path)

    # `dump_to_path` is the one method a `UPathIOManager` calls to write the bytes, after it
    # has worked out the path, made the directory and before it logs the metadata: a copy
    # whose `dump_to_path` stages keeps everything else the manager does.
    staged_manager = copy.copy(manager)
    object.__setattr__(staged_manager, "dump_to_path", dump_to_path)
    return staged_manager


_Dump = Callable[[UPath], None]


def _replace_local(dump: _Dump, target: UPath) -> None:
    """Dump to a hidden file beside `target`, flush it to disk, rename it over `target`."""
    target_path = Path(target.path)
    _remove_orphans(target_path.parent)
    staging = target_path.with_name(f"{STAGING_PREFIX}{secrets.token_hex(8)}.tmp")
    # Held for as long as the staging file is ours, so `_remove_orphans` in another process
    # can tell a write in progress from the leftover of a killed one.
    with _held_lock(staging):
        try:
            dump(UPath(staging))
            _refuse_directory(staging)
            _fsync(staging)
            os.replace(staging, target_path)
            _fsync_directory(target_path.parent)
        except BaseException:
            _remove(staging)
            raise


def _upload_whole(dump: _Dump, target: UPath) -> None:
    """Dump to a local temporary file, then upload it to `target` in one request."""
    with tempfile.TemporaryDirectory(prefix="dy-staged-") as directory:
        local = Path(directory) / target.name
        dump(UPath(local))
        _refuse_directory(local)
        target.fs.put_file(str(local), target.path)


def _refuse_directory(staging: Path) -> None:
    """Refuse a staging path the manager made a directory: it cannot be placed whole."""
    if staging.is_dir():
        raise StagedWriteError(staging.name)


def _fsync(path: Path) -> None:
    """Flush a staged file to disk before it is renamed, so the rename never shows a part."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable; a no-op where directories cannot be opened (Windows)."""
    with contextlib.suppress(OSError):
        _fsync(directory)


def _remove(path: Path) -> None:
    """Remove a staging path, file or directory, leaving nothing a reader could trip over."""
    if path.is_dir():
        for child in sorted(path.rglob("*"), reverse=True):
            child.rmdir() if child.is_dir() else child.unlink()
        path.rmdir()
    else:
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def _held_lock(staging: Path) -> Iterator[None]:
    """An exclusive advisory lock on `<staging>.lock` while the block runs (POSIX only)."""
    try:
        import fcntl
    except ImportError:  # Windows: no orphan sweeping, and nothing to hold
        yield
        return
    lock = staging.with_name(staging.name + ".lock")
    descriptor = os.open(lock, os.O_WRONLY | os.O_CREAT, 0o666)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        lock.unlink(missing_ok=True)
        os.close(descriptor)


def _remove_orphans(directory: Path) -> None:
    """Remove what a killed staged write left in `directory`: files whose lock nobody holds.

    A `pl.scan_parquet(directory)` refuses a directory holding a file of another extension,
    so a leftover would break it until removed. A lock held means a write still running.
    """
    try:
        import fcntl
    except ImportError:
        return
    if not directory.is_dir():
        return
    for lock in directory.glob(f"{STAGING_PREFIX}*.tmp.lock"):
        try:
            descriptor = os.open(lock, os.O_WRONLY)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            continue
        try:
            _remove(lock.with_name(lock.name.removesuffix(".lock")))
            lock.unlink(missing_ok=True)
        finally:
            os.close(descriptor)


# DuckDB: one transaction around the delete and the insert.


class _TransactionalDuckDB(dg.IOManager):
    """Writes through a DuckDB `DbIOManager` whose slice replacement is one transaction."""

    def __init__(self, manager: dg.IOManager) -> None:
        self._manager = manager

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if not isinstance(obj, pl.DataFrame):
            self._manager.handle_output(context, obj)  # the manager raises its own error
            return
        client, handlers = _upstream.db_io_manager_parts(self._manager)
        replacement = _SliceReplacement(client, handlers, obj)
        writer = _upstream.db_io_manager_with(
            self._manager, client=replacement, handlers={pl.DataFrame: replacement.handler()}
        )
        writer.handle_output(context, obj)

    def load_input(self, context: dg.InputContext) -> Any:
        return self._manager.load_input(context)


class _SliceReplacement:
    """A `DbClient` for one write: a transaction, with the table grown to fit the frame.

    `DbIOManager.handle_output` connects, ensures the schema, deletes the slice, then hands
    the frame to its type handler. This client begins a transaction on connect and commits when
    the block ends without error; before the delete it adds to the table every column the frame
    has and the table lacks (DuckDB refuses to alter a table a transaction already deleted
    from), and gives the handler the frame in the table's column order, NULL where the table has
    a column the frame lacks, since the handler inserts by position.
    """

    def __init__(self, client: Any, handlers: Mapping[type, Any], frame: pl.DataFrame) -> None:
        self._client = client
        self._handlers = handlers
        self.frame = frame

    @contextlib.contextmanager
    def connect(self, context: Any, table_slice: Any) -> Iterator[Any]:
        with self._client.connect(context, table_slice) as connection:
            connection.begin()
            try:
                yield connection
                connection.commit()
            except BaseException:
                # A commit that failed has rolled back already, and then a rollback raises.
                with contextlib.suppress(Exception):
                    connection.rollback()
                # The client closes its connection only when the block ends without error; an
                # open one would keep the database file locked for this process.
                connection.close()
                raise

    def ensure_schema_exists(self, context: Any, table_slice: Any, connection: Any) -> None:
        self._client.ensure_schema_exists(context, table_slice, connection)
        if not self.frame.is_empty():
            self.frame = _fit_to_table(connection, table_slice, self.frame)

    def delete_table_slice(self, context: Any, table_slice: Any, connection: Any) -> None:
        self._client.delete_table_slice(context, table_slice, connection)

    def get_select_statement(self, table_slice: Any) -> str:
        return str(self._client.get_select_statement(table_slice))

    def get_table_name(self, table_slice: Any) -> str:
        return str(self._client.get_table_name(table_slice))

    def handler(self) -> _FittedFrameHandler:
        """The manager's own Polars handler, given the fitted frame instead of the original."""
        handler = next(h for t, h in self._handlers.items() if issubclass(pl.DataFrame, t))
        return _FittedFrameHandler(self, handler)


class _FittedFrameHandler:
    """A `DbTypeHandler` that stores the replacement's fitted frame with the manager's handler."""

    def __init__(self, replacement: _SliceReplacement, handler: Any) -> None:
        self._replacement = replacement
        self._handler = handler
        self.supported_types = [pl.DataFrame]

    def handle_output(self, context: Any, table_slice: Any, obj: Any, connection: Any) -> Any:
        frame = self._replacement.frame
        return self._handler.handle_output(context, table_slice, frame, connection)

    def load_input(self, context: Any, table_slice: Any, connection: Any) -> Any:
        return self._handler.load_input(context, table_slice, connection)


def _fit_to_table(connection: Any, table_slice: Any, frame: pl.DataFrame) -> pl.DataFrame:
    """Add the frame's new columns to an existing table; return the frame in the table's order."""
    schema, table = table_slice.schema, table_slice.table
    rows = connection.execute(
        "select column_name from information_schema.columns "
        "where table_schema = ? and table_name = ? order by ordinal_position",
        [schema, table],
    ).fetchall()
    if not rows:
        return frame  # a new table: the handler creates it from the frame
    columns = [name for (name,) in rows]
    qualified = f"{schema}.{table}"
    added = [name for name in frame.columns if name not in columns]
    if added:
        types = _duckdb_types(connection, frame.select(added))
        for name in added:
            connection.execute(f"alter table {qualified} add column {_quoted(name)} {types[name]}")
        columns += added
    missing = [name for name in columns if name not in frame.columns]
    if missing:
        stored = connection.execute(f"select * from {qualified} limit 0").pl().schema
        frame = frame.with_columns(pl.lit(None, dtype=stored[name]).alias(name) for name in missing)
    return frame.select(columns)


def _duckdb_types(connection: Any, frame: pl.DataFrame) -> dict[str, str]:
    """The DuckDB type of each column of `frame`, as DuckDB itself would create it."""
    view = f"dy_staged_{secrets.token_hex(4)}"
    connection.register(view, frame.head(0).to_arrow())
    try:
        described = connection.execute(f"describe select * from {view}").fetchall()
    finally:
        connection.unregister(view)
    return {str(row[0]): str(row[1]) for row in described}


def _quoted(identifier: str) -> str:
    """A DuckDB identifier in double quotes, any quote in it doubled."""
    return '"' + identifier.replace('"', '""') + '"'

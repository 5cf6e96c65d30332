"""Staged writes of a path manager: a failed or killed write leaves the last good file.

`PolarsParquetIOManager` (any `UPathIOManager`) opens the table's own file for writing, so a
process killed or a disk filled mid-write leaves a truncated file where the table was. With
`QuarantineAwareIOManager(staged_writes=True)` it writes through `staged(manager)` instead,
which keeps the manager's own layout, reading and metadata, and changes only how the bytes land:

- A file on a local disk is written by the manager to a hidden file beside the table
  (`.dy-staged-<random>.tmp`), flushed to disk, then renamed over the table: a rename within
  one directory is atomic, so a reader finds the old file or the new one, never a part.
- A file on an object store (S3, GCS, Azure, memory) is written by the manager to a local
  file in a hidden staging directory of the temporary directory (`TMPDIR`), then uploaded in
  one request. An object store replaces an object only when an upload completes, so an upload
  cut short leaves the old object; the staging keeps a write that fails half way from
  uploading the half it wrote (fsspec uploads what was buffered when a file is closed, even on
  an exception).

Each staging file or directory is locked (`<staging>.lock`, an advisory lock the kernel drops
when its process dies) for as long as its write runs. What a killed write leaves, staging and
lock, is removed by the next staged write into the same directory: the table's own directory,
or the temporary directory of the same machine for an object store. Staging whose lock is held
is a write still running and is never touched. The other kinds stage in their own way
(`manager_kinds`): DuckDB in one transaction, Delta by its own commit.
"""

from __future__ import annotations

import contextlib
import copy
import os
import secrets
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dagster as dg
from upath import UPath

from dagster_dataframely.errors import QuarantineIOManagerError, StagedWriteError

from .files import LOCAL_PROTOCOLS

STAGING_PREFIX = ".dy-staged-"
"""The start of a staging file's name: hidden, and never ending in the table's extension."""

# Stores where an object is replaced only when an upload completes, never in parts.
_OBJECT_STORE_PROTOCOLS = frozenset(
    {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "memory"}
)


def staged(manager: dg.UPathIOManager, name: str) -> dg.IOManager:
    """A copy of `manager` that stages each file: renamed into place or uploaded whole.

    Raises `QuarantineIOManagerError` (naming the manager as `name`) for a filesystem that can
    do neither.
    """
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
    target_path = Path(target.path)
    _remove_orphans(target_path.parent)
    staging = target_path.with_name(f"{STAGING_PREFIX}{secrets.token_hex(8)}.tmp")
    # Held for as long as the staging file is ours, so `_remove_orphans` in another process
    # can tell a write in progress from the leftover of a killed one.
    with _held_lock(staging):
        try:
            dump(UPath(staging))
            # NOTE: dagster-polars writes nothing for a `None` output: an `Optional` output that
            # returned `None` leaves the table's place as it was, staged or not.
            if not staging.exists():
                return
            _refuse_directory(staging)
            _fsync(staging)
            os.replace(staging, target_path)
            # NOTE: makes the rename itself durable; a no-op where directories cannot be opened
            # (Windows).
            with contextlib.suppress(OSError):
                _fsync(target_path.parent)
        except BaseException:
            _remove(staging)
            raise


def _upload_whole(dump: _Dump, target: UPath) -> None:
    temporary = Path(tempfile.gettempdir())
    _remove_orphans(temporary)
    staging = temporary / f"{STAGING_PREFIX}{secrets.token_hex(8)}.tmp"
    # Locked as a local staging file is, so the next upload on this machine removes what a
    # killed one left in the temporary directory (a whole partition's bytes).
    with _held_lock(staging):
        try:
            staging.mkdir()
            local = staging / target.name
            dump(UPath(local))
            if not local.exists():  # a `None` output, as above
                return
            _refuse_directory(local)
            target.fs.put_file(str(local), target.path)
        finally:
            _remove(staging)


def _refuse_directory(staging: Path) -> None:
    # NOTE: a directory the manager made cannot be placed whole.
    if staging.is_dir():
        raise StagedWriteError(staging.name)


def _fsync(path: Path) -> None:
    # NOTE: flushed before the rename, so the rename never shows a part.
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _remove(path: Path) -> None:
    if path.is_dir():
        for child in sorted(path.rglob("*"), reverse=True):
            child.rmdir() if child.is_dir() else child.unlink()
        path.rmdir()
    else:
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def _held_lock(staging: Path) -> Iterator[None]:
    # NOTE: an advisory lock, so POSIX only.
    try:
        import fcntl
    except ImportError:  # Windows: no orphan sweeping, and nothing to hold
        yield
        return
    lock = staging.with_name(staging.name + ".lock")
    while True:
        descriptor = os.open(lock, os.O_WRONLY | os.O_CREAT, 0o666)
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        # NOTE: `_remove_orphans` in another process may have taken the new file for a killed
        # write's and removed it between the open and the lock; this lock would then be on a
        # file nobody can find, and the staging file, if this write were killed, on no lock.
        if _is_still(lock, descriptor):
            break
        os.close(descriptor)
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)
        os.close(descriptor)


def _is_still(lock: Path, descriptor: int) -> bool:
    try:
        return os.stat(lock).st_ino == os.fstat(descriptor).st_ino
    except FileNotFoundError:
        return False


def _remove_orphans(directory: Path) -> None:
    # NOTE: A `pl.scan_parquet(directory)` refuses a directory holding a file of another extension,
    # so a leftover beside a table would break it until removed, and one in the temporary directory
    # holds a partition's bytes on the worker's disk. A lock held means a write still running, in
    # this process or another one on this machine.
    try:
        import fcntl
    except ImportError:
        return
    if not directory.is_dir():
        return
    for lock in directory.glob(f"{STAGING_PREFIX}*.tmp.lock"):
        try:
            descriptor = os.open(lock, os.O_WRONLY)
        except OSError:  # gone since the listing, or another user's
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

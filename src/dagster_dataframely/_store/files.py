"""Write an asset's invalid rows to a parquet file when no IO manager is there to do it.

A direct invocation has no step and so no IO manager, yet its invalid rows still need a home.
They go to a file laid out as `UPathIOManager` lays out its own, so pointing the quarantine
directory at a manager's `base_dir` puts each quarantine file beside the asset's file.
"""

from __future__ import annotations

import io
import os
import re
import secrets
import string
from pathlib import Path

import dagster as dg
import polars as pl
from upath import UPath
from upath.implementations.cloud import CloudPath

from dagster_dataframely._credentials import refuse_credentials, without_credentials
from dagster_dataframely._model.keys import quarantine_key
from dagster_dataframely.errors import PartitionKeyTooLongError, QuarantineDirProtocolError

from .quarantine_writer import QuarantineWriter

EXTENSION = ".parquet"

TEMPORARY_PREFIX = ".dy-quarantine-"
STAGING_SUFFIX = ".dy-staging"

NAME_MAX = 255
"""The most bytes a local filesystem (ext4, XFS, APFS, NTFS...) takes in one file name."""

_HEX_DIGITS = frozenset(string.hexdigits)
LOCAL_PROTOCOLS = frozenset({"", "file", "local"})

# A `/` separates two segments only when a character other than `/` is on each side of it, so
# no segment is ever empty. Any other `/` (leading, trailing, or doubled) stays in a segment,
# where `_escape_segment` escapes it.
_SEPARATOR = re.compile(r"(?<=[^/])/(?=.)", re.DOTALL)

# What `UPath` reads as the start of another URL when a path is joined with it: a chained
# protocol (`memory::x`, `s3::x`) or a data URI (`data:x,y`). A `/` never gets this far: it is
# a separator or escaped. Escaping the first `:` of such a segment keeps it a plain name.
_URL_START = re.compile(r"[A-Za-z][A-Za-z0-9+]+::|data:[^,]*,")

# A segment that is exactly this stands for an empty one. `_escape_segment` escapes a segment
# that really is a lone `%`, so the two cannot be confused.
_EMPTY_SEGMENT = "%"


def quarantine_path(
    key: dg.AssetKey, quarantine_dir: UPath | Path | str, partition_key: str | None = None
) -> UPath:
    """Return the path of the parquet file `file_writer` writes an asset's invalid rows to.

    The layout is `UPathIOManager`'s for the asset key `quarantine_key(key)`:
    `<quarantine_dir>/<key part>/.../<name>_quarantine.parquet`, or, with a partition,
    `<quarantine_dir>/<key part>/.../<name>_quarantine/<partition>.parquet`. A
    `dg.MultiPartitionKey` gives one path segment per dimension, in order of dimension name,
    so every dimension but the last is a directory. Nothing is created and nothing is read:
    for a remote `quarantine_dir` this makes no network call.

    Asset key parts are used as they are, as `UPathIOManager` uses them, because they come
    from code, not data. Partition keys can come from data, so a partition key is escaped
    until it can only name a file below the asset's quarantine directory:

    - A `/` is a directory separator only between two other characters. A leading,
      trailing or doubled `/` becomes `%2F`, so `/a` is `%2Fa` and `a//b` is `a/%2Fb`.
      A `/` inside one dimension of a multi-partition key is always `%2F`.
    - A segment that is `..` becomes `%2E%2E` and one that is `.` becomes `%2E`.
    - A backslash becomes `%5C` and a control character, NUL included, becomes `%XX`,
      on every filesystem, so the layout does not depend on the platform.
    - A `:` as the second character of a segment (a drive, as in `C:`) becomes `%3A`, and
      so does the first `:` of a segment a URL parser would take for a protocol (`memory::x`,
      `data:x,y`).
    - A `%` becomes `%25` where it is followed by two hex digits or is a whole segment, so
      the escapes above never collide with a key that happens to contain one.
    - An empty segment (an empty key or an empty dimension key) becomes a lone `%`.

    A leading `/` and a `..` segment come out as Dagster's filesystem IO manager writes them.
    `urllib.parse.unquote` applied to each segment other than a lone `%` recovers the key, so
    distinct keys give distinct paths. A key made only of ordinary characters (dates, words,
    spaces, unicode, `|`, `~`, a `%` without two hex digits after it) is unchanged, so its
    path is exactly `UPathIOManager`'s. A `~` needs no escape: it is never the first part of
    the path, which is the only place anything expands it.

    Parameters
    ----------
    key
        The asset key of the asset whose rows failed validation, not the quarantine's key.
    quarantine_dir
        A local directory or a `UPath` URL such as `s3://bucket/prefix`. A remote path's
        credentials come from the environment or the `UPath`'s storage options.
    partition_key
        The partition of the run, if the asset is partitioned. Pass a `dg.MultiPartitionKey`
        itself, not its string form, to get one directory per dimension.

    Returns
    -------
    UPath
        The file's path. Its parent directories may not exist yet.

    Raises
    ------
    CredentialsInUrlError
        `quarantine_dir` is a URL with a user name or password in it, such as
        `s3://KEY:SECRET@bucket/q`. The message does not repeat them.

    Examples
    --------
    ```python
    import dagster as dg

    import dagster_dataframely as dd

    path = dd.wiring.quarantine_path(
        dg.AssetKey(["sales", "orders"]), "s3://lake/quarantine", "2026-01-02"
    )
    print(path)
    assert str(path) == "s3://lake/quarantine/sales/orders_quarantine/2026-01-02.parquet"
    ```
    """
    refuse_credentials(str(quarantine_dir), "the quarantine_dir given to quarantine_path")
    base = _as_upath(quarantine_dir)
    segments = _asset_segments(quarantine_key(key))
    if partition_key is not None:
        segments.extend(_partition_segments(partition_key))
    *parents, name = segments
    return base.joinpath(*parents, name + EXTENSION)


def file_writer(
    key: dg.AssetKey, quarantine_dir: UPath | Path | str, partition_key: str | None = None
) -> QuarantineWriter:
    """Return a writer that writes the invalid rows to a parquet file under `quarantine_dir`.

    The file is at `quarantine_path(key, quarantine_dir, partition_key)`, and each call
    replaces it whole. A local file is written to a temporary file, flushed to disk and then
    renamed over the old one, so a failed write leaves the previous file intact. The temporary
    file is staged in a hidden directory beside `quarantine_dir`, `.<its name>.dy-staging`, so a
    process killed mid-write leaves nothing in `quarantine_dir` for `pl.scan_parquet` to trip
    over; where that directory cannot be created on the same filesystem, beside the file. A
    remote file is serialised in memory first and uploaded as one object, so a frame that
    cannot be written never reaches the store. Parent directories are created as needed,
    except on object stores, which have none.

    If the write fails, the exception propagates with a note naming the file.

    Parameters
    ----------
    key
        The asset key of the asset whose rows failed validation, not the quarantine's key.
    quarantine_dir
        A local directory or a `UPath` URL such as `s3://bucket/prefix`, as for
        `quarantine_path`.
    partition_key
        The partition of the run, if the asset is partitioned, as for `quarantine_path`.

    Returns
    -------
    QuarantineWriter
        A writer that takes the invalid rows and returns the file's path as a string.

    Raises
    ------
    CredentialsInUrlError
        `quarantine_dir` is a URL with a user name or password in it. The message does not
        repeat them.
    PartitionKeyTooLongError
        For a local directory, when an escaped segment of `partition_key` (with `.parquet`, for
        the last) is longer than a file name can be; raised here, before anything is written.
    QuarantineDirProtocolError
        From the writer, when the filesystem of the directory's protocol cannot write files
        (`http://`, `https://`).
    """
    refuse_credentials(str(quarantine_dir), "the quarantine_dir given to file_writer")
    base = _as_upath(quarantine_dir)
    path = quarantine_path(key, base, partition_key)
    shown = without_credentials(str(path))
    local = path.protocol in LOCAL_PROTOCOLS
    if local and partition_key is not None:
        _refuse_long_names(partition_key)

    def write(invalid: pl.DataFrame) -> str:
        try:
            if local:
                _write_local(invalid, Path(path.path), Path(base.path))
            else:
                _write_remote(invalid, path)
        except Exception as exc:
            exc.add_note(f"dagster-dataframely could not write the quarantine file {shown}")
            raise
        return shown

    return write


def _as_upath(directory: UPath | Path | str) -> UPath:
    return directory if isinstance(directory, UPath) else UPath(directory)


def _asset_segments(key: dg.AssetKey) -> list[str]:
    # As `UPathIOManager` does: build a path from the parts, then make an absolute one
    # relative by escaping its root, so it cannot replace the base directory.
    relative = UPath(*key.path)
    parts = [part for part in relative.parts if part != "/"]
    if relative.is_absolute() and parts:
        parts[0] = "%2F" + parts[0]
    return parts


def _partition_segments(partition_key: str) -> list[str]:
    if isinstance(partition_key, dg.MultiPartitionKey):
        by_name = sorted(partition_key.keys_by_dimension.items())
        return [_escape_segment(dimension_key) for _, dimension_key in by_name]
    return [_escape_segment(raw) for raw in _SEPARATOR.split(partition_key)]


def _escape_segment(raw: str) -> str:
    if raw == "":
        return _EMPTY_SEGMENT
    if raw in {".", ".."}:
        return "%2E" * len(raw)
    escaped: list[str] = []
    for index, char in enumerate(raw):
        if char == "%":
            hex_follows = len(raw) >= index + 3 and _HEX_DIGITS.issuperset(
                raw[index + 1 : index + 3]
            )
            escaped.append("%25" if hex_follows or raw == "%" else "%")
        elif char in "/\\" or char < " " or char == "\x7f":
            escaped.append(f"%{ord(char):02X}")
        elif char == ":" and index == 1:  # `C:` is a drive; Python 3.13's ntpath takes any `?:`
            escaped.append("%3A")
        else:
            escaped.append(char)
    segment = "".join(escaped)
    if _URL_START.match(segment):
        segment = segment.replace(":", "%3A", 1)
    return segment


def _refuse_long_names(partition_key: str) -> None:
    *directories, file = _partition_segments(partition_key)
    for name in (*directories, file + EXTENSION):
        if len(name.encode()) > NAME_MAX:
            raise PartitionKeyTooLongError(partition_key, name, NAME_MAX)


def _write_local(frame: pl.DataFrame, target: Path, root: Path) -> None:
    # NOTE: The temporary file goes to `staging_directory(root)`, outside the quarantine directory
    # `root`: any other file below a directory breaks `pl.scan_parquet(<directory>)`, and a killed
    # process leaves its temporary file behind. Where the staging directory cannot be used, the
    # temporary file goes beside `target`.
    target.parent.mkdir(parents=True, exist_ok=True)
    directory = _temporary_directory(root, beside=target.parent)
    # A short name, so it fits wherever `target`'s name fits. Mode 0o666 lets the umask decide
    # the permissions, as a plain write would.
    temporary = directory / f"{TEMPORARY_PREFIX}{secrets.token_hex(8)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    descriptor = os.open(temporary, flags, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as file:
            frame.write_parquet(file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def staging_directory(root: Path) -> Path | None:
    """Return the hidden directory beside `root` where local writes stage their files.

    `<parent>/.<root name>.dy-staging`; None when `root` is a filesystem root, which has no
    beside.
    """
    absolute = Path(os.path.abspath(root))
    if absolute.parent == absolute:
        return None
    return absolute.parent / f".{absolute.name}{STAGING_SUFFIX}"


def _temporary_directory(root: Path, *, beside: Path) -> Path:
    # NOTE: A rename is atomic only within one filesystem, and the parent of `root` may be on
    # another (`root` a mount point) or not writable.
    staging = staging_directory(root)
    if staging is None:
        return beside
    try:
        staging.mkdir(exist_ok=True)
        same_filesystem = staging.stat().st_dev == beside.stat().st_dev
    except OSError:
        return beside
    return staging if same_filesystem else beside


def _write_remote(frame: pl.DataFrame, target: UPath) -> None:
    # NOTE: serialised before the upload, so a frame that fails to serialise uploads nothing.
    # fsspec uploads whatever was buffered when a file opened for writing is closed, even on
    # an exception, so writing the parquet straight into it could replace a good object with
    # part of a file.
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    try:
        if not isinstance(target, CloudPath):
            # On an object store a "directory" is only a key prefix, and fsspec's `mkdir` there
            # can create a bucket.
            target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("wb") as file:
            file.write(buffer.getvalue())
    except NotImplementedError as refused:  # a read-only filesystem, such as HTTP's
        raise QuarantineDirProtocolError(target.protocol) from refused

"""The staging directory of a streamed split: the rows run once into local files, then removed.

A returned `LazyFrame` is sunk once, on the streaming engine, into a file here, so the user's
sources are read once and every later pass (the rules, the valid rows the IO manager sinks)
reads that file. A full disk is named with its directory and how to move it.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import polars as pl

from dagster_dataframely.errors import StreamingStagingError

_STAGED_COMPRESSION: Final = "lz4"
"""Staging files are local and short-lived: fast to write and read back beats small."""

_STAGED_ROW_GROUP: Final = 500_000
"""Rows per row group of a staging file: an eighth as many groups as the sink's default.

Polars 1.x reads a file by its URI (`scan_staged`) with blocking tasks per column chunk, and
two passes at once over 240 groups (30M rows) passed its limit of 512 such tasks: Polars then
warns that this "may indicate a deadlock". At 60 groups it did not; the passes took as long,
the staging itself 1 to 2 s longer at 30M rows.
"""


@dataclass(eq=False)
class Staging:
    """A local directory for one step's staged rows, made when first used, removed at the end.

    The step removes it once everything it yielded is written: the IO manager sinks the valid
    rows from here when Dagster handles the materialization, before the step resumes. It is
    made in Python's temporary directory (`tempfile`, so `TMPDIR` moves it).
    """

    directory: Path | None = None
    _count: int = field(default=0, repr=False)

    def file(self, stem: str, *, asset: str) -> Path:
        """A new file name in the directory, made on the first call.

        Raises `StreamingStagingError` when the directory cannot be made.
        """
        if self.directory is None:
            try:
                self.directory = Path(tempfile.mkdtemp(prefix="dagster-dataframely-"))
            except OSError as error:
                raise StreamingStagingError(asset, tempfile.gettempdir(), str(error)) from error
        self._count += 1
        return self.directory / f"{self._count:03d}-{stem}.parquet"

    def sink(self, plan: pl.LazyFrame, stem: str, *, asset: str) -> Path:
        """Run `plan` on the streaming engine into a new staging file.

        Raises `StreamingStagingError` when the staging directory's disk is full (or over its
        quota): a bare Polars error would name neither the directory nor how to move it.
        """
        path = self.file(stem, asset=asset)
        try:
            plan.sink_parquet(
                path,
                compression=_STAGED_COMPRESSION,
                row_group_size=_STAGED_ROW_GROUP,
                engine="streaming",
            )
        except (pl.exceptions.PolarsError, OSError) as error:
            if _out_of_space(error, path.parent):
                path.unlink(missing_ok=True)
                raise StreamingStagingError(asset, str(path.parent), str(error)) from error
            raise
        return path

    def remove(self) -> None:
        """Delete every staged file; the step has written what it read from them."""
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


_NO_SPACE: Final = (errno.ENOSPC, errno.EDQUOT)
"""The operating system's errors of a full disk and of a user's exhausted quota."""


def _out_of_space(error: Exception, directory: Path) -> bool:
    # NOTE: Polars reports the OS error as text (`No space left on device (os error 28)`), an
    # OSError carries its number; and a disk a failed write filled has no byte left, whatever a
    # message says.
    if isinstance(error, OSError) and error.errno in _NO_SPACE:
        return True
    text = str(error)
    if any(f"(os error {code})" in text or os.strerror(code) in text for code in _NO_SPACE):
        return True
    try:
        return shutil.disk_usage(directory).free == 0
    except OSError:
        return False


def scan_staged(path: Path) -> pl.LazyFrame:
    """A scan of a staging file, read through its `file://` URI rather than mapped into memory.

    Polars 1.x maps a local file into the process to read it, so the pages of the whole staged
    table count in the process's resident memory while a pass reads it (870 MiB of 30M rows);
    by its URI Polars reads the file in pieces (34 MiB), at the same speed. Polars 2.x reads a
    local path that way already.
    """
    return pl.scan_parquet(path.as_uri())

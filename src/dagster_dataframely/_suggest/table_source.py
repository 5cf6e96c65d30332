"""What a suggestion reads: a frame, a LazyFrame or a parquet file or folder, as one LazyFrame."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeAlias

import polars as pl

from dagster_dataframely.errors import InvalidArgumentsError

# NOTE: a DuckDB table is `(database path, table name)`: a tuple, so that the package needs
# DuckDB only when such a source is given (it is an optional extra).
Source: TypeAlias = pl.DataFrame | pl.LazyFrame | str | os.PathLike[str] | tuple[str, str]

SUPPORTED_SOURCES = (
    "a Polars DataFrame or LazyFrame, the path of a parquet file or of a folder of parquet "
    "files (local, or a URL such as 's3://bucket/table/'), or a DuckDB table as "
    "(database path, table name)"
)


def source_label(source: Source) -> str:
    """A short name of the source for messages: its path, or the kind of frame."""
    if isinstance(source, pl.DataFrame | pl.LazyFrame):
        return f"a Polars {type(source).__name__}"
    if isinstance(source, tuple):
        return f"DuckDB table {source[1]!r} of {source[0]!r}"
    return repr(os.fspath(source))


def refused(source: Source, problem: str, fix: str) -> InvalidArgumentsError:
    """The refusal of a source, naming it, what is wrong and what to do."""
    return InvalidArgumentsError(
        function="suggest_schema", problem=f"{source_label(source)}: {problem}", fix=fix
    )


def scan_source(source: Source, storage_options: dict[str, str] | None = None) -> pl.LazyFrame:
    """The source as a LazyFrame, without reading its rows."""
    if isinstance(source, pl.DataFrame):
        return source.lazy()
    if isinstance(source, pl.LazyFrame):
        return source
    if isinstance(source, tuple):
        return _scan_duckdb(source)
    if not isinstance(source, str | os.PathLike):
        raise refused(
            source,
            f"cannot read a {type(source).__name__}",
            f"Pass {SUPPORTED_SOURCES}.",
        )
    text = os.fspath(source)
    if "://" not in text:
        path = Path(text)
        if not path.exists():
            raise refused(source, "no such file or folder", f"Pass {SUPPORTED_SOURCES}.")
        # NOTE: a folder is read as one table: every parquet file below it (hive partitions too).
        text = str(path / "**" / "*.parquet") if path.is_dir() else str(path)
    elif text.endswith("/"):
        text = text + "**/*.parquet"
    try:
        frame = pl.scan_parquet(text, storage_options=storage_options)
        frame.collect_schema()
    except (OSError, pl.exceptions.PolarsError) as error:
        # NOTE: Polars' own message says which file and why; it carries no credential because
        # storage options are never part of it.
        raise refused(
            source,
            f"it cannot be read as parquet ({type(error).__name__}: {str(error).splitlines()[0]})",
            f"Pass {SUPPORTED_SOURCES}, or read it with Polars first and pass the frame.",
        ) from error
    return frame


def _scan_duckdb(source: tuple[str, str]) -> pl.LazyFrame:
    database, table = source
    try:
        import duckdb
    except ImportError as error:
        raise refused(
            source, "DuckDB is not installed", "pip install 'dataframely-dagster[duckdb]'."
        ) from error
    if not Path(database).exists():
        raise refused(source, "no such database file", f"Pass {SUPPORTED_SOURCES}.")
    try:
        # NOTE: read-only, so a suggestion never takes DuckDB's write lock from a running job;
        # the LazyFrame streams the table's batches each time a pass collects it.
        connection = duckdb.connect(database, read_only=True)
        relation = connection.table(table)
        try:
            frame = relation.pl(lazy=True)
        except TypeError:
            # NOTE: DuckDB before 1.4 has no lazy hand-off: the table is read into memory once,
            # while `connection` is still referenced (a connection nothing holds is closed).
            frame = relation.pl().lazy()
        frame.collect_schema()
    except duckdb.Error as error:
        raise refused(
            source,
            f"it cannot be read ({type(error).__name__}: {str(error).splitlines()[0]})",
            "Name a table of the database, such as 'main.orders'.",
        ) from error
    return frame

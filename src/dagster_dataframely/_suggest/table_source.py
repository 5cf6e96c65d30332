"""What a suggestion reads: a frame, a LazyFrame or a parquet file or folder, as one LazyFrame."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TypeAlias

import polars as pl
from upath import UPath

from dagster_dataframely.errors import InvalidArgumentsError

# NOTE: a DuckDB table is `(database path, table name)`: a tuple, so that the package needs
# DuckDB only when such a source is given (it is an optional extra).
Source: TypeAlias = pl.DataFrame | pl.LazyFrame | str | os.PathLike[str] | UPath | tuple[str, str]

# NOTE: a `UPath`'s fsspec options for S3 (s3fs' names), as Polars' object store names them;
# Polars reads the files itself, streaming, so s3fs is not in the read path.
_S3_OPTIONS = {
    "key": "aws_access_key_id",
    "secret": "aws_secret_access_key",
    "token": "aws_session_token",
    "endpoint_url": "aws_endpoint_url",
    "region_name": "aws_region",
}
# NOTE: options that tune s3fs' own client and cache, not what is read: Polars has no use for
# them, and they change no row.
_FSSPEC_CLIENT_TUNING = frozenset(
    {
        "config_kwargs",
        "skip_instance_cache",
        "use_listings_cache",
        "listings_expiry_time",
        "max_paths",
        "default_block_size",
        "default_fill_cache",
        "default_cache_type",
        "asynchronous",
        "loop",
    }
)

SUPPORTED_SOURCES = (
    "a Polars DataFrame or LazyFrame, the path of a parquet file or of a folder of parquet "
    "files (local, or a URL such as 's3://bucket/table/', or a UPath), or a DuckDB table as "
    "(database path, table name)"
)


def source_label(source: Source) -> str:
    """A short name of the source for messages: its path, or the kind of frame."""
    if isinstance(source, pl.DataFrame | pl.LazyFrame):
        return f"a Polars {type(source).__name__}"
    if isinstance(source, tuple):
        return f"DuckDB table {source[1]!r} of {source[0]!r}"
    if isinstance(source, UPath):
        # NOTE: the URL alone: a UPath's options, which may hold credentials, are not shown.
        return repr(str(source))
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
    if not isinstance(source, str | os.PathLike | UPath):
        raise refused(
            source, f"cannot read a {type(source).__name__}", f"Pass {SUPPORTED_SOURCES}."
        )
    if isinstance(source, UPath):
        # NOTE: a local UPath is its path; another one is its URL with its options.
        local = source.protocol in ("", "file", "local")
        text = source.path if local else _upath_location(source)
        storage_options = (
            storage_options if local else {**_polars_options(source), **(storage_options or {})}
        )
    else:
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


def _upath_location(path: UPath) -> str:
    # NOTE: `str(UPath)` drops a folder's trailing slash, which marks a folder for the scan.
    text = str(path)
    try:
        folder = path.is_dir()
    except OSError as error:
        raise refused(
            path,
            f"it cannot be listed ({type(error).__name__}: {str(error).splitlines()[0]})",
            f"Pass {SUPPORTED_SOURCES}.",
        ) from error
    return text.rstrip("/") + "/" if folder else text


def _polars_options(path: UPath) -> dict[str, str]:
    given = dict(path.storage_options)
    client = dict(given.pop("client_kwargs", None) or {})
    options: dict[str, str] = {}
    unknown = []
    for name, value in {**given, **client}.items():
        if path.protocol in ("s3", "s3a") and name in _S3_OPTIONS:
            options[_S3_OPTIONS[name]] = str(value)
        elif name in _FSSPEC_CLIENT_TUNING:
            continue
        elif path.protocol in ("s3", "s3a") and name == "anon":
            options["aws_skip_signature"] = str(bool(value)).lower()
        else:
            unknown.append(name)
    if unknown:
        # NOTE: the option names only: their values may be credentials.
        raise refused(
            path,
            f"its option{'s' if len(unknown) > 1 else ''} {', '.join(sorted(unknown))} cannot "
            "be passed to Polars' reader",
            "Pass the URL as a string with storage_options= in Polars' names (such as "
            "aws_access_key_id), or read it with Polars first and pass the frame.",
        )
    if options.get("aws_endpoint_url", "").startswith("http://"):
        options["aws_allow_http"] = "true"
    return options


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

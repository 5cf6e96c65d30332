"""Refusals to store rows unsafely: paths, credentials, partitions, staging and writes."""

import dagster as dg

from dagster_dataframely._upstream import DagsterInvalidPropertyError
from dagster_dataframely.errors.error_base import (
    DagsterDataframelyError,
    StorageRefusedError,
    _quoted,
)


class CredentialsInUrlError(StorageRefusedError):
    """Raised when a directory is a URL with a user name or password written into it.

    Whatever shows the location (metadata, an error, a log line) would show the secret, and
    object stores read their credentials from the environment anyway. The message names where
    the URL was given and its scheme, never the URL itself.

    Parameters
    ----------
    given_as
        Where the URL was given, such as the argument or setting that held it.
    scheme
        The URL's scheme (`s3`, `gs`, ...), or an empty string when it has none.
    """

    given_as: str
    scheme: str

    def _message(self) -> str:
        url = f"a {self.scheme}:// URL" if self.scheme else "a URL"
        return (
            f"{self.given_as} is {url} with a user name or password in it, which "
            "dagster-dataframely refuses so that no credential ever appears in metadata, errors or "
            "logs. Remove the `user:password@` part and give the credentials through the "
            "environment (for S3, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) or the IO manager's "
            "storage_options."
        )


class QuarantineDirProtocolError(StorageRefusedError):
    """Raised when the quarantine directory is a URL whose filesystem cannot write files.

    fsspec reads `http://` and `https://` URLs but cannot write to them, and answers a write
    with a bare `NotImplementedError`; this takes its place, when the write is refused.

    Parameters
    ----------
    protocol
        The URL protocol of the quarantine directory that is not supported.
    """

    protocol: str

    def _message(self) -> str:
        return (
            f"The quarantine directory is a URL with the protocol {self.protocol!r}, and fsspec's "
            f"filesystem for {self.protocol!r} cannot write files, so the invalid rows have "
            "nowhere to go. Set the quarantine directory to a local directory or to a URL of a "
            "store fsspec can write to, such as s3://, gs://, az:// or memory://."
        )


class PartitionKeyTooLongError(StorageRefusedError):
    """Raised when a partition key would make a quarantine file name too long to create.

    A local filesystem refuses a file or directory name over 255 bytes with a bare `OSError`
    ("File name too long"). The name is the escaped partition key plus `.parquet`, so this is
    raised before anything is written.

    Parameters
    ----------
    partition_key
        The partition key that does not fit.
    name
        The file or directory name it would become.
    limit
        The longest name the filesystem allows, in bytes.
    """

    def __init__(self, partition_key: str, name: str, limit: int) -> None:
        self.partition_key = str(partition_key)
        self.name = name
        self.limit = limit
        size = len(name.encode())
        super().__init__(
            f"The partition key {self.partition_key!r} makes the quarantine path segment "
            f"{name!r}, which is {size} bytes long, but a local filesystem takes at most "
            f"{limit} bytes in one file or directory name. Use shorter partition keys (each "
            f"segment of the key, escaped, plus `.parquet` for the last, within {limit} bytes "
            f"of UTF-8), or write the quarantine to an object store such as s3://."
        )


class PartitionRangeError(StorageRefusedError):
    """Raised when a run cannot store each partition's rows as its own.

    A single-run backfill validates each partition of the range separately and stores them
    with one write, so every row must belong to one partition of the range, by the asset's
    `partition_expr`, and the IO manager must store a range in one step. A run of one
    partition on a database IO manager (a `DbIOManager`, such as `DuckDBPolarsIOManager`)
    needs every row in that partition: the manager replaces only the partition's rows, so a
    row outside it would be stored beside rows no run replaces, and again on every rerun.
    Raised before anything is written; when the rows decide it, after the asset's function
    returned them. The message names counts, never a row's value.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    partitions
        The range, as `first...last`, or the key of the one partition.
    problem
        What stands in the way.
    fix
        What to change.
    """

    asset: str
    partitions: str
    problem: str
    fix: str

    def _message(self) -> str:
        # NOTE: a range is shown as `first...last` (`RowPartitions.shown`), a partition as its key.
        over = "over the partitions" if "..." in self.partitions else "of the partition"
        return (
            f"The run of {self.asset!r} {over} {self.partitions} stopped before writing "
            f"anything: {self.problem}. {self.fix}"
        )


class MissingPartitionExprError(StorageRefusedError):
    """Raised in a run, before the function, when a database manager lacks a `partition_expr`.

    A database IO manager (a `DbIOManager`, such as `DuckDBPolarsIOManager`) replaces one
    partition of a table by the column the asset's `partition_expr` definition metadata names,
    and without it fails on its first write, after the function ran: the package's write of
    the quarantine, under a key the asset never declared. So a run of one partition refuses it
    first, naming the asset; nothing is written.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    manager
        The IO manager that needs it, as its class name.
    dimensions
        The dimensions of a multi-partitioned asset that have no entry in its
        `partition_expr`; empty for an asset with one partitions definition.
    """

    asset: str
    manager: str
    dimensions: list[str]

    def _message(self) -> str:
        if self.dimensions:
            missing = (
                f"its `partition_expr` has no entry for the dimension"
                f"{'s' if len(self.dimensions) > 1 else ''} {_quoted(self.dimensions)}"
            )
            columns = ", ".join(f"{name!r}: '<column>'" for name in self.dimensions)
            fix = (
                "Give `partition_expr` one entry per dimension, naming the column that holds "
                f"each row's key in that dimension: add {columns} to its mapping."
            )
        else:
            missing = "it has no `partition_expr` in its definition metadata"
            fix = (
                "Add `metadata={'partition_expr': '<column>'}` to the asset, naming the column "
                "that holds each row's partition."
            )
        return (
            f"The run of {self.asset!r} stopped before its function ran: {self.manager} stores "
            f"each partition by the column the asset's `partition_expr` names, and {missing}, so "
            "its first write (the quarantine's, or the table's) would fail after the function ran. "
            f"{fix}"
        )


class StagedWriteError(StorageRefusedError, IsADirectoryError):
    """Raised when `staged_writes=True` finds that the IO manager wrote a directory.

    Staging replaces one file per table; a dataset split into files (or a Delta table) cannot
    be renamed into place whole, so the previous table is left as it was. Also an
    `IsADirectoryError`, as it was before this package gave it a class of its own.

    Parameters
    ----------
    staging_name
        The name of the staging path the manager wrote a directory to.
    """

    staging_name: str

    def _message(self) -> str:
        return (
            "staged_writes=True stages one file per table, but the IO manager wrote a directory (a "
            "dataset split into files, or a Delta table); the previous table was left as it was. "
            f"Drop staged_writes=True for this asset: {self.staging_name}"
        )


class StreamingStagingError(StorageRefusedError):
    """Raised when `streaming=True` cannot stage the returned rows on the local disk.

    A streamed output stages its rows once, compressed, in a directory under Python's temporary
    directory (`tempfile`, which `TMPDIR` sets) before validating them. Raised when that disk
    is full or over its quota, or the directory cannot be made; nothing was written, and the
    staged part is removed.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    path
        The staging directory (or the temporary directory it was to be made in).
    problem
        What the operating system or Polars reported.
    """

    asset: str
    path: str
    problem: str

    def _message(self) -> str:
        return (
            f"streaming=True could not stage the rows of {self.asset!r} in {self.path}: "
            f"{self.problem}. Nothing was written. Staging needs room for the whole table, "
            "compressed, in Python's temporary directory: free space there, point the TMPDIR "
            "environment variable at a local disk with room for it, or drop streaming=True to "
            "validate the rows in memory."
        )


class QuarantineFrameTypeError(StorageRefusedError, dg.DagsterInvariantViolationError):
    """Raised when something other than a Polars `DataFrame` is written as a quarantine.

    `QuarantineAwareIOManager` stores quarantines as `pl.DataFrame`s only; also a
    `dg.DagsterInvariantViolationError`, as it was before this package gave it a class.

    Parameters
    ----------
    asset
        The quarantine's asset key, as a string.
    value_type
        The type of what was written instead.
    """

    asset: str
    value_type: str

    def _message(self) -> str:
        return (
            f"A quarantine write for {self.asset} must be a pl.DataFrame, got {self.value_type}. "
            "Write the quarantine with dd.wiring.delegating_writer, which hands the writer the "
            "frame dd.wiring.quarantine_frame builds."
        )


class StorageWriteError(StorageRefusedError):
    """Raised when a write of the package fails for an output whose settings hide values.

    A storage error quotes what it could not write (DuckDB names the value it could not
    convert), and a step's error reaches the event log whole. So when a quarantine write, or a
    write through `QuarantineAwareIOManager`, fails for an output with a column marked
    `metadata={"pii": True}` or with `row_sample=0`, this error replaces the manager's: it names
    the write, the manager and the error's type, and leaves out its message and its chain.

    Parameters
    ----------
    asset
        The asset key the write was for, as a string (a quarantine's: `<name>_quarantine`).
    manager
        The IO manager that failed, by class name.
    error_type
        The class of the error it raised, with its module (`_duckdb.ConversionException`).
    reason
        Why its message is left out: the sensitive columns, or the samples being off.
    """

    asset: str
    manager: str
    error_type: str
    reason: str

    def _message(self) -> str:
        return (
            f"{self.manager} could not write {self.asset!r}: it raised {self.error_type}, whose "
            "message is left out of the event log because it may quote the rows' values, and "
            f"{self.reason}. To find the cause, compare the stored table with the frame (a column "
            "whose stored type no longer matches the schema's is the usual cause of a failed "
            "insert), or repeat the write outside a run, where the message stays with you."
        )


class NoRunningStepError(DagsterDataframelyError, DagsterInvalidPropertyError):
    """A writer that needs a run was made in a direct invocation, which has no step.

    `delegating_writer` hands the rows to the step's IO manager, and a direct call has none.
    It raises exactly Dagster's `DagsterInvalidPropertyError`, as the spec names, with this
    error's message; the class stays public (and a subclass of Dagster's) for callers that
    construct or catch it.

    Parameters
    ----------
    function
        The function that needs the running step.
    """

    function: str

    def _message(self) -> str:
        return (
            f"{self.function} hands the invalid rows to the running step's IO manager, and a "
            "direct invocation has no step. Use dd.wiring.file_writer in a direct call, or call "
            "the asset with dd.testing.call_asset, which keeps the quarantine in memory."
        )

"""DuckDB tables that follow the schema: a new or dropped column never fails a write.

`DuckDBPolarsIOManager` creates a table from the first frame it stores, then deletes the
slice and inserts every later frame into it *by position*, each statement committed on its
own. So a frame that gained a column (a rule added to a schema gives its quarantine one more
rule column; a nullable column added to a schema gives the table one) fails the insert after
the delete went through: the slice is empty, and every later run fails the same way. Here a
table is fitted to the frame before the rows go in: every column the frame has and the table
lacks is added (older rows read NULL in it), the frame is put in the table's column order,
and a column the table has and the frame lacks (a rule dropped from the schema) gets NULL.

Two ways to write with it:

- `transactional(manager)`: the slice replacement runs in one transaction (fit, delete,
  insert, commit), so a failed or killed write leaves the old rows. Every quarantine write
  goes this way, and with `staged_writes=True` every write through `QuarantineAwareIOManager`.
- `fit_table(manager, context, frame)`: only the fit, committed before the manager's own
  write, which then inserts the returned frame as it always does. For a table whose write the
  package does not control (a bare manager) or has not been asked to stage.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely import _upstream


def transactional(manager: dg.IOManager, *, create_empty: bool = False) -> dg.IOManager:
    """An IO manager that writes as the DuckDB `manager` does, each slice in one transaction.

    With `create_empty`, an empty frame creates the table when there is none yet (the
    manager's own handler skips an empty frame and creates nothing), so a quarantine that never
    had a row can still be read.
    """
    return _TransactionalDuckDB(manager, create_empty=create_empty)


def fitting(manager: dg.IOManager) -> dg.IOManager:
    """An IO manager that fits the table to each frame, then lets the DuckDB `manager` write it."""
    return _FittingDuckDB(manager)


def fit_table(
    manager: dg.IOManager, context: dg.OutputContext, frame: pl.DataFrame
) -> pl.DataFrame:
    """Add the frame's new columns to the stored table; return the frame in the table's order.

    `context` is the output context the manager will write with (its asset key, partition and
    resource config). The columns are added in one transaction, committed before the manager's
    own write; a table that does not exist yet is left for the manager to create.
    """
    table_slice = _upstream.db_table_slice(manager, context)
    with connection_of(manager, context, table_slice) as connection:
        connection.begin()
        fitted = _fit_to_table(connection, table_slice, frame)
        connection.commit()
    return fitted


def table_exists(manager: dg.IOManager, context: dg.OutputContext) -> bool:
    """Whether the DuckDB `manager` has a table for `context`'s asset (any partition of it)."""
    table_slice = _upstream.db_table_slice(manager, context)
    with connection_of(manager, context, table_slice) as connection:
        return bool(stored_columns(connection, table_slice))


def connection_of(manager: dg.IOManager, context: Any, table_slice: Any) -> Any:
    """A connection of the DuckDB `manager` to the database `table_slice` is in."""
    client, _ = _upstream.db_io_manager_parts(manager)
    return _connection(client, context, table_slice)


@contextlib.contextmanager
def _connection(client: Any, context: Any, table_slice: Any) -> Iterator[Any]:
    # NOTE: closed on an error too: dagster-duckdb closes it only on success, and an open
    # connection keeps the database file locked for this process until it is collected.
    with client.connect(context, table_slice) as connection:
        try:
            yield connection
        except BaseException:
            connection.close()
            raise


class _FittingDuckDB(dg.IOManager):
    """Fits the table to the frame, then writes through the DuckDB manager as it always does."""

    def __init__(self, manager: dg.IOManager) -> None:
        self._manager = manager

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if isinstance(obj, pl.DataFrame):
            obj = fit_table(self._manager, context, obj)
        self._manager.handle_output(context, obj)

    def load_input(self, context: dg.InputContext) -> Any:
        return self._manager.load_input(context)


class _TransactionalDuckDB(dg.IOManager):
    """Writes through a DuckDB `DbIOManager` whose slice replacement is one transaction."""

    def __init__(self, manager: dg.IOManager, *, create_empty: bool) -> None:
        self._manager = manager
        self._create_empty = create_empty

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if not isinstance(obj, pl.DataFrame):
            self._manager.handle_output(context, obj)  # the manager raises its own error
            return
        client, handlers = _upstream.db_io_manager_parts(self._manager)
        replacement = _SliceReplacement(client, handlers, obj, create_empty=self._create_empty)
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

    def __init__(
        self, client: Any, handlers: Mapping[type, Any], frame: pl.DataFrame, *, create_empty: bool
    ) -> None:
        self._client = client
        self._handlers = handlers
        self.frame = frame
        self.create_empty = create_empty

    @contextlib.contextmanager
    def connect(self, context: Any, table_slice: Any) -> Iterator[Any]:
        with _connection(self._client, context, table_slice) as connection:
            connection.begin()
            try:
                yield connection
                connection.commit()
            except BaseException:
                # A commit that failed has rolled back already, and then a rollback raises.
                with contextlib.suppress(Exception):
                    connection.rollback()
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
        if frame.is_empty():
            # The slice is already empty. Newer handlers skip an empty frame and create nothing
            # (so a quarantine that must exist is created here); 0.29.6's would write it, and
            # fail on a table whose columns it does not have. The same on every version.
            if self._replacement.create_empty:
                _create_empty_table(connection, table_slice, frame)
            return None
        return self._handler.handle_output(context, table_slice, frame, connection)

    def load_input(self, context: Any, table_slice: Any, connection: Any) -> Any:
        return self._handler.load_input(context, table_slice, connection)


def stored_columns(connection: Any, table_slice: Any) -> list[str]:
    """The stored table's columns in order; empty when there is no such table."""
    rows = connection.execute(
        "select column_name from information_schema.columns "
        "where table_schema = ? and table_name = ? order by ordinal_position",
        [table_slice.schema, table_slice.table],
    ).fetchall()
    return [name for (name,) in rows]


def _fit_to_table(connection: Any, table_slice: Any, frame: pl.DataFrame) -> pl.DataFrame:
    columns = stored_columns(connection, table_slice)
    if not columns:
        return frame  # a new table: the handler creates it from the frame
    qualified = f"{table_slice.schema}.{table_slice.table}"
    added = [name for name in frame.columns if name not in columns]
    if frame.is_empty():
        # NOTE: no row brings a new column, so the table gains none; newer handlers skip an
        # empty frame, and 0.29.6's inserts it, which fails unless it has the table's columns.
        frame, added = frame.drop(added), []
    if added:
        with _registered(connection, frame.select(added)) as view:
            described = connection.execute(f"describe select * from {view}").fetchall()
        types = {str(row[0]): str(row[1]) for row in described}
        for name in added:
            connection.execute(f"alter table {qualified} add column {quoted(name)} {types[name]}")
        columns += added
    missing = [name for name in columns if name not in frame.columns]
    if missing:
        stored = connection.execute(f"select * from {qualified} limit 0").pl().schema
        frame = frame.with_columns(pl.lit(None, dtype=stored[name]).alias(name) for name in missing)
    return frame.select(columns)


def _create_empty_table(connection: Any, table_slice: Any, frame: pl.DataFrame) -> None:
    qualified = f"{table_slice.schema}.{table_slice.table}"
    connection.execute(f"create schema if not exists {table_slice.schema}")
    with _registered(connection, frame) as view:
        connection.execute(f"create table if not exists {qualified} as select * from {view}")


@contextlib.contextmanager
def _registered(connection: Any, frame: pl.DataFrame) -> Iterator[str]:
    view = f"dy_fit_{secrets.token_hex(4)}"
    connection.register(view, frame.head(0).to_arrow())
    try:
        yield view
    finally:
        connection.unregister(view)


def quoted(identifier: str) -> str:
    """A DuckDB identifier in double quotes, any quote in it doubled."""
    return '"' + identifier.replace('"', '""') + '"'

"""A materialization that stops dead in the middle of one write, for a test to kill it there.

`python -m integration_tests.interrupted_write '<json>'` runs `orders` once (through
`write_version`) with a hook that, when the chosen write is half done, touches a marker file
and sleeps. The test waits for the marker, sends SIGKILL, and then reads what a killed run left
behind. Where the write stops is fixed, so every kill lands at the same point:

- parquet: half of the new file's bytes are written and flushed to the kernel (which keeps
  them through the kill), the rest never are. Without staging that half file is the table.
- DuckDB: the manager has deleted the slice and not yet inserted the new rows. Without a
  transaction that delete is already committed.

The same `write_version` writes the last good version in the test's own process first.

With `"then": "continue"` the hook only touches the marker when the chosen write starts and
lets it run on, so `benchmarks/killed_writes.py` can kill the process at a random moment of a
real write and count what is left.

With `"partition"`, the asset is daily-partitioned (`conftest.DAILY`) and the run writes that
partition. The kind `memory` stores on fsspec's in-memory object store (per process): a staged
write there dumps to a local staging directory in `TMPDIR` first, and that local write is the
one that stops half way.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

from .conftest import DAILY, QUIET, UNPARTITIONED, orders_asset, orders_frame

PARQUET, DUCKDB, MEMORY = "parquet", "duckdb", "memory"
TABLE, QUARANTINE = "table", "quarantine"
DAY = "2026-01-02"
_FOREVER = 600.0


def manager(kind: str, warehouse: Path, restricted: Path, *, staged: bool) -> object:
    """The table manager on `warehouse`, the quarantine's on `restricted`."""
    if kind == PARQUET:
        table: object = PolarsParquetIOManager(base_dir=str(warehouse))
        quarantine: object = PolarsParquetIOManager(base_dir=str(restricted))
    elif kind == MEMORY:
        table = PolarsParquetIOManager(base_dir=f"memory://{warehouse}")
        quarantine = PolarsParquetIOManager(base_dir=f"memory://{restricted}")
    else:
        table = DuckDBPolarsIOManager(database=str(warehouse / "w.duckdb"))
        quarantine = DuckDBPolarsIOManager(database=str(restricted / "q.duckdb"))
    return dd.QuarantineAwareIOManager(
        io_manager=table, quarantine_io_manager=quarantine, staged_writes=staged
    )


def version(tag: str, valid: int = 2, invalid: int = 1) -> pl.DataFrame:
    """A version of the orders: ids tagged `tag`, `valid` good rows and `invalid` bad ones."""
    return orders_frame(DAY, tag=tag, valid=valid, invalid=invalid)


def big_version(rows: int) -> pl.DataFrame:
    """`rows` valid orders and one invalid, each id 64 random hex digits, so the file is large
    even compressed (about 70 bytes a row)."""
    frame = version("big", valid=rows, invalid=1)
    ids = [secrets.token_hex(32) for _ in range(frame.height)]
    return frame.with_columns(pl.Series("order_id", ids, dtype=pl.String))


def write_version(
    kind: str,
    warehouse: Path,
    restricted: Path,
    frame: pl.DataFrame,
    *,
    staged: bool,
    partition: str | None = None,
) -> dg.ExecuteInProcessResult:
    """Materialize `orders` returning `frame` (for `partition`, daily-partitioned); a failed
    run returns its result too."""
    if partition is None:
        orders = orders_asset({UNPARTITIONED: frame})
    else:
        orders = orders_asset({partition: frame}, partitions_def=DAILY)
    return dg.materialize(
        [orders],
        resources={"io_manager": manager(kind, warehouse, restricted, staged=staged)},
        run_config=QUIET,
        partition_key=partition,
        raise_on_error=False,
    )


def _stop_parquet_write_half_way(
    under: Path, marker: Path, *, stop: bool, name: str | None = None
) -> None:
    """Every parquet write to a file below `under` (named `<name>.parquet`, if given) writes
    half its bytes, then stops."""
    write_parquet = pl.DataFrame.write_parquet

    def half_then_stop(frame: pl.DataFrame, file: Any, *args: Any, **kwargs: Any) -> None:
        path = str(getattr(file, "path", None) or getattr(file, "name", None) or file)
        named = name is None or Path(path).name == f"{name}.parquet"
        if not (path.startswith(str(under)) and named):
            write_parquet(frame, file, *args, **kwargs)
            return
        if not stop:
            marker.touch()
            write_parquet(frame, file, *args, **kwargs)
            _done(marker).touch()
            return
        whole = io.BytesIO()
        write_parquet(frame, whole, *args, **kwargs)
        data = whole.getvalue()
        if hasattr(file, "write"):
            file.write(data[: len(data) // 2])
            file.flush()
        else:
            Path(path).write_bytes(data[: len(data) // 2])
        _stop_here(marker)

    pl.DataFrame.write_parquet = half_then_stop  # type: ignore[assignment,method-assign]


def _stop_duckdb_write_after_the_delete(table: str, marker: Path, *, stop: bool) -> None:
    """The slice replacement of `table` stops once the old rows are deleted."""
    from dagster_duckdb.io_manager import DuckDbClient

    delete = DuckDbClient.delete_table_slice

    def delete_then_stop(context: Any, table_slice: Any, connection: Any) -> None:
        if table_slice.table == table and not stop:
            marker.touch()
        delete(context, table_slice, connection)
        if table_slice.table == table and stop:
            _stop_here(marker)

    DuckDbClient.delete_table_slice = staticmethod(delete_then_stop)  # type: ignore[method-assign]
    if stop:
        return
    from dagster_duckdb_polars import DuckDBPolarsTypeHandler

    insert = DuckDBPolarsTypeHandler.handle_output

    def insert_then_mark(
        handler: Any, context: Any, table_slice: Any, obj: Any, connection: Any
    ) -> Any:
        stored = insert(handler, context, table_slice, obj, connection)
        if table_slice.table == table:
            _done(marker).touch()
        return stored

    DuckDBPolarsTypeHandler.handle_output = insert_then_mark  # type: ignore[method-assign]


def _done(marker: Path) -> Path:
    """Touched when a write that was let run on has handed its rows over (`"continue"`)."""
    return marker.with_name(marker.name + ".done")


def _stop_here(marker: Path) -> None:
    marker.touch()
    time.sleep(_FOREVER)  # the test kills the process long before this ends
    os._exit(3)


def main(arguments: dict[str, Any]) -> None:
    kind, stop_in = arguments["kind"], arguments["stop_in"]
    warehouse, restricted = Path(arguments["warehouse"]), Path(arguments["restricted"])
    marker = Path(arguments["marker"])
    stop = arguments.get("then", "stop") == "stop"
    if kind == PARQUET:
        under = warehouse if stop_in == TABLE else restricted
        _stop_parquet_write_half_way(under, marker, stop=stop)
    elif kind == MEMORY:
        # The local staging file, named as the table's or the quarantine's file.
        name = "orders" if stop_in == TABLE else "orders_quarantine"
        _stop_parquet_write_half_way(Path(tempfile.gettempdir()), marker, stop=stop, name=name)
    else:
        table = "orders" if stop_in == TABLE else "orders_quarantine"
        _stop_duckdb_write_after_the_delete(table, marker, stop=stop)
    second = big_version(arguments["rows"]) if "rows" in arguments else version("second", 3, 2)
    result = write_version(
        kind,
        warehouse,
        restricted,
        second,
        staged=arguments["staged"],
        partition=arguments.get("partition"),
    )
    if stop:
        sys.exit(4)  # the write was expected to stop; reaching here means the hook never fired
    sys.exit(0 if result.success else 5)


if __name__ == "__main__":
    main(json.loads(sys.argv[1]))

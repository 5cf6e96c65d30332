"""The ways a user stores a validated asset, and a reader that opens what each one stored.

Bare `PolarsParquetIOManager` and `DuckDBPolarsIOManager`, each also wrapped in
`QuarantineAwareIOManager`, plain and with `staged_writes=True`. The reader opens the files
and tables themselves (`pl.read_parquet`, DuckDB read-only), never through a manager, so a test
sees what a user finds; it returns None where nothing is stored.
"""

import datetime as dt
import gc
from pathlib import Path

import duckdb
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

MODES = (
    "parquet",
    "duckdb",
    "wrapped-parquet",
    "wrapped-duckdb",
    "staged-parquet",
    "staged-duckdb",
)

PARTITIONED = pytest.mark.parametrize("partitioned", [False, True], ids=["whole", "daily"])


class Storage:
    """One mode of storing, under `root`: the manager to bind and what it stored."""

    def __init__(self, mode: str, root: Path) -> None:
        self.mode = mode
        self.kind = mode.rsplit("-", 1)[-1]
        self.root = root
        self.database = root / "warehouse.duckdb"

    def io_manager(self) -> object:
        if self.kind == "parquet":
            manager: object = PolarsParquetIOManager(base_dir=str(self.root))
        else:
            manager = DuckDBPolarsIOManager(database=str(self.database))
        if self.mode.startswith(("wrapped", "staged")):
            return dd.QuarantineAwareIOManager(
                io_manager=manager, staged_writes=self.mode.startswith("staged")
            )
        return manager

    def read(self, name: str, day: str | None = None) -> pl.DataFrame | None:
        """The stored rows of `name` (of partition `day`, whose `day` column holds it)."""
        if self.kind == "parquet":
            path = self.root / (f"{name}/{day}.parquet" if day else f"{name}.parquet")
            return pl.read_parquet(path) if path.exists() else None
        # DuckDbClient leaves its connection open after a failed write; it closes once collected.
        gc.collect()
        if not self.database.exists():
            return None
        with duckdb.connect(str(self.database), read_only=True) as connection:
            found = connection.execute(
                "select count(*) from information_schema.tables "
                "where table_schema = 'public' and table_name = ?",
                [name],
            ).fetchone()
            if not found or not found[0]:
                return None
            where, values = ("where day = ?", [dt.date.fromisoformat(day)]) if day else ("", [])
            return connection.execute(f"select * from public.{name} {where}", values).pl()

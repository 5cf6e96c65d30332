"""The ways a user stores an asset, a reader of what each stored, and the loads to compare.

Bare `PolarsParquetIOManager` and `DuckDBPolarsIOManager`, each also wrapped in
`QuarantineAwareIOManager`, plain and with `staged_writes=True`. The reader opens the files
and tables themselves (`pl.read_parquet`, DuckDB read-only), never through a manager, so a test
sees what a user finds; it returns None where nothing is stored. `polars_loads` are the assets
whose loads the wrapper's conformance suite compares, on a local disk and on S3.
"""

import datetime as dt
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager
from polars.testing import assert_frame_equal

import dagster_dataframely as dd

from .conftest import duckdb_stored

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
        where, values = ("where day = ?", [dt.date.fromisoformat(day)]) if day else ("", [])
        return duckdb_stored(self.database, name, where, values)


FRAME = pl.DataFrame({"a": [3, 1, 2], "b": ["x", "y", "z"]})


def polars_loads(seen: dict[str, Any]) -> list[dg.AssetsDefinition]:
    """`table` (a frame), `absent` (`None` for an `Optional`) and one reader per way of loading.

    Each reader puts what it loaded in `seen`: `eager`, `lazy`, `picked` (column `b` only) and
    `missing` (the `None`). Dagster takes one input per upstream asset, hence four readers.
    """

    @dg.asset
    def table() -> pl.DataFrame:
        return FRAME

    @dg.asset
    def absent() -> pl.DataFrame | None:
        return None  # dagster-polars writes nothing for a `None` of an `Optional` output

    @dg.asset
    def eager_reader(table: pl.DataFrame) -> None:
        seen["eager"] = table

    @dg.asset
    def lazy_reader(table: pl.LazyFrame) -> None:
        seen["lazy"] = table

    @dg.asset(ins={"table": dg.AssetIn("table", metadata={"columns": ["b"]})})
    def picked_reader(table: pl.DataFrame) -> None:
        seen["picked"] = table

    @dg.asset
    def missing_reader(absent: pl.DataFrame | None) -> None:
        seen["missing"] = absent

    return [table, absent, eager_reader, lazy_reader, picked_reader, missing_reader]


def assert_polars_loads(seen: dict[str, Any]) -> None:
    """What the readers of `polars_loads` received."""
    assert_frame_equal(seen["eager"], FRAME)
    assert isinstance(seen["lazy"], pl.LazyFrame)
    assert_frame_equal(seen["lazy"].collect(), FRAME)
    assert_frame_equal(seen["picked"], FRAME.select("b"))
    assert seen["missing"] is None

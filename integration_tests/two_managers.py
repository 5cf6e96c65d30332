"""Two tables of one step stored by `PolarsParquetIOManager`, `DuckDBPolarsIOManager`, or one each.

The multi-asset and Collection tests run every outcome three ways: both tables on parquet, both
in DuckDB, and the first on parquet with the second in DuckDB in the same step. This reads what
the managers stored by opening the files and tables themselves, not through the managers.
"""

from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

from .conftest import duckdb_stored

KINDS = ("parquet", "duckdb", "both")
"""How the two tables are stored; `both`: the first on parquet, the second in DuckDB."""


class TwoManagers:
    """The step's two IO managers (`parquet` and `duckdb` resource keys) and what they stored."""

    def __init__(self, kind: str, root: Path, tables: tuple[str, str]) -> None:
        self.kind = kind
        self.tables = tables
        self.database = root / "warehouse.duckdb"
        self.parquet = root / "parquet"

    def manager_of(self, table: str) -> str:
        """The resource key of the manager that stores `table` (and its quarantine)."""
        if self.kind == "both":
            return "parquet" if table == self.tables[0] else "duckdb"
        return self.kind

    def resources(self) -> dict[str, Any]:
        return {
            "parquet": PolarsParquetIOManager(base_dir=str(self.parquet)),
            "duckdb": DuckDBPolarsIOManager(database=str(self.database)),
        }

    def read(self, name: str) -> pl.DataFrame | None:
        """The stored rows of `name` (a table or a quarantine), None when there is none."""
        if self.manager_of(name.removesuffix("_quarantine")) == "parquet":
            path = self.parquet / f"{name}.parquet"
            return pl.read_parquet(path) if path.exists() else None
        return duckdb_stored(self.database, name)

    def snapshot(self) -> dict[str, object]:
        """Both tables (not the quarantines): a parquet file's bytes, a DuckDB table's rows."""
        state: dict[str, object] = {}
        for name in self.tables:
            if self.manager_of(name) == "parquet":
                path = self.parquet / f"{name}.parquet"
                state[name] = path.read_bytes() if path.exists() else None
            else:
                stored = self.read(name)
                state[name] = None if stored is None else Counter(stored.rows())
        return state


def checks(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], bool]:
    """Whether each check passed, by (asset key, check name)."""
    return {
        (e.asset_key.to_user_string(), e.check_name): e.passed
        for e in result.get_asset_check_evaluations()
    }

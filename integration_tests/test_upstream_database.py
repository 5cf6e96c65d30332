"""The private Dagster access behind `database_handled_types`, pinned on a real database manager.

The rest of its characterization tests are in `tests/test_upstream.py`; this one needs
`dagster-duckdb-polars`, which the unit suite does not import.
"""

from pathlib import Path

import dagster as dg
import polars as pl
from dagster_duckdb_polars import DuckDBPolarsIOManager

from dagster_dataframely._upstream import database_handled_types


def test_database_handled_types_reads_a_database_managers_handlers(tmp_path: Path) -> None:
    """`DbIOManager` and its `_handlers_by_type`."""
    factory = DuckDBPolarsIOManager(database=str(tmp_path / "db.duckdb"))
    manager = factory.create_io_manager(dg.build_init_resource_context())
    handled = database_handled_types(manager)
    assert handled is not None, "DuckDBPolarsIOManager no longer builds a DbIOManager."
    assert pl.DataFrame in handled, (
        "DuckDBPolarsIOManager no longer builds a dagster._core.storage.db_io_manager.DbIOManager "
        f"whose _handlers_by_type is keyed by the handled types: read {handled}."
    )

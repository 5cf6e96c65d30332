"""The private Dagster accesses about database managers, pinned on a real one.

`database_handled_types`, and the `DbIOManager` parts staged writes replace. The rest of the
characterization tests are in `tests/test_upstream.py`; these need `dagster-duckdb-polars`,
which the unit suite does not import.
"""

from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import polars as pl
import pytest
from dagster._check import CheckError
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

from dagster_dataframely._upstream import (
    database_handled_types,
    db_io_manager_parts,
    db_io_manager_with,
    db_range_slice,
    db_table_slice,
    is_duckdb_io_manager,
)


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


# The parts of a DbIOManager that staged writes replace.


def _built(resource: dg.ConfigurableIOManagerFactory[Any]) -> dg.IOManager:
    with dg.build_init_resource_context() as context:
        return resource.create_io_manager(context)


@pytest.fixture
def duckdb_manager(tmp_path: Any) -> dg.IOManager:
    return _built(DuckDBPolarsIOManager(database=str(tmp_path / "w.duckdb")))


def test_a_duckdb_io_manager_is_recognized(duckdb_manager: dg.IOManager, tmp_path: Any) -> None:
    assert is_duckdb_io_manager(duckdb_manager)
    assert not is_duckdb_io_manager(PolarsParquetIOManager(base_dir=str(tmp_path)))
    assert not is_duckdb_io_manager(object())


def test_db_io_manager_parts_are_its_client_and_polars_handler(
    duckdb_manager: dg.IOManager,
) -> None:
    client, handlers = db_io_manager_parts(duckdb_manager)
    # `DbIOManager.handle_output` calls exactly these on its client.
    for method in ("connect", "ensure_schema_exists", "delete_table_slice", "get_table_name"):
        assert callable(getattr(client, method)), method
    assert list(handlers) == [pl.DataFrame]


def test_a_db_io_manager_copy_writes_through_the_parts_it_is_given(
    duckdb_manager: dg.IOManager, tmp_path: Any
) -> None:
    client, handlers = db_io_manager_parts(duckdb_manager)
    calls: list[str] = []

    class Recording:
        def __getattr__(self, name: str) -> Any:
            calls.append(name)
            return getattr(client, name)

    writer = db_io_manager_with(duckdb_manager, client=Recording(), handlers=handlers)
    writer.handle_output(
        dg.build_output_context(
            asset_key=dg.AssetKey("t"),
            resource_config={"database": str(tmp_path / "w.duckdb"), "connection_config": {}},
        ),
        pl.DataFrame({"a": [1]}),
    )

    assert calls[:3] == ["connect", "ensure_schema_exists", "delete_table_slice"]
    # The original keeps its own client.
    assert db_io_manager_parts(duckdb_manager)[0] is client


def test_db_table_slice_is_where_the_manager_writes(
    duckdb_manager: dg.IOManager, tmp_path: Any
) -> None:
    """`DbIOManager._get_table_slice`: the slice `handle_output` writes, read without writing."""
    context = dg.build_output_context(
        asset_key=dg.AssetKey(["sales", "orders"]),
        resource_config={"database": str(tmp_path / "w.duckdb"), "connection_config": {}},
    )
    table_slice = db_table_slice(duckdb_manager, context)
    assert (table_slice.schema, table_slice.table) == ("sales", "orders")
    assert not (tmp_path / "w.duckdb").exists(), "reading the slice must not open the database"
    duckdb_manager.handle_output(context, pl.DataFrame({"a": [1]}))
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as connection:
        assert connection.execute("select a from sales.orders").fetchall() == [(1,)]


BY_DAY_AND_REGION = dg.MultiPartitionsDefinition(
    {
        "day": dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-04"),
        "region": dg.StaticPartitionsDefinition(["eu", "us"]),
    }
)


@pytest.mark.parametrize(
    ("start", "end", "one_slice"),
    [
        ("2026-01-01|eu", "2026-01-03|eu", True),  # only the days differ
        ("2026-01-02|eu", "2026-01-02|us", True),  # only the regions differ
        ("2026-01-01|eu", "2026-01-02|us", False),  # both differ: two key ranges
    ],
)
def test_db_range_slice_is_none_where_the_manager_could_not_write_the_range(
    duckdb_manager: dg.IOManager, tmp_path: Any, start: str, end: str, one_slice: bool
) -> None:
    """`DbIOManager._get_table_slice` and `dagster._check.CheckError`.

    The manager reads a multi-partitioned range as its one partition key range, which fails
    with a `CheckError` when the keys differ in every dimension; so does its own write.
    """
    context = dg.build_output_context(
        asset_key=dg.AssetKey("orders"),
        definition_metadata={"partition_expr": {"day": "day", "region": "region"}},
        asset_partitions_def=BY_DAY_AND_REGION,
        asset_partition_key_range=dg.PartitionKeyRange(start, end),
        resource_config={"database": str(tmp_path / "w.duckdb"), "connection_config": {}},
    )
    table_slice = db_range_slice(duckdb_manager, context)
    assert (table_slice is not None) is one_slice, (
        "DbIOManager._get_table_slice no longer fails with dagster._check.CheckError for a "
        "multi-partitioned range of several key ranges, or fails for one of a single range"
    )
    frame = pl.DataFrame({"day": ["x"], "region": ["eu"]})
    if table_slice is None:
        with pytest.raises(CheckError):
            duckdb_manager.handle_output(context, frame)
    else:
        assert [d.partition_expr for d in table_slice.partition_dimensions] == ["day", "region"]

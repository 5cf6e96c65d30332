"""Before a run writes anything, the quarantine must have a place of its own.

A partition key or key prefix that a path resolves away, a manager that stores by step output,
a manager that maps two keys to one file, and another asset whose key nests inside a
partitioned quarantine: each used to let the table's write replace the invalid rows, with the
run reporting success. Each now fails the run before the asset's function, writing nothing.
"""

from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager
from upath import UPath

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    PartitionKeyTooLongError,
    QuarantineKeyCollisionError,
    QuarantineStorageCollisionError,
    QuarantineStorageError,
    UnsafePathKeyError,
)

from .conftest import (
    DAY_1,
    QUIET,
    UNPARTITIONED,
    assert_quarantine,
    assert_table,
    duckdb_ids,
    files_under,
    invalid_ids,
    orders_asset,
    orders_frame,
    shared_instance,
    valid_ids,
)

pytestmark = pytest.mark.integration


def run(
    assets: list[Any], io_manager: object, partition_key: str | None = None
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        assets,
        resources={"io_manager": io_manager},
        run_config=QUIET,
        partition_key=partition_key,
        instance=shared_instance(),
        selection=[assets[0].key],
        raise_on_error=False,
    )


def failure_of(result: dg.ExecuteInProcessResult, step: str = "orders") -> str:
    """The class name and message of the user-code error that failed the step."""
    assert not result.success
    failure = result.failure_data_for_node(step)
    assert failure is not None
    assert failure.error is not None
    cause = failure.error.cause or failure.error
    return f"{cause.cls_name}: {cause.message}"


def counting_asset(frames: dict[str, pl.DataFrame], calls: list[str], **kwargs: Any) -> Any:
    """`orders_asset`, recording each call of the function: a refused run never calls it."""
    inner = dict(frames)

    class Recording(dict[str, pl.DataFrame]):
        def __getitem__(self, key: str) -> pl.DataFrame:
            calls.append(key)
            return inner[key]

    return orders_asset(Recording(inner), **kwargs)


# Item 2: partition keys and key prefixes a path would not keep.


@pytest.mark.parametrize("key", ["../x", "a/../b", "./y", "a//b", "x/", ".."])
def test_a_partition_key_a_path_resolves_away_is_refused_before_anything_is_written(
    tmp_path: Path, key: str
) -> None:
    warehouse = tmp_path / "warehouse"
    calls: list[str] = []
    frame = orders_frame(DAY_1)
    orders = counting_asset(
        {key: frame}, calls, partitions_def=dg.StaticPartitionsDefinition([key])
    )

    result = run([orders], PolarsParquetIOManager(base_dir=str(warehouse)), partition_key=key)

    failure = failure_of(result)
    assert failure.startswith(UnsafePathKeyError.__name__), failure
    assert repr(key) in failure
    assert calls == []
    assert files_under(tmp_path) == set()


def test_a_partition_key_too_long_for_a_file_name_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    key = "k" * 300
    calls: list[str] = []
    orders = counting_asset(
        {key: orders_frame(DAY_1)}, calls, partitions_def=dg.StaticPartitionsDefinition([key])
    )

    result = run([orders], PolarsParquetIOManager(base_dir=str(tmp_path)), partition_key=key)

    failure = failure_of(result)
    assert failure.startswith(PartitionKeyTooLongError.__name__), failure
    assert "255 bytes" in failure
    assert calls == []
    assert files_under(tmp_path) == set()


def test_a_dimension_key_a_path_resolves_away_is_refused(tmp_path: Path) -> None:
    regions = dg.StaticPartitionsDefinition(["..", "eu"])
    multi = dg.MultiPartitionsDefinition(
        {"day": dg.StaticPartitionsDefinition(["d1"]), "region": regions}
    )
    key = dg.MultiPartitionKey({"day": "d1", "region": ".."})
    orders = orders_asset({str(key): orders_frame(DAY_1)}, partitions_def=multi)

    result = run([orders], PolarsParquetIOManager(base_dir=str(tmp_path / "w")), partition_key=key)

    failure = failure_of(result)
    assert failure.startswith(UnsafePathKeyError.__name__), failure
    assert "'d1/..'" in failure
    assert files_under(tmp_path) == set()


def test_a_database_manager_stores_such_a_key_as_a_value(tmp_path: Path) -> None:
    key = "../x"
    frame = orders_frame(DAY_1, region=key)
    orders = orders_asset(
        {key: frame},
        partitions_def=dg.StaticPartitionsDefinition([key]),
        metadata={"partition_expr": "region"},
    )
    database = tmp_path / "lake.duckdb"

    result = run([orders], DuckDBPolarsIOManager(database=str(database)), partition_key=key)

    assert result.success
    assert duckdb_ids(database, "public.orders", region=key) == valid_ids(frame)
    assert duckdb_ids(database, "public.orders_quarantine", region=key) == invalid_ids(frame)


def test_a_key_prefix_that_climbs_out_of_the_base_is_refused(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    orders = orders_asset({UNPARTITIONED: orders_frame(DAY_1)}, key_prefix=[".."])

    result = run([orders], PolarsParquetIOManager(base_dir=str(warehouse)))

    assert failure_of(result, "____orders").startswith(UnsafePathKeyError.__name__)
    assert files_under(tmp_path) == set()


def test_a_partition_key_cannot_put_the_quarantine_outside_the_restricted_directory(
    tmp_path: Path,
) -> None:
    warehouse, restricted = tmp_path / "lake" / "warehouse", tmp_path / "lake" / "restricted"
    key = "../../etc"
    orders = orders_asset(
        {key: orders_frame(DAY_1)}, partitions_def=dg.StaticPartitionsDefinition([key])
    )
    io_manager = dd.QuarantineAwareIOManager(
        io_manager=PolarsParquetIOManager(base_dir=str(warehouse)),
        quarantine_io_manager=PolarsParquetIOManager(base_dir=str(restricted)),
    )

    result = run([orders], io_manager, partition_key=key)

    assert failure_of(result).startswith(UnsafePathKeyError.__name__)
    assert files_under(tmp_path) == set()


@pytest.mark.parametrize("key", ["/x", "a..b", "2026-01-02/eu", "x y"])
def test_a_key_a_path_keeps_as_written_still_runs(tmp_path: Path, key: str) -> None:
    warehouse = tmp_path / "warehouse"
    frame = orders_frame(DAY_1)
    orders = orders_asset({key: frame}, partitions_def=dg.StaticPartitionsDefinition([key]))

    result = run([orders], PolarsParquetIOManager(base_dir=str(warehouse)), partition_key=key)

    assert result.success
    tables = [p for p in files_under(warehouse) if p.startswith("orders/")]
    quarantines = [p for p in files_under(warehouse) if p.startswith("orders_quarantine/")]
    assert len(tables) == len(quarantines) == 1
    assert_table(pl.read_parquet(warehouse / tables[0]), frame)
    assert_quarantine(pl.read_parquet(warehouse / quarantines[0]), frame)


def test_a_base_dir_relative_to_the_working_directory_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    frame = orders_frame(DAY_1)
    orders = orders_asset({UNPARTITIONED: frame})

    result = run([orders], PolarsParquetIOManager(base_dir="."))

    assert result.success
    assert_table(pl.read_parquet(tmp_path / "orders.parquet"), frame)
    assert_quarantine(pl.read_parquet(tmp_path / "orders_quarantine.parquet"), frame)


class OneFileForEveryAsset(PolarsParquetIOManager):
    """A path-based manager that ignores the asset key: every asset is `<base>/shared`."""

    def get_asset_relative_path(self, context: dg.InputContext | dg.OutputContext) -> UPath:
        return UPath("shared")


def test_a_manager_that_puts_the_quarantine_in_the_tables_file_is_refused(
    tmp_path: Path,
) -> None:
    warehouse = tmp_path / "warehouse"
    calls: list[str] = []
    orders = counting_asset({UNPARTITIONED: orders_frame(DAY_1)}, calls)

    result = run([orders], OneFileForEveryAsset(base_dir=str(warehouse)))

    failure = failure_of(result)
    assert failure.startswith(QuarantineStorageError.__name__), failure
    assert "OneFileForEveryAsset" in failure
    assert "shared.parquet" in failure
    assert calls == []
    assert files_under(tmp_path) == set()


class QuarantineOutsideItsBase(PolarsParquetIOManager):
    """A path-based manager that puts every asset one directory above its base."""

    def get_asset_relative_path(self, context: dg.InputContext | dg.OutputContext) -> UPath:
        return UPath("..", *context.asset_key.path)


def test_a_manager_that_writes_outside_its_base_is_refused(tmp_path: Path) -> None:
    warehouse, restricted = tmp_path / "lake" / "warehouse", tmp_path / "lake" / "restricted"
    io_manager = dd.QuarantineAwareIOManager(
        io_manager=PolarsParquetIOManager(base_dir=str(warehouse)),
        quarantine_io_manager=QuarantineOutsideItsBase(base_dir=str(restricted)),
    )
    orders = orders_asset({UNPARTITIONED: orders_frame(DAY_1)})

    result = run([orders], io_manager)

    failure = failure_of(result)
    assert failure.startswith(QuarantineStorageError.__name__), failure
    assert "outside its base directory" in failure
    assert "QuarantineOutsideItsBase (the quarantine_io_manager argument)" in failure
    assert files_under(tmp_path) == set()


# Item 3: a manager that stores by step output.


@pytest.mark.parametrize("wrapped", [False, True], ids=["as-io-manager", "as-quarantine-manager"])
def test_a_manager_keyed_by_step_output_is_refused_naming_it(tmp_path: Path, wrapped: bool) -> None:
    calls: list[str] = []
    orders = counting_asset({UNPARTITIONED: orders_frame(DAY_1)}, calls)
    io_manager: object = (
        dd.QuarantineAwareIOManager(
            io_manager=PolarsParquetIOManager(base_dir=str(tmp_path / "warehouse")),
            quarantine_io_manager=dg.mem_io_manager,
        )
        if wrapped
        else dg.mem_io_manager
    )

    result = run([orders], io_manager)

    failure = failure_of(result)
    assert failure.startswith(QuarantineStorageError.__name__), failure
    assert "step's output" in failure
    assert ("(the quarantine_io_manager argument)" in failure) is wrapped
    assert calls == []
    assert files_under(tmp_path) == set()


def test_dagsters_filesystem_io_manager_keeps_the_quarantine_apart(tmp_path: Path) -> None:
    frame = orders_frame(DAY_1)
    orders = orders_asset({UNPARTITIONED: frame})

    result = run([orders], dg.FilesystemIOManager(base_dir=str(tmp_path)))

    assert result.success
    assert files_under(tmp_path) == {"orders", "orders_quarantine"}


# Item 7: an asset whose key nests inside a partitioned quarantine.


def _nested_collider() -> dg.AssetsDefinition:
    @dg.asset(key=["orders_quarantine", "p1"])
    def collider() -> pl.DataFrame:
        return pl.DataFrame({"other": [1]})

    return collider


def test_an_asset_keyed_inside_a_partitioned_quarantine_fails_the_run(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    calls: list[str] = []
    orders = counting_asset(
        {"p1": orders_frame(DAY_1)}, calls, partitions_def=dg.StaticPartitionsDefinition(["p1"])
    )
    collider = _nested_collider()
    io_manager = PolarsParquetIOManager(base_dir=str(warehouse))
    dg.materialize([collider], resources={"io_manager": io_manager}, run_config=QUIET)
    before = pl.read_parquet(warehouse / "orders_quarantine" / "p1.parquet")

    result = run([orders, collider], io_manager, partition_key="p1")

    failure = failure_of(result)
    assert failure.startswith(QuarantineStorageCollisionError.__name__), failure
    assert "'orders_quarantine/p1'" in failure
    assert issubclass(QuarantineStorageCollisionError, QuarantineKeyCollisionError)
    assert calls == []
    assert pl.read_parquet(warehouse / "orders_quarantine" / "p1.parquet").equals(before)
    assert files_under(warehouse) == {"orders_quarantine/p1.parquet"}


def test_an_asset_keyed_inside_an_unpartitioned_quarantine_is_allowed(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    frame = orders_frame(DAY_1)
    orders = orders_asset({UNPARTITIONED: frame})

    result = run([orders, _nested_collider()], PolarsParquetIOManager(base_dir=str(warehouse)))

    assert result.success
    assert_quarantine(pl.read_parquet(warehouse / "orders_quarantine.parquet"), frame)

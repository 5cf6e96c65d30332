"""`dd.asset(streaming=True)`: a returned `LazyFrame` validated and written without collecting it.

On dagster-polars' parquet manager, which sinks a `LazyFrame`, the table and the quarantine must
hold what the in-memory run stores, row for row and in the same order, with the same metadata
and the same checks; the staged files must be gone when the run ends, however it ends. On a
manager that cannot sink one (DuckDB), the rows are validated in memory, as without `streaming`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager
from polars.testing import assert_frame_equal

import dagster_dataframely as dd

from .conftest import (
    DAY_1,
    QUIET,
    Orders,
    duckdb_frame,
    files_under,
    materialization_metadata,
    materialize,
    orders_frame,
    shared_instance,
)
from .small_disk import fill, mounted_small_disk

pytestmark = pytest.mark.integration

KEY = dg.AssetKey("orders")

SUNK: list[type] = []
"""What `RecordingParquet` was asked to sink, by type, in the order it was asked."""


class RecordingParquet(PolarsParquetIOManager):
    """dagster-polars' parquet manager, noting each frame it sinks rather than writes."""

    def sink_df_to_path(self, context: dg.OutputContext, df: pl.LazyFrame, path: Any) -> None:
        SUNK.append(type(df))
        super().sink_df_to_path(context, df, path)


def _source(tmp_path: Path) -> Path:
    """A parquet file of valid rows, negative amounts and one repeated key, keys unsorted."""
    frame = pl.concat(
        [orders_frame(DAY_1, valid=6, invalid=2), orders_frame(DAY_1, valid=1, invalid=0)]
    )
    path = tmp_path / "source.parquet"
    frame.sample(fraction=1.0, shuffle=True, seed=3).write_parquet(path)
    return path


def _scanning(source: Path, **settings: Any) -> dg.AssetsDefinition:
    @dd.asset(Orders, quarantine=True, name="orders", **settings)
    def orders() -> pl.LazyFrame:
        return pl.scan_parquet(source)

    return orders


def _package_metadata(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    """The package's own metadata of the table: what does not depend on the IO manager."""
    metadata = materialization_metadata(result, KEY)
    return {k: v for k, v in metadata.items() if k.startswith(("dataframely/", "dagster/row"))}


def _checks(result: dg.ExecuteInProcessResult) -> list[tuple[str, bool, dict[str, Any]]]:
    return sorted(
        (e.check_name, e.passed, {k: v.value for k, v in e.metadata.items()})
        for e in result.get_asset_check_evaluations()
    )


@pytest.fixture
def staging_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the run's temporary directories go, so a test can see what is left there."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def test_a_streamed_table_stores_what_the_in_memory_run_stores(
    tmp_path: Path, staging_root: Path
) -> None:
    source = _source(tmp_path)
    SUNK.clear()
    in_memory = materialize([_scanning(source)], RecordingParquet(base_dir=str(tmp_path / "a")))
    assert SUNK == []
    streamed = materialize(
        [_scanning(source, streaming=True)], RecordingParquet(base_dir=str(tmp_path / "b"))
    )

    assert [pl.LazyFrame] == SUNK, "the valid rows were not sunk from a LazyFrame"
    for name in ("orders.parquet", "orders_quarantine.parquet"):
        assert_frame_equal(
            pl.read_parquet(tmp_path / "b" / name), pl.read_parquet(tmp_path / "a" / name)
        )
    quarantine = pl.read_parquet(tmp_path / "b" / "orders_quarantine.parquet")
    assert quarantine.height == 4  # two negative amounts, and both rows of the repeated key
    assert _package_metadata(streamed) == _package_metadata(in_memory)
    assert _checks(streamed) == _checks(in_memory)
    assert list(staging_root.iterdir()) == [], "the staged rows outlived the run"


def test_an_aborted_streamed_run_removes_its_staged_rows(
    tmp_path: Path, staging_root: Path
) -> None:
    source = _source(tmp_path)

    # No quarantine: the invalid rows abort the run, after the split has staged every row.
    @dd.asset(Orders, name="orders", streaming=True)
    def orders() -> pl.LazyFrame:
        return pl.scan_parquet(source)

    failed = dg.materialize(
        [orders],
        resources={"io_manager": PolarsParquetIOManager(base_dir=str(tmp_path / "x"))},
        run_config=QUIET,
        instance=shared_instance(),
        raise_on_error=False,
    )
    assert not failed.success
    assert not (tmp_path / "x" / "orders.parquet").exists()
    assert list(staging_root.iterdir()) == [], "the staged rows outlived the failed run"


def test_a_manager_that_cannot_sink_gets_the_rows_in_memory(tmp_path: Path) -> None:
    source = _source(tmp_path)
    database = tmp_path / "warehouse.duckdb"
    materialize([_scanning(source, streaming=True)], DuckDBPolarsIOManager(database=str(database)))

    expected = Orders.filter(pl.read_parquet(source), cast=False).result
    assert_frame_equal(
        duckdb_frame(database, "public.orders"), expected.sort("order_id"), check_dtypes=False
    )
    assert duckdb_frame(database, "public.orders_quarantine").height == 4


def test_a_returned_dataframe_is_validated_in_memory_and_the_log_says_so(tmp_path: Path) -> None:
    frame = pl.read_parquet(_source(tmp_path))
    instance = shared_instance()

    @dd.asset(Orders, quarantine=True, name="orders", streaming=True)
    def orders() -> pl.DataFrame:
        return frame

    result = materialize([orders], RecordingParquet(base_dir=str(tmp_path / "w")))
    said = [entry.user_message for entry in instance.all_logs(result.run_id)]
    lines = [line for line in said if "streaming=True" in line]
    assert lines == [
        "orders: streaming=True, but the function returned a DataFrame, whose rows are in "
        "memory already, so they were validated in memory. Return a LazyFrame (such as "
        "pl.scan_parquet(...)) to have them staged on local disk and validated without "
        "holding them."
    ]
    assert pl.read_parquet(tmp_path / "w" / "orders_quarantine.parquet").height == 4

    # A returned LazyFrame is staged, and the log says nothing of the kind.
    streamed = materialize(
        [_scanning(_source(tmp_path), streaming=True)],
        RecordingParquet(base_dir=str(tmp_path / "s")),
    )
    said = [entry.user_message for entry in instance.all_logs(streamed.run_id)]
    assert not [line for line in said if "streaming=True" in line]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted for this test alone, and unmounted after it."""
    with mounted_small_disk(tmp_path) as point:
        yield point


def _raised(result: dg.ExecuteInProcessResult) -> Any:
    """The error the step raised, under Dagster's own wrapper."""
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None
    assert error.cause is not None
    return error.cause


@pytest.mark.fault_injection
def test_a_full_staging_disk_is_refused_naming_the_directory_and_tmpdir(
    tmp_path: Path, small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Staging on a full disk: a package error naming where and how to move it, nothing written."""
    source = tmp_path / "big.parquet"
    big = orders_frame(DAY_1, valid=120_000, invalid=2)
    big.sample(fraction=1.0, shuffle=True, seed=5).write_parquet(source)
    monkeypatch.setattr(tempfile, "tempdir", str(small_disk))  # as TMPDIR=<small disk> does
    fill(small_disk, leave=64 * 1024)
    warehouse = tmp_path / "warehouse"

    result = dg.materialize(
        [_scanning(source, streaming=True)],
        resources={"io_manager": PolarsParquetIOManager(base_dir=str(warehouse))},
        run_config=QUIET,
        instance=shared_instance(),
        raise_on_error=False,
    )

    assert not result.success
    error = _raised(result)
    assert error.cls_name == "StreamingStagingError"
    assert f"could not stage the rows of 'orders' in {small_disk}/dagster-dataframely-" in (
        error.message
    )
    assert "No space left on device" in error.message
    assert "TMPDIR" in error.message
    assert not warehouse.exists() or files_under(warehouse) == set(), "something was written"
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"], "staged part left behind"

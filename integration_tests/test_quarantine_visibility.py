"""The quarantine's observations and `clear_quarantine=True` on real IO managers.

A clean run of an asset with `clear_quarantine=True` replaces that partition's quarantine (or the
asset's) with an empty one through the same writer: an empty parquet file, an emptied DuckDB
partition, or the quarantine manager `QuarantineAwareIOManager` routes to. Every write is an
observation of the quarantine's key whose row count is what is stored.
"""

from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

from .conftest import (
    DAILY,
    DAY_1,
    DAY_2,
    UNPARTITIONED,
    Orders,
    duckdb_frame,
    materialize,
    orders_asset,
    orders_frame,
    shared_instance,
)

pytestmark = [pytest.mark.integration, pytest.mark.filterwarnings("ignore::dagster.PreviewWarning")]

QUARANTINE = dg.AssetKey("orders_quarantine")


def _latest_observation(run: dg.ExecuteInProcessResult) -> dict[str, Any]:
    (event,) = [
        e
        for e in run.all_events
        if e.event_type == dg.DagsterEventType.ASSET_OBSERVATION and e.asset_key == QUARANTINE
    ]
    observation = event.asset_observation_data.asset_observation
    values = {name: getattr(v, "value", v) for name, v in observation.metadata.items()}
    return {"partition": observation.partition, **values}


def _run_dirty_then_clean(
    io_manager: object, *, partitioned: bool, clear: bool = True
) -> tuple[dg.ExecuteInProcessResult, dg.ExecuteInProcessResult]:
    """Run DAY_1 with one invalid row (and DAY_2 too, when partitioned), then DAY_1 clean."""
    frames = {UNPARTITIONED: orders_frame(DAY_1), DAY_1: orders_frame(DAY_1)}
    frames[DAY_2] = orders_frame(DAY_2)
    extra: dict[str, Any] = {"partitions_def": DAILY} if partitioned else {}
    if partitioned:
        extra["metadata"] = {"partition_expr": "day"}
    orders = orders_asset(frames, clear_quarantine=clear, **extra)
    assets = [orders, dd.quarantine_spec(Orders, orders)]
    key = DAY_1 if partitioned else None
    dirty = materialize(assets, io_manager, partition_key=key)
    if partitioned:
        materialize(assets, io_manager, partition_key=DAY_2)
    frames[UNPARTITIONED] = frames[DAY_1] = orders_frame(DAY_1, tag="second", invalid=0)
    clean = materialize(assets, io_manager, partition_key=key)
    return dirty, clean


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "daily"])
def test_parquet_clean_run_empties_the_quarantine_file(warehouse: Path, partitioned: bool) -> None:
    manager = PolarsParquetIOManager(base_dir=str(warehouse))
    path = (
        warehouse / "orders_quarantine" / f"{DAY_1}.parquet"
        if partitioned
        else warehouse / "orders_quarantine.parquet"
    )

    dirty, clean = _run_dirty_then_clean(manager, partitioned=partitioned)

    stored = pl.read_parquet(path)
    assert stored.height == 0
    assert stored.columns[:5] == ["order_id", "day", "placed_at", "region", "amount"]
    if partitioned:
        assert pl.read_parquet(warehouse / "orders_quarantine" / f"{DAY_2}.parquet").height == 1
    assert _latest_observation(dirty)["dagster/row_count"] == 1
    observed = _latest_observation(clean)
    assert observed["dagster/row_count"] == 0
    assert observed["partition"] == (DAY_1 if partitioned else None)
    assert observed["dataframely/run"] == clean.run_id
    assert shared_instance().get_latest_materialization_event(QUARANTINE) is None


def test_parquet_default_keeps_the_stale_quarantine(warehouse: Path) -> None:
    manager = PolarsParquetIOManager(base_dir=str(warehouse))

    _, clean = _run_dirty_then_clean(manager, partitioned=True, clear=False)

    assert pl.read_parquet(warehouse / "orders_quarantine" / f"{DAY_1}.parquet").height == 1
    assert not [
        e for e in clean.all_events if e.event_type == dg.DagsterEventType.ASSET_OBSERVATION
    ]


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "daily"])
def test_duckdb_clean_run_empties_the_quarantine_partition(
    warehouse: Path, partitioned: bool
) -> None:
    database = warehouse / "warehouse.duckdb"
    manager = DuckDBPolarsIOManager(database=str(database))

    _, clean = _run_dirty_then_clean(manager, partitioned=partitioned)

    assert duckdb_frame(database, "public.orders_quarantine", day=DAY_1).height == 0
    if partitioned:
        assert duckdb_frame(database, "public.orders_quarantine", day=DAY_2).height == 1
    assert _latest_observation(clean)["dagster/row_count"] == 0


def test_quarantine_aware_clears_the_routed_quarantine(warehouse: Path, restricted: Path) -> None:
    manager = dd.QuarantineAwareIOManager(
        io_manager=PolarsParquetIOManager(base_dir=str(warehouse)),
        quarantine_io_manager=PolarsParquetIOManager(base_dir=str(restricted)),
    )

    dirty, clean = _run_dirty_then_clean(manager, partitioned=True)

    routed = restricted / "orders_quarantine" / f"{DAY_1}.parquet"
    assert pl.read_parquet(routed).height == 0
    assert pl.read_parquet(restricted / "orders_quarantine" / f"{DAY_2}.parquet").height == 1
    assert not (warehouse / "orders_quarantine").exists()
    # The observation names the location the quarantine manager wrote, not the key.
    assert _latest_observation(dirty)["dataframely/quarantine_address"] == str(routed)
    assert _latest_observation(clean)["dataframely/quarantine_address"] == str(routed)

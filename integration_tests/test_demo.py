"""The demo code location (`make demo`, `make ui`) with its own IO managers.

It stores with `PolarsParquetIOManager` and `DuckDBPolarsIOManager`, so it lives here, beside
the other tests of those managers, and not in the unit suite.
"""

import importlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import dagster as dg
import polars as pl
import pytest

from dagster_dataframely_demo import definitions

from .conftest import QUIET, materialization_metadata, shared_instance


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The demo's definitions, re-imported so they read a demo directory under `tmp_path`."""
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_DEMO_DIR", str(tmp_path / "demo"))
    yield importlib.reload(definitions)
    monkeypatch.delenv("DAGSTER_DATAFRAMELY_DEMO_DIR")
    importlib.reload(definitions)


def test_the_demo_code_location_loads_and_materializes(demo: ModuleType) -> None:
    defs: dg.Definitions = demo.defs
    dg.Definitions.validate_loadable(defs)
    assets = list(defs.assets or [])
    unpartitioned = [a for a in assets if getattr(a, "partitions_def", None) is None]
    runs = {"resources": defs.resources, "instance": shared_instance(), "run_config": QUIET}

    result = dg.materialize(unpartitioned, **runs)

    warehouse: Path = demo.WAREHOUSE
    assert pl.read_parquet(warehouse / "storefront_lines.parquet").height == 12
    assert pl.read_parquet(warehouse / "marketplace_lines.parquet").height == 12
    assert pl.read_parquet(warehouse / "marketplace_lines_quarantine.parquet").height == 8
    triage = materialization_metadata(result, dg.AssetKey("quarantine_triage"))
    assert triage["dy_rule__amount__min"] == 1
    all_orders = materialization_metadata(result, dg.AssetKey(["analytics", "all_orders"]))
    assert all_orders["dagster/row_count"] == 24

    partitioned = [demo.daily_orders]
    daily_orders = dg.AssetKey("daily_orders")
    monday = dg.materialize(partitioned, partition_key="2026-01-05", **runs)
    sunday = dg.materialize(partitioned, partition_key="2026-01-04", **runs)
    assert [e.asset_key for e in monday.get_asset_materialization_events()] == [daily_orders]
    assert (warehouse / "daily_orders" / "2026-01-05.parquet").exists()
    assert sunday.get_asset_materialization_events() == []
    assert all(check.passed for check in sunday.get_asset_check_evaluations())
    assert not (warehouse / "daily_orders" / "2026-01-04.parquet").exists()

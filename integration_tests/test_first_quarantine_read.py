"""A quarantine can always be read, from the first run on, even when no row was ever invalid.

A run whose rows are all valid writes no quarantine (the failure policy). Before the first
invalid row, that left nothing for a downstream asset reading `quarantine_spec` to load, and
the read failed (`FileNotFoundError`, DuckDB's `CatalogException`). Now a clean run that finds
no quarantine stored for its partition writes an empty one, with the quarantine's columns; a
later clean run writes nothing, so earlier invalid rows stay until the next run with invalid
rows (or a clean run with `clear_quarantine=True`).
"""

from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd

from .conftest import (
    AMOUNT_MIN,
    DAILY,
    DAY_1,
    DAY_2,
    ORDERS_COLUMNS,
    RULE_PREFIX,
    UNPARTITIONED,
    Orders,
    invalid_ids,
    materialization_metadata,
    materialize,
    orders_asset,
    orders_frame,
)
from .storage_modes import PARTITIONED, Storage

pytestmark = pytest.mark.integration

MODES = ("parquet", "duckdb", "wrapped-parquet", "wrapped-duckdb", "staged-duckdb")


def _triage(seen: dict[str, pl.DataFrame], partitions_def: Any) -> dg.AssetsDefinition:
    """A downstream asset of the quarantine, as a user writes one."""

    @dg.asset(
        ins={"quarantine": dg.AssetIn(key="orders_quarantine")},
        partitions_def=partitions_def,
    )
    def triage(quarantine: pl.DataFrame) -> None:
        seen["read"] = quarantine

    return triage


@pytest.mark.parametrize("mode", MODES)
@PARTITIONED
def test_a_quarantine_is_read_before_any_row_was_invalid(
    tmp_path: Path, mode: str, partitioned: bool
) -> None:
    storage = Storage(mode, tmp_path)
    day = DAY_1 if partitioned else UNPARTITIONED
    options: dict[str, Any] = (
        {"partitions_def": DAILY, "metadata": {"partition_expr": "day"}} if partitioned else {}
    )
    frames = {day: orders_frame(DAY_1, invalid=0)}
    orders = orders_asset(frames, **options)
    seen: dict[str, pl.DataFrame] = {}
    assets = [
        orders,
        dd.quarantine_spec(Orders, orders),
        _triage(seen, options.get("partitions_def")),
    ]

    result = materialize(assets, storage.io_manager(), partition_key=day or None)

    read = seen["read"]
    assert read.height == 0
    assert read.columns[: len(ORDERS_COLUMNS)] == ORDERS_COLUMNS
    rules = read.columns[len(ORDERS_COLUMNS) :]
    assert AMOUNT_MIN in rules
    assert all(rule.startswith(RULE_PREFIX) for rule in rules)
    # A clean run's materialization still says nothing about a quarantine.
    assert "dataframely/quarantine_address" not in materialization_metadata(result, orders.key)

    # Invalid rows replace the empty quarantine; a clean run after that leaves them.
    frames[day] = orders_frame(DAY_1, tag="second", invalid=2)
    materialize(assets, storage.io_manager(), partition_key=day or None)
    frames[day] = orders_frame(DAY_1, tag="third", invalid=0)
    materialize(assets, storage.io_manager(), partition_key=day or None)

    expected = invalid_ids(orders_frame(DAY_1, tag="second", invalid=2))
    assert set(seen["read"]["order_id"]) == expected
    stored = storage.read("orders_quarantine", day or None)
    assert stored is not None
    assert set(stored["order_id"]) == expected


@pytest.mark.parametrize("mode", ["parquet", "duckdb"])
def test_a_partition_with_no_invalid_row_reads_empty_beside_one_with_some(
    tmp_path: Path, mode: str
) -> None:
    storage = Storage(mode, tmp_path)
    frames = {DAY_1: orders_frame(DAY_1, invalid=1), DAY_2: orders_frame(DAY_2, invalid=0)}
    orders = orders_asset(frames, partitions_def=DAILY, metadata={"partition_expr": "day"})
    seen: dict[str, pl.DataFrame] = {}
    assets = [orders, dd.quarantine_spec(Orders, orders), _triage(seen, DAILY)]

    materialize(assets, storage.io_manager(), partition_key=DAY_1)
    assert set(seen["read"]["order_id"]) == invalid_ids(frames[DAY_1])
    materialize(assets, storage.io_manager(), partition_key=DAY_2)
    assert seen["read"].height == 0

    # The first day's rows are untouched by the second day's empty quarantine.
    kept = storage.read("orders_quarantine", DAY_1)
    assert kept is not None
    assert set(kept["order_id"]) == invalid_ids(frames[DAY_1])

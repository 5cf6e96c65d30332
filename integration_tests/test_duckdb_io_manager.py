"""`dd.asset(quarantine=True)` on `dagster_duckdb_polars.DuckDBPolarsIOManager`, a `DbIOManager`.

The quarantine is the table `orders_quarantine` in the schema of `orders`; a partitioned asset's
`partition_expr` applies to it too, so each partition's run replaces that partition's rows.
"""

import datetime as dt
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from polars.testing import assert_frame_equal

import dagster_dataframely as dd

from .conftest import (
    ADDRESS,
    DAILY,
    DAY_1,
    DAY_2,
    MULTI,
    UNPARTITIONED,
    Orders,
    assert_quarantine,
    assert_table,
    duckdb_frame,
    duckdb_tables,
    materialization_metadata,
    materialize,
    multi_key,
    orders_asset,
    orders_frame,
    rerun_first_partition,
)

pytestmark = pytest.mark.integration

BY_CELL = {"day": "day", "region": "region"}
"""`partition_expr` of a multi-partitioned asset: one column per dimension."""


@pytest.fixture
def database(warehouse: Path) -> Path:
    return warehouse / "warehouse.duckdb"


@pytest.mark.parametrize(
    ("key_prefix", "config_schema", "schema"),
    [(None, None, "public"), ("sales", None, "sales"), (None, "analytics", "analytics")],
    ids=["no-prefix", "key-prefix", "schema-config"],
)
def test_quarantine_table_is_in_the_schema_of_the_table(
    database: Path,
    frame: pl.DataFrame,
    key_prefix: str | None,
    config_schema: str | None,
    schema: str,
) -> None:
    orders = orders_asset({UNPARTITIONED: frame}, key_prefix=key_prefix)
    manager = DuckDBPolarsIOManager(database=str(database), schema=config_schema)

    result = materialize([orders], manager)

    assert duckdb_tables(database) == {f"{schema}.orders", f"{schema}.orders_quarantine"}
    assert_table(duckdb_frame(database, f"{schema}.orders"), frame)
    assert_quarantine(duckdb_frame(database, f"{schema}.orders_quarantine"), frame)
    metadata = materialization_metadata(result, orders.key)
    # The table's own name, not the quarantine's: the quarantine write must not leak into it.
    assert metadata["dagster/table_name"] == f"{database}.{schema}.orders"
    # Without QuarantineAwareIOManager the address is the quarantine's asset key.
    assert metadata[ADDRESS] == orders.key.to_user_string() + "_quarantine"


@pytest.mark.parametrize(
    ("partition_expr", "key_prefix", "schema"),
    [("day", None, "public"), ("placed_at", "sales", "sales")],
    ids=["date-column", "datetime-column-key-prefix"],
)
def test_rerun_of_a_daily_partition_replaces_only_its_rows(
    database: Path, partition_expr: str, key_prefix: str | None, schema: str
) -> None:
    first = orders_frame(DAY_1, tag="first")
    second = orders_frame(DAY_1, tag="second", valid=1, invalid=2)
    other = orders_frame(DAY_2, tag="other", invalid=2)
    frames: dict[str, pl.DataFrame] = {}
    orders = orders_asset(
        frames,
        partitions_def=DAILY,
        key_prefix=key_prefix,
        metadata={"partition_expr": partition_expr},
    )

    rerun_first_partition(
        orders,
        frames,
        DuckDBPolarsIOManager(database=str(database)),
        first=(DAY_1, first, second),
        others=[(DAY_2, other)],
    )

    assert duckdb_tables(database) == {f"{schema}.orders", f"{schema}.orders_quarantine"}
    day_1, day_2 = dt.date.fromisoformat(DAY_1), dt.date.fromisoformat(DAY_2)
    assert_table(duckdb_frame(database, f"{schema}.orders", day=day_1), second)
    assert_quarantine(duckdb_frame(database, f"{schema}.orders_quarantine", day=day_1), second)
    assert_table(duckdb_frame(database, f"{schema}.orders", day=day_2), other)
    assert_quarantine(duckdb_frame(database, f"{schema}.orders_quarantine", day=day_2), other)
    # Nothing of the first run of DAY_1 is left anywhere.
    assert duckdb_frame(database, f"{schema}.orders_quarantine").height == 4


def test_rerun_of_a_multi_partition_cell_replaces_only_that_cell(database: Path) -> None:
    a, same_day, same_region = (
        multi_key(DAY_1, "eu"),
        multi_key(DAY_1, "us"),
        multi_key(DAY_2, "eu"),
    )
    first = orders_frame(DAY_1, "eu", tag="first")
    second = orders_frame(DAY_1, "eu", tag="second", valid=1, invalid=2)
    others = {same_day: orders_frame(DAY_1, "us"), same_region: orders_frame(DAY_2, "eu")}
    frames: dict[str, pl.DataFrame] = {}
    orders = orders_asset(frames, partitions_def=MULTI, metadata={"partition_expr": BY_CELL})

    rerun_first_partition(
        orders,
        frames,
        DuckDBPolarsIOManager(database=str(database)),
        first=(a, first, second),
        others=list(others.items()),
    )

    assert duckdb_tables(database) == {"public.orders", "public.orders_quarantine"}
    cells = {a: second, **others}
    for key, frame in cells.items():
        cell = {"day": dt.date.fromisoformat(key.keys_by_dimension["day"])}
        cell["region"] = key.keys_by_dimension["region"]
        assert_table(duckdb_frame(database, "public.orders", **cell), frame)
        assert_quarantine(duckdb_frame(database, "public.orders_quarantine", **cell), frame)
    assert duckdb_frame(database, "public.orders_quarantine").height == 4


def test_downstream_asset_reads_the_quarantine(database: Path, frame: pl.DataFrame) -> None:
    # DuckDBPolarsIOManager has no pl.LazyFrame handler, so only the eager read exists here.
    seen: dict[str, Any] = {}
    orders = orders_asset({UNPARTITIONED: frame}, key_prefix="sales")

    @dg.asset(key_prefix="sales", deps=[orders])
    def triage(orders_quarantine: pl.DataFrame) -> None:
        seen["eager"] = orders_quarantine

    materialize(
        [orders, dd.quarantine_spec(Orders, orders), triage],
        DuckDBPolarsIOManager(database=str(database)),
    )

    stored = duckdb_frame(database, "sales.orders_quarantine")
    assert_quarantine(stored, frame)
    assert_frame_equal(seen["eager"].sort("order_id"), stored)


def test_partitioned_downstream_asset_reads_its_partition_of_the_quarantine(
    database: Path,
) -> None:
    """The spec carries the asset's `partition_expr`, so DbIOManager can load one partition."""
    seen: dict[str, Any] = {}
    frames = {DAY_1: orders_frame(DAY_1), DAY_2: orders_frame(DAY_2, invalid=2)}
    orders = orders_asset(frames, partitions_def=DAILY, metadata={"partition_expr": "day"})

    @dg.asset(partitions_def=DAILY, deps=[orders])
    def triage(context: dg.AssetExecutionContext, orders_quarantine: pl.DataFrame) -> None:
        seen[context.partition_key] = orders_quarantine

    for day in (DAY_1, DAY_2):
        materialize(
            [orders, dd.quarantine_spec(Orders, orders), triage],
            DuckDBPolarsIOManager(database=str(database)),
            partition_key=day,
        )

    for day in (DAY_1, DAY_2):
        stored = duckdb_frame(database, "public.orders_quarantine", day=dt.date.fromisoformat(day))
        assert_quarantine(stored, frames[day])
        assert_frame_equal(seen[day].sort("order_id"), stored)

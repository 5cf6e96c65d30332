"""`dd.asset(quarantine=True)` on `dagster_polars.PolarsParquetIOManager`, a `UPathIOManager`.

The quarantine is written by the asset's own manager: `orders_quarantine.parquet` beside
`orders.parquet`, one file per partition, one folder per dimension.
"""

from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager
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
    files_under,
    materialization_metadata,
    materialize,
    multi_key,
    orders_asset,
    orders_frame,
    parquet_ids,
    rerun_first_partition,
)

pytestmark = pytest.mark.integration


def parquet(base_dir: Path) -> PolarsParquetIOManager:
    return PolarsParquetIOManager(base_dir=str(base_dir))


@pytest.mark.parametrize(
    ("key_prefix", "folder"),
    [(None, ""), (["sales", "eu"], "sales/eu/")],
    ids=["no-prefix", "key-prefix"],
)
def test_quarantine_file_is_beside_the_table(
    warehouse: Path, frame: pl.DataFrame, key_prefix: list[str] | None, folder: str
) -> None:
    orders = orders_asset({UNPARTITIONED: frame}, key_prefix=key_prefix)

    result = materialize([orders], parquet(warehouse))

    assert files_under(warehouse) == {
        f"{folder}orders.parquet",
        f"{folder}orders_quarantine.parquet",
    }
    assert_table(pl.read_parquet(warehouse / f"{folder}orders.parquet"), frame)
    assert_quarantine(pl.read_parquet(warehouse / f"{folder}orders_quarantine.parquet"), frame)
    metadata = materialization_metadata(result, orders.key)
    # The table's own `path`, not the quarantine's: the quarantine write must not leak into it.
    assert metadata["path"] == str(warehouse / f"{folder}orders.parquet")
    # Without QuarantineAwareIOManager the address is the quarantine's asset key.
    assert metadata[ADDRESS] == f"{folder}orders_quarantine"
    assert metadata["dataframely/invalid_count"] == 1
    assert metadata["dagster/row_count"] == 2
    # The quarantined rows lead, before the row count and the manager's own keys.
    keys = list(metadata)
    assert keys[:2] == ["dataframely/invalid_count", ADDRESS]
    assert keys.index("path") > keys.index("dagster/row_count") > 1


@pytest.mark.parametrize(
    ("key_prefix", "folder"), [(None, ""), ("sales", "sales/")], ids=["no-prefix", "key-prefix"]
)
def test_daily_partition_is_one_file_in_a_quarantine_folder(
    warehouse: Path, key_prefix: str | None, folder: str
) -> None:
    frame = orders_frame(DAY_2)
    orders = orders_asset({DAY_2: frame}, partitions_def=DAILY, key_prefix=key_prefix)

    result = materialize([orders], parquet(warehouse), partition_key=DAY_2)

    assert files_under(warehouse) == {
        f"{folder}orders/{DAY_2}.parquet",
        f"{folder}orders_quarantine/{DAY_2}.parquet",
    }
    assert_table(pl.read_parquet(warehouse / f"{folder}orders/{DAY_2}.parquet"), frame)
    assert_quarantine(
        pl.read_parquet(warehouse / f"{folder}orders_quarantine/{DAY_2}.parquet"), frame
    )
    assert materialization_metadata(result, orders.key)[ADDRESS] == f"{folder}orders_quarantine"


@pytest.mark.parametrize(
    ("key_prefix", "folder"), [(None, ""), ("sales", "sales/")], ids=["no-prefix", "key-prefix"]
)
def test_multi_partition_is_one_folder_per_dimension(
    warehouse: Path, key_prefix: str | None, folder: str
) -> None:
    eu, us = orders_frame(DAY_1, "eu"), orders_frame(DAY_1, "us", invalid=2)
    frames = {multi_key(DAY_1, "eu"): eu, multi_key(DAY_1, "us"): us}
    orders = orders_asset(frames, partitions_def=MULTI, key_prefix=key_prefix)

    for key in frames:
        materialize([orders], parquet(warehouse), partition_key=key)

    # Dimensions in name order (day, then region), whatever order MULTI declares them in.
    assert files_under(warehouse) == {
        f"{folder}orders/{DAY_1}/eu.parquet",
        f"{folder}orders/{DAY_1}/us.parquet",
        f"{folder}orders_quarantine/{DAY_1}/eu.parquet",
        f"{folder}orders_quarantine/{DAY_1}/us.parquet",
    }
    for region, frame in (("eu", eu), ("us", us)):
        assert_table(pl.read_parquet(warehouse / f"{folder}orders/{DAY_1}/{region}.parquet"), frame)
        assert_quarantine(
            pl.read_parquet(warehouse / f"{folder}orders_quarantine/{DAY_1}/{region}.parquet"),
            frame,
        )


@pytest.mark.parametrize(
    ("partitions_def", "a", "b", "a_file", "b_file"),
    [
        (DAILY, DAY_1, DAY_2, f"{DAY_1}.parquet", f"{DAY_2}.parquet"),
        (
            MULTI,
            multi_key(DAY_1, "eu"),
            multi_key(DAY_1, "us"),
            f"{DAY_1}/eu.parquet",
            f"{DAY_1}/us.parquet",
        ),
    ],
    ids=["daily", "multi"],
)
def test_rerun_of_a_partition_replaces_only_its_table_and_quarantine(
    warehouse: Path,
    partitions_def: dg.PartitionsDefinition[str],
    a: str,
    b: str,
    a_file: str,
    b_file: str,
) -> None:
    region_a = a.keys_by_dimension["region"] if isinstance(a, dg.MultiPartitionKey) else "eu"
    region_b = b.keys_by_dimension["region"] if isinstance(b, dg.MultiPartitionKey) else "eu"
    day_b = b.keys_by_dimension["day"] if isinstance(b, dg.MultiPartitionKey) else b
    first = orders_frame(DAY_1, region_a, tag="first")
    second = orders_frame(DAY_1, region_a, tag="second", valid=1, invalid=2)
    other = orders_frame(day_b, region_b, tag="other")
    frames: dict[str, pl.DataFrame] = {}
    orders = orders_asset(frames, partitions_def=partitions_def)

    rerun_first_partition(
        orders, frames, parquet(warehouse), first=(a, first, second), others=[(b, other)]
    )

    assert files_under(warehouse) == {
        f"orders/{a_file}",
        f"orders/{b_file}",
        f"orders_quarantine/{a_file}",
        f"orders_quarantine/{b_file}",
    }
    assert_table(pl.read_parquet(warehouse / "orders" / a_file), second)
    assert_quarantine(pl.read_parquet(warehouse / "orders_quarantine" / a_file), second)
    assert_table(pl.read_parquet(warehouse / "orders" / b_file), other)
    assert_quarantine(pl.read_parquet(warehouse / "orders_quarantine" / b_file), other)


def _readers(
    partitions_def: dg.PartitionsDefinition[str] | None, seen: dict[str, Any]
) -> list[dg.AssetsDefinition]:
    """Two assets that declare the quarantine as an input, one eager and one lazy.

    `deps=["orders"]` orders them after the step that writes the quarantine: the spec has no
    compute, so the input alone creates no step dependency.
    """

    @dg.asset(partitions_def=partitions_def, deps=["orders"])
    def triage_eager(orders_quarantine: pl.DataFrame) -> None:
        seen["eager"] = orders_quarantine

    @dg.asset(partitions_def=partitions_def, deps=["orders"])
    def triage_lazy(orders_quarantine: pl.LazyFrame) -> None:
        seen["lazy"] = orders_quarantine

    return [triage_eager, triage_lazy]


def test_downstream_asset_reads_the_quarantine_eager_and_lazy(
    warehouse: Path, frame: pl.DataFrame
) -> None:
    seen: dict[str, Any] = {}
    orders = orders_asset({UNPARTITIONED: frame})

    materialize(
        [orders, dd.quarantine_spec(Orders, orders), *_readers(None, seen)], parquet(warehouse)
    )

    stored = pl.read_parquet(warehouse / "orders_quarantine.parquet")
    assert_quarantine(stored, frame)
    assert isinstance(seen["eager"], pl.DataFrame)
    assert isinstance(seen["lazy"], pl.LazyFrame)
    assert_frame_equal(seen["eager"], stored)
    assert_frame_equal(seen["lazy"].collect(), stored)


def test_partitioned_downstream_asset_reads_its_partition_of_the_quarantine(
    warehouse: Path,
) -> None:
    seen: dict[str, Any] = {}
    frames = {DAY_1: orders_frame(DAY_1), DAY_2: orders_frame(DAY_2, invalid=2)}
    orders = orders_asset(frames, partitions_def=DAILY)
    assets = [orders, dd.quarantine_spec(Orders, orders), *_readers(DAILY, seen)]

    for day in (DAY_1, DAY_2):
        materialize(assets, parquet(warehouse), partition_key=day)

        stored = pl.read_parquet(warehouse / "orders_quarantine" / f"{day}.parquet")
        assert_quarantine(stored, frames[day])
        assert_frame_equal(seen["eager"], stored)
        assert_frame_equal(seen["lazy"].collect(), stored)
    assert parquet_ids(warehouse / "orders_quarantine" / f"{DAY_1}.parquet").isdisjoint(
        parquet_ids(warehouse / "orders_quarantine" / f"{DAY_2}.parquet")
    )

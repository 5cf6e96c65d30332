"""`QuarantineAwareIOManager` on S3: the quarantine in a bucket of its own, its address reported."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager
from polars.testing import assert_frame_equal

import dagster_dataframely as dd

from .conftest import Materialize
from .support import (
    Orders,
    S3Endpoint,
    assert_is_quarantine_of,
    assert_is_table_of,
    mixed_orders,
    object_keys,
    quarantine_address,
    read_object,
    read_with_polars,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

DAYS = dg.DailyPartitionsDefinition(start_date="2026-03-01", end_date="2026-03-04")


def orders_asset(**kwargs: Any) -> dg.AssetsDefinition:
    @dd.asset(Orders, quarantine=True, **kwargs)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return mixed_orders(f"@{context.partition_key}" if context.has_partition_key else "")

    return orders


def on_s3(endpoint: S3Endpoint, base_dir: str) -> PolarsParquetIOManager:
    return PolarsParquetIOManager(base_dir=base_dir, storage_options=endpoint.storage_options())


def assert_carries_no_credentials(address: str, endpoint: S3Endpoint) -> None:
    assert "@" not in address.split("://", 1)[-1].split("/", 1)[0], address
    for secret in endpoint.secrets:
        assert secret not in address


def test_a_table_on_local_disk_and_its_quarantine_in_a_bucket(
    s3_endpoint: S3Endpoint, bucket: str, tmp_path: Path, materialize: Materialize
) -> None:
    orders = orders_asset()
    spec = dd.quarantine_spec(Orders, orders)
    seen: dict[str, pl.DataFrame] = {}

    @dg.asset(deps=[orders])
    def review(orders_quarantine: pl.DataFrame) -> None:
        seen["rows"] = orders_quarantine

    io_manager = dd.QuarantineAwareIOManager(
        io_manager=PolarsParquetIOManager(base_dir=str(tmp_path / "warehouse")),
        quarantine_io_manager=on_s3(s3_endpoint, f"s3://{bucket}/restricted"),
    )
    result = materialize([orders, spec, review], {"io_manager": io_manager})

    local_files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.parquet"))
    assert local_files == ["warehouse/orders.parquet"]
    assert_is_table_of(pl.read_parquet(tmp_path / "warehouse" / "orders.parquet"), mixed_orders())
    client = s3_endpoint.client()
    assert object_keys(client, bucket) == ["restricted/orders_quarantine.parquet"]
    stored = read_object(client, bucket, "restricted/orders_quarantine.parquet")
    assert_is_quarantine_of(stored, mixed_orders())

    address = quarantine_address(result)
    assert address == f"s3://{bucket}/restricted/orders_quarantine.parquet"
    assert_carries_no_credentials(address, s3_endpoint)
    # The address is where the rows are: another client reads them from exactly there.
    assert_frame_equal(read_with_polars(s3_endpoint, address), stored)
    # And the router sends the downstream read to the quarantine's bucket, not to local disk.
    assert_frame_equal(seen["rows"], stored)


def test_the_table_in_one_bucket_and_the_quarantine_in_another(
    s3_endpoint: S3Endpoint, new_bucket: Callable[[str], str], materialize: Materialize
) -> None:
    lake, restricted = new_bucket("lake"), new_bucket("restricted")
    orders = orders_asset(partitions_def=DAYS)
    io_manager = dd.QuarantineAwareIOManager(
        io_manager=on_s3(s3_endpoint, f"s3://{lake}/warehouse"),
        quarantine_io_manager=on_s3(s3_endpoint, f"s3://{restricted}/q"),
    )
    result = materialize([orders], {"io_manager": io_manager}, partition_key="2026-03-02")

    client = s3_endpoint.client()
    assert object_keys(client, lake) == ["warehouse/orders/2026-03-02.parquet"]
    assert object_keys(client, restricted) == ["q/orders_quarantine/2026-03-02.parquet"]
    frame = mixed_orders("@2026-03-02")
    assert_is_table_of(read_object(client, lake, "warehouse/orders/2026-03-02.parquet"), frame)
    assert_is_quarantine_of(
        read_object(client, restricted, "q/orders_quarantine/2026-03-02.parquet"), frame
    )

    address = quarantine_address(result)
    assert address == f"s3://{restricted}/q/orders_quarantine/2026-03-02.parquet"
    assert_carries_no_credentials(address, s3_endpoint)

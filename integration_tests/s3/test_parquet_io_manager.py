"""`PolarsParquetIOManager` on S3: the table and its quarantine are objects under one prefix."""

from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager
from polars.testing import assert_frame_equal

import dagster_dataframely as dd

from .conftest import LOOPBACK, Materialize
from .support import (
    Orders,
    S3Endpoint,
    assert_is_quarantine_of,
    assert_is_table_of,
    materializations,
    mixed_orders,
    object_keys,
    quarantine_address,
    read_object,
    read_with_polars,
    read_with_s3fs,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

DAYS = dg.DailyPartitionsDefinition(start_date="2026-03-01", end_date="2026-03-04")
DAYS_AND_REGIONS = dg.MultiPartitionsDefinition(
    {"day": DAYS, "region": dg.StaticPartitionsDefinition(["eu", "us"])}
)


def warehouse(endpoint: S3Endpoint, bucket: str) -> PolarsParquetIOManager:
    return PolarsParquetIOManager(
        base_dir=f"s3://{bucket}/warehouse", storage_options=endpoint.storage_options()
    )


def orders_asset(**kwargs: Any) -> dg.AssetsDefinition:
    """`orders` returns five rows, two invalid, tagged with the partition key if it has one."""

    @dd.asset(Orders, quarantine=True, **kwargs)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return mixed_orders(tag_of(context))

    return orders


def tag_of(context: dg.AssetExecutionContext) -> str:
    return f"@{context.partition_key}" if context.has_partition_key else ""


def test_the_server_is_reached_by_boto3_s3fs_and_polars_alike(s3_endpoint: S3Endpoint) -> None:
    """One object written with s3fs reads back the same through boto3 and Polars' reader."""
    if s3_endpoint.started_here:
        assert s3_endpoint.url.startswith(f"http://{LOOPBACK}:")
    frame = mixed_orders("@probe")
    uri = f"s3://{s3_endpoint.shared_bucket}/probe/frame.parquet"
    filesystem = s3_endpoint.filesystem()
    with filesystem.open(uri, "wb") as file:
        frame.write_parquet(file)
    try:
        client = s3_endpoint.client()
        assert_frame_equal(
            read_object(client, s3_endpoint.shared_bucket, "probe/frame.parquet"), frame
        )
        assert_frame_equal(read_with_polars(s3_endpoint, uri), frame)
        assert_frame_equal(read_with_s3fs(s3_endpoint, uri), frame)
    finally:
        filesystem.rm(uri)


def test_the_table_and_its_quarantine_are_objects_under_the_prefix(
    s3_endpoint: S3Endpoint, bucket: str, materialize: Materialize
) -> None:
    orders = orders_asset()
    result = materialize([orders], {"io_manager": warehouse(s3_endpoint, bucket)})

    client = s3_endpoint.client()
    assert object_keys(client, bucket) == [
        "warehouse/orders.parquet",
        "warehouse/orders_quarantine.parquet",
    ]
    assert_is_table_of(read_object(client, bucket, "warehouse/orders.parquet"), mixed_orders())
    assert_is_quarantine_of(
        read_with_s3fs(s3_endpoint, f"s3://{bucket}/warehouse/orders_quarantine.parquet"),
        mixed_orders(),
    )
    assert_is_quarantine_of(
        read_with_polars(s3_endpoint, f"s3://{bucket}/warehouse/orders_quarantine.parquet"),
        mixed_orders(),
    )
    # The manager itself reports no location for the quarantine, so its key is the address.
    assert quarantine_address(result) == "orders_quarantine"
    metadata = materializations(result)["orders"].metadata
    assert metadata["path"].value == f"s3://{bucket}/warehouse/orders.parquet"
    assert metadata["dataframely/invalid_count"].value == 2


def test_a_daily_asset_writes_one_object_per_partition(
    s3_endpoint: S3Endpoint, bucket: str, materialize: Materialize
) -> None:
    orders = orders_asset(partitions_def=DAYS)
    io_manager = warehouse(s3_endpoint, bucket)
    for day in ("2026-03-01", "2026-03-02"):
        materialize([orders], {"io_manager": io_manager}, partition_key=day)

    client = s3_endpoint.client()
    assert object_keys(client, bucket) == [
        "warehouse/orders/2026-03-01.parquet",
        "warehouse/orders/2026-03-02.parquet",
        "warehouse/orders_quarantine/2026-03-01.parquet",
        "warehouse/orders_quarantine/2026-03-02.parquet",
    ]
    for day in ("2026-03-01", "2026-03-02"):
        frame = mixed_orders(f"@{day}")
        assert_is_table_of(read_object(client, bucket, f"warehouse/orders/{day}.parquet"), frame)
        assert_is_quarantine_of(
            read_with_polars(
                s3_endpoint, f"s3://{bucket}/warehouse/orders_quarantine/{day}.parquet"
            ),
            frame,
        )


def test_a_multi_partitioned_asset_writes_one_object_per_partition(
    s3_endpoint: S3Endpoint, bucket: str, materialize: Materialize
) -> None:
    orders = orders_asset(partitions_def=DAYS_AND_REGIONS)
    io_manager = warehouse(s3_endpoint, bucket)
    keys = [dg.MultiPartitionKey({"day": "2026-03-02", "region": r}) for r in ("eu", "us")]
    for key in keys:
        materialize([orders], {"io_manager": io_manager}, partition_key=key)

    client = s3_endpoint.client()
    # One directory per dimension, in order of dimension name: day, then region.
    assert object_keys(client, bucket) == [
        "warehouse/orders/2026-03-02/eu.parquet",
        "warehouse/orders/2026-03-02/us.parquet",
        "warehouse/orders_quarantine/2026-03-02/eu.parquet",
        "warehouse/orders_quarantine/2026-03-02/us.parquet",
    ]
    for key in keys:
        frame = mixed_orders(f"@{key}")
        region = key.keys_by_dimension["region"]
        assert_is_table_of(
            read_object(client, bucket, f"warehouse/orders/2026-03-02/{region}.parquet"), frame
        )
        assert_is_quarantine_of(
            read_object(client, bucket, f"warehouse/orders_quarantine/2026-03-02/{region}.parquet"),
            frame,
        )


def test_a_key_prefix_is_a_folder_for_the_table_and_the_quarantine(
    s3_endpoint: S3Endpoint, bucket: str, materialize: Materialize
) -> None:
    orders = orders_asset(key_prefix=["sales", "eu"])
    materialize([orders], {"io_manager": warehouse(s3_endpoint, bucket)})

    client = s3_endpoint.client()
    assert object_keys(client, bucket) == [
        "warehouse/sales/eu/orders.parquet",
        "warehouse/sales/eu/orders_quarantine.parquet",
    ]
    assert_is_quarantine_of(
        read_object(client, bucket, "warehouse/sales/eu/orders_quarantine.parquet"), mixed_orders()
    )


def reviews_of(
    spec: dg.AssetSpec, orders: dg.AssetsDefinition, seen: dict[str, pl.DataFrame], **kwargs: Any
) -> list[dg.AssetsDefinition]:
    """Two assets that read the quarantine through the spec, one eagerly and one lazily.

    Each also depends on `orders`, so it runs after the step that writes the quarantine.
    """
    ins = {"rows": dg.AssetIn(key=spec.key)}

    @dg.asset(ins=ins, deps=[orders], **kwargs)
    def eager_review(rows: pl.DataFrame) -> None:
        seen["eager"] = rows

    @dg.asset(ins=ins, deps=[orders], **kwargs)
    def lazy_review(rows: pl.LazyFrame) -> None:
        assert isinstance(rows, pl.LazyFrame)
        seen["lazy"] = rows.collect()  # Polars' own reader, inside the run

    return [eager_review, lazy_review]


def test_a_downstream_asset_reads_the_quarantine_eagerly_and_lazily(
    s3_endpoint: S3Endpoint, bucket: str, materialize: Materialize
) -> None:
    orders = orders_asset()
    spec = dd.quarantine_spec(Orders, orders)
    seen: dict[str, pl.DataFrame] = {}
    materialize(
        [orders, spec, *reviews_of(spec, orders, seen)],
        {"io_manager": warehouse(s3_endpoint, bucket)},
    )

    stored = read_object(s3_endpoint.client(), bucket, "warehouse/orders_quarantine.parquet")
    assert_is_quarantine_of(stored, mixed_orders())
    assert set(seen) == {"eager", "lazy"}
    assert_frame_equal(seen["eager"], stored)
    assert_frame_equal(seen["lazy"], stored)


def test_a_downstream_asset_reads_one_partition_of_a_prefixed_quarantine(
    s3_endpoint: S3Endpoint, bucket: str, materialize: Materialize
) -> None:
    orders = orders_asset(partitions_def=DAYS, key_prefix=["sales"])
    spec = dd.quarantine_spec(Orders, orders)
    assert spec.key == dg.AssetKey(["sales", "orders_quarantine"])
    io_manager = warehouse(s3_endpoint, bucket)
    seen: dict[str, pl.DataFrame] = {}
    reviews = reviews_of(spec, orders, seen, partitions_def=DAYS)
    materialize([orders], {"io_manager": io_manager}, partition_key="2026-03-01")
    materialize([orders, spec, *reviews], {"io_manager": io_manager}, partition_key="2026-03-02")

    key = "warehouse/sales/orders_quarantine/2026-03-02.parquet"
    stored = read_object(s3_endpoint.client(), bucket, key)
    assert_is_quarantine_of(stored, mixed_orders("@2026-03-02"))
    assert_frame_equal(seen["eager"], stored)
    assert_frame_equal(seen["lazy"], stored)

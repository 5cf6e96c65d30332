"""Direct invocation with `DAGSTER_DATAFRAMELY_QUARANTINE_DIR=s3://...`: `file_writer` on S3.

Every expected object key is spelled out, not computed with `quarantine_path`, so a change to
the layout fails here.
"""

import time
from typing import Any

import botocore.exceptions
import dagster as dg
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from upath import UPath

import dagster_dataframely as dd

from .support import (
    ORDERS,
    Orders,
    S3Endpoint,
    assert_is_quarantine_of,
    invalid_part,
    mixed_orders,
    new_bucket_name,
    object_keys,
    read_object,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

QUARANTINE_DIR = "DAGSTER_DATAFRAMELY_QUARANTINE_DIR"

# Partition keys that would leave the quarantine directory if used as a path, and where the
# spec's escaping puts them instead.
HOSTILE_PARTITIONS = {
    "2026-03-01": "2026-03-01.parquet",
    "..": "%2E%2E.parquet",
    "../../escape": "%2E%2E/%2E%2E/escape.parquet",
    "a/../../b": "a/%2E%2E/%2E%2E/b.parquet",
    "/etc/passwd": "%2Fetc/passwd.parquet",
    "//twice": "%2F%2Ftwice.parquet",
}


def orders_asset(**kwargs: Any) -> dg.AssetsDefinition:
    @dd.asset(Orders, quarantine=True, **kwargs)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return mixed_orders(f"@{context.partition_key}" if context.has_partition_key else "")

    return orders


def call(asset: dg.AssetsDefinition, **context: Any) -> str:
    """Invoke the asset as a plain function; return the quarantine address it reports."""
    results = list(asset(dg.build_asset_context(**context)))
    materialization = results[0]
    assert isinstance(materialization, dg.MaterializeResult)
    assert materialization.metadata is not None
    value = materialization.metadata["dataframely/quarantine_address"]
    return str(getattr(value, "value", value))


def test_a_call_writes_the_quarantine_where_the_layout_says(
    s3_endpoint: S3Endpoint, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(QUARANTINE_DIR, f"s3://{bucket}/q")
    orders = orders_asset(key_prefix=["sales"])

    address = call(orders)

    assert address == f"s3://{bucket}/q/sales/orders_quarantine.parquet"
    assert str(dd.wiring.quarantine_path(orders.key, f"s3://{bucket}/q")) == address
    client = s3_endpoint.client()
    # No IO manager in a call, so the quarantine is the only object.
    assert object_keys(client, bucket) == ["q/sales/orders_quarantine.parquet"]
    assert_is_quarantine_of(
        read_object(client, bucket, "q/sales/orders_quarantine.parquet"), mixed_orders()
    )


def test_partition_keys_with_dot_dot_and_a_leading_slash_stay_under_the_prefix(
    s3_endpoint: S3Endpoint, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(QUARANTINE_DIR, f"s3://{bucket}/q")
    orders = orders_asset(partitions_def=dg.StaticPartitionsDefinition(list(HOSTILE_PARTITIONS)))

    for partition, relative in HOSTILE_PARTITIONS.items():
        address = call(orders, partition_key=partition)
        assert address == f"s3://{bucket}/q/orders_quarantine/{relative}", partition
        assert str(dd.wiring.quarantine_path(ORDERS, f"s3://{bucket}/q", partition)) == address

    client = s3_endpoint.client()
    expected = sorted(f"q/orders_quarantine/{relative}" for relative in HOSTILE_PARTITIONS.values())
    assert object_keys(client, bucket) == expected
    for partition, relative in HOSTILE_PARTITIONS.items():
        stored = read_object(client, bucket, f"q/orders_quarantine/{relative}")
        assert_is_quarantine_of(stored, mixed_orders(f"@{partition}"))


def test_file_writer_gives_each_dimension_of_a_multi_partition_key_a_directory(
    s3_endpoint: S3Endpoint, bucket: str
) -> None:
    key = dg.MultiPartitionKey({"region": "../x", "day": "/2026-03-01"})
    path = dd.wiring.quarantine_path(ORDERS, f"s3://{bucket}/q", key)
    assert str(path) == f"s3://{bucket}/q/orders_quarantine/%2F2026-03-01/..%2Fx.parquet"

    write = dd.wiring.file_writer(ORDERS, f"s3://{bucket}/q", key)
    first, second = invalid_part(mixed_orders()), invalid_part(mixed_orders()).head(1)
    assert write(first) == str(path)
    assert write(second) == str(path)  # each write replaces the object whole

    client = s3_endpoint.client()
    assert object_keys(client, bucket) == ["q/orders_quarantine/%2F2026-03-01/..%2Fx.parquet"]
    stored = read_object(client, bucket, "q/orders_quarantine/%2F2026-03-01/..%2Fx.parquet")
    assert_frame_equal(stored, second)


def test_file_writer_takes_a_upath_with_its_own_storage_options(
    s3_endpoint: S3Endpoint, bucket: str
) -> None:
    directory = UPath(f"s3://{bucket}/q", **s3_endpoint.storage_options())
    write = dd.wiring.file_writer(dg.AssetKey(["sales", "orders"]), directory, "2026-03-01")
    address = write(invalid_part(mixed_orders()))

    assert address == f"s3://{bucket}/q/sales/orders_quarantine/2026-03-01.parquet"
    for secret in s3_endpoint.secrets:
        assert secret not in address
    assert object_keys(s3_endpoint.client(), bucket) == [
        "q/sales/orders_quarantine/2026-03-01.parquet"
    ]


def test_a_missing_bucket_fails_the_write_naming_the_file_and_is_not_created(
    s3_endpoint: S3Endpoint,
) -> None:
    missing = new_bucket_name("missing")
    write = dd.wiring.file_writer(ORDERS, f"s3://{missing}/q")

    started = time.monotonic()
    with pytest.raises(FileNotFoundError) as raised:  # s3fs's word for NoSuchBucket
        write(invalid_part(mixed_orders()))
    assert time.monotonic() - started < 20

    notes = "\n".join(getattr(raised.value, "__notes__", []))
    assert f"s3://{missing}/q/orders_quarantine.parquet" in notes
    # The writer does not create buckets, as UPath's `mkdir` on S3 would.
    with pytest.raises(botocore.exceptions.ClientError):
        s3_endpoint.client().head_bucket(Bucket=missing)

"""Faults: the S3 server goes away before the quarantine write, or before the table write.

The server that fails is a moto server the test stops (`StoppableS3`): connections to it are
refused, as they are when a real endpoint is down. moto keeps its objects in this process, so
after the test starts it again on the same port, reading the objects back shows whether the
failed run changed anything. Deleting the bucket would prove nothing here: UPathIOManager's
`mkdir` on S3 creates a missing bucket again. A bucket policy denying PutObject would need
moto's IAM enforcement, and MinIO's root user ignores bucket policies.

Every failure has to come within seconds: the managers' s3fs clients make one attempt per
request with short timeouts (`FAST_CONFIG`), and the package sets `AWS_MAX_ATTEMPTS=1`.
"""

import time
from typing import Any

import botocore.exceptions
import dagster as dg
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager
from upath import UPath

import dagster_dataframely as dd

from .conftest import Materialize, StoppableS3
from .support import (
    ORDERS,
    Orders,
    S3Endpoint,
    assert_is_quarantine_of,
    assert_is_table_of,
    good_orders,
    invalid_part,
    materializations,
    mixed_orders,
    object_keys,
    object_state,
    open_uploads,
    read_object,
    step_errors,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

FAILS_WITHIN_SECONDS = 20


class Source:
    """What `orders` returns on its next run."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self.frame = frame


def orders_from(source: Source) -> dg.AssetsDefinition:
    @dd.asset(Orders, quarantine=True)
    def orders() -> pl.DataFrame:
        return source.frame

    return orders


def parquet_on(endpoint_options: dict[str, Any], base_dir: str) -> PolarsParquetIOManager:
    return PolarsParquetIOManager(base_dir=base_dir, storage_options=endpoint_options)


def failed_run(
    materialize: Materialize, orders: dg.AssetsDefinition, io_manager: Any
) -> dg.ExecuteInProcessResult:
    """Run `orders`, expect the run to fail, and expect it to fail within seconds."""
    started = time.monotonic()
    result = materialize([orders], {"io_manager": io_manager}, raise_on_error=False)
    elapsed = time.monotonic() - started
    assert not result.success
    assert elapsed < FAILS_WITHIN_SECONDS, f"the run took {elapsed:.1f}s to fail"
    # No materialization: the table was not reported as written.
    assert "orders" not in materializations(result)
    return result


def test_a_stopped_server_fails_the_run_and_the_previous_table_is_unchanged(
    stoppable_s3: StoppableS3, materialize: Materialize
) -> None:
    bucket = stoppable_s3.new_bucket()
    source = Source(good_orders())
    orders = orders_from(source)
    io_manager = parquet_on(stoppable_s3.storage_options(), f"s3://{bucket}/warehouse")
    materialize([orders], {"io_manager": io_manager})
    client = stoppable_s3.client()
    # The clean first run stored an empty quarantine, so that it can be read.
    keys = ["warehouse/orders.parquet", "warehouse/orders_quarantine.parquet"]
    assert object_keys(client, bucket) == keys
    assert read_object(client, bucket, keys[1]).is_empty()
    before = [object_state(client, bucket, key) for key in keys]

    source.frame = mixed_orders()
    with stoppable_s3.down():
        result = failed_run(materialize, orders, io_manager)
    assert any("Could not connect to the endpoint URL" in m for m in step_errors(result))

    # The server is back: the good table and the empty quarantine are as they were.
    assert object_keys(client, bucket) == keys
    assert [object_state(client, bucket, key) for key in keys] == before
    assert_is_table_of(read_object(client, bucket, "warehouse/orders.parquet"), good_orders())
    assert open_uploads(client, bucket) == []


def test_a_failed_quarantine_write_leaves_the_table_on_a_live_server_untouched(
    s3_endpoint: S3Endpoint, bucket: str, stoppable_s3: StoppableS3, materialize: Materialize
) -> None:
    """The quarantine's server is down, the table's is up: the table must not be written."""
    restricted = stoppable_s3.new_bucket()
    source = Source(mixed_orders("@first"))
    orders = orders_from(source)
    io_manager = dd.QuarantineAwareIOManager(
        io_manager=parquet_on(s3_endpoint.storage_options(), f"s3://{bucket}/warehouse"),
        quarantine_io_manager=parquet_on(stoppable_s3.storage_options(), f"s3://{restricted}/q"),
    )
    materialize([orders], {"io_manager": io_manager})
    lake, vault = s3_endpoint.client(), stoppable_s3.client()
    table_before = object_state(lake, bucket, "warehouse/orders.parquet")
    quarantine_before = object_state(vault, restricted, "q/orders_quarantine.parquet")

    source.frame = mixed_orders("@second")
    with stoppable_s3.down():
        failed_run(materialize, orders, io_manager)
        # The table's server never went away, so a write would show here already.
        assert object_keys(lake, bucket) == ["warehouse/orders.parquet"]
        assert object_state(lake, bucket, "warehouse/orders.parquet") == table_before

    assert_is_table_of(
        read_object(lake, bucket, "warehouse/orders.parquet"), mixed_orders("@first")
    )
    assert object_keys(vault, restricted) == ["q/orders_quarantine.parquet"]
    assert object_state(vault, restricted, "q/orders_quarantine.parquet") == quarantine_before
    assert open_uploads(lake, bucket) == open_uploads(vault, restricted) == []


def test_a_failed_table_write_after_the_quarantine_keeps_the_invalid_rows(
    s3_endpoint: S3Endpoint, bucket: str, stoppable_s3: StoppableS3, materialize: Materialize
) -> None:
    """The table's server is down, the quarantine's is up: the run fails, the rows are kept."""
    lake = stoppable_s3.new_bucket()
    source = Source(good_orders())
    orders = orders_from(source)
    io_manager = dd.QuarantineAwareIOManager(
        io_manager=parquet_on(stoppable_s3.storage_options(), f"s3://{lake}/warehouse"),
        quarantine_io_manager=parquet_on(s3_endpoint.storage_options(), f"s3://{bucket}/q"),
    )
    materialize([orders], {"io_manager": io_manager})
    tables, quarantines = stoppable_s3.client(), s3_endpoint.client()
    # Every row was valid: the first clean run stored an empty quarantine, so it can be read.
    assert object_keys(quarantines, bucket) == ["q/orders_quarantine.parquet"]
    assert read_object(quarantines, bucket, "q/orders_quarantine.parquet").is_empty()
    table_before = object_state(tables, lake, "warehouse/orders.parquet")

    source.frame = mixed_orders()
    with stoppable_s3.down():
        result = failed_run(materialize, orders, io_manager)
        # Written before the table write failed, and whole.
        assert object_keys(quarantines, bucket) == ["q/orders_quarantine.parquet"]
        assert_is_quarantine_of(
            read_object(quarantines, bucket, "q/orders_quarantine.parquet"), mixed_orders()
        )
    assert any("the io_manager argument" in m for m in step_errors(result))

    assert object_keys(tables, lake) == ["warehouse/orders.parquet"]
    assert object_state(tables, lake, "warehouse/orders.parquet") == table_before
    assert open_uploads(tables, lake) == open_uploads(quarantines, bucket) == []


@pytest.mark.parametrize("routed", [False, True], ids=["same-manager", "quarantine-aware"])
def test_a_failed_quarantine_write_names_the_quarantine_in_the_error(
    s3_endpoint: S3Endpoint,
    bucket: str,
    stoppable_s3: StoppableS3,
    materialize: Materialize,
    routed: bool,
) -> None:
    down = stoppable_s3.new_bucket()
    orders = orders_from(Source(mixed_orders()))
    io_manager: Any = parquet_on(stoppable_s3.storage_options(), f"s3://{down}/warehouse")
    if routed:
        io_manager = dd.QuarantineAwareIOManager(
            io_manager=parquet_on(s3_endpoint.storage_options(), f"s3://{bucket}/warehouse"),
            quarantine_io_manager=io_manager,
        )
    with stoppable_s3.down():
        result = failed_run(materialize, orders, io_manager)
    errors = "\n".join(step_errors(result))
    assert "orders_quarantine" in errors, errors


def test_a_call_fails_within_seconds_naming_the_file_and_keeps_the_previous_one(
    stoppable_s3: StoppableS3,
) -> None:
    bucket = stoppable_s3.new_bucket()
    directory = UPath(f"s3://{bucket}/q", **stoppable_s3.storage_options())
    write = dd.wiring.file_writer(ORDERS, directory)
    first = invalid_part(mixed_orders("@first"))
    write(first)
    client = stoppable_s3.client()
    before = object_state(client, bucket, "q/orders_quarantine.parquet")

    with stoppable_s3.down():
        started = time.monotonic()
        with pytest.raises(botocore.exceptions.EndpointConnectionError) as raised:
            write(invalid_part(mixed_orders("@second")))
        assert time.monotonic() - started < FAILS_WITHIN_SECONDS
    notes = "\n".join(getattr(raised.value, "__notes__", []))
    assert f"s3://{bucket}/q/orders_quarantine.parquet" in notes

    assert object_keys(client, bucket) == ["q/orders_quarantine.parquet"]
    assert object_state(client, bucket, "q/orders_quarantine.parquet") == before
    assert open_uploads(client, bucket) == []

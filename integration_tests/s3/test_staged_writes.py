"""`QuarantineAwareIOManager(staged_writes=True)` around `PolarsParquetIOManager` on S3.

An object store replaces an object only when an upload completes, so a process killed mid
upload leaves the old object. What does reach the store without staging is a write that fails
half way through in the process (a run terminated from the UI raises inside the write, for
one): fsspec uploads whatever it had buffered when the file is closed, exception or not, and
the table becomes half a parquet file. With staging the manager writes a local file first and
only a complete one is uploaded, in one request.
"""

import io
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

from .conftest import Materialize
from .support import (
    Orders,
    S3Endpoint,
    assert_is_quarantine_of,
    assert_is_table_of,
    good_orders,
    mixed_orders,
    object_keys,
    object_state,
    open_uploads,
    read_object,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

TABLE_KEY = "warehouse/orders.parquet"
QUARANTINE_KEY = "warehouse/orders_quarantine.parquet"


def manager(endpoint: S3Endpoint, bucket: str, *, staged: bool) -> dd.QuarantineAwareIOManager:
    return dd.QuarantineAwareIOManager(
        io_manager=PolarsParquetIOManager(
            base_dir=f"s3://{bucket}/warehouse", storage_options=endpoint.storage_options()
        ),
        staged_writes=staged,
    )


def orders_returning(frames: dict[str, pl.DataFrame]) -> dg.AssetsDefinition:
    @dd.asset(Orders, quarantine=True)
    def orders() -> pl.DataFrame:
        return frames["now"]

    return orders


class InterruptedWriteError(Exception):
    """Stands for whatever interrupts a write in the process: a terminated run, a MemoryError."""


def interrupt_the_table_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """A parquet write of the table writes half its bytes, then raises."""
    write_parquet = pl.DataFrame.write_parquet

    def half_then_raise(frame: pl.DataFrame, file: Any, *args: Any, **kwargs: Any) -> None:
        name = str(getattr(file, "path", None) or getattr(file, "name", None) or file)
        if not name.endswith("/orders.parquet"):
            write_parquet(frame, file, *args, **kwargs)
            return
        whole = io.BytesIO()
        write_parquet(frame, whole, *args, **kwargs)
        half = whole.getvalue()[: len(whole.getvalue()) // 2]
        if hasattr(file, "write"):
            file.write(half)
        else:
            Path(name).write_bytes(half)
        raise InterruptedWriteError("stopped half way through the table's write")

    monkeypatch.setattr(pl.DataFrame, "write_parquet", half_then_raise)


def test_staged_writes_store_the_same_objects(
    s3_endpoint: S3Endpoint, bucket: str, materialize: Materialize
) -> None:
    frames = {"now": mixed_orders()}

    result = materialize(
        [orders_returning(frames)], {"io_manager": manager(s3_endpoint, bucket, staged=True)}
    )

    assert result.success
    client = s3_endpoint.client()
    assert object_keys(client, bucket) == [TABLE_KEY, QUARANTINE_KEY]
    assert_is_table_of(read_object(client, bucket, TABLE_KEY), frames["now"])
    assert_is_quarantine_of(read_object(client, bucket, QUARANTINE_KEY), frames["now"])
    assert open_uploads(client, bucket) == []


@pytest.mark.parametrize("staged", [True, False], ids=["staged", "not-staged"])
def test_a_write_interrupted_half_way(
    s3_endpoint: S3Endpoint,
    bucket: str,
    materialize: Materialize,
    monkeypatch: pytest.MonkeyPatch,
    staged: bool,
) -> None:
    frames = {"now": good_orders("first")}
    orders = orders_returning(frames)
    resources = {"io_manager": manager(s3_endpoint, bucket, staged=staged)}
    assert materialize([orders], resources).success
    client = s3_endpoint.client()
    before = object_state(client, bucket, TABLE_KEY)
    interrupt_the_table_write(monkeypatch)
    frames["now"] = mixed_orders("second")

    result = materialize([orders], resources, raise_on_error=False)

    assert not result.success
    if staged:
        assert object_state(client, bucket, TABLE_KEY) == before
        assert_is_table_of(read_object(client, bucket, TABLE_KEY), good_orders("first"))
    else:
        # Without the opt-in, half a file replaced the table.
        assert object_state(client, bucket, TABLE_KEY).body != before.body
        with pytest.raises(pl.exceptions.ComputeError):
            read_object(client, bucket, TABLE_KEY)

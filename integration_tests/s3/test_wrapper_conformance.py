"""The wrapper's transparency on S3: a manager's `storage_options`, loads and `Optional` outputs.

The same assertions against the bare `PolarsParquetIOManager`, the wrapped one and the wrapped
one with `staged_writes=True` (which uploads a local file whole): the storage options that
reach the bucket (endpoint and keys) are the manager's own, eager and lazy loads read what was
written, and an `Optional` output returning `None` writes no object.
"""

from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager
from polars.testing import assert_frame_equal

import dagster_dataframely as dd

from .conftest import Materialize
from .support import S3Endpoint, object_keys, read_object

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

FRAME = pl.DataFrame({"a": [3, 1, 2], "b": ["x", "y", "z"]})


@pytest.mark.parametrize("mode", ["bare", "wrapped", "staged"])
def test_storage_options_loads_and_optional_outputs_on_s3(
    s3_endpoint: S3Endpoint, bucket: str, materialize: Materialize, mode: str
) -> None:
    seen: dict[str, Any] = {}

    @dg.asset
    def table() -> pl.DataFrame:
        return FRAME

    @dg.asset
    def absent() -> pl.DataFrame | None:
        return None

    @dg.asset
    def eager_reader(table: pl.DataFrame) -> None:
        seen["eager"] = table

    @dg.asset
    def lazy_reader(table: pl.LazyFrame, absent: pl.DataFrame | None) -> None:
        seen.update(lazy=table.collect(), missing=absent)

    manager: object = PolarsParquetIOManager(
        base_dir=f"s3://{bucket}/warehouse", storage_options=s3_endpoint.storage_options()
    )
    if mode != "bare":
        manager = dd.QuarantineAwareIOManager(io_manager=manager, staged_writes=mode == "staged")

    result = materialize([table, absent, eager_reader, lazy_reader], {"io_manager": manager})

    assert result.success
    client = s3_endpoint.client()
    assert object_keys(client, bucket) == ["warehouse/table.parquet"]
    assert_frame_equal(read_object(client, bucket, "warehouse/table.parquet"), FRAME)
    assert_frame_equal(seen["eager"], FRAME)
    assert_frame_equal(seen["lazy"], FRAME)
    assert seen["missing"] is None

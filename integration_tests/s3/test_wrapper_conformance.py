"""The wrapper's transparency on S3: a manager's `storage_options`, loads and `Optional` outputs.

The same assertions against the bare `PolarsParquetIOManager`, the wrapped one and the wrapped
one with `staged_writes=True` (which uploads a local file whole): the storage options that
reach the bucket (endpoint and keys) are the manager's own, eager and lazy loads read what was
written, and an `Optional` output returning `None` writes no object.
"""

from typing import Any

import pytest
from dagster_polars import PolarsParquetIOManager
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from integration_tests.storage_modes import FRAME, assert_polars_loads, polars_loads

from .conftest import Materialize
from .support import S3Endpoint, object_keys, read_object

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


@pytest.mark.parametrize("mode", ["bare", "wrapped", "staged"])
def test_storage_options_loads_and_optional_outputs_on_s3(
    s3_endpoint: S3Endpoint, bucket: str, materialize: Materialize, mode: str
) -> None:
    seen: dict[str, Any] = {}
    manager: object = PolarsParquetIOManager(
        base_dir=f"s3://{bucket}/warehouse", storage_options=s3_endpoint.storage_options()
    )
    if mode != "bare":
        manager = dd.QuarantineAwareIOManager(io_manager=manager, staged_writes=mode == "staged")

    result = materialize(polars_loads(seen), {"io_manager": manager})

    assert result.success
    client = s3_endpoint.client()
    assert object_keys(client, bucket) == ["warehouse/table.parquet"]
    assert_frame_equal(read_object(client, bucket, "warehouse/table.parquet"), FRAME)
    assert_polars_loads(seen)

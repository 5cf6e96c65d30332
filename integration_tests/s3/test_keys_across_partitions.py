"""`keys_across_partitions=True` on S3: the check scans each partition's object for its keys."""

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

from .conftest import Materialize
from .support import S3Endpoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

REGIONS = dg.StaticPartitionsDefinition(["east", "west"])


class Orders(dy.Schema):
    order_id = dy.Int64(primary_key=True)


def test_a_key_in_two_partitions_on_s3_fails(
    s3_endpoint: S3Endpoint, bucket: str, materialize: Materialize
) -> None:
    frames = {"east": pl.DataFrame({"order_id": [1, 2]}), "west": pl.DataFrame({"order_id": [2]})}

    @dd.asset(Orders, partitions_def=REGIONS, keys_across_partitions=True)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames[context.partition_key]

    manager = PolarsParquetIOManager(
        base_dir=f"s3://{bucket}/warehouse", storage_options=s3_endpoint.storage_options()
    )
    for region in frames:
        result = materialize([orders], {"io_manager": manager}, partition_key=region)
    (check,) = [
        e
        for e in result.get_asset_check_evaluations()
        if e.check_name == "dy_keys_across_partitions"
    ]
    assert not check.passed
    assert check.metadata["dy_repeated_keys"].value == 1
    assert check.metadata["dy_repeated_key_partitions"].data == ["east", "west"]

"""`dd.suggest_schema` on a parquet folder in S3 (moto's server on loopback)."""

from __future__ import annotations

import io

import polars as pl
import pytest
from upath import UPath

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidArgumentsError

from .support import S3Endpoint


def _polars_options(endpoint: S3Endpoint) -> dict[str, str]:
    return {
        "aws_access_key_id": endpoint.access_key,
        "aws_secret_access_key": endpoint.secret_key,
        "aws_endpoint_url": endpoint.url,
        "aws_region": endpoint.region,
        "aws_allow_http": "true",
    }


def _put_days(s3_endpoint: S3Endpoint, bucket: str, folder: str, parts: list[pl.DataFrame]) -> None:
    """Each part as `<folder>/day=<n>/0.parquet` in the bucket: a folder partitioned by day."""
    client = s3_endpoint.client()
    for day, part in enumerate(parts):
        body = io.BytesIO()
        part.write_parquet(body)
        client.put_object(Bucket=bucket, Key=f"{folder}/day={day}/0.parquet", Body=body.getvalue())


def test_a_folder_in_s3_gives_the_schema_of_the_same_rows_in_memory(
    s3_endpoint: S3Endpoint, bucket: str
) -> None:
    parts = [
        pl.DataFrame({"id": range(day * 50, day * 50 + 50), "day": [day] * 50}) for day in range(3)
    ]
    _put_days(s3_endpoint, bucket, "orders", parts)
    code = dd.suggest_schema(
        f"s3://{bucket}/orders/", name="Orders", storage_options=_polars_options(s3_endpoint)
    )
    expected = dd.suggest_schema(pl.concat(parts), name="Orders")
    assert code[code.index("# Primary key") :] == expected[expected.index("# Primary key") :]


def test_an_unreadable_s3_source_is_refused_without_the_secret(
    s3_endpoint: S3Endpoint, bucket: str
) -> None:
    with pytest.raises(InvalidArgumentsError, match="cannot be read as parquet") as refusal:
        dd.suggest_schema(
            f"s3://{bucket}/missing.parquet",
            name="Orders",
            storage_options=_polars_options(s3_endpoint),
        )
    assert s3_endpoint.secret_key not in str(refusal.value)


def test_a_upath_with_its_fsspec_options_gives_the_schema_of_the_same_rows_in_memory(
    s3_endpoint: S3Endpoint, bucket: str
) -> None:
    parts = [
        pl.DataFrame({"id": range(day * 40, day * 40 + 40), "day": [day] * 40}) for day in range(2)
    ]
    _put_days(s3_endpoint, bucket, "lines", parts)
    folder = UPath(f"s3://{bucket}/lines/", **s3_endpoint.storage_options())

    code = dd.suggest_schema(folder, name="Lines")

    expected = dd.suggest_schema(pl.concat(parts), name="Lines")
    assert f"80 rows of 's3://{bucket}/lines'" in code
    assert code[code.index("# Primary key") :] == expected[expected.index("# Primary key") :]
    one_file = dd.suggest_schema(folder / "day=0" / "0.parquet", name="Lines")
    assert "# 40 rows, no null" in one_file


def test_a_upath_option_polars_cannot_take_is_refused_by_name_only(
    s3_endpoint: S3Endpoint, bucket: str
) -> None:
    folder = UPath(
        f"s3://{bucket}/lines/", **s3_endpoint.storage_options(), requester_pays="secret-value"
    )
    with pytest.raises(InvalidArgumentsError, match="requester_pays cannot be passed") as refusal:
        dd.suggest_schema(folder, name="Lines")
    assert "secret-value" not in str(refusal.value)
    assert s3_endpoint.secret_key not in str(refusal.value)

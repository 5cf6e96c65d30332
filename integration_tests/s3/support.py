"""What the S3 tests share: the schema, the frames, and independent ways to read objects back.

Reading back never goes through the code under test: `read_object` uses boto3 and parses the
bytes with Polars, `read_with_s3fs` uses a fresh `s3fs.S3FileSystem`, and `read_with_polars`
uses Polars' own object-store reader.
"""

from __future__ import annotations

import io
import secrets
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import boto3
import botocore.config
import dagster as dg
import dataframely as dy
import polars as pl
import s3fs
from dagster_shared.serdes import serialize_value
from polars.testing import assert_frame_equal

ORDERS = dg.AssetKey(["orders"])

# Fail within seconds, not minutes: one attempt per request, short timeouts. s3fs retries
# connection errors itself a few times (about two seconds in all), on top of this.
FAST_CONFIG: dict[str, Any] = {
    "retries": {"max_attempts": 1, "mode": "standard"},
    "connect_timeout": 2,
    "read_timeout": 10,
}


class Orders(dy.Schema):
    """An order: its id is unique and its amount is not negative."""

    order_id = dy.String(primary_key=True)
    amount = dy.Float64(nullable=False, min=0.0)


def mixed_orders(tag: str = "") -> pl.DataFrame:
    """Five orders, of which `o-2` and `o-4` have a negative amount and so fail the schema."""
    return pl.DataFrame(
        {
            "order_id": [f"o-{i}{tag}" for i in range(1, 6)],
            "amount": [10.0, -1.0, 20.0, -2.0, 30.0],
        }
    )


def good_orders(tag: str = "") -> pl.DataFrame:
    """Three orders, all valid."""
    return pl.DataFrame(
        {"order_id": [f"g-{i}{tag}" for i in range(1, 4)], "amount": [1.0, 2.0, 3.0]}
    )


def valid_part(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("amount") >= 0)


def invalid_part(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("amount") < 0)


QUARANTINE_RULE_COLUMNS = (
    "dy_rule__primary_key",
    "dy_rule__order_id__nullability",
    "dy_rule__amount__nullability",
    "dy_rule__amount__min",
)


def assert_is_quarantine_of(stored: pl.DataFrame, frame: pl.DataFrame) -> None:
    """`stored` holds exactly the invalid rows of `frame`, each marked as failing `amount|min`."""
    assert_frame_equal(
        stored.select("order_id", "amount").sort("order_id"),
        invalid_part(frame).sort("order_id"),
    )
    assert set(QUARANTINE_RULE_COLUMNS) <= set(stored.columns), stored.columns
    assert stored["dy_rule__amount__min"].to_list() == ["invalid"] * stored.height


def assert_is_table_of(stored: pl.DataFrame, frame: pl.DataFrame) -> None:
    """`stored` is the valid rows of `frame` and nothing else."""
    assert_frame_equal(stored.sort("order_id"), valid_part(frame).sort("order_id"))


@dataclass(frozen=True)
class S3Endpoint:
    """An S3-compatible server reachable over HTTP, and the credentials the tests use on it."""

    url: str
    access_key: str
    secret_key: str
    region: str
    started_here: bool
    shared_bucket: str

    def client(self, endpoint_url: str | None = None) -> Any:
        """A boto3 client, which shares no code with s3fs or Polars' reader."""
        return boto3.client(
            "s3",
            endpoint_url=endpoint_url or self.url,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name=self.region,
            config=botocore.config.Config(**FAST_CONFIG),
        )

    def storage_options(self, endpoint_url: str | None = None) -> dict[str, Any]:
        """fsspec storage options for an IO manager, credentials included so a leak would show.

        The endpoint goes in `client_kwargs`: dagster-polars drops a top-level `endpoint_url`
        when it translates the options for Polars' reader, but maps this one.
        """
        return {
            "key": self.access_key,
            "secret": self.secret_key,
            "client_kwargs": {"endpoint_url": endpoint_url or self.url},
            "config_kwargs": FAST_CONFIG,
        }

    def filesystem(self, endpoint_url: str | None = None) -> s3fs.S3FileSystem:
        """A fresh s3fs filesystem, not the cached instance the IO manager uses."""
        return s3fs.S3FileSystem(skip_instance_cache=True, **self.storage_options(endpoint_url))

    @property
    def secrets(self) -> tuple[str, str]:
        return (self.access_key, self.secret_key)


def new_bucket_name(label: str = "t") -> str:
    """A fresh, valid bucket name: lowercase, 3 to 63 characters."""
    return f"dd-it-{label}-{secrets.token_hex(5)}"


def read_object(client: Any, bucket: str, key: str) -> pl.DataFrame:
    """Read a parquet object with boto3 and parse its bytes."""
    body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
    return pl.read_parquet(io.BytesIO(body))


def read_with_s3fs(endpoint: S3Endpoint, uri: str) -> pl.DataFrame:
    with endpoint.filesystem().open(uri, "rb") as file:
        return pl.read_parquet(file)


def read_with_polars(endpoint: S3Endpoint, uri: str) -> pl.DataFrame:
    """Polars' own object-store reader, which takes object_store's option names."""
    return pl.read_parquet(
        uri,
        storage_options={
            "aws_access_key_id": endpoint.access_key,
            "aws_secret_access_key": endpoint.secret_key,
            "aws_endpoint_url": endpoint.url,
            "aws_region": endpoint.region,
            "aws_allow_http": "true",
        },
    )


def object_keys(client: Any, bucket: str) -> list[str]:
    """Every key in the bucket, sorted."""
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
    return sorted(item["Key"] for page in pages for item in page.get("Contents", []))


@dataclass(frozen=True)
class ObjectState:
    """What proves an object was not rewritten: its bytes, ETag and modification time."""

    body: bytes
    etag: str
    last_modified: Any


def object_state(client: Any, bucket: str, key: str) -> ObjectState:
    response = client.get_object(Bucket=bucket, Key=key)
    return ObjectState(response["Body"].read(), response["ETag"], response["LastModified"])


def open_uploads(client: Any, bucket: str) -> list[str]:
    """Multipart uploads started and never completed or aborted: a half-written object."""
    return [u["Key"] for u in client.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]


def empty_and_delete(client: Any, bucket: str) -> None:
    keys = object_keys(client, bucket)
    # NOTE: one request per 1000 keys (S3's most), not one per key: moto spends about 20 ms of
    # CPU on each request, and the distributed folder leaves hundreds of objects.
    for start in range(0, len(keys), 1000):
        batch = [{"Key": key} for key in keys[start : start + 1000]]
        client.delete_objects(Bucket=bucket, Delete={"Objects": batch, "Quiet": True})
    for upload in client.list_multipart_uploads(Bucket=bucket).get("Uploads", []):
        client.abort_multipart_upload(Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])
    client.delete_bucket(Bucket=bucket)


def materializations(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetMaterialization]:
    """The run's materializations by asset key string (the last one for each key)."""
    return {
        event.asset_key.to_user_string(): event.step_materialization_data.materialization
        for event in result.all_events
        if event.is_step_materialization and event.asset_key is not None
    }


def quarantine_address(result: dg.ExecuteInProcessResult, key: str = "orders") -> str:
    value = materializations(result)[key].metadata["dataframely/quarantine_address"]
    return str(getattr(value, "value", value))


def step_errors(result: dg.ExecuteInProcessResult) -> list[str]:
    """The message of each step failure and of every error it was raised from, stack traces off."""
    messages = []
    for event in result.all_events:
        if not event.is_step_failure:
            continue
        error = event.step_failure_data.error
        while error is not None:
            messages.append(error.message)
            error = error.cause or error.context
    return messages


@dataclass
class SecretScan:
    """Looks for the credentials in everything a run records, and remembers what it looked at."""

    secrets: tuple[str, ...]
    scanned: int = field(default=0)

    def texts(self, texts: Iterable[str], where: str) -> None:
        for text in texts:
            self.scanned += 1
            for secret in self.secrets:
                assert secret not in text, f"a credential appears in {where}: {text[:2000]}"

    def events(self, events: Iterable[Any], where: str) -> None:
        """`str` and the serialized form of each event: messages, metadata, check metadata."""
        self.texts((part for event in events for part in _renderings(event)), where)

    def run(self, instance: dg.DagsterInstance, run_id: str) -> None:
        """The run as stored, and every entry of its event log."""
        run = instance.get_run_by_id(run_id)
        assert run is not None
        self.texts(_renderings(run), f"run {run_id}")
        self.events(instance.all_logs(run_id), f"the event log of run {run_id}")

    def instance(self, instance: dg.DagsterInstance) -> None:
        for run in instance.get_runs():
            self.run(instance, run.run_id)


def _renderings(value: Any) -> tuple[str, str]:
    return (str(value), serialize_value(value))

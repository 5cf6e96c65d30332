"""The S3 server, its buckets, a Dagster instance, and the secret scan every run goes through.

With `AWS_ENDPOINT_URL` set (with `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`), the suite
runs against that server: MinIO from `docker-compose.yml`, or any S3. Without it, the suite
starts moto's S3 server on 127.0.0.1, on a free port, with made-up credentials, and stops it
when the suite is done. Either way every byte goes over HTTP, through boto3, s3fs / UPath and
Polars' own object-store reader: nothing here patches the network layer.

The environment is changed for this package only and restored afterwards, so the unit tests
in `tests/` never see these variables.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import dagster as dg
import pytest
from moto.server import ThreadedMotoServer

from .support import S3Endpoint, SecretScan, empty_and_delete, new_bucket_name

ENDPOINT_VARIABLE = "AWS_ENDPOINT_URL"
BUCKET_VARIABLE = "DAGSTER_DATAFRAMELY_TEST_BUCKET"
DEFAULT_BUCKET = "dagster-dataframely-it"
LOOPBACK = "127.0.0.1"

# Made up, and distinctive, so the secret scan cannot match anything by accident.
FAKE_ACCESS_KEY = "AKIATESTDDKEY0001"

# Settings that would send a client somewhere other than the endpoint, or slow it down.
_UNSET_FOR_LOCAL_SERVER = (
    "AWS_ENDPOINT_URL_S3",  # botocore prefers it over AWS_ENDPOINT_URL
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_SECURITY_TOKEN",
    "AWS_ROLE_ARN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
)


@pytest.fixture(scope="package", autouse=True)
def s3_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Endpoint]:
    """The S3 server for the whole package, with the AWS variables every client reads set."""
    werkzeug = logging.getLogger("werkzeug")
    werkzeug_level = werkzeug.level
    werkzeug.setLevel(logging.WARNING)  # moto's server logs one line per request otherwise
    with pytest.MonkeyPatch.context() as env:
        # Safety nets whatever the server: never ask an instance metadata service for
        # credentials, and give up on a request after one attempt.
        env.setenv("AWS_EC2_METADATA_DISABLED", "true")
        env.setenv("AWS_MAX_ATTEMPTS", "1")
        env.setenv("AWS_RETRY_MODE", "standard")
        region = os.environ.get("AWS_DEFAULT_REGION") or os.environ.get("AWS_REGION") or "us-east-1"
        env.setenv("AWS_DEFAULT_REGION", region)
        env.setenv("AWS_REGION", region)
        bucket = os.environ.get(BUCKET_VARIABLE, "").strip() or DEFAULT_BUCKET
        external = os.environ.get(ENDPOINT_VARIABLE, "").strip()
        try:
            if external:
                yield _external_endpoint(external, region, bucket)
            else:
                with _local_server(env, tmp_path_factory, region, bucket) as endpoint:
                    yield endpoint
        finally:
            werkzeug.setLevel(werkzeug_level)


def _external_endpoint(url: str, region: str, bucket: str) -> S3Endpoint:
    access_key = os.environ.get("AWS_ACCESS_KEY_ID", "")
    secret_key = os.environ.get("AWS_SECRET_ACCESS_KEY", "")
    if not access_key or not secret_key:
        pytest.fail(
            f"{ENDPOINT_VARIABLE}={url} is set, so the S3 suite runs against it, and it needs "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY too (see the README).",
            pytrace=False,
        )
    endpoint = S3Endpoint(url, access_key, secret_key, region, False, bucket)
    try:
        endpoint.client().head_bucket(Bucket=bucket)
    except Exception as error:
        pytest.fail(
            f"The test bucket {bucket} is not reachable at {url}: {error}. Start MinIO and make "
            "the bucket with `docker compose run --rm create-bucket`, or set "
            f"{BUCKET_VARIABLE} to a bucket that exists.",
            pytrace=False,
        )
    return endpoint


@contextmanager
def _local_server(
    env: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, region: str, bucket: str
) -> Iterator[S3Endpoint]:
    """moto's S3 server on loopback, and an environment that can reach nothing else."""
    for variable in _UNSET_FOR_LOCAL_SERVER:
        env.delenv(variable, raising=False)
    # No shared config or credentials file from the developer's home directory either.
    missing = tmp_path_factory.mktemp("aws") / "absent"
    env.setenv("AWS_CONFIG_FILE", str(missing))
    env.setenv("AWS_SHARED_CREDENTIALS_FILE", str(missing))
    access_key, secret_key = FAKE_ACCESS_KEY, f"dd-secret-{secrets.token_hex(12)}"
    env.setenv("AWS_ACCESS_KEY_ID", access_key)
    env.setenv("AWS_SECRET_ACCESS_KEY", secret_key)
    server = ThreadedMotoServer(ip_address=LOOPBACK, port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        assert host == LOOPBACK, host
        url = f"http://{LOOPBACK}:{port}"
        # Read by botocore, s3fs (through aiobotocore) and Polars' object-store reader alike.
        env.setenv(ENDPOINT_VARIABLE, url)
        endpoint = S3Endpoint(url, access_key, secret_key, region, True, bucket)
        endpoint.client().create_bucket(Bucket=bucket)
        yield endpoint
    finally:
        server.stop()


@pytest.fixture
def new_bucket(s3_endpoint: S3Endpoint) -> Iterator[Callable[[str], str]]:
    """Make fresh buckets on the package's server; each is emptied and deleted afterwards."""
    client = s3_endpoint.client()
    made: list[str] = []

    def make(label: str = "t") -> str:
        name = new_bucket_name(label)
        client.create_bucket(Bucket=name)
        made.append(name)
        return name

    yield make
    for name in made:
        empty_and_delete(client, name)


@pytest.fixture
def bucket(new_bucket: Callable[[str], str]) -> str:
    """A fresh, empty bucket for this test."""
    return new_bucket("t")


class StoppableS3:
    """A moto S3 server on loopback that a test can stop, and start again on the same port.

    moto keeps its buckets and objects in this process, not in the HTTP server, so a server
    started again serves exactly what was there before it stopped: reading an object after
    the restart shows whether anything changed it. (When the package's own server is moto
    too, both serve the same buckets.) Werkzeug closes every connection after its response,
    so once `stop` returns, every request is refused at once.
    """

    def __init__(self, endpoint: S3Endpoint) -> None:
        self.endpoint = endpoint
        self.port = 0
        self.buckets: list[str] = []
        self._server: ThreadedMotoServer | None = None

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> None:
        assert self._server is None, "already running"
        server = ThreadedMotoServer(ip_address=LOOPBACK, port=self.port, verbose=False)
        server.start()
        self.port = server.get_host_and_port()[1]
        self._server = server

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    @contextmanager
    def down(self) -> Iterator[None]:
        """Stopped inside the block, serving again after it."""
        self.stop()
        try:
            yield
        finally:
            self.start()

    def client(self) -> Any:
        return self.endpoint.client(self.url)

    def storage_options(self) -> dict[str, Any]:
        return self.endpoint.storage_options(self.url)

    def new_bucket(self) -> str:
        name = new_bucket_name("stop")
        self.client().create_bucket(Bucket=name)
        self.buckets.append(name)
        return name


@pytest.fixture
def stoppable_s3(s3_endpoint: S3Endpoint) -> Iterator[StoppableS3]:
    server = StoppableS3(s3_endpoint)
    server.start()
    yield server
    if not server.running:
        server.start()
    for name in server.buckets:
        empty_and_delete(server.client(), name)
    server.stop()


@pytest.fixture(scope="package")
def secret_scan(s3_endpoint: S3Endpoint) -> SecretScan:
    return SecretScan(secrets=s3_endpoint.secrets)


@pytest.fixture(scope="package")
def dagster_instance(secret_scan: SecretScan) -> Iterator[dg.DagsterInstance]:
    """One instance for every run of the package; its whole event log is scanned at the end."""
    with dg.DagsterInstance.ephemeral() as instance:
        yield instance
        runs = instance.get_runs()
        secret_scan.instance(instance)
        assert not runs or secret_scan.scanned > 0


Materialize = Callable[..., dg.ExecuteInProcessResult]


@pytest.fixture
def materialize(dagster_instance: dg.DagsterInstance, secret_scan: SecretScan) -> Materialize:
    """`dg.materialize` on the package's instance; the run is scanned for credentials at once."""

    def run(
        assets: Sequence[dg.AssetsDefinition | dg.AssetSpec],
        resources: dict[str, Any],
        **kwargs: Any,
    ) -> dg.ExecuteInProcessResult:
        result = dg.materialize(assets, resources=resources, instance=dagster_instance, **kwargs)
        secret_scan.events(result.all_events, f"the events of run {result.run_id}")
        secret_scan.run(dagster_instance, result.run_id)
        return result

    return run

"""The suite's own safety nets: where the clients are pointed, and the scan for credentials.

Every run of the package goes through the `materialize` fixture, which scans its events and
its stored event log at once; the package's Dagster instance is scanned again, whole, when the
package is done. These tests show the scan would catch a leak.
"""

import os
import secrets
import traceback
from urllib.parse import urlsplit

import dagster as dg
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd
from dagster_dataframely.errors import CredentialsInUrlError

from .conftest import LOOPBACK, Materialize
from .support import Orders, S3Endpoint, SecretScan, mixed_orders, object_keys

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def test_every_client_is_pointed_at_the_server_and_nowhere_else(s3_endpoint: S3Endpoint) -> None:
    assert os.environ["AWS_ENDPOINT_URL"] == s3_endpoint.url
    assert os.environ["AWS_EC2_METADATA_DISABLED"] == "true"
    assert os.environ["AWS_MAX_ATTEMPTS"] == "1"
    if s3_endpoint.started_here:
        assert urlsplit(s3_endpoint.url).hostname == LOOPBACK
        assert "AWS_ENDPOINT_URL_S3" not in os.environ
        assert os.environ["AWS_ACCESS_KEY_ID"] == s3_endpoint.access_key


def test_the_scan_finds_a_credential_in_check_metadata(s3_endpoint: S3Endpoint) -> None:
    @dg.asset(check_specs=[dg.AssetCheckSpec("looks_fine", asset="leaky")])
    def leaky() -> dg.MaterializeResult:
        return dg.MaterializeResult(
            check_results=[
                dg.AssetCheckResult(
                    check_name="looks_fine",
                    passed=True,
                    metadata={"note": f"connected with {s3_endpoint.secret_key}"},
                )
            ]
        )

    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize([leaky], instance=instance)
        with pytest.raises(AssertionError, match="a credential appears"):
            SecretScan(s3_endpoint.secrets).events(result.all_events, "the test run")
        with pytest.raises(AssertionError, match="a credential appears"):
            SecretScan(s3_endpoint.secrets).run(instance, result.run_id)


def test_the_scan_finds_a_credential_in_an_error(s3_endpoint: S3Endpoint) -> None:
    @dg.asset
    def failing() -> None:
        raise RuntimeError(f"could not write as {s3_endpoint.access_key}")

    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize([failing], instance=instance, raise_on_error=False)
        assert not result.success
        with pytest.raises(AssertionError, match="a credential appears"):
            SecretScan(s3_endpoint.secrets).events(result.all_events, "the test run")


# Credentials written into a URL: refused wherever the package is given one, and never shown.

SEPARATORS = {"slash": "/", "plus": "+", "at": "@", "percent-2F": "%2F", "slash-at": "/x@"}


def _url_secrets(endpoint: S3Endpoint, separator: str) -> tuple[str, tuple[str, ...]]:
    """A password holding the real secret, `separator` and a random piece; what to scan for."""
    piece = f"piece{secrets.token_hex(6)}"
    password = f"{endpoint.secret_key}{separator}{piece}"
    return password, (endpoint.access_key, endpoint.secret_key, piece)


def _error_texts(error: BaseException) -> list[str]:
    """Everything Python would print for `error`: message, notes, causes, traceback."""
    return ["".join(traceback.format_exception(error)), repr(error.__dict__)]


@pytest.mark.parametrize("separator", list(SEPARATORS.values()), ids=list(SEPARATORS))
def test_a_quarantine_dir_with_credentials_is_refused_and_never_shown(
    s3_endpoint: S3Endpoint, bucket: str, monkeypatch: pytest.MonkeyPatch, separator: str
) -> None:
    password, found = _url_secrets(s3_endpoint, separator)
    url = f"s3://{s3_endpoint.access_key}:{password}@{bucket}/q"
    scan = SecretScan(found)

    @dd.asset(Orders, quarantine=True)
    def orders() -> pl.DataFrame:
        return mixed_orders()

    # Set after declaring, so the call is the first to read it.
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", url)
    with pytest.raises(CredentialsInUrlError) as when_called:
        list(orders(dg.build_asset_context()))
    with pytest.raises(CredentialsInUrlError) as when_declared:
        dd.asset(Orders, quarantine=True)(orders.op.compute_fn.decorated_fn)  # type: ignore[union-attr]

    for raised in (when_called, when_declared):
        scan.texts(_error_texts(raised.value), "the refusal")
    assert object_keys(s3_endpoint.client(), bucket) == []


@pytest.mark.parametrize("separator", list(SEPARATORS.values()), ids=list(SEPARATORS))
def test_a_wrapped_base_dir_with_credentials_is_refused_and_never_shown(
    s3_endpoint: S3Endpoint,
    bucket: str,
    materialize: Materialize,
    monkeypatch: pytest.MonkeyPatch,
    separator: str,
) -> None:
    password, found = _url_secrets(s3_endpoint, separator)
    url = f"s3://{s3_endpoint.access_key}:{password}@{bucket}/w"
    scan = SecretScan(found)
    clean = PolarsParquetIOManager(
        base_dir=f"s3://{bucket}/w", storage_options=s3_endpoint.storage_options()
    )

    with pytest.raises(CredentialsInUrlError) as when_built:
        dd.QuarantineAwareIOManager(
            io_manager=clean, quarantine_io_manager=PolarsParquetIOManager(base_dir=url)
        )
    scan.texts(_error_texts(when_built.value), "the refusal")

    # A URL an `EnvVar` supplies is read only when the resource is created, in the run.
    manager = dd.QuarantineAwareIOManager(
        io_manager=clean,
        quarantine_io_manager=PolarsParquetIOManager(base_dir=dg.EnvVar("DD_IT_QUARANTINE_DIR")),
    )
    monkeypatch.setenv("DD_IT_QUARANTINE_DIR", url)

    @dd.asset(Orders, quarantine=True)
    def orders() -> pl.DataFrame:
        return mixed_orders()

    result = materialize([orders], {"io_manager": manager}, raise_on_error=False)

    assert not result.success
    assert any("CredentialsInUrlError" in str(event) for event in result.all_events)
    scan.events(result.all_events, "the refused run")
    assert object_keys(s3_endpoint.client(), bucket) == []

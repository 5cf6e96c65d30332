"""The suite's own safety nets: where the clients are pointed, and the scan for credentials.

Every run of the package goes through the `materialize` fixture, which scans its events and
its stored event log at once; the package's Dagster instance is scanned again, whole, when the
package is done. These tests show the scan would catch a leak.
"""

import os
from urllib.parse import urlsplit

import dagster as dg
import pytest

from .conftest import LOOPBACK
from .support import S3Endpoint, SecretScan

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

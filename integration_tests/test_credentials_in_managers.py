"""`QuarantineAwareIOManager` refuses a wrapped manager configured with credentials in a URL.

A `PolarsParquetIOManager(base_dir="s3://KEY:SECRET@bucket")` would put the secret in the
`path` metadata of every write, in Dagster's debug log and in `dataframely/quarantine_address`;
s3fs does not even use it. The wrapper refuses it when built, or, for a value that an `EnvVar`
supplies, when the resource is created, with an error that repeats none of it.
"""

from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd
from dagster_dataframely.errors import CredentialsInUrlError

from .conftest import ADDRESS, QUIET, UNPARTITIONED, materialization_metadata, orders_asset
from .interrupted_write import version

pytestmark = pytest.mark.integration

KEY = "AKIAWRAPPEDKEY01"
PARTS = ("wrappedfirst", "wrappedsecond")
SECRETS = [
    f"{PARTS[0]}/{PARTS[1]}",
    f"{PARTS[0]}+{PARTS[1]}",
    f"{PARTS[0]}@{PARTS[1]}",
    f"{PARTS[0]}%2F{PARTS[1]}",
]


def _assert_nothing_secret(text: str) -> None:
    assert KEY not in text
    for part in PARTS:
        assert part not in text


@pytest.mark.parametrize("secret", SECRETS, ids=["slash", "plus", "at", "percent-2F"])
@pytest.mark.parametrize("argument", ["io_manager", "quarantine_io_manager"])
def test_a_base_dir_with_credentials_is_refused_when_the_wrapper_is_built(
    tmp_path: Path, secret: str, argument: str
) -> None:
    managers = {"io_manager": PolarsParquetIOManager(base_dir=str(tmp_path))}
    managers[argument] = PolarsParquetIOManager(base_dir=f"s3://{KEY}:{secret}@bucket/w")

    with pytest.raises(CredentialsInUrlError) as raised:
        dd.QuarantineAwareIOManager(**managers)

    error = raised.value
    assert error.given_as == f"The base_dir of PolarsParquetIOManager (the {argument} argument)"
    assert error.scheme == "s3"
    _assert_nothing_secret(str(error))


@pytest.mark.parametrize("staged", [False, True], ids=["plain", "staged"])
@pytest.mark.parametrize("kind", ["parquet", "duckdb"])
def test_a_url_from_an_env_var_is_refused_when_the_resource_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, staged: bool
) -> None:
    """A factory (DuckDB's) reaches the wrapper already built, its config gone: the check reads
    the config the wrapper resolves itself when the resource starts."""
    variable = dg.EnvVar("DD_TEST_LOCATION")
    quarantine_manager: object = (
        PolarsParquetIOManager(base_dir=variable)
        if kind == "parquet"
        else DuckDBPolarsIOManager(database=variable)
    )
    manager = dd.QuarantineAwareIOManager(
        io_manager=PolarsParquetIOManager(base_dir=str(tmp_path)),
        quarantine_io_manager=quarantine_manager,
        staged_writes=staged,
    )
    # Set only now, as a deployment sets it: the wrapper could not read it when it was built.
    monkeypatch.setenv("DD_TEST_LOCATION", f"s3://{KEY}:{SECRETS[0]}@bucket/w")
    orders = orders_asset({UNPARTITIONED: version("first")})

    result = dg.materialize(
        [orders], resources={"io_manager": manager}, run_config=QUIET, raise_on_error=False
    )

    assert not result.success
    (failure,) = [event for event in result.all_events if event.is_failure]
    assert "CredentialsInUrlError" in str(failure)
    assert "the quarantine_io_manager argument" in str(failure)
    for event in result.all_events:
        _assert_nothing_secret(str(event))
    assert not any(tmp_path.iterdir())


class LocationLoggingIOManager(dg.IOManager):
    """Logs a `path` holding credentials, as a plain manager of a user's own might."""

    def __init__(self, root: str) -> None:
        self.root = root

    def handle_output(self, context: dg.OutputContext, obj: pl.DataFrame) -> None:
        path = f"{self.root}/{context.asset_key.to_user_string()}.parquet"
        context.add_output_metadata({"path": dg.MetadataValue.path(path)})

    def load_input(self, context: dg.InputContext) -> pl.DataFrame:
        raise NotImplementedError


@pytest.mark.parametrize("secret", SECRETS, ids=["slash", "plus", "at", "percent-2F"])
def test_an_address_a_plain_manager_logs_loses_its_credentials(tmp_path: Path, secret: str) -> None:
    """A plain manager's configuration cannot be read, so its logged path is stripped instead."""
    manager = dd.QuarantineAwareIOManager(
        io_manager=PolarsParquetIOManager(base_dir=str(tmp_path)),
        quarantine_io_manager=LocationLoggingIOManager(f"s3://{KEY}:{secret}@bucket/q"),
    )
    orders = orders_asset({UNPARTITIONED: version("first")})

    result = dg.materialize([orders], resources={"io_manager": manager}, run_config=QUIET)

    address = materialization_metadata(result, orders.key)[ADDRESS]
    _assert_nothing_secret(address)
    assert address.endswith("orders_quarantine.parquet")

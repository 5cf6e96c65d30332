"""Fixtures shared by the tests that run `dd.asset` through Dagster and call it directly."""

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from .asset_support import QUARANTINE_DIR, QUIET, AssetContext, Materialize
from .parquet_io_manager import ParquetIOManager


@pytest.fixture
def quarantine_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where a direct invocation writes invalid rows, as the guide's own fixture sets it."""
    directory = tmp_path / "quarantine"
    monkeypatch.setenv(QUARANTINE_DIR, str(directory))
    return directory


@pytest.fixture(scope="session")
def instance() -> Iterator[dg.DagsterInstance]:
    """One ephemeral instance for every run: a run is several times faster than with a new one.

    A test that reads materialization status across runs makes its own instance instead.
    """
    with dg.DagsterInstance.ephemeral() as shared:
        yield shared


@pytest.fixture
def asset_context(instance: dg.DagsterInstance) -> AssetContext:
    """A context for a direct invocation, on the shared instance.

    Without one, every call builds an ephemeral instance, which takes most of a second. A call
    to an asset that declares no `context` accepts one too, so most tests pass it; the tests of
    calling such an asset with only its frames do not.
    """

    def build(**kwargs: Any) -> dg.AssetExecutionContext:
        built: dg.AssetExecutionContext = dg.build_asset_context(instance=instance, **kwargs)
        return built

    return build


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    """The `base_dir` of the run's `ParquetIOManager`."""
    return tmp_path / "warehouse"


@pytest.fixture
def parquet_io_manager(warehouse: Path) -> ParquetIOManager:
    return ParquetIOManager(base_dir=str(warehouse))


@pytest.fixture
def materialize(parquet_io_manager: ParquetIOManager, instance: dg.DagsterInstance) -> Materialize:
    def run(
        assets: Sequence[dg.AssetsDefinition | dg.AssetSpec],
        *,
        raise_on_error: bool = True,
        **kwargs: Any,
    ) -> dg.ExecuteInProcessResult:
        resources = {"io_manager": parquet_io_manager, **kwargs.pop("resources", {})}
        return dg.materialize(
            assets,
            resources=resources,
            instance=kwargs.pop("instance", instance),
            raise_on_error=raise_on_error,
            run_config={**QUIET, **kwargs.pop("run_config", {})},
            **kwargs,
        )

    return run

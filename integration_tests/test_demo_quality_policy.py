"""The demo's quality policy (`dagster_dataframely_demo.quality_policy`) on its parquet manager.

The marketplace feed under a policy: two of twenty lines share a key, above the primary key's
5% threshold, so its blocking check fails; every rule that one line failed is within its
threshold and passes; the run succeeds, as `make demo` needs, and the bad lines are quarantined.
"""

from pathlib import Path
from types import ModuleType

import dagster as dg
import polars as pl
import pytest

from .conftest import QUIET
from .test_demo import demo as demo  # the demo's definitions, re-imported under tmp_path

pytestmark = pytest.mark.integration


def test_the_demos_policy_fails_only_the_blocking_primary_key_check(demo: ModuleType) -> None:
    asset = demo.marketplace_lines_with_policy
    blocking = {spec.name for spec in asset.check_specs if spec.blocking}
    assert blocking == {"dy_schema__columns", "dy_rule__primary_key"}

    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize(
            [demo.raw_marketplace_orders, asset],
            resources=demo.defs.resources,
            instance=instance,
            run_config=QUIET,
        )

    checks = {c.check_name: c for c in result.get_asset_check_evaluations()}
    failed = sorted(name for name, check in checks.items() if not check.passed)
    assert failed == ["dy_rule__primary_key"]
    key = checks["dy_rule__primary_key"]
    assert key.severity == dg.AssetCheckSeverity.WARN
    assert key.metadata["dy_failed_fraction"].value == pytest.approx(0.1)
    tolerated = checks["dy_rule__amount__min"]
    assert tolerated.metadata["dy_failed_count"].value == 1
    assert tolerated.metadata["dy_failed_fraction"].value == pytest.approx(0.05)
    warehouse: Path = demo.WAREHOUSE
    assert pl.read_parquet(warehouse / "marketplace_lines_with_policy.parquet").height == 12
    quarantine = warehouse / "marketplace_lines_with_policy_quarantine.parquet"
    assert pl.read_parquet(quarantine).height == 8

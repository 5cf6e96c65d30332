"""The anomaly check on the instance storages a deployment uses: SQLite and PostgreSQL.

The check reads each metric's series, and the incident flag, from the instance's event log when
a run starts; the same runs must give the same bands whichever storage holds the log: the
partition's own points, the incidents left out, the judged run never among them.

PostgreSQL's case is skipped, with the reason, where PostgreSQL is not installed.
"""

import statistics
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely._model import names

from .postgres_server import running_server, why_not_runnable

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])
CHECK = dd.AnomalyCheck(["row_count", "amount/mean"], min_history=3, seasonality=None)


class Orders(dy.Schema):
    order_id = dy.String(primary_key=True)
    amount = dy.Float64(min=0.0)


@pytest.fixture(params=["sqlite", "postgres"])
def instance(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    if request.param == "sqlite":
        (tmp_path / "home").mkdir()
        with dg.DagsterInstance.local_temp(str(tmp_path / "home")) as local:
            assert "Sqlite" in type(local.event_log_storage).__name__
            yield local
        return
    if (why := why_not_runnable()) is not None:
        pytest.skip(why)
    with running_server() as server, server.fresh_instance() as fresh:
        yield fresh


def test_the_band_comes_from_the_partitions_own_points_without_incidents(
    instance: dg.DagsterInstance, tmp_path: Path
) -> None:
    from dagster_polars import PolarsParquetIOManager

    sizes: dict[str, int] = {}

    @dd.asset(Orders, partitions_def=REGIONS, quality_policy=dd.QualityPolicy(anomaly=CHECK))
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        n = sizes[context.partition_key]
        return pl.DataFrame({"order_id": [f"o{i}" for i in range(n)], "amount": [2.0] * n})

    resources = {"io_manager": PolarsParquetIOManager(base_dir=str(tmp_path / "warehouse"))}

    def run(partition: str, rows: int, incident: bool = False) -> dg.ExecuteInProcessResult:
        sizes[partition] = rows
        return dg.materialize(
            [orders],
            resources=resources,
            instance=instance,
            partition_key=partition,
            run_config=QUIET,
            tags={names.INCIDENT_TAG: "true"} if incident else None,
            raise_on_error=False,
        )

    history = [("eu", 100, False), ("us", 5, False), ("eu", 104, False), ("eu", 900, True)]
    history += [("us", 7, False), ("eu", 98, False), ("eu", 1000, True), ("eu", 101, False)]
    for partition, rows, incident in history:
        run(partition, rows, incident)
    # An incident found after its run, marked then (an asset observation on this storage).
    dd.mark_incident(instance, "orders", run("eu", 5000).run_id, partition="eu")
    result = run("eu", 150)
    (found,) = [e for e in result.get_asset_check_evaluations() if e.check_name.endswith("count")]
    shown = {key: value.value for key, value in found.metadata.items()}
    trained = [100.0, 104.0, 98.0, 101.0]  # eu, incidents left out
    centre = statistics.median(trained)
    spread = 1.4826 * statistics.median(abs(t - centre) for t in trained)
    half = max(CHECK.sensitivity * spread, CHECK.min_relative_change * centre)
    assert shown[names.ANOMALY_LOWER] == pytest.approx(centre - half)
    assert shown[names.ANOMALY_UPPER] == pytest.approx(centre + half)
    assert shown[names.ANOMALY_TRAINING_POINTS] == 4
    assert shown[names.ANOMALY_EXCLUDED] == {"incident": 3}
    assert not found.passed

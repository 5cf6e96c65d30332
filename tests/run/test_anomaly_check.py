"""Checks that learn: each watched metric judged against the band its own past gives.

Every test materializes through `dg.materialize` on an instance of its own, so the history the
check reads is what earlier runs recorded; the band is compared with a plain computation over
the same points (the partition's own, the latest `training_window`, incidents left out).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely import errors
from dagster_dataframely._model import names
from tests.asset_support import QUIET, SmallOrders
from tests.parquet_io_manager import ParquetIOManager

WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR
REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])
ROW_CHECK = "dy_anomaly__row_count"
MEAN_CHECK = "dy_anomaly__amount__mean"


def orders(rows: int, amount: float = 1.0) -> pl.DataFrame:
    return pl.DataFrame({"order_id": [f"o{i}" for i in range(rows)], "amount": [amount] * rows})


class Runner:
    """Materializes one partitioned asset on its own instance, its frame set before each run."""

    def __init__(self, instance: dg.DagsterInstance, warehouse: Path, check: dd.AnomalyCheck):
        self.instance = instance
        self.io_manager = ParquetIOManager(base_dir=str(warehouse))
        self.frames: dict[str, pl.DataFrame] = {}

        @dd.asset(
            SmallOrders,
            name="orders",
            partitions_def=REGIONS,
            quality_policy=dd.QualityPolicy(anomaly=check),
        )
        def asset(context: dg.AssetExecutionContext) -> pl.DataFrame:
            return self.frames[context.partition_key]

        self.asset = asset

    def run(
        self, rows: pl.DataFrame, partition: str = "eu", *, incident: bool = False
    ) -> dg.ExecuteInProcessResult:
        self.frames[partition] = rows
        return dg.materialize(
            [self.asset],
            resources={"io_manager": self.io_manager},
            instance=self.instance,
            partition_key=partition,
            run_config=QUIET,
            tags={names.INCIDENT_TAG: "true"} if incident else None,
            raise_on_error=False,
        )


def evaluation(result: dg.ExecuteInProcessResult, check: str) -> dg.AssetCheckEvaluation:
    (found,) = [e for e in result.get_asset_check_evaluations() if e.check_name == check]
    return found


def figures(found: dg.AssetCheckEvaluation) -> dict[str, Any]:
    return {key: value.value for key, value in found.metadata.items()}


def test_the_check_passes_and_says_so_until_it_has_history(tmp_path: Path) -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        runner = Runner(instance, tmp_path, dd.AnomalyCheck(min_history=3, seasonality=None))
        for _ in range(3):
            found = evaluation(runner.run(orders(10)), ROW_CHECK)
            assert found.passed
            assert "not judged yet" in (found.description or "")


def test_a_spike_fails_at_warn_with_a_verdict_a_person_can_act_on(tmp_path: Path) -> None:
    check = dd.AnomalyCheck(metrics=["row_count", "amount/mean"], min_history=3, seasonality=None)
    with dg.DagsterInstance.ephemeral() as instance:
        runner = Runner(instance, tmp_path, check)
        for rows in (100, 104, 98, 101):
            assert evaluation(runner.run(orders(rows)), ROW_CHECK).passed
        result = runner.run(orders(300, amount=5.0))
        assert result.success  # WARN: the table is written
        found = evaluation(result, ROW_CHECK)
        assert not found.passed
        assert found.severity == WARN
        shown = figures(found)
        assert shown[names.ANOMALY_VALUE] == 300.0
        assert shown[names.ANOMALY_TRAINING_POINTS] == 4
        assert shown[names.ANOMALY_EXCLUDED] == {}
        assert shown[names.ANOMALY_LOWER] < 100 < shown[names.ANOMALY_UPPER] < 300
        assert "above the expected" in (found.description or "")
        mean = evaluation(result, MEAN_CHECK)
        assert not mean.passed
        assert figures(mean)[names.ANOMALY_VALUE] == 5.0


def test_a_numbers_zero_fraction_and_a_texts_mean_length_are_watched(tmp_path: Path) -> None:
    check = dd.AnomalyCheck(
        metrics=["amount/zero_fraction", "order_id/mean_length"], min_history=3, seasonality=None
    )
    with dg.DagsterInstance.ephemeral() as instance:
        runner = Runner(instance, tmp_path, check)
        for rows in (20, 21, 19):
            runner.run(orders(rows, amount=1.0))
        result = runner.run(orders(20, amount=0.0))  # every amount zero: a broken upstream
    zeros = evaluation(result, "dy_anomaly__amount__zero_fraction")
    assert not zeros.passed
    assert figures(zeros)[names.ANOMALY_VALUE] == 1.0
    assert figures(zeros)[names.ANOMALY_CENTRE] == 0.0
    length = evaluation(result, "dy_anomaly__order_id__mean_length")
    assert figures(length)[names.ANOMALY_VALUE] == pytest.approx(
        sum(len(f"o{i}") for i in range(20)) / 20
    )


def test_an_error_severity_fails_the_run_and_keeps_the_table(tmp_path: Path) -> None:
    check = dd.AnomalyCheck(min_history=3, seasonality=None, severity=ERROR, direction="drop")
    with dg.DagsterInstance.ephemeral() as instance:
        runner = Runner(instance, tmp_path, check)
        for rows in (100, 100, 100):
            runner.run(orders(rows))
        assert runner.run(orders(500)).success  # a spike: only drops are watched
        result = runner.run(orders(10))
        assert not result.success
        error = result.failure_data_for_node("orders")
        assert error is not None
        assert "MetricAnomalyError" in str(error.error)
        assert not evaluation(result, ROW_CHECK).passed


def plain_band(history: Sequence[float], check: dd.AnomalyCheck) -> tuple[float, float]:
    """The band written out plainly: median and scaled MAD of the latest points, a floor.

    The MAD is taken n/(n-1) wider (a point is nearer its own sample's median than a new one),
    and the spread widened for a centre learnt from n points: sqrt(1 + (pi/2)/n).
    """
    points = list(history)[-check.training_window :]
    n = len(points)
    centre = statistics.median(points)
    mad = statistics.median(math.sqrt(n / (n - 1)) * abs(p - centre) for p in points)
    spread = 1.4826 * mad * math.sqrt(1 + math.pi / 2 / n)
    half = max(check.sensitivity * spread, check.min_relative_change * abs(centre))
    return centre - half, centre + half


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    runs=st.lists(
        st.tuples(st.integers(1, 40), st.sampled_from(["eu", "us"]), st.booleans()),
        min_size=4,
        max_size=8,
    ),
    last=st.integers(1, 60),
)
def test_the_band_is_a_plain_computation_over_the_partitions_own_non_incident_points(
    tmp_path_factory: pytest.TempPathFactory,
    runs: list[tuple[int, str, bool]],
    last: int,
) -> None:
    # At most 8 runs: the check reads twice its training window, so every incident is skipped.
    check = dd.AnomalyCheck(min_history=2, training_window=4, seasonality=None)
    with dg.DagsterInstance.ephemeral() as instance:
        runner = Runner(instance, tmp_path_factory.mktemp("warehouse"), check)
        for rows, partition, incident in runs:
            runner.run(orders(rows), partition, incident=incident)
        result = runner.run(orders(last), "eu")
        found = evaluation(result, ROW_CHECK)
    # Independent: the eu runs' row counts, in order, incidents and the us runs left out.
    trained = [float(rows) for rows, p, incident in runs if p == "eu" and not incident]
    incidents = [rows for rows, p, incident in runs if p == "eu" and incident]
    shown = figures(found)
    if len(trained) < check.min_history:
        assert found.passed
        assert names.ANOMALY_LOWER not in shown
        return
    lower, upper = plain_band(trained, check)
    assert shown[names.ANOMALY_LOWER] == pytest.approx(lower)
    assert shown[names.ANOMALY_UPPER] == pytest.approx(upper)
    assert shown[names.ANOMALY_TRAINING_POINTS] == min(len(trained), check.training_window)
    assert shown[names.ANOMALY_SPREAD_POINTS] == shown[names.ANOMALY_TRAINING_POINTS]
    assert found.passed == (lower <= last <= upper)
    if incidents and len(trained) < check.training_window:
        assert shown[names.ANOMALY_EXCLUDED] == {"incident": len(incidents)}


def band_of(result: dg.ExecuteInProcessResult) -> tuple[float, float, int, Any]:
    shown = figures(evaluation(result, ROW_CHECK))
    return (
        shown[names.ANOMALY_LOWER],
        shown[names.ANOMALY_UPPER],
        shown[names.ANOMALY_TRAINING_POINTS],
        shown[names.ANOMALY_EXCLUDED],
    )


def test_a_spike_marked_an_incident_after_its_run_stops_inflating_later_bands(
    tmp_path: Path,
) -> None:
    # mean/std: one spike in the training set widens the band many times over.
    check = dd.AnomalyCheck(method="mean_std", min_history=3, seasonality=None)
    quiet = (100, 104, 98, 101)
    with dg.DagsterInstance.ephemeral() as instance:  # the band with no spike ever
        runner = Runner(instance, tmp_path / "clean", check)
        for rows in (*quiet, 100):
            runner.run(orders(rows))
        clean = band_of(runner.run(orders(100)))
    with dg.DagsterInstance.ephemeral() as instance:
        runner = Runner(instance, tmp_path / "spiked", check)
        for rows in quiet:
            runner.run(orders(rows))
        spike = runner.run(orders(1_000))
        inflated = band_of(runner.run(orders(100)))
        dd.mark_incident(instance, "orders", spike.run_id, partition="eu")
        marked = runner.run(orders(100))
        # A later mark of the whole run, clearing it: the latest decides, the spike trains again.
        dd.mark_incident(instance, dg.AssetKey("orders"), spike.run_id, incident=False)
        cleared = band_of(runner.run(orders(100)))
    assert inflated[3] == {}
    assert inflated[1] - inflated[0] > 10 * (clean[1] - clean[0])
    assert band_of(marked)[:3] == pytest.approx(clean[:3])
    assert band_of(marked)[3] == {"incident": 1}
    assert evaluation(marked, ROW_CHECK).passed
    assert cleared[3] == {}
    assert cleared[2] == 7  # four quiet runs, the spike, and the two runs of 100 after it


def test_marking_a_run_that_materialized_nothing_there_is_refused(tmp_path: Path) -> None:
    check = dd.AnomalyCheck(min_history=3, seasonality=None)
    with dg.DagsterInstance.ephemeral() as instance:
        runner = Runner(instance, tmp_path, check)
        run_id = runner.run(orders(10)).run_id
        with pytest.raises(errors.InvalidArgumentsError, match="no run 'nope'"):
            dd.mark_incident(instance, "orders", "nope")
        with pytest.raises(errors.InvalidArgumentsError, match="no partition 'us' of asset"):
            dd.mark_incident(instance, "orders", run_id, partition="us")
        with pytest.raises(errors.InvalidArgumentsError, match="no asset 'other'"):
            dd.mark_incident(instance, "other", run_id)
        assert not list(instance.fetch_observations(dg.AssetKey("orders"), limit=10).records)


def test_an_unknown_column_or_a_sensitive_columns_value_metric_is_refused() -> None:
    with pytest.raises(errors.InvalidArgumentsError, match="does not declare"):

        @dd.asset(SmallOrders, quality_policy=dd.QualityPolicy(anomaly=dd.AnomalyCheck(["x/mean"])))
        def first() -> pl.DataFrame:
            return orders(1)

    with pytest.raises(errors.InvalidArgumentsError, match="records no metric"):

        @dd.asset(
            SmallOrders,
            quality_policy=dd.QualityPolicy(anomaly=dd.AnomalyCheck(["amount/distinct_count"])),
        )
        def second() -> pl.DataFrame:
            return orders(1)


@pytest.mark.parametrize(
    ("arguments", "match"),
    [
        ({"metrics": "row_count"}, "metrics"),
        ({"min_history": 10, "training_window": 5}, "min_history"),
        ({"direction": "up"}, "direction"),
        ({"sensitivity": 0}, "sensitivity"),
        ({"severity": "ERROR"}, "severity"),
    ],
)
def test_bad_arguments_are_refused_clearly(arguments: dict[str, Any], match: str) -> None:
    with pytest.raises(errors.InvalidArgumentsError, match=match):
        dd.AnomalyCheck(**arguments)


def _book(rows: int) -> dict[str, pl.DataFrame]:
    orders = pl.DataFrame({"order_id": [f"o{i}" for i in range(rows)], "amount": [1.0] * rows})
    lines = pl.DataFrame(
        {"order_id": [f"o{i}" for i in range(rows)], "line_no": [1] * rows, "quantity": [2] * rows}
    )
    return {"orders": orders, "lines": lines}


@pytest.mark.parametrize("surface", ["multi_asset", "collection_asset"])
def test_a_multi_assets_output_and_a_collections_members_are_judged_each_on_its_own_past(
    tmp_path: Path, surface: str
) -> None:
    from tests.schemas import BookLines, BookOrders, OrderBook

    check = dd.AnomalyCheck(min_history=3, seasonality=None)
    policy = dd.QualityPolicy(anomaly=check)
    book = {"rows": 50}
    if surface == "multi_asset":

        @dd.multi_asset(
            outs={
                "orders": dd.AssetOut(BookOrders, quality_policy=policy),
                "lines": dd.AssetOut(BookLines),
            }
        )
        def asset() -> dict[str, pl.DataFrame]:
            return _book(book["rows"])

    else:

        @dd.collection_asset(OrderBook, quality_policy=policy)
        def asset() -> dict[str, pl.DataFrame]:
            return _book(book["rows"])

    resources = {"io_manager": ParquetIOManager(base_dir=str(tmp_path))}
    with dg.DagsterInstance.ephemeral() as instance:
        for rows in (50, 52, 49):
            book["rows"] = rows
            dg.materialize([asset], resources=resources, instance=instance, run_config=QUIET)
        book["rows"] = 5
        result = dg.materialize([asset], resources=resources, instance=instance, run_config=QUIET)
    judged = {
        e.asset_key.to_user_string(): e
        for e in result.get_asset_check_evaluations()
        if e.check_name == ROW_CHECK
    }
    expected = {"orders"} if surface == "multi_asset" else {"orders", "lines"}
    assert set(judged) == expected
    assert all(not e.passed for e in judged.values())
    assert figures(judged["orders"])[names.ANOMALY_TRAINING_POINTS] == 3


@pytest.mark.filterwarnings("ignore::dagster.PreviewWarning")
def test_one_run_of_a_range_judges_each_partition_on_its_own_past() -> None:
    import datetime as dt

    from tests.asset_support import range_tags

    from .test_partition_range import DAILY, DAYS, SINGLE_RUN, RangeStore, Sales

    sizes = dict.fromkeys(DAYS, 10)

    @dd.asset(
        Sales,
        name="orders",
        partitions_def=DAILY,
        backfill_policy=SINGLE_RUN,
        metadata={"partition_expr": "day"},
        quality_policy=dd.QualityPolicy(
            anomaly=dd.AnomalyCheck(["row_count", "amount/mean"], min_history=3)
        ),
    )
    def asset(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return pl.DataFrame(
            [
                {
                    "sale_id": f"s{i}",
                    "day": dt.date.fromisoformat(day),
                    "region": "us",
                    "amount": 1.0,
                }
                for day in context.partition_keys
                for i in range(sizes[day])
            ]
        )

    store = RangeStore()
    with dg.DagsterInstance.ephemeral() as instance:
        for _ in range(3):
            for day in DAYS:
                dg.materialize(
                    [asset],
                    resources={"io_manager": store},
                    instance=instance,
                    partition_key=day,
                    run_config=QUIET,
                )
        sizes[DAYS[1]] = 100
        result = dg.materialize(
            [asset],
            resources={"io_manager": store},
            instance=instance,
            tags=range_tags(DAYS[0], DAYS[-1]),
            run_config=QUIET,
            raise_on_error=False,
        )
    judged = {
        str(e.partition): e
        for e in result.get_asset_check_evaluations()
        if e.check_name == ROW_CHECK
    }
    assert {day: e.passed for day, e in judged.items()} == {
        DAYS[0]: True,
        DAYS[1]: False,
        DAYS[2]: True,
    }
    # Each partition's own three earlier runs, never another day's.
    assert all(figures(e)[names.ANOMALY_TRAINING_POINTS] == 3 for e in judged.values())
    assert figures(judged[DAYS[1]])[names.ANOMALY_VALUE] == 100.0


def test_the_check_s_defaults_are_the_band_s() -> None:
    """`dd.AnomalyCheck` (the model, below the run layer) and `AnomalySettings` (the band, which
    the benchmark tunes) each write the defaults; a tuning that changes one changes both."""
    from dataclasses import fields

    from dagster_dataframely._run.checks.anomaly_band import AnomalySettings

    check, band = dd.AnomalyCheck(), AnomalySettings()
    shared = {field.name for field in fields(AnomalySettings)}
    assert shared <= {field.name for field in fields(dd.AnomalyCheck)}
    assert {name: getattr(check, name) for name in shared} == {
        name: getattr(band, name) for name in shared
    }

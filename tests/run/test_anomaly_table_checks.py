"""`dd.AnomalyCheck` in `dd.table_checks`: a stored table judged against the check's own past.

Nothing materializes through the package here: a plain asset writes the table, and the checks
read it back. So the history is the check's own earlier evaluations (each records the watched
metric under the materialization's name), per partition, incidents left out.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely._model import names
from tests.asset_support import QUIET, SmallOrders
from tests.run.test_anomaly_check import figures, orders, plain_band

WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR
REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])
ROW_CHECK = "dy_anomaly__row_count"
MEAN_CHECK = "dy_anomaly__amount__mean"


class StoredRunner:
    """A plain partitioned asset writes the table; `dd.table_checks` judges it after each run."""

    def __init__(
        self,
        instance: dg.DagsterInstance,
        warehouse: Path,
        check: dd.AnomalyCheck,
        *,
        lazy: bool = True,
    ):
        self.instance = instance
        self.io_manager = dg.FilesystemIOManager(base_dir=str(warehouse))
        self.frames: dict[str, pl.DataFrame] = {}

        @dg.asset(name="orders", partitions_def=REGIONS)
        def asset(context: dg.AssetExecutionContext) -> pl.DataFrame:
            return self.frames[context.partition_key]

        self.asset = asset
        self.checks = dd.table_checks(
            SmallOrders,
            asset,
            severity=WARN,
            lazy=lazy,
            quality_policy=dd.QualityPolicy(anomaly=check),
        )

    def run(
        self, rows: pl.DataFrame, partition: str = "eu", *, incident: bool = False
    ) -> dg.ExecuteInProcessResult:
        self.frames[partition] = rows
        return dg.materialize(
            [self.asset, self.checks],
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


def test_a_stored_tables_spike_fails_against_the_checks_own_past_evaluations(
    tmp_path: Path,
) -> None:
    check = dd.AnomalyCheck(metrics=["row_count", "amount/mean"], min_history=3, seasonality=None)
    with dg.DagsterInstance.ephemeral() as instance:
        runner = StoredRunner(instance, tmp_path, check)
        for number, rows in enumerate((100, 104, 98, 101)):
            found = evaluation(runner.run(orders(rows)), ROW_CHECK)
            assert found.passed
            assert ("not judged yet" in (found.description or "")) == (number < 3)
            # Each evaluation records the metric, under the materialization's own name.
            assert figures(found)[names.ROW_COUNT] == rows
        result = runner.run(orders(300, amount=5.0))
    assert result.success
    found = evaluation(result, ROW_CHECK)
    assert not found.passed
    assert found.severity == WARN
    shown = figures(found)
    assert shown[names.ANOMALY_VALUE] == 300.0
    assert shown[names.ANOMALY_TRAINING_POINTS] == 4
    assert shown[names.ANOMALY_LOWER] < 100 < shown[names.ANOMALY_UPPER] < 300
    mean = evaluation(result, MEAN_CHECK)
    assert not mean.passed
    assert figures(mean)[names.ANOMALY_VALUE] == 5.0
    assert figures(mean)[names.metric_key("amount", "mean")] == 5.0


@pytest.mark.parametrize("lazy", [True, False])
def test_at_error_the_check_fails_and_the_table_checks_fail_no_run(
    tmp_path: Path, lazy: bool
) -> None:
    check = dd.AnomalyCheck(
        metrics=["amount/mean"], min_history=2, seasonality=None, severity=ERROR
    )
    with dg.DagsterInstance.ephemeral() as instance:
        runner = StoredRunner(instance, tmp_path, check, lazy=lazy)
        for _ in range(3):
            runner.run(orders(10, amount=1.0))
        result = runner.run(orders(10, amount=50.0))
    assert result.success  # a check of a stored table reports, and raises nothing
    found = evaluation(result, MEAN_CHECK)
    assert not found.passed
    assert found.severity == ERROR


def test_each_partition_is_judged_on_its_own_past(tmp_path: Path) -> None:
    check = dd.AnomalyCheck(min_history=2, seasonality=None)
    with dg.DagsterInstance.ephemeral() as instance:
        runner = StoredRunner(instance, tmp_path, check)
        for rows in (10, 11, 10):
            runner.run(orders(rows), "eu")
            runner.run(orders(rows * 100), "us")
        eu = evaluation(runner.run(orders(1_000), "eu"), ROW_CHECK)
        us = evaluation(runner.run(orders(1_000), "us"), ROW_CHECK)
    assert not eu.passed
    assert us.passed
    assert figures(eu)[names.ANOMALY_TRAINING_POINTS] == 3


def test_a_spike_marked_an_incident_after_its_check_run_stops_inflating_later_bands(
    tmp_path: Path,
) -> None:
    check = dd.AnomalyCheck(method="mean_std", min_history=3, seasonality=None)
    with dg.DagsterInstance.ephemeral() as instance:
        runner = StoredRunner(instance, tmp_path, check)
        for rows in (100, 104, 98, 101):
            runner.run(orders(rows))
        spike = runner.run(orders(1_000))
        inflated = figures(evaluation(runner.run(orders(100)), ROW_CHECK))
        dd.mark_incident(instance, "orders", spike.run_id, partition="eu")
        marked = figures(evaluation(runner.run(orders(100)), ROW_CHECK))
    assert inflated[names.ANOMALY_EXCLUDED] == {}
    assert marked[names.ANOMALY_EXCLUDED] == {"incident": 1}
    assert (
        marked[names.ANOMALY_UPPER] - marked[names.ANOMALY_LOWER]
        < (inflated[names.ANOMALY_UPPER] - inflated[names.ANOMALY_LOWER]) / 10
    )


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
def test_the_band_is_a_plain_median_mad_over_the_earlier_evaluations_of_the_partition(
    tmp_path_factory: pytest.TempPathFactory,
    runs: list[tuple[int, str, bool]],
    last: int,
) -> None:
    check = dd.AnomalyCheck(min_history=2, training_window=4, seasonality=None)
    with dg.DagsterInstance.ephemeral() as instance:
        runner = StoredRunner(instance, tmp_path_factory.mktemp("warehouse"), check)
        for rows, partition, incident in runs:
            runner.run(orders(rows), partition, incident=incident)
        found = evaluation(runner.run(orders(last), "eu"), ROW_CHECK)
    trained: Sequence[float] = [
        float(rows) for rows, p, incident in runs if p == "eu" and not incident
    ]
    shown: dict[str, Any] = figures(found)
    if len(trained) < check.min_history:
        assert found.passed
        assert names.ANOMALY_LOWER not in shown
        return
    lower, upper = plain_band(trained, check)
    assert shown[names.ANOMALY_LOWER] == pytest.approx(lower)
    assert shown[names.ANOMALY_UPPER] == pytest.approx(upper)
    assert shown[names.ANOMALY_TRAINING_POINTS] == min(len(trained), check.training_window)
    assert found.passed == (lower <= last <= upper)


def test_check_results_refuses_the_anomaly_check_it_cannot_give_a_history() -> None:
    with pytest.raises(dd.errors.ThresholdNotApplicableError, match="anomaly"):
        list(
            dd.wiring.check_results(
                SmallOrders,
                orders(3),
                asset_key="orders",
                severity=WARN,
                quality_policy=dd.QualityPolicy(anomaly=dd.AnomalyCheck()),
            )
        )


def test_a_collections_members_are_each_judged_on_their_own_past_evaluations(
    tmp_path: Path,
) -> None:
    from tests.run.test_anomaly_check import _book
    from tests.schemas import OrderBook

    book: dict[str, pl.DataFrame] = {}

    @dg.asset(name="book_orders")
    def book_orders() -> pl.DataFrame:
        return book["orders"]

    @dg.asset(name="book_lines")
    def book_lines() -> pl.DataFrame:
        return book["lines"]

    checks = dd.table_checks(
        OrderBook,
        {"orders": book_orders, "lines": book_lines},
        severity=WARN,
        quality_policy=dd.QualityPolicy(anomaly=dd.AnomalyCheck(min_history=3, seasonality=None)),
    )

    def run(rows: int, lines: int, instance: dg.DagsterInstance) -> dict[str, bool]:
        book.update(_book(rows))
        book["lines"] = book["lines"].head(lines)
        result = dg.materialize(
            [book_orders, book_lines, checks],
            resources={"io_manager": dg.FilesystemIOManager(base_dir=str(tmp_path))},
            instance=instance,
            run_config=QUIET,
        )
        return {
            e.asset_key.to_user_string(): e.passed
            for e in result.get_asset_check_evaluations()
            if e.check_name == ROW_CHECK
        }

    with dg.DagsterInstance.ephemeral() as instance:
        for rows in (20, 21, 19):
            run(rows, rows, instance)
        # The lines lost most of their rows, and with them the orders that have no line left.
        verdicts = run(20, 5, instance)
    assert verdicts == {"book_orders": False, "book_lines": False}
    with dg.DagsterInstance.ephemeral() as instance:
        for rows in (20, 21, 19):
            run(rows, rows, instance)
        assert run(20, 20, instance) == {"book_orders": True, "book_lines": True}

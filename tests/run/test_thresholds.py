"""Thresholds, severities and blocking: what a quality policy does to a run's checks and outcome.

One row of docs/quality-policy.md's table per test, each through a direct call and a
`dg.materialize` run: a rule's failures within `warn_above` pass its check, above it fail the
check at the rule's severity, above `fail_above` fail the run with `ThresholdExceededError`
while the quarantine still gets its rows and the table keeps its last good contents.
"""

# No `from __future__ import annotations`: Dataframely reads a Collection's annotations.
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely import errors
from tests.asset_support import (
    AssetContext,
    Materialize,
    SmallOrders,
    call_checks,
    call_tables,
    collect,
    run_checks,
    run_tables,
    step_error,
    value,
)

WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR
AMOUNT_MIN = "dy_rule__amount__min"


def frame(rows: int = 20, negative: int = 0, start: int = 0) -> pl.DataFrame:
    """`rows` orders, the last `negative` of them with an amount below 0 (`amount|min` fails)."""
    return pl.DataFrame(
        {
            "order_id": [f"o{start + i}" for i in range(rows)],
            "amount": [1.0 + i if i < rows - negative else -1.0 for i in range(rows)],
        }
    )


def orders_asset(
    policy: dd.QualityPolicy, frames: dict[str, pl.DataFrame], **arguments: Any
) -> dg.AssetsDefinition:
    """`orders`, returning `frames["now"]`, which a test replaces between runs."""

    @dd.asset(SmallOrders, name="orders", quality_policy=policy, **arguments)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames["now"]

    return orders


TOLERANT = dd.QualityPolicy(rules={"amount|min": dd.Threshold(warn_above=0.1, fail_above=0.25)})
"""`amount|min`: up to 10% of the rows pass its check, above 25% fail the run."""


def test_failures_within_warn_above_pass_the_check_and_are_still_quarantined(
    materialize: Materialize, warehouse: Path
) -> None:
    frames = {"now": frame(20, negative=2)}  # 10%: tolerated
    result = materialize([orders_asset(TOLERANT, frames, quarantine=True)])

    check = run_checks(result)[AMOUNT_MIN]
    assert check.passed
    assert value(check.metadata["dy_failed_count"]) == 2
    assert value(check.metadata["dy_failed_fraction"]) == pytest.approx(0.1)
    assert value(check.metadata["dy_threshold"]) == (
        "the check fails above 10% of the rows, the run above 25% of the rows"
    )
    # The threshold moves no row: the two invalid rows are in the quarantine all the same.
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").height == 2
    assert pl.read_parquet(warehouse / "orders.parquet").height == 18


@pytest.mark.parametrize("negative", [3, 5], ids=["15%", "25% (at the bound)"])
def test_failures_above_warn_above_fail_the_check_at_the_outcomes_severity(
    asset_context: AssetContext, quarantine_dir: Path, negative: int
) -> None:
    asset = orders_asset(TOLERANT, {"now": frame(20, negative=negative)}, quarantine=True)
    events = collect(asset(asset_context()))

    check = call_checks(events)[AMOUNT_MIN]
    assert not check.passed
    assert check.severity == WARN
    (table,) = call_tables(events)
    assert table.value.height == 20 - negative


def test_failures_above_fail_above_fail_the_run_and_keep_the_last_good_table(
    materialize: Materialize, warehouse: Path
) -> None:
    frames = {"now": frame(20)}
    orders = orders_asset(TOLERANT, frames, quarantine=True)
    materialize([orders])
    good = pl.read_parquet(warehouse / "orders.parquet")

    frames["now"] = frame(20, negative=6, start=100)  # 30%: above fail_above
    result = materialize([orders], raise_on_error=False)

    assert step_error(result) == "ThresholdExceededError"
    assert run_tables(result, "orders") == []
    assert pl.read_parquet(warehouse / "orders.parquet").equals(good)
    quarantine = pl.read_parquet(warehouse / "orders_quarantine.parquet")
    assert sorted(quarantine["order_id"]) == [f"o{i}" for i in range(114, 120)]
    checks = run_checks(result)
    assert not checks[AMOUNT_MIN].passed
    assert checks[AMOUNT_MIN].severity == ERROR
    # No materialization carries where the rows went, so the checks do.
    assert value(checks[AMOUNT_MIN].metadata["dataframely/quarantine_address"])


def test_the_error_names_the_rule_the_count_the_fraction_and_the_bound(
    asset_context: AssetContext, quarantine_dir: Path
) -> None:
    asset = orders_asset(TOLERANT, {"now": frame(20, negative=6)}, quarantine=True)
    with pytest.raises(errors.ThresholdExceededError) as raised:
        list(asset(asset_context()))
    error = raised.value
    assert isinstance(error, errors.ValidationFailedError)
    assert (error.rule, error.failed_count, error.row_count, error.bound) == (
        "amount|min",
        6,
        20,
        0.25,
    )
    assert error.fraction == pytest.approx(0.3)
    assert "'amount|min'" in str(error)
    assert "6 of 20 rows (30%)" in str(error)
    assert "25% of the rows" in str(error)
    assert error.address is not None
    assert pl.read_parquet(error.address).height == 6


@pytest.mark.parametrize(
    ("threshold", "negative", "outcome"),
    [
        (dd.Threshold(warn_above=2), 2, "passes"),
        (dd.Threshold(warn_above=2), 3, "warns"),
        (dd.Threshold(fail_above=2), 2, "warns"),
        (dd.Threshold(fail_above=2), 3, "fails the run"),
        (dd.Threshold(warn_above=0.1), 2, "passes"),
        (dd.Threshold(fail_above=0.1), 3, "fails the run"),
        (dd.Threshold(warn_above=0, fail_above=0), 1, "fails the run"),
    ],
    ids=lambda item: repr(item) if not isinstance(item, dd.Threshold) else item.describe(),
)
def test_a_count_bound_counts_rows_and_a_fraction_bound_shares_of_rows(
    asset_context: AssetContext,
    quarantine_dir: Path,
    threshold: dd.Threshold,
    negative: int,
    outcome: str,
) -> None:
    policy = dd.QualityPolicy(threshold=threshold)
    asset = orders_asset(policy, {"now": frame(20, negative=negative)}, quarantine=True)
    if outcome == "fails the run":
        events = collect(asset(asset_context()), errors.ThresholdExceededError)
    else:
        events = collect(asset(asset_context()))
    check = call_checks(events)[AMOUNT_MIN]
    assert check.passed is (outcome == "passes")
    assert bool(call_tables(events)) is (outcome != "fails the run")


def test_a_warning_rule_above_its_bound_fails_at_error_and_writes_no_table(
    materialize: Materialize, warehouse: Path
) -> None:
    policy = dd.QualityPolicy(rules={"amount|min": dd.Threshold(warn_above=1, fail_above=3)})
    frames = {"now": frame(20, negative=2)}
    # No quarantine: a warning rule's rows stay in the table, so its threshold applies.
    orders = orders_asset(policy, frames, warning_rules=["amount|min"])

    within = materialize([orders])
    check = run_checks(within)[AMOUNT_MIN]
    assert (check.passed, check.severity) == (False, WARN)
    assert pl.read_parquet(warehouse / "orders.parquet").height == 20

    frames["now"] = frame(10, negative=4, start=50)
    above = materialize([orders], raise_on_error=False)
    assert step_error(above) == "ThresholdExceededError"
    check = run_checks(above)[AMOUNT_MIN]
    assert (check.passed, check.severity) == (False, ERROR)
    assert pl.read_parquet(warehouse / "orders.parquet").height == 20  # the last good table
    assert not (warehouse / "orders_quarantine.parquet").exists()


def test_a_chosen_severity_sets_a_failing_checks_severity(
    asset_context: AssetContext, quarantine_dir: Path
) -> None:
    # ERROR for a quarantined rule: the table is still written.
    loud = dd.QualityPolicy(severity={"amount|min": ERROR})
    events = collect(orders_asset(loud, {"now": frame(5, 1)}, quarantine=True)(asset_context()))
    assert call_checks(events)[AMOUNT_MIN].severity == ERROR
    assert call_tables(events)[0].value.height == 4

    # WARN for a rule whose rows abort the run: the run still fails, as the failure policy says.
    quiet = dd.QualityPolicy(severity=WARN)
    asset = orders_asset(quiet, {"now": frame(5, 1)})
    events = collect(asset(asset_context()), errors.ValidationAbortError)
    assert call_checks(events)[AMOUNT_MIN].severity == WARN


def test_a_rule_above_fail_above_is_error_whatever_severity_was_chosen(
    asset_context: AssetContext, quarantine_dir: Path
) -> None:
    policy = dd.QualityPolicy(threshold=dd.Threshold(fail_above=0), severity=WARN)
    asset = orders_asset(policy, {"now": frame(5, 1)}, quarantine=True)
    events = collect(asset(asset_context()), errors.ThresholdExceededError)
    assert call_checks(events)[AMOUNT_MIN].severity == ERROR


def test_blocking_rules_declare_blocking_checks(asset_context: AssetContext) -> None:
    some = orders_asset(dd.QualityPolicy(blocking=["amount|min"]), {"now": frame(1)})
    blocking = {spec.name: spec.blocking for spec in some.check_specs}
    assert blocking[AMOUNT_MIN]
    assert blocking["dy_schema__columns"]  # blocking always, as the spec says
    assert not blocking["dy_rule__primary_key"]

    every = orders_asset(
        dd.QualityPolicy(blocking=True, volume=dd.VolumeCheck(min_rows=1)),
        {"now": frame(1)},
        check_granularity="column",
    )
    assert all(spec.blocking for spec in every.check_specs)
    # A collapsed check blocks when one of its rules does.
    collapsed = orders_asset(
        dd.QualityPolicy(blocking="amount|min"), {"now": frame(1)}, check_granularity="column"
    )
    assert {spec.name: spec.blocking for spec in collapsed.check_specs}["dy_col__amount"]


def test_a_blocking_check_failing_at_error_fails_the_step_after_the_write(
    materialize: Materialize, warehouse: Path
) -> None:
    """Dagster's own rule for a blocking check at `ERROR`: the table is written, the step fails."""
    policy = dd.QualityPolicy(blocking=["amount|min"], severity={"amount|min": ERROR})
    result = materialize(
        [orders_asset(policy, {"now": frame(5, 1)}, quarantine=True)], raise_on_error=False
    )
    assert not result.success
    assert "blocking asset check" in str(result.failure_data_for_node("orders"))
    assert pl.read_parquet(warehouse / "orders.parquet").height == 4


def test_a_collapsed_check_lists_each_rules_threshold_and_passes_when_all_are_tolerated(
    asset_context: AssetContext, quarantine_dir: Path
) -> None:
    policy = dd.QualityPolicy(threshold=dd.Threshold(warn_above=1))
    asset = orders_asset(policy, {"now": frame(5, 1)}, quarantine=True, check_granularity="column")
    check = call_checks(collect(asset(asset_context())))["dy_col__amount"]
    assert check.passed
    rows = [record.data for record in value(check.metadata["dy_thresholds"]).records]
    assert {row["rule"]: row["failed_count"] for row in rows} == {
        "amount|nullability": 0,
        "amount|min": 1,
        "amount|inf": 0,
        "amount|nan": 0,
    }
    assert {row["failed_fraction"] for row in rows} == {0.0, 0.2}
    assert any(
        spec.description.endswith("the check fails above 1 row.") for spec in asset.check_specs
    )


def test_the_check_descriptions_show_the_thresholds_before_any_run() -> None:
    asset = orders_asset(TOLERANT, {"now": frame(1)}, quarantine=True)
    descriptions = {spec.name: spec.description for spec in asset.check_specs}
    assert descriptions[AMOUNT_MIN] == (
        "amount >= 0.0. Threshold: the check fails above 10% of the rows, the run above 25% of "
        "the rows."
    )
    assert descriptions["dy_rule__primary_key"] == "primary key (order_id)"


# --- metrics for alerts -------------------------------------------------------------------------


def test_every_materialization_has_the_invalid_and_warning_fractions(
    materialize: Materialize,
) -> None:
    @dd.asset(SmallOrders, quarantine=True, warning_rules=["amount|nullability"])
    def orders() -> pl.DataFrame:
        return pl.DataFrame({"order_id": ["a", "b", "c", "d"], "amount": [1.0, -1.0, None, 2.0]})

    (table,) = run_tables(materialize([orders]), "orders")
    assert isinstance(table.metadata["dataframely/invalid_fraction"], dg.FloatMetadataValue)
    assert value(table.metadata["dataframely/invalid_fraction"]) == 0.25
    assert value(table.metadata["dataframely/warning_fraction"]) == 0.25
    assert "dagster/partition_row_count" not in table.metadata


DAYS = dg.StaticPartitionsDefinition(["eu", "us"])


def test_a_partitions_materialization_has_dagsters_partition_row_count(
    materialize: Materialize, asset_context: AssetContext, quarantine_dir: Path
) -> None:
    @dd.asset(SmallOrders, quarantine=True, partitions_def=DAYS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frame(4, negative=1) if context.partition_key == "eu" else frame(2)

    for key, written in (("eu", 3), ("us", 2)):
        (table,) = run_tables(materialize([orders], partition_key=key), "orders")
        assert value(table.metadata["dagster/partition_row_count"]) == written
        assert value(table.metadata["dagster/row_count"]) == written
    (called,) = call_tables(orders(asset_context(partition_key="eu")))
    assert called.metadata is not None
    assert called.metadata["dagster/partition_row_count"] == 3
    assert called.metadata["dataframely/invalid_fraction"] == 0.25


def test_each_partition_is_judged_on_its_own_rows(materialize: Materialize) -> None:
    @dd.asset(
        SmallOrders,
        quarantine=True,
        partitions_def=DAYS,
        quality_policy=dd.QualityPolicy(threshold=dd.Threshold(fail_above=0.3)),
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frame(10, negative=4) if context.partition_key == "eu" else frame(10, negative=2)

    failed = materialize([orders], partition_key="eu", raise_on_error=False)
    assert step_error(failed) == "ThresholdExceededError"
    assert value(run_checks(failed)[AMOUNT_MIN].metadata["dy_partition"]) == "eu"
    passed = materialize([orders], partition_key="us")
    assert run_tables(passed, "orders")[0].partition == "us"


# --- the other entry points ---------------------------------------------------------------------


class Lines(dy.Schema):
    order_id = dy.String(primary_key=True)
    qty = dy.Int64(min=1)


def test_one_output_above_its_bound_fails_a_multi_asset_and_writes_no_table(
    materialize: Materialize, warehouse: Path
) -> None:
    strict = dd.QualityPolicy(threshold=dd.Threshold(fail_above=0))

    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(SmallOrders, quarantine=True),
            "lines": dd.AssetOut(Lines, quarantine=True, quality_policy=strict),
        }
    )
    def book() -> dict[str, pl.DataFrame]:
        return {
            "orders": frame(4, negative=1),
            "lines": pl.DataFrame({"order_id": ["a", "b"], "qty": [1, 0]}),
        }

    result = materialize([book], raise_on_error=False)
    assert step_error(result, "book") == "ThresholdExceededError"
    assert result.get_asset_materialization_events() == []
    assert not (warehouse / "orders.parquet").exists()
    assert not (warehouse / "lines.parquet").exists()
    # Every output's checks report, and every quarantine with rows is written.
    checks = {
        (c.asset_key.to_user_string(), c.check_name): c
        for c in result.get_asset_check_evaluations()
    }
    assert checks["lines", "dy_rule__qty__min"].severity == ERROR
    assert not checks["orders", AMOUNT_MIN].passed
    assert pl.read_parquet(warehouse / "lines_quarantine.parquet").height == 1
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").height == 1


class Book(dy.Collection):
    orders: dy.LazyFrame[SmallOrders]
    lines: dy.LazyFrame[Lines]

    @dy.filter()
    def line_has_order(self) -> pl.LazyFrame:
        return self.lines.join(self.orders, on="order_id", how="semi")


@pytest.mark.parametrize(("bound", "fails"), [(0.5, False), (0.2, True)])
def test_a_collection_filter_has_a_threshold_of_its_own(
    materialize: Materialize, warehouse: Path, bound: float, fails: bool
) -> None:
    policy = dd.QualityPolicy(rules={"line_has_order": dd.Threshold(fail_above=bound)})

    @dd.collection_asset(Book, quarantine=True, quality_policy=policy)
    def book() -> dict[str, pl.DataFrame]:
        # The filter removes a third of the lines: their orders are unknown.
        return {
            "orders": pl.DataFrame({"order_id": ["a", "b"], "amount": [1.0, 2.0]}),
            "lines": pl.DataFrame({"order_id": ["a", "b", "z"], "qty": [1, 1, 1]}),
        }

    result = materialize([book], raise_on_error=False)
    assert result.success is not fails
    check = {
        (c.asset_key.to_user_string(), c.check_name): c
        for c in result.get_asset_check_evaluations()
    }["lines", "dy_filter__line_has_order"]
    assert value(check.metadata["dy_failed_fraction"]) == pytest.approx(1 / 3)
    assert check.severity == (ERROR if fails else WARN)
    assert (warehouse / "lines.parquet").exists() is not fails
    assert pl.read_parquet(warehouse / "lines_quarantine.parquet").height == 1


def test_table_checks_judge_a_stored_table_by_the_thresholds_and_raise_nothing(
    materialize: Materialize,
) -> None:
    @dg.asset
    def orders() -> pl.DataFrame:
        return frame(10, negative=3)

    checks = dd.table_checks(
        SmallOrders,
        orders,
        severity=WARN,
        quality_policy=dd.QualityPolicy(
            threshold=dd.Threshold(warn_above=0.5),
            rules={"amount|min": dd.Threshold(fail_above=0.2)},
            blocking=["amount|min"],
        ),
    )
    assert {spec.name: spec.blocking for spec in checks.check_specs}[AMOUNT_MIN]
    result = materialize([orders, checks], raise_on_error=False)
    evaluation = run_checks(result)[AMOUNT_MIN]
    assert (evaluation.passed, evaluation.severity) == (False, ERROR)
    assert value(evaluation.metadata["dy_failed_fraction"]) == pytest.approx(0.3)
    # A blocking check at ERROR fails the check step, as Dagster does for any blocking check.
    assert "blocking asset check" in str(result.failure_data_for_node("orders__dataframely_checks"))


@pytest.mark.parametrize("granularity", ["rule", "column"])
def test_a_stored_tables_checks_say_a_bound_fails_the_check_at_error_never_the_run(
    materialize: Materialize, granularity: str
) -> None:
    """Table checks never fail a run: their texts say what a bound does, the check at ERROR."""

    @dg.asset
    def orders() -> pl.DataFrame:
        return frame(10, negative=3)

    policy = dd.QualityPolicy(
        threshold=dd.Threshold(warn_above=1, fail_above=0.2),
        rules={"amount|min": dd.Threshold(fail_above=0)},
    )
    checks = dd.table_checks(
        SmallOrders, orders, severity=WARN, quality_policy=policy, check_granularity=granularity
    )
    descriptions = {spec.name: spec.description for spec in checks.check_specs}
    stated = {
        r.check_name: r
        for r in dd.wiring.check_results(
            SmallOrders,
            frame(10, negative=3),
            asset_key=orders.key,
            severity=WARN,
            quality_policy=policy,
            check_granularity=granularity,
        )
    }
    evaluations = run_checks(materialize([orders, checks], raise_on_error=False))

    if granularity == "rule":
        assert descriptions[AMOUNT_MIN] == (
            "amount >= 0.0. Threshold: the check fails at ERROR on any failing row."
        )
        assert descriptions["dy_rule__primary_key"] == (
            "primary key (order_id). Threshold: the check fails above 1 row, at ERROR above 20% "
            "of the rows."
        )
        for results in (stated, evaluations):
            assert value(results[AMOUNT_MIN].metadata["dy_threshold"]) == (
                "the check fails at ERROR on any failing row"
            )
            assert results[AMOUNT_MIN].severity == ERROR
        return
    assert descriptions["dy_col__amount"].endswith(
        "Thresholds: amount|nullability the check fails above 1 row, at ERROR above 20% of the "
        "rows; amount|min the check fails at ERROR on any failing row; amount|inf the check "
        "fails above 1 row, at ERROR above 20% of the rows; amount|nan the check fails above 1 "
        "row, at ERROR above 20% of the rows."
    )
    for results in (stated, evaluations):
        rows = value(results["dy_col__amount"].metadata["dy_thresholds"]).records
        assert {row.data["rule"]: row.data["threshold"] for row in rows}["amount|min"] == (
            "the check fails at ERROR on any failing row"
        )


def test_the_wiring_functions_take_the_same_policy(quarantine_dir: Path) -> None:
    key = dg.AssetKey("orders")
    policy = dd.QualityPolicy(
        rules={"amount|min": dd.Threshold(warn_above=0.1, fail_above=0.3)}, blocking=True
    )
    specs = dd.wiring.check_specs(SmallOrders, asset=key, quality_policy=policy)
    assert all(spec.blocking for spec in specs)

    tolerated = {
        r.check_name: r
        for r in dd.wiring.check_results(
            SmallOrders, frame(10, 1), asset_key=key, severity=WARN, quality_policy=policy
        )
    }
    assert tolerated[AMOUNT_MIN].passed

    written: list[pl.DataFrame] = []

    def writer(rows: pl.DataFrame) -> str:
        written.append(rows)
        return "memory://orders_quarantine"

    events = dd.wiring.validation_results(
        SmallOrders,
        frame(10, 4),
        valid_key=key,
        quarantine_writer=writer,
        quality_policy=policy,
    )
    seen = collect(events, errors.ThresholdExceededError)
    assert call_tables(seen) == []
    assert [c.name for c in specs] == list(call_checks(seen))
    assert written[0].height == 4

    with pytest.raises(errors.ThresholdNotApplicableError):
        dd.wiring.validation_results(SmallOrders, frame(1), valid_key=key, quality_policy=policy)


def test_call_asset_records_the_threshold_error_and_the_quarantine() -> None:
    asset = orders_asset(TOLERANT, {"now": frame(10, 5)}, quarantine=True)
    call = dd.testing.call_asset(asset)
    assert isinstance(call.error, errors.ThresholdExceededError)
    assert call.table is None
    assert call.quarantine is not None
    assert call.quarantine.height == 5
    assert call.failed_checks == [AMOUNT_MIN]

"""The quality policy's declaration: every bound and name is checked where it is written.

A threshold meant as 5% but written `5`, a warn bound above the fail bound, a misspelt rule name
or a tolerance the run could never give would all pass or fail runs for a reason nobody chose,
so each is refused with an error naming it, before any run.
"""

import math
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely import errors
from tests.schemas import Orders


@pytest.mark.parametrize(
    ("arguments", "parameter"),
    [
        ({"warn_above": 1.5}, "warn_above"),
        ({"warn_above": -0.1}, "warn_above"),
        ({"fail_above": math.nan}, "fail_above"),
        ({"warn_above": -1}, "warn_above"),
        ({"fail_above": True}, "fail_above"),
        ({"warn_above": "5%"}, "warn_above"),
        ({"warn_above": 10, "fail_above": 5}, "warn_above"),
        ({"warn_above": 0.2, "fail_above": 0.1}, "warn_above"),
    ],
    ids=[
        "fraction-above-1",
        "negative-fraction",
        "nan",
        "negative-count",
        "bool",
        "text",
        "warn-count-above-fail-count",
        "warn-fraction-above-fail-fraction",
    ],
)
def test_a_bound_it_cannot_use_is_refused_naming_it(
    arguments: dict[str, Any], parameter: str
) -> None:
    with pytest.raises(errors.InvalidThresholdError) as raised:
        dd.Threshold(**arguments)
    assert raised.value.parameter == parameter
    assert f"`{parameter}=" in str(raised.value)


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"warn_above": 0.0, "fail_above": 1.0},
        {"warn_above": 5, "fail_above": 5},
        # A count and a fraction compare only once the rows are known: both are accepted.
        {"warn_above": 100, "fail_above": 0.01},
    ],
)
def test_usable_bounds_are_kept_as_given(arguments: dict[str, Any]) -> None:
    threshold = dd.Threshold(**arguments)
    for name, given in arguments.items():
        assert getattr(threshold, name) == given


def test_a_threshold_describes_itself_in_rows_or_percent() -> None:
    assert dd.Threshold(warn_above=1, fail_above=0.05).describe() == (
        "the check fails above 1 row, the run above 5% of the rows"
    )
    assert dd.Threshold(warn_above=0.001).describe() == "the check fails above 0.1% of the rows"
    assert dd.Threshold(fail_above=0.05).describe() == (
        "the check fails on any failing row, the run above 5% of the rows"
    )
    assert dd.Threshold(fail_above=0).describe() == "the run fails on any failing row"


@pytest.mark.parametrize(
    ("arguments", "parameter"),
    [
        ({}, "VolumeCheck"),
        ({"min_rows": -1}, "min_rows"),
        ({"min_rows": 1.5}, "min_rows"),
        ({"min_rows": 10, "max_rows": 5}, "min_rows"),
        ({"max_drop": 1.5}, "max_drop"),
        ({"max_growth": -0.5}, "max_growth"),
        ({"max_drop": 0.5, "window": 0}, "window"),
        ({"max_drop": 0.5, "compare_with": "run"}, "compare_with"),
        ({"max_drop": 0.5, "severity": "ERROR"}, "severity"),
    ],
)
def test_a_volume_check_it_cannot_use_is_refused(arguments: dict[str, Any], parameter: str) -> None:
    with pytest.raises(errors.InvalidThresholdError) as raised:
        dd.VolumeCheck(**arguments)
    assert raised.value.parameter == parameter


@pytest.mark.parametrize(
    ("arguments", "parameter"),
    [
        ({"threshold": 0.05}, "threshold"),
        ({"rules": {"amount|min": 0.05}}, "rules"),
        ({"severity": "ERROR"}, "severity"),
        ({"severity": {"amount|min": "WARN"}}, "severity"),
        ({"volume": 10}, "volume"),
    ],
)
def test_a_policy_value_of_the_wrong_kind_is_refused(
    arguments: dict[str, Any], parameter: str
) -> None:
    with pytest.raises(errors.InvalidArgumentsError, match=f"`{parameter}=`"):
        dd.QualityPolicy(**arguments)


def test_undeclared_columns_takes_report_or_check() -> None:
    with pytest.raises(errors.InvalidThresholdError, match="'report' or 'check'"):
        dd.QualityPolicy(undeclared_columns="watch")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "policy",
    [
        dd.QualityPolicy(rules={"amount|mni": dd.Threshold()}),
        dd.QualityPolicy(severity={"amount|mni": dg.AssetCheckSeverity.ERROR}),
        dd.QualityPolicy(blocking=["amount|mni"]),
        dd.QualityPolicy(blocking="amount|mni"),
    ],
    ids=["rules", "severity", "blocking", "blocking-one-string"],
)
def test_an_unknown_rule_name_fails_the_declaration_listing_the_rules(
    policy: dd.QualityPolicy,
) -> None:
    with pytest.raises(errors.UnknownPolicyRuleError) as raised:

        @dd.asset(Orders, quarantine=True, quality_policy=policy)
        def orders() -> pl.DataFrame:
            return pl.DataFrame()

    assert raised.value.rules == ["amount|mni"]
    assert "amount|min" in raised.value.valid_rules
    assert "'amount|min'" in str(raised.value)


def test_a_threshold_without_a_quarantine_is_refused_for_every_rule() -> None:
    with pytest.raises(errors.ThresholdNotApplicableError, match="quarantine=True"):

        @dd.asset(Orders, quality_policy=dd.QualityPolicy(threshold=dd.Threshold(fail_above=0.1)))
        def orders() -> pl.DataFrame:
            return pl.DataFrame()


def test_a_rule_threshold_without_a_quarantine_is_refused_unless_the_rule_only_warns() -> None:
    policy = dd.QualityPolicy(rules={"amount|min": dd.Threshold(fail_above=1)})
    with pytest.raises(errors.ThresholdNotApplicableError, match=r"amount\|min"):

        @dd.asset(Orders, quality_policy=policy)
        def blocking() -> pl.DataFrame:
            return pl.DataFrame()

    @dd.asset(Orders, warning_rules=["amount|min"], quality_policy=policy)
    def warning() -> pl.DataFrame:
        return pl.DataFrame()

    assert warning.key == dg.AssetKey("warning")


def test_reading_checks_refuse_what_needs_a_write() -> None:
    with pytest.raises(errors.ThresholdNotApplicableError, match="volume"):
        dd.table_checks(
            Orders,
            "orders",
            severity=dg.AssetCheckSeverity.WARN,
            quality_policy=dd.QualityPolicy(volume=dd.VolumeCheck(min_rows=1)),
        )


def test_a_reading_check_takes_a_threshold_without_any_quarantine() -> None:
    checks = dd.table_checks(
        Orders,
        "orders",
        severity=dg.AssetCheckSeverity.WARN,
        quality_policy=dd.QualityPolicy(threshold=dd.Threshold(fail_above=0.5)),
    )
    assert {spec.name for spec in checks.check_specs} >= {"dy_rule__amount__min"}


class Lines(dy.Schema):
    order_id = dy.String(primary_key=True)
    qty = dy.Int64(min=1)


class Book(dy.Collection):
    orders: dy.LazyFrame[Orders]
    lines: dy.LazyFrame[Lines]

    @dy.filter()
    def line_has_order(self) -> pl.LazyFrame:
        return self.lines.join(self.orders, on="order_id", how="semi")


def test_a_collection_policy_names_any_members_rule_or_a_filter() -> None:
    policy = dd.QualityPolicy(
        rules={"qty|min": dd.Threshold(), "amount|min": dd.Threshold()},
        blocking=["line_has_order"],
    )

    @dd.collection_asset(Book, quarantine=True, quality_policy=policy)
    def book() -> dict[str, pl.DataFrame]:
        return {}

    blocking = {(s.asset_key.to_user_string(), s.name) for s in book.check_specs if s.blocking}
    assert ("lines", "dy_filter__line_has_order") in blocking
    assert ("orders", "dy_filter__line_has_order") in blocking

    with pytest.raises(errors.UnknownPolicyRuleError, match=r"'qty\|mni'"):
        dd.collection_asset(
            Book,
            quarantine=True,
            quality_policy=dd.QualityPolicy(rules={"qty|mni": dd.Threshold()}),
        )

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


def test_a_threshold_of_checks_that_fail_no_run_says_the_check_fails_at_error() -> None:
    assert dd.Threshold(warn_above=1, fail_above=0.05).describe(fails_run=False) == (
        "the check fails above 1 row, at ERROR above 5% of the rows"
    )
    assert dd.Threshold(warn_above=0.001).describe(fails_run=False) == (
        "the check fails above 0.1% of the rows"
    )
    assert dd.Threshold(fail_above=0.05).describe(fails_run=False) == (
        "the check fails on any failing row, at ERROR above 5% of the rows"
    )
    assert dd.Threshold(fail_above=0).describe(fails_run=False) == (
        "the check fails at ERROR on any failing row"
    )


@pytest.mark.parametrize(
    ("arguments", "parameter"),
    [
        ({}, "VolumeCheck"),
        ({"min_rows": -1}, "min_rows"),
        ({"min_rows": 1.5}, "min_rows"),
        ({"min_rows": 10, "max_rows": 5}, "min_rows"),
        ({"max_drop": 1.5}, "max_drop"),
        ({"max_growth": -0.5}, "max_growth"),
        ({"min_rows": True}, "min_rows"),
        ({"max_rows": "100"}, "max_rows"),
        ({"max_drop": True}, "max_drop"),
        ({"max_drop": "50%"}, "max_drop"),
        ({"max_growth": math.inf}, "max_growth"),
    ],
)
def test_a_volume_check_it_cannot_use_is_refused(arguments: dict[str, Any], parameter: str) -> None:
    with pytest.raises(errors.InvalidThresholdError) as raised:
        dd.VolumeCheck(**arguments)
    assert raised.value.parameter == parameter


@pytest.mark.parametrize(("parameter", "given"), [("max_drop", 1), ("max_growth", 50)])
def test_a_volume_fraction_given_an_int_is_refused_with_both_readings(
    parameter: str, given: int
) -> None:
    # An int is a row count everywhere else in a policy: `max_growth=50` meant as 50% would
    # otherwise pass every run short of a fifty-fold growth.
    with pytest.raises(errors.InvalidThresholdError) as raised:
        dd.VolumeCheck(**{parameter: given})
    assert raised.value.parameter == parameter
    assert "not an int" in str(raised.value)
    assert f"{float(given)!r} for {given * 100}%" in str(raised.value)
    assert f"{given / 100!r} for {given}%" in str(raised.value)


@pytest.mark.parametrize(
    ("arguments", "parameter", "given"),
    [
        ({"window": 0}, "window", "not 0 (an int)"),
        ({"window": True}, "window", "not True (a bool)"),
        ({"window": 2.0}, "window", "not 2.0 (a float)"),
        ({"compare_with": "run"}, "compare_with", "not 'run' (a str)"),
        ({"compare_with": None}, "compare_with", "not None"),
        ({"severity": "ERROR"}, "severity", "not 'ERROR' (a str)"),
    ],
)
def test_a_volume_setting_of_the_wrong_kind_names_what_it_takes(
    arguments: dict[str, Any], parameter: str, given: str
) -> None:
    with pytest.raises(errors.InvalidArgumentsError) as raised:
        dd.VolumeCheck(max_drop=0.5, **arguments)
    assert raised.value.function == "VolumeCheck"
    assert raised.value.problem.startswith(f"`{parameter}=` takes ")
    assert raised.value.problem.endswith(given)
    assert raised.value.fix.startswith("Pass ")


@pytest.mark.parametrize(
    ("arguments", "parameter", "given"),
    [
        ({"threshold": 0.05}, "threshold", "not 0.05 (a float)"),
        ({"threshold": dd.VolumeCheck(min_rows=1)}, "threshold", "not a VolumeCheck"),
        ({"rules": {"amount|min": 0.05}}, "rules", "not 0.05 (a float)"),
        ({"rules": [("amount|min", dd.Threshold())]}, "rules", "not a list"),
        ({"rules": {1: dd.Threshold()}}, "rules", "not 1 (an int)"),
        ({"severity": "ERROR"}, "severity", "not 'ERROR' (a str)"),
        ({"severity": {"amount|min": "WARN"}}, "severity", "not 'WARN' (a str)"),
        ({"severity": {1: dg.AssetCheckSeverity.WARN}}, "severity", "not 1 (an int)"),
        ({"volume": 10}, "volume", "not 10 (an int)"),
        ({"volume": dd.Threshold()}, "volume", "not a Threshold"),
        ({"blocking": None}, "blocking", "not None"),
        ({"blocking": 1}, "blocking", "not 1 (an int)"),
        ({"blocking": 0}, "blocking", "not 0 (an int)"),
        ({"blocking": [1]}, "blocking", "not 1 (an int)"),
        # A mapping would block every rule it names, even those mapped to False.
        ({"blocking": {"amount|min": True, "primary_key": False}}, "blocking", "not a dict"),
        ({"undeclared_columns": "watch"}, "undeclared_columns", "not 'watch' (a str)"),
        ({"undeclared_columns": True}, "undeclared_columns", "not True (a bool)"),
    ],
)
def test_a_policy_value_of_the_wrong_kind_is_refused(
    arguments: dict[str, Any], parameter: str, given: str
) -> None:
    with pytest.raises(errors.InvalidArgumentsError) as raised:
        dd.QualityPolicy(**arguments)
    assert raised.value.function == "QualityPolicy"
    assert raised.value.problem.startswith(f"`{parameter}=` takes ")
    assert raised.value.problem.endswith(given)
    assert raised.value.fix.startswith(("Pass ", "Wrap ", "Name ", "Map "))


def test_a_policy_value_of_the_wrong_kind_names_the_type_and_the_fix() -> None:
    with pytest.raises(errors.InvalidArgumentsError) as raised:
        dd.QualityPolicy(blocking=None)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "QualityPolicy: `blocking=` takes True, False, or the names of the rules whose checks "
        "block, not None. Pass True for every check, False for none, or a list such as "
        "['amount|min']."
    )
    with pytest.raises(errors.InvalidArgumentsError) as raised:
        dd.QualityPolicy(rules={"amount|min": 0.05})  # type: ignore[dict-item]
    assert "not 0.05 (a float)" in str(raised.value)
    assert "{'amount|min': dd.Threshold(" in str(raised.value)
    with pytest.raises(errors.InvalidArgumentsError) as raised:
        dd.QualityPolicy(severity="WARN")  # type: ignore[arg-type]
    assert "not 'WARN' (a str)" in str(raised.value)
    assert "dg.AssetCheckSeverity.WARN" in raised.value.fix


def test_policy_values_of_the_right_kind_are_kept() -> None:
    policy = dd.QualityPolicy(
        rules={"amount|min": dd.Threshold()},
        severity={"amount|min": dg.AssetCheckSeverity.ERROR},
        blocking=iter(["amount|min"]),
        undeclared_columns="report",
    )
    assert dict(policy.rules) == {"amount|min": dd.Threshold()}
    assert policy.blocking == ("amount|min",)
    assert dd.QualityPolicy(blocking="primary_key").blocking == ("primary_key",)
    assert dd.QualityPolicy(blocking=True).blocking is True
    assert dd.QualityPolicy(severity=dg.AssetCheckSeverity.WARN).severity == (
        dg.AssetCheckSeverity.WARN
    )


QUALITY_POLICY_ENTRY_POINTS = {
    "dd.asset": lambda policy: dd.asset(Orders, quarantine=True, quality_policy=policy),
    "dd.AssetOut": lambda policy: dd.AssetOut(Orders, quality_policy=policy),
    "dd.AssetOut.from_spec": lambda policy: dd.AssetOut.from_spec(
        Orders, dg.AssetSpec("orders"), quality_policy=policy
    ),
    "dd.collection_asset": lambda policy: dd.collection_asset(
        Book, quarantine=True, quality_policy=policy
    ),
    "dd.table_checks": lambda policy: dd.table_checks(
        Orders, "orders", severity=dg.AssetCheckSeverity.WARN, quality_policy=policy
    ),
    "dd.table_checks of a Collection": lambda policy: dd.table_checks(
        Book,
        {"orders": "orders", "lines": "lines"},
        severity=dg.AssetCheckSeverity.WARN,
        quality_policy=policy,
    ),
    "dd.wiring.check_specs": lambda policy: dd.wiring.check_specs(
        Orders, asset="orders", quality_policy=policy
    ),
    "dd.wiring.check_results": lambda policy: dd.wiring.check_results(
        Orders,
        pl.DataFrame({"order_id": ["a"], "amount": [1.0]}),
        asset_key=dg.AssetKey("orders"),
        severity=dg.AssetCheckSeverity.WARN,
        quality_policy=policy,
    ),
    "dd.wiring.validation_results": lambda policy: list(
        dd.wiring.validation_results(
            Orders,
            pl.DataFrame({"order_id": ["a"], "amount": [1.0]}),
            valid_key=dg.AssetKey("orders"),
            quality_policy=policy,
        )
    ),
}
FUNCTION_NAMES = {
    "dd.asset": "dd.asset",
    "dd.AssetOut": "dd.AssetOut",
    "dd.AssetOut.from_spec": "dd.AssetOut",
    "dd.collection_asset": "dd.collection_asset",
    "dd.table_checks": "table_checks",
    "dd.table_checks of a Collection": "table_checks",
    "dd.wiring.check_specs": "check_specs",
    "dd.wiring.check_results": "check_results",
    "dd.wiring.validation_results": "validation_results",
}


@pytest.mark.parametrize("entry_point", list(QUALITY_POLICY_ENTRY_POINTS))
@pytest.mark.parametrize(
    ("policy", "given", "fix"),
    [
        ({"threshold": dd.Threshold(fail_above=0.1)}, "a dict", "dd.QualityPolicy(**{...})"),
        (dd.Threshold(fail_above=0.1), "a Threshold", "dd.QualityPolicy(threshold=...)"),
        (dd.VolumeCheck(min_rows=1), "a VolumeCheck", "dd.QualityPolicy(volume=...)"),
        ("strict", "'strict' (a str)", "Pass dd.QualityPolicy(...), or None"),
    ],
    ids=["dict", "threshold", "volume-check", "text"],
)
def test_every_entry_point_refuses_a_quality_policy_that_is_not_one(
    entry_point: str, policy: object, given: str, fix: str
) -> None:
    with pytest.raises(errors.InvalidArgumentsError) as raised:
        QUALITY_POLICY_ENTRY_POINTS[entry_point](policy)
    assert raised.value.function == FUNCTION_NAMES[entry_point]
    assert raised.value.problem == f"`quality_policy=` takes a dd.QualityPolicy, not {given}"
    assert fix in raised.value.fix


@pytest.mark.parametrize("entry_point", list(QUALITY_POLICY_ENTRY_POINTS))
def test_every_entry_point_takes_a_quality_policy_or_none(entry_point: str) -> None:
    for policy in (None, dd.QualityPolicy(severity={"amount|min": dg.AssetCheckSeverity.ERROR})):
        QUALITY_POLICY_ENTRY_POINTS[entry_point](policy)


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

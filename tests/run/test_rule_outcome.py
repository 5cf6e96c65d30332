"""One model of what a failing rule does agrees with what a run does, for every spelling.

`warning_rules=`, a quality policy's severity and blocking, `dd.Threshold` and
`dd.table_checks(severity=)` all fill one `RuleOutcome` per rule. Hypothesis draws combinations
of the four and frames that fail the rules; each is materialized for real, and every rule's
check (passed, severity, blocking) and every row (table or quarantine) must be what the
model says. Conflicting spellings must be refused by the declaration and the model alike.
"""

# No `from __future__ import annotations`: Dataframely reads a schema's annotations.
import tempfile
from types import MappingProxyType
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely import errors
from dagster_dataframely._model.quality_policy import resolve_policy
from dagster_dataframely._model.rule_outcome import RuleOutcome, rule_outcomes
from dagster_dataframely._model.schema import read_schema
from dagster_dataframely._model.warning_rules import resolve_warning_rules
from tests.asset_support import QUIET, run_checks
from tests.parquet_io_manager import ParquetIOManager

WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR


class Lines(dy.Schema):
    line_id = dy.String(primary_key=True)
    amount = dy.Float64(min=0.0)
    quantity = dy.Int64(max=10)


INFO = read_schema(Lines)
FAILING = {"amount|min": "amount", "quantity|max": "quantity"}
"""The rules a drawn frame can fail, by the column a failing row breaks."""
CHECKS = {rule.name: rule.check_name for rule in INFO.rules}

thresholds = st.builds(
    lambda warn, extra: dd.Threshold(
        warn_above=warn, fail_above=None if extra is None else warn + extra
    ),
    st.integers(0, 3),
    st.none() | st.integers(0, 3),
)
rule_names = st.sets(st.sampled_from(sorted(FAILING)))
severities = st.sampled_from([WARN, ERROR])
policies = st.none() | st.builds(
    dd.QualityPolicy,
    threshold=st.none() | thresholds,
    rules=st.dictionaries(st.sampled_from(sorted(FAILING)), thresholds),
    severity=st.none() | severities | st.dictionaries(st.sampled_from(sorted(FAILING)), severities),
    blocking=st.booleans() | rule_names.map(sorted),
)
frames = st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=6).map(
    lambda rows: pl.DataFrame(
        {
            "line_id": [f"l{i}" for i in range(len(rows))],
            "amount": [-1.0 if bad else 1.0 for bad, _ in rows],
            "quantity": [11 if bad else 1 for _, bad in rows],
        }
    )
)


def failed(frame: pl.DataFrame) -> dict[str, int]:
    """How many rows fail each rule, counted from the frame itself."""
    return {
        "amount|min": int((frame["amount"] < 0).sum()),
        "quantity|max": int((frame["quantity"] > 10).sum()),
    }


def quarantined_ids(frame: pl.DataFrame, outcomes: dict[str, RuleOutcome]) -> set[str]:
    """The rows a rule whose rows go to the quarantine fails."""
    bad = pl.lit(False)
    if outcomes["amount|min"].rows == "quarantine":
        bad = bad | (pl.col("amount") < 0)
    if outcomes["quantity|max"].rows == "quarantine":
        bad = bad | (pl.col("quantity") > 10)
    return set(frame.filter(bad)["line_id"])


def spelled(
    rule: str,
    warning: set[str],
    policy: dd.QualityPolicy | None,
    severity: dg.AssetCheckSeverity | None = None,
) -> RuleOutcome:
    """What the docs' table says each spelling makes of `rule`, read from the spellings alone."""
    chosen = policy.severity if policy is not None else None
    if isinstance(chosen, dict | MappingProxyType):
        chosen = chosen.get(rule)
    if chosen is None:
        chosen = WARN if rule in warning else severity
    blocking = policy is not None and (
        policy.blocking is True or (policy.blocking is not False and rule in policy.blocking)
    )
    return RuleOutcome(
        rule=rule,
        rows="table" if rule in warning else "quarantine",
        severity=chosen,
        threshold=policy.rules.get(rule, policy.threshold) if policy is not None else None,
        blocking=blocking,
    )


def materialized(assets: list[Any], instance: dg.DagsterInstance, base: str) -> Any:
    return dg.materialize(
        assets,
        resources={"io_manager": ParquetIOManager(base_dir=base)},
        instance=instance,
        raise_on_error=False,
        run_config=QUIET,
    )


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(warning=rule_names, policy=policies, quarantine=st.booleans(), frame=frames)
def test_a_run_does_what_each_rules_outcome_says(
    instance: dg.DagsterInstance,
    warning: set[str],
    policy: dd.QualityPolicy | None,
    quarantine: bool,
    frame: pl.DataFrame,
) -> None:
    def declare() -> dg.AssetsDefinition:
        @dd.asset(
            Lines,
            name="lines",
            quarantine=quarantine,
            warning_rules=warning,
            quality_policy=policy,
            check_granularity="rule",
        )
        def lines() -> pl.DataFrame:
            return frame

        return lines

    warning_rules = resolve_warning_rules(INFO, warning)
    if (
        quarantine is False
        and policy is not None
        and (policy.threshold is not None or not set(policy.rules) <= warning)
    ):
        # A threshold on a rule whose rows have nowhere to go: both refuse it, as before.
        with pytest.raises(errors.ThresholdNotApplicableError):
            resolve_policy(INFO, policy, quarantine=False, warning_rules=warning_rules)
        with pytest.raises(errors.ThresholdNotApplicableError):
            declare()
        return
    resolved = resolve_policy(INFO, policy, quarantine=quarantine, warning_rules=warning_rules)
    outcomes = dict(rule_outcomes(INFO, warning_rules, resolved))
    assert outcomes == {rule.name: spelled(rule.name, warning, policy) for rule in INFO.rules}
    lines = declare()
    assert {
        spec.name: spec.blocking for spec in lines.check_specs if spec.name != "dy_schema__columns"
    } == {CHECKS[rule]: outcome.blocking for rule, outcome in outcomes.items()}

    counts, rows = failed(frame), frame.height
    to_quarantine = quarantined_ids(frame, outcomes)
    refused = any(outcomes[rule].fails_run(n, rows) for rule, n in counts.items())
    written = not refused and (not to_quarantine or (quarantine and len(to_quarantine) < rows))
    with tempfile.TemporaryDirectory() as base:
        result = materialized([lines], instance, base)
        table = f"{base}/lines.parquet"
        materializations = result.get_asset_materialization_events()
        assert bool(materializations) == written
        if written:
            assert set(pl.read_parquet(table)["line_id"]) == set(frame["line_id"]) - to_quarantine
        if quarantine and to_quarantine:
            kept = pl.read_parquet(f"{base}/lines_quarantine.parquet")
            assert set(kept["line_id"]) == to_quarantine
    run = WARN if written else ERROR
    checks = run_checks(result)
    for rule, n in counts.items():
        check, outcome = checks[CHECKS[rule]], outcomes[rule]
        assert check.passed == outcome.passes(n, rows)
        if not check.passed:
            assert check.severity == outcome.failing_severity(n, rows, run)


@settings(max_examples=15, deadline=None)
@given(warning=rule_names, policy=policies, severity=severities, frame=frames)
def test_table_checks_report_what_each_rules_outcome_says(
    instance: dg.DagsterInstance,
    warning: set[str],
    policy: dd.QualityPolicy | None,
    severity: dg.AssetCheckSeverity,
    frame: pl.DataFrame,
) -> None:
    @dg.asset(name="lines")
    def lines() -> pl.DataFrame:
        return frame

    checks = dd.table_checks(
        Lines,
        lines,
        severity=severity,
        warning_rules=warning,
        quality_policy=policy,
        check_granularity="rule",
    )
    resolved = resolve_policy(
        INFO, policy, quarantine=None, warning_rules=frozenset(warning), writes=False
    )
    outcomes = rule_outcomes(INFO, frozenset(warning), resolved, severity)
    assert outcomes == {
        rule.name: spelled(rule.name, warning, policy, severity) for rule in INFO.rules
    }
    with tempfile.TemporaryDirectory() as base:
        evaluations = run_checks(materialized([lines, checks], instance, base))
    counts, rows = failed(frame), frame.height
    for rule, n in counts.items():
        check, outcome = evaluations[CHECKS[rule]], outcomes[rule]
        assert check.passed == outcome.passes(n, rows)
        if not check.passed:
            assert check.severity == outcome.failing_severity(n, rows, severity)

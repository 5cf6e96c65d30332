"""What a failing rule does, per rule: one answer that every way of saying "only warn" fills.

Four spellings decide it: `warning_rules=` (the rows stay in the table, the check warns), the
quality policy (a `dd.Threshold`, a `severity`, `blocking`), and `dd.table_checks(severity=)`
(the severity of every check no other spelling decides). They are resolved here into one
`RuleOutcome` per rule; the declaration reads its `blocking`, the run reads where the rows go
and the severity a failing check reports. Conflicts between spellings are refused where the
spellings are checked (`resolve_warning_rules`, `resolve_policy`), not here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, TypeAlias

import dagster as dg

from .quality_policy import ResolvedPolicy
from .row_threshold import Threshold, breaches, tolerates
from .schema import SchemaInfo

RowsGo: TypeAlias = Literal["table", "quarantine"]
"""Where the rows that fail a rule go: kept in the table (a warning rule) or quarantined."""


@dataclass(frozen=True, slots=True)
class RuleOutcome:
    """What one rule's failures do: where its rows go, its check's severity, bounds, blocking."""

    rule: str
    rows: RowsGo
    """`table` for a warning rule, whose failing rows are still written; else `quarantine`
    (with no quarantine, a quarantining rule's failing row fails the run)."""
    severity: dg.AssetCheckSeverity | None
    """The severity of the rule's failing check below its `fail_above`: the policy's choice,
    else `WARN` for a warning rule, else `dd.table_checks`' `severity=`; `None` leaves it to the
    run (`WARN` when the table is written, `ERROR` when not)."""
    threshold: Threshold | None
    """Its `warn_above` and `fail_above` bounds; `None`: any failing row fails the check."""
    blocking: bool
    """Whether its check is a blocking `dg.AssetCheckSpec` (a collapsed check blocks when one
    of its rules does)."""

    def passes(self, failed: int, rows: int) -> bool:
        """Whether the check passes with `failed` of `rows` rows failing the rule."""
        return tolerates(self.threshold, failed, rows) if self.threshold is not None else not failed

    def fails_run(self, failed: int, rows: int) -> bool:
        """Whether `failed` of `rows` rows are above the rule's `fail_above`."""
        return self.threshold is not None and breaches(self.threshold, failed, rows)

    def failing_severity(
        self, failed: int, rows: int, run: dg.AssetCheckSeverity
    ) -> dg.AssetCheckSeverity:
        """The failing check's severity: `ERROR` above `fail_above`, else the rule's, else `run`."""
        if self.fails_run(failed, rows):
            return dg.AssetCheckSeverity.ERROR
        return self.severity if self.severity is not None else run


RuleOutcomes: TypeAlias = Mapping[str, RuleOutcome]
"""Every rule's outcome, by rule name, in the schema's order."""


def rule_outcomes(
    info: SchemaInfo,
    warning_rules: frozenset[str],
    policy: ResolvedPolicy | None,
    severity: dg.AssetCheckSeverity | None = None,
) -> RuleOutcomes:
    """Each of `info`'s rules' outcome, from the spellings already checked against the schema.

    `severity` is `dd.table_checks`' (or `check_results`'): the severity of a check neither the
    policy nor `warning_rules` decides. A run passes `None`: its outcome decides.
    """
    chosen = policy.severities if policy is not None else {}
    outcomes = {}
    for rule in info.rules:
        warning = rule.name in warning_rules
        outcomes[rule.name] = RuleOutcome(
            rule=rule.name,
            rows="table" if warning else "quarantine",
            severity=chosen.get(rule.name, dg.AssetCheckSeverity.WARN if warning else severity),
            threshold=policy.thresholds.get(rule.name) if policy is not None else None,
            blocking=blocks(policy, rule.name),
        )
    return MappingProxyType(outcomes)


def blocks(policy: ResolvedPolicy | None, rule: str) -> bool:
    """Whether `rule`'s check is blocking: the policy names it (a collapsed check blocks when
    one of its rules does)."""
    return policy is not None and rule in policy.blocking


def kept_in_table(outcomes: RuleOutcomes) -> frozenset[str]:
    """The rules whose failing rows stay in the table (the warning rules)."""
    return frozenset(rule for rule, outcome in outcomes.items() if outcome.rows == "table")

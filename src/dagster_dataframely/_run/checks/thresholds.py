"""Each rule's failures against its threshold: tolerated, warned, or above the run's bound.

Computed once per output from the counts the split already has (no pass over the rows), and
read by the outcome (a bound above `fail_above` fails the run) and by the checks (a tolerated
rule's check passes; the bound and the observed fraction are in its metadata).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dagster_dataframely._model.quality_policy import ResolvedPolicy
from dagster_dataframely._model.row_threshold import Threshold, breaches, tolerates
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely.errors import ThresholdExceededError, ValidationFailedError


@dataclass(frozen=True, slots=True)
class RuleVerdict:
    """One rule's failing rows of one frame, judged by its threshold."""

    rule: str
    failed: int
    rows: int
    """How many rows the frame had: the denominator of a fractional bound."""
    threshold: Threshold

    @property
    def fraction(self) -> float:
        """The share of the rows that failed the rule; 0.0 for a frame without rows."""
        return self.failed / self.rows if self.rows else 0.0

    @property
    def tolerated(self) -> bool:
        """Whether the failures are within `warn_above`, so the rule's check passes."""
        return tolerates(self.threshold, self.failed, self.rows)

    @property
    def fails_run(self) -> bool:
        """Whether the failures are above `fail_above`: the check fails at `ERROR`, and so does
        a run that writes the rows (the checks of a stored table fail no run)."""
        return breaches(self.threshold, self.failed, self.rows)


def rule_verdicts(
    policy: ResolvedPolicy, counts: Mapping[str, int], rows: int
) -> dict[str, RuleVerdict]:
    """The verdict of every rule that has a threshold, by rule name; empty without any."""
    return {
        rule: RuleVerdict(rule, counts.get(rule, 0), rows, threshold)
        for rule, threshold in policy.thresholds.items()
    }


@dataclass(frozen=True, slots=True)
class RulesVerdict:
    """The quality policy's verdict on every rule that has a threshold, by rule name."""

    rules: Mapping[str, RuleVerdict]

    @property
    def breaches(self) -> list[RuleVerdict]:
        """The rules above their `fail_above`, in the schema's order."""
        return [verdict for verdict in self.rules.values() if verdict.fails_run]

    @property
    def fails_run(self) -> bool:
        return bool(self.breaches)

    def error(self, output: ValidatedOutput, address: str | None) -> ValidationFailedError | None:
        """The first rule above its bound, naming the others."""
        breaches = self.breaches
        if not breaches:
            return None
        first = breaches[0]
        bound = first.threshold.fail_above
        assert bound is not None  # a breach has a bound to breach
        return ThresholdExceededError(
            output.info.name,
            first.rule,
            first.failed,
            first.rows,
            bound,
            address=address,
            other_rules=[verdict.rule for verdict in breaches[1:]],
        )

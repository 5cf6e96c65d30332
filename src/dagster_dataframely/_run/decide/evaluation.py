"""The quality policy applied to one output's split rows: what it tolerates and what it refuses.

One evaluation per output, built when the outcome is decided (before anything is written): each
rule's verdict against its threshold, the volume check's, the undeclared columns'. The outcome
reads whether it fails the run; the emission reads it for the checks, the error and the
materialization. Without a policy there is no evaluation, and nothing here runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg

from dagster_dataframely._model.quality_policy import ResolvedPolicy
from dagster_dataframely._run.checks.history import History
from dagster_dataframely._run.checks.thresholds import RuleVerdict, rule_verdicts
from dagster_dataframely._run.checks.undeclared_columns import (
    ColumnsVerdict,
    columns_result,
    judge_columns,
)
from dagster_dataframely._run.checks.volume import VolumeVerdict, judge_volume, volume_result
from dagster_dataframely.errors import (
    RowCountOutOfBoundsError,
    ThresholdExceededError,
    ValidationFailedError,
)


@dataclass(frozen=True, slots=True, eq=False)
class Evaluation:
    """What one output's quality policy says of the rows one run split."""

    policy: ResolvedPolicy
    rules: Mapping[str, RuleVerdict]
    """The verdict of each rule that has a threshold, by rule name."""
    volume: VolumeVerdict | None
    columns: ColumnsVerdict | None
    undeclared: tuple[str, ...] | None
    """The undeclared columns, when the policy reports them on the materialization."""

    @property
    def breaches(self) -> list[RuleVerdict]:
        """The rules above their `fail_above`, in the schema's order."""
        return [verdict for verdict in self.rules.values() if verdict.fails_run]

    @property
    def fails_run(self) -> bool:
        return bool(self.breaches) or (self.volume is not None and self.volume.fails_run)

    def error(
        self, schema_name: str, asset_key: dg.AssetKey, address: str | None
    ) -> ValidationFailedError:
        """The run's error: the first rule above its bound, else the volume's breach."""
        breaches = self.breaches
        if breaches:
            first = breaches[0]
            bound = first.threshold.fail_above
            assert bound is not None  # a breach has a bound to breach
            return ThresholdExceededError(
                schema_name,
                first.rule,
                first.failed,
                first.rows,
                bound,
                address=address,
                other_rules=[verdict.rule for verdict in breaches[1:]],
            )
        assert self.volume is not None  # `fails_run` holds only with a breach of either
        return RowCountOutOfBoundsError(
            asset_key.to_user_string(),
            self.volume.row_count,
            self.volume.min_rows,
            self.volume.max_rows,
            self.volume.basis(),
            address=address,
        )


def evaluate(
    policy: ResolvedPolicy | None,
    counts: Mapping[str, int],
    *,
    rows: int,
    written: int,
    history: History | None,
    undeclared: tuple[str, ...] | None,
) -> Evaluation | None:
    """The policy's evaluation of one split: `counts` per rule over `rows` rows, `written` kept.

    None without a policy, so a run without one computes nothing.
    """
    if policy is None:
        return None
    return Evaluation(
        policy=policy,
        rules=rule_verdicts(policy, counts, rows),
        volume=judge_volume(policy.volume, written, history) if policy.volume else None,
        columns=(
            judge_columns(undeclared or (), history)
            if policy.undeclared_columns == "check"
            else None
        ),
        undeclared=undeclared if policy.undeclared_columns is not None else None,
    )


def policy_check_results(
    policy: ResolvedPolicy | None,
    evaluation: Evaluation | None,
    asset_key: dg.AssetKey,
    extra_metadata: Mapping[str, Any],
) -> list[dg.AssetCheckResult]:
    """The results of the policy's own checks (volume, undeclared columns), in spec order.

    Without an evaluation (a skipped run) each passes: nothing was written.
    """
    if policy is None:
        return []
    results = []
    if policy.volume is not None:
        verdict = evaluation.volume if evaluation is not None else None
        results.append(volume_result(verdict, policy.volume, asset_key, extra_metadata))
    if policy.undeclared_columns == "check":
        columns = evaluation.columns if evaluation is not None else None
        results.append(columns_result(columns, asset_key, extra_metadata))
    return results

"""What the check kinds judged of one output's run, and the results they report.

One evaluation per output, built when the outcome is decided (before anything is written): each
kind that runs before the write gives its verdict on the split rows. The outcome reads whether
one fails the run; the emission reads them for the checks and the error. The kinds that run
after the write judge the stored table once the step's tables are written.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg

from dagster_dataframely._run.checks.kind import Judged, Reported, Verdict, When
from dagster_dataframely._run.checks.registry import kinds
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely.errors import ValidationFailedError


@dataclass(frozen=True, slots=True, eq=False)
class Evaluation:
    """Each kind's verdict on the rows one run split, by kind name, in the kinds' order."""

    verdicts: Mapping[str, Verdict]

    @property
    def fails_run(self) -> bool:
        return any(verdict.fails_run for verdict in self.verdicts.values())

    def error(self, output: ValidatedOutput, address: str | None) -> ValidationFailedError:
        """The run's error: the first verdict's, in the kinds' order, that fails the run."""
        errors = (v.error(output, address) for v in self.verdicts.values() if v.fails_run)
        return next(error for error in errors if error is not None)


def evaluate(judged: Judged) -> Evaluation:
    """Every kind's verdict on one split, before the write; a kind without checks gives none."""
    verdicts = {kind.name: kind.judge(judged) for kind in kinds(When.BEFORE_WRITE)}
    return Evaluation({name: v for name, v in verdicts.items() if v is not None})


def check_results(evaluation: Evaluation | None, reported: Reported) -> list[dg.AssetCheckResult]:
    """The results of every kind judged before the write, in the kinds' order.

    Without an evaluation (a skipped run, nothing written), each kind reports its checks so.
    """
    verdicts = evaluation.verdicts if evaluation is not None else {}
    return [
        result
        for kind in kinds(When.BEFORE_WRITE)
        for result in kind.results(verdicts.get(kind.name), reported)
    ]


def stored_results(
    output: ValidatedOutput, context: Any, partitions_def: Any
) -> Iterator[dg.AssetCheckResult]:
    """The results of the kinds that read the stored table, once the step wrote its tables."""
    judged = Judged(output, context=context, partitions_def=partitions_def)
    for kind in kinds(When.AFTER_WRITE):
        yield from kind.results(kind.judge(judged), Reported(output))

"""The volume check, `dy_volume`: the rows a run writes against fixed bounds and recent runs.

A table that lost 90% of its rows passes every rule; only its row count shows it. The bounds
are the user's (`min_rows`, `max_rows`) and, with history, the median of recent row counts
widened by `max_drop` and `max_growth`, all as whole row counts so the check and its error
say the same numbers.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

import dagster as dg

from dagster_dataframely._model import names
from dagster_dataframely._model.row_threshold import describe_bound
from dagster_dataframely._model.volume_check import VolumeCheck
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely.errors import RowCountOutOfBoundsError, ValidationFailedError

from .history import Series
from .kind import NOTHING_WRITTEN, DeclaredCheck, Judged, Reported, Target, When


@dataclass(frozen=True, slots=True)
class VolumeVerdict:
    """The rows one run would write, and the bounds the volume check holds them to."""

    check: VolumeCheck
    row_count: int
    recent: tuple[int, ...]
    min_rows: int | None
    max_rows: int | None

    @property
    def baseline(self) -> float | None:
        """The median of the recent row counts, when there are any."""
        return float(statistics.median(self.recent)) if self.recent else None

    @property
    def passed(self) -> bool:
        below = self.min_rows is not None and self.row_count < self.min_rows
        above = self.max_rows is not None and self.row_count > self.max_rows
        return not (below or above)

    @property
    def fails_run(self) -> bool:
        """A breach of a check at `ERROR`: the run fails and the table is not written."""
        return not self.passed and self.check.severity == dg.AssetCheckSeverity.ERROR

    def error(self, output: ValidatedOutput, address: str | None) -> ValidationFailedError | None:
        if not self.fails_run:
            return None
        return RowCountOutOfBoundsError(
            output.key.to_user_string(),
            self.row_count,
            self.min_rows,
            self.max_rows,
            self.basis(),
            address=address,
        )

    def basis(self) -> str:
        """Where the bounds come from, in words, for the check and the error."""
        parts = []
        check = self.check
        if check.min_rows is not None or check.max_rows is not None:
            parts.append("the fixed bounds")
        if self.baseline is not None:
            parts.append(
                f"the median of the last {len(self.recent)} materializations, "
                f"{describe_bound(round(self.baseline))}"
            )
        elif check.reads_history:
            parts.append("no recent materialization to compare with yet")
        return "; ".join(parts)


class Volume:
    """The volume check, `dy_volume`, where the quality policy has one."""

    name = "volume"
    when = When.BEFORE_WRITE

    def declare(self, target: Target) -> list[DeclaredCheck]:
        policy = target.policy
        if policy is None or policy.volume is None:
            return []
        return [
            DeclaredCheck(
                names.VOLUME_CHECK, policy.volume.describe(), blocking=policy.blocks_own_checks
            )
        ]

    def series(self, output: ValidatedOutput) -> tuple[Series, ...]:
        check = _check(output)
        return (_row_counts(check),) if check is not None and check.reads_history else ()

    def judge(self, judged: Judged) -> VolumeVerdict | None:
        check = _check(judged.output)
        if check is None:
            return None
        recent = tuple(p.value for p in judged.history.get(_row_counts(check), ()))
        low, high = check.min_rows, check.max_rows
        if recent and check.reads_history:
            median = statistics.median(recent)
            if check.max_drop is not None:
                # NOTE: fewer than (1 - drop) * median rows breaches; for whole counts, ceil.
                drop_low = math.ceil((1 - check.max_drop) * median)
                low = drop_low if low is None else max(low, drop_low)
            if check.max_growth is not None:
                growth_high = math.floor((1 + check.max_growth) * median)
                high = growth_high if high is None else min(high, growth_high)
        return VolumeVerdict(check, judged.written, recent, low, high)

    def results(
        self, verdict: VolumeVerdict | None, reported: Reported
    ) -> list[dg.AssetCheckResult]:
        check = _check(reported.output)
        if check is None:
            return []
        metadata: dict[str, Any] = {}
        description = NOTHING_WRITTEN
        if verdict is not None:
            figures = {
                names.VOLUME_ROW_COUNT: verdict.row_count,
                names.VOLUME_MIN_ROWS: verdict.min_rows,
                names.VOLUME_MAX_ROWS: verdict.max_rows,
                names.VOLUME_BASELINE: verdict.baseline,
                names.VOLUME_COMPARED: len(verdict.recent),
            }
            metadata = {key: figure for key, figure in figures.items() if figure is not None}
            description = f"{describe_bound(verdict.row_count)} against {verdict.basis()}."
        return [
            dg.AssetCheckResult(
                check_name=names.VOLUME_CHECK,
                asset_key=reported.output.key,
                passed=verdict is None or verdict.passed,
                severity=check.severity,
                description=description,
                metadata={**metadata, **reported.metadata},
            )
        ]


def _check(output: ValidatedOutput) -> VolumeCheck | None:
    policy = output.settings.policy
    return policy.volume if policy is not None else None


def _row_counts(check: VolumeCheck) -> Series:
    return Series(names.ROW_COUNT, check.window, asset_wide=check.compare_with == "asset")


VOLUME = Volume()

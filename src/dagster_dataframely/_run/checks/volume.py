"""The volume check, `dy_volume`: the rows a run writes against fixed bounds and recent runs.

A table that lost 90% of its rows passes every rule; only its row count shows it. The bounds
are the user's (`min_rows`, `max_rows`) and, with history, the median of recent row counts
widened by `max_drop` and `max_growth`, all as whole row counts so the check and its error
say the same numbers.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg

from dagster_dataframely._model import names
from dagster_dataframely._model.row_threshold import describe_bound
from dagster_dataframely._model.volume_check import VolumeCheck

from .history import History


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


def judge_volume(check: VolumeCheck, row_count: int, history: History | None) -> VolumeVerdict:
    """The verdict on `row_count` written rows, with the bounds `check` and `history` give."""
    recent = history.row_counts if history is not None else ()
    low, high = check.min_rows, check.max_rows
    if recent and check.reads_history:
        median = statistics.median(recent)
        if check.max_drop is not None:
            # Fewer than (1 - drop) * median rows breaches; for whole counts, that is ceil.
            drop_low = math.ceil((1 - check.max_drop) * median)
            low = drop_low if low is None else max(low, drop_low)
        if check.max_growth is not None:
            growth_high = math.floor((1 + check.max_growth) * median)
            high = growth_high if high is None else min(high, growth_high)
    return VolumeVerdict(check, row_count, recent, low, high)


def volume_result(
    verdict: VolumeVerdict | None,
    check: VolumeCheck,
    asset_key: dg.AssetKey,
    extra_metadata: Mapping[str, Any],
) -> dg.AssetCheckResult:
    """The volume check's result; a skipped run (no verdict) wrote nothing and passes."""
    if verdict is None:
        return dg.AssetCheckResult(
            check_name=names.VOLUME_CHECK,
            asset_key=asset_key,
            passed=True,
            severity=check.severity,
            description="Nothing was written (the function returned None).",
            metadata=dict(extra_metadata),
        )
    metadata: dict[str, Any] = {names.VOLUME_ROW_COUNT: verdict.row_count}
    if verdict.min_rows is not None:
        metadata[names.VOLUME_MIN_ROWS] = verdict.min_rows
    if verdict.max_rows is not None:
        metadata[names.VOLUME_MAX_ROWS] = verdict.max_rows
    if verdict.baseline is not None:
        metadata[names.VOLUME_BASELINE] = verdict.baseline
    metadata[names.VOLUME_COMPARED] = len(verdict.recent)
    return dg.AssetCheckResult(
        check_name=names.VOLUME_CHECK,
        asset_key=asset_key,
        passed=verdict.passed,
        severity=check.severity,
        description=f"{describe_bound(verdict.row_count)} against {verdict.basis()}.",
        metadata={**metadata, **extra_metadata},
    )

"""`dd.VolumeCheck`: a check of how many rows a run writes, against bounds and recent history."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, TypeAlias

import dagster as dg

from dagster_dataframely.errors import InvalidArgumentsError, InvalidThresholdError

from .argument_kinds import SEVERITIES, SEVERITY_TEXT, not_kind, wrong_kind
from .row_threshold import describe_bound

CompareWith: TypeAlias = Literal["partition", "asset"]
_COMPARE_CHOICES = ("partition", "asset")


@dataclass(frozen=True, slots=True)
class VolumeCheck:
    """A check of how many rows a run writes, against bounds and the asset's recent history.

    The check, `dy_volume`, compares the number of rows a run writes to the table (the valid
    rows) with fixed bounds, and with the median `dagster/row_count` of the asset's last
    `window` materializations in the Dagster instance (read through its public API when the
    run starts; a direct call reads its context's instance). Without such history (a first
    run, a direct call with no context) only the fixed bounds apply. For a partitioned asset it
    runs per partition, like every check of the asset.

    Parameters
    ----------
    min_rows
        The fewest rows a run may write. `None`: no lower bound.
    max_rows
        The most rows a run may write. `None`: no upper bound.
    max_drop
        The largest drop tolerated against the recent median, as a fraction: `0.5` fails the
        check when a run writes fewer than half the usual rows. `None`: drops are not checked.
    max_growth
        The largest growth tolerated against the recent median, as a fraction: `1.0` fails the
        check when a run writes more than twice the usual rows. `None`: growth is not checked.
    window
        How many recent materializations the median is taken over.
    compare_with
        `"partition"`: the recent materializations of the same partition (for static or
        dynamic partitions, whose partitions differ in size). `"asset"`: those of any
        partition (for daily partitions, so a day is compared with recent days). The same for
        an unpartitioned asset.
    severity
        `WARN` (the default): a breach fails the check at `WARN` and the table is written.
        `ERROR`: a breach fails the check at `ERROR`, the run fails with
        `RowCountOutOfBoundsError`, the table keeps its last good contents, and the
        quarantine still gets its rows.

    Raises
    ------
    InvalidThresholdError
        No bound at all, a negative or non-integer count (a `bool` included), `min_rows` above
        `max_rows`, a `max_drop` outside [0.0, 1.0], a negative `max_growth`, or a fraction
        given as an `int` (`max_growth=50` meant as 50%: write `0.5`).
    InvalidArgumentsError
        A `window` that is not an `int` of at least 1, or a `compare_with` or `severity` other
        than those above (a severity's name `"ERROR"` included).

    Examples
    --------
    ```python
    import dagster as dg

    import dagster_dataframely as dd

    volume = dd.VolumeCheck(max_drop=0.5, min_rows=1, severity=dg.AssetCheckSeverity.ERROR)
    print(volume)
    ```
    """

    min_rows: int | None = None
    max_rows: int | None = None
    max_drop: float | None = None
    max_growth: float | None = None
    window: int = 5
    compare_with: CompareWith = "partition"
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.WARN

    def __post_init__(self) -> None:
        for name in ("min_rows", "max_rows"):
            value = getattr(self, name)
            if value is not None and not _is_count(value):
                raise InvalidThresholdError(
                    name, repr(value), f"a row count is an int, at least 0, {not_kind(value)}"
                )
        if (
            self.min_rows is not None
            and self.max_rows is not None
            and self.min_rows > self.max_rows
        ):
            raise InvalidThresholdError(
                "min_rows", repr(self.min_rows), f"it is above max_rows={self.max_rows!r}"
            )
        for name, most in (("max_drop", 1.0), ("max_growth", math.inf)):
            value = getattr(self, name)
            if value is not None and not _is_fraction(value, most):
                raise InvalidThresholdError(name, repr(value), _fraction_problem(value, most))
        if not _is_count(self.window) or self.window < 1:
            raise _refused(
                "window",
                self.window,
                "an int of at least 1, the number of recent materializations",
                "Pass a count such as window=5: the median of the last five runs.",
            )
        if not isinstance(self.compare_with, str) or self.compare_with not in _COMPARE_CHOICES:
            raise _refused(
                "compare_with",
                self.compare_with,
                "'partition' or 'asset'",
                "Pass compare_with='partition' or compare_with='asset'.",
            )
        if self.severity not in SEVERITIES:
            raise _refused(
                "severity", self.severity, SEVERITY_TEXT, f"Pass {SEVERITY_TEXT} (the enum)."
            )
        if all(
            bound is None
            for bound in (self.min_rows, self.max_rows, self.max_drop, self.max_growth)
        ):
            raise InvalidThresholdError(
                "VolumeCheck",
                "()",
                "it has no bound: give min_rows, max_rows, max_drop or max_growth",
            )

    @property
    def reads_history(self) -> bool:
        """Whether the check compares with recent materializations, so needs the instance."""
        return self.max_drop is not None or self.max_growth is not None

    def describe(self) -> str:
        """What the check compares, as the catalog shows it before any run."""
        parts = []
        if self.min_rows is not None:
            parts.append(f"at least {describe_bound(self.min_rows)}")
        if self.max_rows is not None:
            parts.append(f"at most {describe_bound(self.max_rows)}")
        if self.max_drop is not None:
            parts.append(f"no drop of more than {self.max_drop * 100:g}%")
        if self.max_growth is not None:
            parts.append(f"no growth of more than {self.max_growth * 100:g}%")
        recent = ""
        if self.reads_history:
            scope = "partition" if self.compare_with == "partition" else "asset"
            recent = (
                f", against the median row count of the {scope}'s last {self.window} "
                "materializations"
            )
        failing = (
            "a breach fails the run and keeps the last good table"
            if self.severity == dg.AssetCheckSeverity.ERROR
            else "a breach warns"
        )
        return f"The rows written: {', '.join(parts)}{recent}; {failing}."


def _refused(parameter: str, value: object, expected: str, fix: str) -> InvalidArgumentsError:
    return wrong_kind("VolumeCheck", parameter, value, expected, fix)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_fraction(value: object, most: float) -> bool:
    # NOTE: an int here would read as a count, as it does in a threshold.
    return isinstance(value, float) and math.isfinite(value) and 0.0 <= value <= most


def _fraction_problem(value: object, most: float) -> str:
    kind = "a float between 0.0 and 1.0" if most == 1.0 else "a float of at least 0.0"
    if isinstance(value, int) and not isinstance(value, bool):
        return (
            f"it is a fraction, so {kind}, not an int: write {float(value)!r} for "
            f"{value * 100}%, or {value / 100!r} for {value}%"
        )
    return f"it is a fraction, {kind}, {not_kind(value)}"

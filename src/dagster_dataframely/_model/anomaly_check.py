"""`dd.AnomalyCheck`: metrics judged against a band learnt from each partition's own past."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeAlias

import dagster as dg

from dagster_dataframely.errors import InvalidArgumentsError

from .argument_kinds import SEVERITIES, SEVERITY_TEXT, wrong_kind

ROW_COUNT = "row_count"
"""The metric of the table itself: the rows a run writes (`dagster/row_count`)."""

Direction: TypeAlias = Literal["spike", "drop", "both"]
Seasonality: TypeAlias = Literal["day_of_week", "hour_of_day", "day_of_month"]
Method: TypeAlias = Literal["median_mad", "mean_std"]
CompareWith: TypeAlias = Literal["partition", "asset"]


@dataclass(frozen=True, slots=True)
class AnomalyCheck:
    """Checks that learn: each watched metric against the band its own past gives.

    Every materialization records each declared column's metrics
    (`dataframely/metric/<column>/<metric>`) and its row count. For each metric watched, a
    check `dy_anomaly__<column>__<metric>` (`dy_anomaly__row_count` for the row count) compares
    a run's value with the band the same metric's earlier points give: their median widened by
    `sensitivity` times a spread (the scaled median absolute deviation, learnt from every
    season's points, each from its own season's median), and never narrower than
    `min_relative_change` of the median. The defaults are those the package's
    detection benchmark found best on daily seasonal series (the "Checks that learn" page has
    its table). The evaluated run is never in its own training set, and materializations marked
    as incidents (a run tagged `dagster-dataframely/incident=true`, or marked after it ran with
    `dd.mark_incident`) never train a band. For a
    partitioned asset it runs per partition. Until `min_history` points exist, the check passes
    and says so.

    Parameters
    ----------
    metrics
        The metrics watched: `"row_count"`, or `"<column>/<metric>"` such as
        `"amount/mean"` or `"email/null_fraction"` (the metrics are listed on the "Checks that
        learn" page). A sensitive column has its `null_fraction` only.
    training_window
        How many earlier points (incidents left out) train the band: the most recent ones
        (of each season, with a seasonality).
    min_history
        How many earlier points must exist before a value is judged.
    sensitivity
        How many spreads from the centre a value may lie.
    direction
        `"spike"` fails above the band only, `"drop"` below it only, `"both"` either side.
    min_relative_change
        A change of at most this fraction of the centre never fails, however flat the past.
    seasonality
        `None`, or centre the band on earlier points of the same weekday, hour or day of the
        month only (the partition's start for a time-partitioned asset, the run's time
        otherwise): until `min_history` of them exist, the value passes unjudged. The spread
        is learnt from every season, each point measured from its own season's centre.
    method
        `"median_mad"` (robust: one past outlier barely moves the band) or `"mean_std"`.
    compare_with
        `"partition"`: the partition's own earlier materializations. `"asset"`: those of any
        partition (for daily partitions, so a day is compared with the days before it).
    severity
        `WARN` (the default): a value outside the band fails the check at `WARN` and the table is
        written. `ERROR`: the run fails and the table keeps its last good contents.

    Raises
    ------
    InvalidArgumentsError
        A value of the wrong kind or out of range, named with what to pass.

    Examples
    --------
    ```python
    import dagster_dataframely as dd

    anomaly = dd.AnomalyCheck(metrics=["row_count", "amount/mean"], direction="drop")
    print(anomaly.metrics)
    ```
    """

    metrics: Sequence[str] = (ROW_COUNT,)
    # NOTE: `anomaly_band.AnomalySettings`' defaults, tuned by `benchmarks/anomaly_detection.py`.
    training_window: int = 16
    min_history: int = 4
    sensitivity: float = 4.5
    direction: Direction = "both"
    min_relative_change: float = 0.2
    seasonality: Seasonality | None = "day_of_week"
    method: Method = "median_mad"
    compare_with: CompareWith = "partition"
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.WARN

    def __post_init__(self) -> None:
        metrics = self.metrics
        if isinstance(metrics, str) or not all(isinstance(m, str) and m for m in metrics):
            raise wrong_kind(
                "AnomalyCheck",
                "metrics",
                metrics,
                "a list of metric names",
                "Pass metrics=['row_count', 'amount/mean'].",
            )
        if not metrics:
            raise InvalidArgumentsError(
                "AnomalyCheck", "`metrics=` is empty", "Name at least one metric to watch."
            )
        object.__setattr__(self, "metrics", tuple(dict.fromkeys(metrics)))
        for name in ("training_window", "min_history"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 2:
                raise wrong_kind("AnomalyCheck", name, value, "an int of at least 2")
        if self.min_history > self.training_window:
            raise InvalidArgumentsError(
                "AnomalyCheck",
                f"`min_history={self.min_history}` is above "
                f"`training_window={self.training_window}`: no band would ever be judged",
                "Pass a min_history of at most the training window.",
            )
        for name, lowest in (("sensitivity", 0.0), ("min_relative_change", 0.0)):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool) or value < lowest:
                raise wrong_kind("AnomalyCheck", name, value, "a number of at least 0")
        if self.sensitivity == 0:
            raise wrong_kind("AnomalyCheck", "sensitivity", 0, "a number above 0")
        choices: tuple[tuple[str, object, tuple[object, ...]], ...] = (
            ("direction", self.direction, ("spike", "drop", "both")),
            ("seasonality", self.seasonality, (None, "day_of_week", "hour_of_day", "day_of_month")),
            ("method", self.method, ("median_mad", "mean_std")),
            ("compare_with", self.compare_with, ("partition", "asset")),
        )
        for name, value, allowed in choices:
            if not isinstance(value, str | None) or value not in allowed:
                raise wrong_kind("AnomalyCheck", name, value, " or ".join(map(repr, allowed)))
        if self.severity not in SEVERITIES:
            raise wrong_kind(
                "AnomalyCheck", "severity", self.severity, SEVERITY_TEXT, f"Pass {SEVERITY_TEXT}."
            )

    def describe(self, metric: str) -> str:
        """What the check of `metric` watches, as the catalog shows it before any run."""
        watched = "the rows written" if metric == ROW_COUNT else _metric_words(metric)
        scope = "partition's" if self.compare_with == "partition" else "asset's"
        season = f", of the same {self.seasonality.replace('_', ' ')}" if self.seasonality else ""
        sides = {"spike": "above", "drop": "below", "both": "outside"}[self.direction]
        failing = (
            "fails the run and keeps the last good table"
            if self.severity == dg.AssetCheckSeverity.ERROR
            else "warns"
        )
        centre = "median and MAD" if self.method == "median_mad" else "mean and std"
        return (
            f"Anomalies of {watched}: a value {sides} the band of the {scope} last "
            f"{self.training_window} materializations{season} ({centre}, sensitivity "
            f"{self.sensitivity:g}, changes under {self.min_relative_change * 100:g}% ignored, "
            f"incidents left out) {failing}; judged after {self.min_history} earlier points."
        )


def split_metric(metric: str) -> tuple[str | None, str]:
    """`(column, metric)` of a watched metric's name; `(None, "row_count")` for the row count."""
    if metric == ROW_COUNT:
        return None, ROW_COUNT
    column, _, name = metric.rpartition("/")
    return column, name


def _metric_words(metric: str) -> str:
    column, name = split_metric(metric)
    return f"{name.replace('_', ' ')} of column {column!r}"

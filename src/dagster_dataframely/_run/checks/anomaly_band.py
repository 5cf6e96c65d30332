"""The expected band of a metric, learnt from its own past, and the verdict on one new value.

An anomaly check compares a partition's metric (a row count, a column's null fraction or
mean) with the same metric's earlier values. The band is the centre of a training set of past
points (their median, or mean) widened by `sensitivity` times a spread, and never narrower than
`min_relative_change` of the centre, so a flat metric does not alarm on a tiny change. The
evaluated point is never in its own training set, points marked as excluded (an incident) never
enter it, and with a seasonality only past points of the same season (the same weekday, hour or
day of the month) give the centre: until `min_history` of them exist the value passes unjudged,
because a band learnt from every day flags every quiet weekend.

The spread is learnt from every season's recent points, each measured from its own season's
centre (relative to it when every centre is of one sign): a dozen points of one weekday
estimate a spread poorly, seven weekdays' worth estimate it well. It is the median absolute
deviation scaled by 1.4826 (or the pooled standard deviation), widened for the uncertainty of
a centre learnt from few points, as a prediction interval is.

Pure: Python and its standard library only, so the band can be computed and tested apart from
Dagster and replayed by `benchmarks/anomaly_detection.py`.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

Direction = Literal["spike", "drop", "both"]
"""Which side of the band fails: above it (`spike`), below it (`drop`), or either."""

Seasonality = Literal["day_of_week", "hour_of_day", "day_of_month"]
"""What makes two points alike: the same weekday, the same hour, or the same day of the month."""

Method = Literal["median_mad", "mean_std"]
"""How the centre and spread are estimated: robust (median, MAD) or classic (mean, std)."""

MAD_TO_STD = 1.4826
"""The median absolute deviation times this estimates the standard deviation of normal data."""

NO_VALUE = "no value"
"""The reason a past point without a usable value (missing, NaN or infinite) did not train."""

_DIRECTIONS: tuple[Direction, ...] = ("spike", "drop", "both")
_SEASONALITIES: tuple[Seasonality, ...] = ("day_of_week", "hour_of_day", "day_of_month")
_METHODS: tuple[Method, ...] = ("median_mad", "mean_std")
_CENTRE_VARIANCE: dict[Method, float] = {"median_mad": math.pi / 2, "mean_std": 1.0}


@dataclass(frozen=True, slots=True)
class AnomalySettings:
    """How a metric's past becomes its expected band, and which side of it fails.

    Parameters
    ----------
    training_window
        How many past points (after exclusions, and of the same season with a seasonality)
        train the band: the most recent ones.
    min_history
        How many such points must exist before a value is judged; until then it passes and
        says so. With a seasonality they are points of the same season: a daily partition
        with `"day_of_week"` is judged from its fifth week on.
    sensitivity
        How many spreads (robust standard deviations) from the centre a value may lie. The
        default is wider than the textbook 3 because a spread learnt from a dozen points is
        often an underestimate (`benchmarks/anomaly_detection.py --tune`).
    direction
        `"spike"` fails only above the band, `"drop"` only below it, `"both"` on either side.
    min_relative_change
        A change of at most this fraction of the centre never fails, however flat the past.
    seasonality
        `None`, or train only on past points of the same weekday, hour or day of the month
        (points without a time never train a seasonal band; a judged value without a time is
        judged against every season). The default suits daily partitions; set `None` for a
        metric recorded at another cadence without a weekly rhythm.
    method
        `"median_mad"` (median and scaled MAD: one past outlier barely moves the band) or
        `"mean_std"` (mean and standard deviation, as Elementary computes them).
    """

    # NOTE: the defaults are the best of the grid `benchmarks/anomaly_detection.py --tune`
    # prints on its tuning seeds (synthetic daily series with a weekly season, trend, noise).
    training_window: int = 16
    min_history: int = 4
    sensitivity: float = 4.5
    direction: Direction = "both"
    min_relative_change: float = 0.2
    seasonality: Seasonality | None = "day_of_week"
    method: Method = "median_mad"

    def problems(self) -> tuple[str, ...]:
        """What is wrong with these settings, one sentence each (none when they are usable).

        The declaration that takes them raises its own error with these sentences, so this
        module stays free of Dagster.
        """
        found = []
        if self.training_window < 2:
            found.append(f"training_window must be at least 2 points, got {self.training_window}")
        if self.min_history < 2:
            found.append(f"min_history must be at least 2 points, got {self.min_history}")
        if self.min_history > self.training_window:
            found.append(
                f"min_history ({self.min_history}) cannot exceed training_window "
                f"({self.training_window}): the band would never be judged"
            )
        if not (math.isfinite(self.sensitivity) and self.sensitivity > 0):
            found.append(f"sensitivity must be a positive number, got {self.sensitivity}")
        if self.direction not in _DIRECTIONS:
            found.append(f"direction must be one of {_DIRECTIONS}, got {self.direction!r}")
        if not (math.isfinite(self.min_relative_change) and self.min_relative_change >= 0):
            found.append(
                f"min_relative_change must be a fraction of at least 0, "
                f"got {self.min_relative_change}"
            )
        if self.seasonality is not None and self.seasonality not in _SEASONALITIES:
            found.append(
                f"seasonality must be None or one of {_SEASONALITIES}, got {self.seasonality!r}"
            )
        if self.method not in _METHODS:
            found.append(f"method must be one of {_METHODS}, got {self.method!r}")
        return tuple(found)


@dataclass(frozen=True, slots=True)
class Point:
    """One past value of a metric, when it was recorded, and why it may not train the band."""

    value: float | None
    at: datetime | None = None
    """The point's time (its partition's start, or its run's time), for seasonality."""
    excluded: str | None = None
    """Why this point must never train a band, such as `"incident"`; `None` when it may."""


@dataclass(frozen=True, slots=True)
class Band:
    """The verdict on one value: the band learnt from the past, and whether the value is in it."""

    passed: bool
    value: float | None
    lower: float | None
    """The lowest value that passes; `None` before enough history."""
    upper: float | None
    """The highest value that passes; `None` before enough history."""
    centre: float | None
    """The median (or mean) of the training points."""
    score: float | None
    """How many spreads the value lies from the centre, signed (above is positive), the spread
    widened to the relative floor where the floor is wider: beyond `sensitivity` in absolute
    value is outside the band. Infinite only when the past is flat at 0 with no floor and the
    value is not; `None` when nothing was judged."""
    used: int
    """How many past points gave the centre (of the same season, with a seasonality)."""
    spread_from: int = 0
    """How many past points, of every season, gave the spread."""
    excluded: Mapping[str, int] = field(default_factory=dict)
    """Past points within the training window kept out of it, counted by reason."""
    window: tuple[datetime | None, datetime | None] = (None, None)
    """The times of the oldest and newest training points."""
    enough_history: bool = False
    sentence: str = ""
    """What the verdict means, in one sentence a person can act on."""


def judge_point(
    history: Sequence[Point],
    value: float | None,
    at: datetime | None,
    settings: AnomalySettings,
    *,
    metric: str = "the metric",
) -> Band:
    """Judge `value` against the band its past points give.

    Parameters
    ----------
    history
        The metric's points before the judged one, oldest first; the judged one is not among
        them.
    value
        The judged value; `None` (a metric that could not be computed) passes unjudged.
    at
        The judged point's time, whose season picks the training points.
    settings
        The window, sensitivity, direction, floor, seasonality and method.
    metric
        How the sentence names the metric, such as `"null_fraction of email"`.

    Returns
    -------
    Band
        Whether the value passed, the band, the score and the training points used.
    """
    training, excluded, seasonal = _training(history, at, settings)
    first = training[0].at if training else None
    last = training[-1].at if training else None
    values = [_usable(point.value) for point in training]
    numbers = [number for number in values if number is not None]

    def unjudged(why: str) -> Band:
        return Band(
            passed=True,
            value=value,
            lower=None,
            upper=None,
            centre=None,
            score=None,
            used=len(numbers),
            excluded=excluded,
            window=(first, last),
            enough_history=len(numbers) >= settings.min_history,
            sentence=why,
        )

    source = _source(len(numbers), seasonal, settings)
    if len(numbers) < settings.min_history:
        return unjudged(
            f"{metric} is not judged yet: it has {_count(len(numbers), seasonal, settings)} "
            f"and needs {settings.min_history} before it judges"
        )
    judged = _usable(value)
    centre = _centre(numbers, settings.method)
    groups = _seasons(history, settings) if seasonal else [numbers]
    spread, spread_from = _pooled_spread(groups, centre, settings.method)
    # NOTE: a new value strays from a centre learnt from n points by more than the points stray
    # from it: the prediction interval's widening, with the sample median's variance (pi/2)/n.
    spread *= math.sqrt(1 + _CENTRE_VARIANCE[settings.method] / len(numbers))
    half_width = max(settings.sensitivity * spread, settings.min_relative_change * abs(centre))
    lower, upper = centre - half_width, centre + half_width
    if judged is None:
        band = unjudged(f"{metric} has no value to judge; expected {_span(lower, upper)}")
        return replace(band, lower=lower, upper=upper, centre=centre, spread_from=spread_from)
    score = _score(judged, centre, half_width / settings.sensitivity)
    above, below = judged > upper, judged < lower
    fails_above = above and settings.direction in ("spike", "both")
    fails_below = below and settings.direction in ("drop", "both")
    passed = not (fails_above or fails_below)
    return Band(
        passed=passed,
        value=judged,
        lower=lower,
        upper=upper,
        centre=centre,
        score=score,
        used=len(numbers),
        spread_from=spread_from,
        excluded=excluded,
        window=(first, last),
        enough_history=True,
        sentence=_sentence(metric, judged, lower, upper, score, source, above, below, passed),
    )


def season_of(at: datetime, seasonality: Seasonality) -> int:
    """The season of a time: its weekday (0 is Monday), its hour, or its day of the month."""
    if seasonality == "day_of_week":
        return at.weekday()
    if seasonality == "hour_of_day":
        return at.hour
    return at.day


def _training(
    history: Sequence[Point], at: datetime | None, settings: AnomalySettings
) -> tuple[list[Point], dict[str, int], bool]:
    # NOTE: newest first, so the window is the most recent training points, and the excluded
    # counts are those met on the way back to the oldest point used (not all of history).
    newest_first = list(reversed(history))
    if settings.seasonality is not None and at is not None:
        season = season_of(at, settings.seasonality)
        alike = [
            point
            for point in newest_first
            if point.at is not None and season_of(point.at, settings.seasonality) == season
        ]
        picked, excluded = _take(alike, settings.training_window)
        return picked, excluded, True
    picked, excluded = _take(newest_first, settings.training_window)
    return picked, excluded, False


def _take(newest_first: Sequence[Point], window: int) -> tuple[list[Point], dict[str, int]]:
    picked: list[Point] = []
    excluded: Counter[str] = Counter()
    for point in newest_first:
        if len(picked) == window:
            break
        if point.excluded is not None:
            excluded[point.excluded] += 1
        elif _usable(point.value) is None:
            excluded[NO_VALUE] += 1
        else:
            picked.append(point)
    picked.reverse()
    return picked, dict(excluded)


def _usable(value: float | None) -> float | None:
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _seasons(history: Sequence[Point], settings: AnomalySettings) -> list[list[float]]:
    # NOTE: each season's training points are picked as the judged season's are (`_take`).
    assert settings.seasonality is not None
    by_season: dict[int, list[Point]] = {}
    for point in reversed(history):
        if point.at is not None:
            by_season.setdefault(season_of(point.at, settings.seasonality), []).append(point)
    return [
        [
            number
            for point in _take(points, settings.training_window)[0]
            if (number := _usable(point.value)) is not None
        ]
        for points in by_season.values()
    ]


def _centre(numbers: Sequence[float], method: Method) -> float:
    return statistics.fmean(numbers) if method == "mean_std" else statistics.median(numbers)


def _pooled_spread(
    groups: Sequence[Sequence[float]], centre: float, method: Method
) -> tuple[float, int]:
    trained = [group for group in groups if len(group) >= 2]
    centres = [_centre(group, method) for group in trained]
    # NOTE: a weekend at half the rows has half the noise in rows: residuals relative to their
    # season's centre pool fairly, unless a centre is 0 or the centres differ in sign.
    relative = all(c > 0 for c in centres) or all(c < 0 for c in centres)
    scale = abs(centre) if relative else 1.0
    residuals: list[float] = []
    for group, own in zip(trained, centres, strict=True):
        unit = abs(own) if relative else 1.0
        if method == "mean_std":
            residuals.extend((number - own) / unit for number in group)
        else:
            # NOTE: a point is nearer its own group's median than a new point is: n/(n-1)
            # undoes that, as the pooled variance's degrees of freedom do for the mean.
            widen = math.sqrt(len(group) / (len(group) - 1))
            residuals.extend(widen * abs(number - own) / unit for number in group)
    if method == "mean_std":
        freedom = len(residuals) - len(trained)
        return scale * math.sqrt(sum(r * r for r in residuals) / freedom), len(residuals)
    return scale * MAD_TO_STD * statistics.median(residuals), len(residuals)


def _score(value: float, centre: float, spread: float) -> float:
    if spread > 0:
        return (value - centre) / spread
    # NOTE: the spread here is already widened to the floor, so only a past flat at 0 (whose
    # floor is 0 too) has none: any other value is then infinitely far from it.
    if value == centre:
        return 0.0
    return math.copysign(math.inf, value - centre)


def _source(count: int, seasonal: bool, settings: AnomalySettings) -> str:
    return f"from {_count(count, seasonal, settings).replace('usable ', '')}"


def _count(count: int, seasonal: bool, settings: AnomalySettings) -> str:
    points = "usable earlier point" if count == 1 else "usable earlier points"
    if seasonal and settings.seasonality is not None:
        alike = {
            "day_of_week": "of the same weekday",
            "hour_of_day": "of the same hour",
            "day_of_month": "of the same day of the month",
        }[settings.seasonality]
        return f"{count} {points} {alike}"
    return f"{count} {points}"


def _span(lower: float, upper: float) -> str:
    return f"{_number(lower)}\u2013{_number(upper)}"  # NOTE: an en dash, as ranges are printed


def _number(value: float) -> str:
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if abs(value) >= 1e9 or abs(value) < 1:
        return f"{value:.3g}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"


def _sentence(
    metric: str,
    value: float,
    lower: float,
    upper: float,
    score: float,
    source: str,
    above: bool,
    below: bool,
    passed: bool,
) -> str:
    where = "above" if above else "below" if below else "within"
    shown = "∞" if score == math.inf else "-∞" if score == -math.inf else f"{score:.1f}"
    tail = f"(score {shown}, {source})"
    sentence = f"{metric} is {_number(value)}, {where} the expected {_span(lower, upper)} {tail}"
    if (above or below) and passed:
        return f"{sentence}; only {'drops' if above else 'spikes'} are watched"
    return sentence

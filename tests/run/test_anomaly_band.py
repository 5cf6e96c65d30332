"""The anomaly band: a metric's expected range from its own past, and the verdict on a new value.

The properties compare `judge_point` with a plain computation written here (filter, pick the
season, take the window, sort, take the middle), and check what must never move the band:
excluded points, points of other seasons, the side a direction ignores, a change within the
relative floor.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dagster_dataframely._run.checks.anomaly_band import (
    AnomalySettings,
    Point,
    judge_point,
)

START = datetime(2026, 1, 5)  # a Monday


def daily(values: list[float | None], start: datetime = START) -> list[Point]:
    return [Point(value, start + timedelta(days=day)) for day, value in enumerate(values)]


def plain_median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def plain_season(at: datetime, seasonality: str) -> int:
    return {"day_of_week": at.isoweekday(), "hour_of_day": at.hour, "day_of_month": at.day}[
        seasonality
    ]


def plain_band(
    history: list[Point], at: datetime | None, chosen: AnomalySettings
) -> tuple[int, float | None, float | None, float | None]:
    """(points used, centre, lower, upper), computed the obvious way.

    The centre: the judged season's latest points. The spread: every season's latest points,
    each measured from its own season's centre (relative to it when every centre has one sign),
    pooled; then widened for a centre learnt from n points.
    """
    usable = [
        p for p in history if p.excluded is None and p.value is not None and math.isfinite(p.value)
    ]
    window = chosen.training_window
    groups: dict[int, list[float]] = {}
    if chosen.seasonality is not None and at is not None:
        for p in usable:
            if p.at is not None and p.value is not None:
                groups.setdefault(plain_season(p.at, chosen.seasonality), []).append(p.value)
        groups = {season: points[-window:] for season, points in groups.items()}
        values = groups.get(plain_season(at, chosen.seasonality), [])
    else:
        values = [float(p.value) for p in usable if p.value is not None][-window:]
        groups = {0: values}
    if len(values) < chosen.min_history:
        return len(values), None, None, None
    mean = chosen.method == "mean_std"

    def centre_of(points: list[float]) -> float:
        return sum(points) / len(points) if mean else plain_median(points)

    trained = [points for points in groups.values() if len(points) >= 2]
    centres = [centre_of(points) for points in trained]
    relative = all(c > 0 for c in centres) or all(c < 0 for c in centres)
    centre = centre_of(values)
    if mean:
        squares = sum(
            ((v - c) / (abs(c) if relative else 1.0)) ** 2
            for points, c in zip(trained, centres, strict=True)
            for v in points
        )
        spread = math.sqrt(squares / (sum(map(len, trained)) - len(trained)))
    else:
        spread = 1.4826 * plain_median(
            [
                math.sqrt(len(points) / (len(points) - 1))
                * abs(v - c)
                / (abs(c) if relative else 1.0)
                for points, c in zip(trained, centres, strict=True)
                for v in points
            ]
        )
    if relative:
        spread *= abs(centre)
    spread *= math.sqrt(1 + (1.0 if mean else math.pi / 2) / len(values))
    half = max(chosen.sensitivity * spread, chosen.min_relative_change * abs(centre))
    return len(values), centre, centre - half, centre + half


def plain_score(
    value: float, centre: float, lower: float, upper: float, sensitivity: float
) -> float:
    half = (upper - lower) / 2
    if half == 0:
        return 0.0 if value == centre else math.copysign(math.inf, value - centre)
    return (value - centre) / (half / sensitivity)


values = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False)
past_values = st.one_of(values, values, values, st.none(), st.just(math.nan))
reasons = st.sampled_from([None, None, None, "incident", "backfill"])
all_settings = st.builds(
    AnomalySettings,
    training_window=st.integers(2, 30),
    min_history=st.integers(2, 6),
    sensitivity=st.floats(0.5, 5),
    direction=st.sampled_from(["spike", "drop", "both"]),
    min_relative_change=st.sampled_from([0.0, 0.05, 0.2]),
    seasonality=st.sampled_from([None, "day_of_week", "hour_of_day", "day_of_month"]),
    method=st.sampled_from(["median_mad", "mean_std"]),
).filter(lambda chosen: not chosen.problems())


@st.composite
def histories(draw: st.DrawFn) -> tuple[list[Point], datetime]:
    """Past points, oldest first, some hours or days apart, and the judged point's time."""
    steps = draw(st.lists(st.integers(1, 40), max_size=60))
    at = START
    points = []
    for step in steps:
        points.append(Point(draw(past_values), at, draw(reasons)))
        at += timedelta(hours=step * 6)
    return points, at


@settings(max_examples=300, deadline=None)
@given(histories(), values, all_settings)
def test_the_band_is_the_plain_computation_over_the_same_history(
    drawn: tuple[list[Point], datetime], value: float, chosen: AnomalySettings
) -> None:
    history, at = drawn
    band = judge_point(history, value, at, chosen)
    used, centre, lower, upper = plain_band(history, at, chosen)
    assert band.used == used
    assert band.enough_history == (centre is not None)
    if centre is None or lower is None or upper is None:
        assert band.passed
        assert band.lower is band.upper is band.score is None
        return
    assert band.centre == pytest.approx(centre, rel=1e-9, abs=1e-9)
    assert band.lower == pytest.approx(lower, rel=1e-9, abs=1e-9)
    assert band.upper == pytest.approx(upper, rel=1e-9, abs=1e-9)
    fails = (value > upper and chosen.direction != "drop") or (
        value < lower and chosen.direction != "spike"
    )
    assert band.passed == (not fails)
    assert band.score == pytest.approx(
        plain_score(value, centre, lower, upper, chosen.sensitivity), rel=1e-6, abs=1e-6
    )


@settings(max_examples=200, deadline=None)
@given(histories(), values, all_settings, st.data())
def test_excluded_points_never_change_the_band(
    drawn: tuple[list[Point], datetime], value: float, chosen: AnomalySettings, data: st.DataObject
) -> None:
    history, at = drawn
    before = judge_point(history, value, at, chosen)
    marked = list(history)
    for _ in range(data.draw(st.integers(1, 10))):
        where = data.draw(st.integers(0, len(marked)))
        when = marked[where - 1].at if where else START
        marked.insert(where, Point(data.draw(values), when, data.draw(st.just("incident"))))
    after = judge_point(marked, value, at, chosen)
    same = ("passed", "lower", "upper", "centre", "score", "used", "enough_history")
    assert [getattr(after, name) for name in same] == [getattr(before, name) for name in same]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(values, min_size=7, max_size=20),
    st.lists(values, min_size=1, max_size=40),
    values,
    st.sampled_from(["median_mad", "mean_std"]),
)
def test_points_of_other_weekdays_never_move_a_weekly_centre(
    same_weekday: list[float], other_days: list[float], value: float, method: str
) -> None:
    chosen = AnomalySettings(seasonality="day_of_week", method=method)  # type: ignore[arg-type]
    weekly = [Point(v, START + timedelta(weeks=week)) for week, v in enumerate(same_weekday)]
    at = START + timedelta(weeks=len(same_weekday))
    mixed = weekly + [
        Point(v, START + timedelta(weeks=day // 6, days=1 + day % 6))
        for day, v in enumerate(other_days)
    ]
    mixed.sort(key=lambda point: point.at or START)
    alone = judge_point(weekly, value, at, chosen)
    together = judge_point(mixed, value, at, chosen)
    assert (together.centre, together.used, together.window) == (
        alone.centre,
        alone.used,
        alone.window,
    )
    assert together.spread_from >= alone.spread_from
    assert "of the same weekday" in together.sentence


def test_a_few_quiet_mondays_borrow_the_spread_of_every_weekday() -> None:
    # Four Mondays that happen to agree closely would give a razor-thin band alone; the other
    # weekdays' noise (each around its own level) says how far a Monday may stray.
    mondays = [1000.0, 1001.0, 1000.0, 1001.0]
    chosen = AnomalySettings(min_relative_change=0.0, training_window=4)
    points = []
    for week, monday in enumerate(mondays):
        points.append(Point(monday, START + timedelta(weeks=week)))
        for day, level in enumerate((1000.0, 1000.0, 1000.0, 1000.0, 500.0, 500.0), start=1):
            noise = (-40.0, 40.0, -20.0, 20.0)[(week + day) % 4] * level / 1000
            points.append(Point(level + noise, START + timedelta(weeks=week, days=day)))
    at = START + timedelta(weeks=len(mondays))
    alone = judge_point(points[::7], 1040.0, at, chosen)
    pooled = judge_point(points, 1040.0, at, chosen)
    assert not alone.passed
    assert pooled.passed
    assert pooled.used == alone.used == 4
    assert pooled.spread_from == 28
    assert pooled.centre == alone.centre == 1000.5


def test_a_season_at_zero_pools_absolute_distances() -> None:
    # A null fraction that is 0 every Sunday: relative distances have no unit there.
    points = []
    for week in range(6):
        for day in range(7):
            level = 0.0 if day == 6 else 0.02
            noise = 0.001 * ((week + day) % 3 - 1) * (day != 6)
            points.append(Point(level + noise, START + timedelta(weeks=week, days=day)))
    at = START + timedelta(weeks=6)
    band = judge_point(points, 0.02, at, AnomalySettings(min_relative_change=0.0))
    assert band.spread_from == 42
    assert band.lower is not None
    assert band.upper is not None
    assert band.lower < 0.02 < band.upper
    assert math.isfinite(band.upper)


@settings(max_examples=200, deadline=None)
@given(histories(), values, all_settings)
def test_a_direction_fails_only_on_its_side(
    drawn: tuple[list[Point], datetime], value: float, chosen: AnomalySettings
) -> None:
    history, at = drawn
    verdicts = {
        direction: judge_point(history, value, at, _with(chosen, direction=direction))
        for direction in ("spike", "drop", "both")
    }
    both = verdicts["both"]
    if both.upper is None or both.lower is None:
        return
    assert verdicts["spike"].passed == (value <= both.upper)
    assert verdicts["drop"].passed == (value >= both.lower)
    assert both.passed == (verdicts["spike"].passed and verdicts["drop"].passed)


@settings(max_examples=200, deadline=None)
@given(histories(), all_settings, st.floats(-1, 1))
def test_a_change_within_the_relative_floor_never_fails(
    drawn: tuple[list[Point], datetime], chosen: AnomalySettings, fraction: float
) -> None:
    history, at = drawn
    centre = judge_point(history, 0.0, at, chosen).centre
    if centre is None:
        return
    value = centre + fraction * chosen.min_relative_change * abs(centre) * (1 - 1e-9)
    assert judge_point(history, value, at, chosen).passed


def test_the_judged_point_is_not_in_its_own_band() -> None:
    # NOTE: Elementary's reported case: with the new value inside its 14-point training set, a
    # 25% jump of a steady metric passed at sensitivity 2.
    history = daily([100.0, 101.0, 99.0, 100.0, 102.0, 98.0, 100.0] * 2)
    chosen = AnomalySettings(training_window=14, sensitivity=2, seasonality=None, method="mean_std")
    band = judge_point(history, 125.0, START + timedelta(days=14), chosen)
    assert not band.passed
    assert band.used == 14


def test_until_min_history_the_value_passes_and_says_so() -> None:
    history = daily([0.01, 0.02, 0.01])
    at = START + timedelta(days=3)
    chosen = AnomalySettings(seasonality=None)
    band = judge_point(history, 0.9, at, chosen, metric="null_fraction of email")
    assert band.passed
    assert not band.enough_history
    assert (band.lower, band.upper, band.score) == (None, None, None)
    assert band.sentence == (
        "null_fraction of email is not judged yet: it has 3 usable earlier points "
        "and needs 4 before it judges"
    )


def test_a_seasonal_band_waits_for_enough_points_of_its_season() -> None:
    # NOTE: three weeks of a metric with quiet weekends: a band from every day would flag the
    # fourth Saturday; the weekly band waits for a fourth Saturday in the past.
    history = daily([100.0, 102.0, 98.0, 101.0, 99.0, 20.0, 21.0] * 3)
    saturday = START + timedelta(days=21 + 5)
    band = judge_point(history, 20.0, saturday, AnomalySettings(), metric="row count")
    assert band.passed
    assert not band.enough_history
    assert band.used == 3
    assert band.sentence == (
        "row count is not judged yet: it has 3 usable earlier points of the same weekday "
        "and needs 4 before it judges"
    )


def test_the_sentence_names_value_band_score_and_training_points() -> None:
    history = daily([0.01, 0.012, 0.01, 0.011, 0.01, 0.012, 0.011] * 3)
    at = START + timedelta(days=21)
    chosen = AnomalySettings(training_window=12, sensitivity=5, seasonality=None)
    band = judge_point(history, 0.31, at, chosen, metric="null_fraction of email")
    assert not band.passed
    assert band.used == 12
    assert band.sentence == (
        "null_fraction of email is 0.31, above the expected 0.00277\u20130.0192 "
        "(score 181.6, from 12 earlier points)"
    )


def test_a_seasonal_band_says_it_is_from_the_same_weekday() -> None:
    weekends_low = [100.0, 102.0, 98.0, 101.0, 99.0, 20.0, 21.0]
    history = daily(weekends_low * 8)
    saturday = START + timedelta(days=56 + 5)
    chosen = AnomalySettings(min_relative_change=0.15)
    band = judge_point(history, 20.5, saturday, chosen, metric="row count")
    assert band.passed
    assert band.used == 8
    assert band.window == (START + timedelta(days=5), START + timedelta(days=54))
    assert band.sentence == (
        "row count is 20.5, within the expected 17.0\u201323.0 "
        "(score 0.8, from 8 earlier points of the same weekday)"
    )
    assert "from 8 earlier points of the same weekday" in band.sentence
    assert not judge_point(history, 100.0, saturday, AnomalySettings()).passed


def test_excluded_points_are_counted_by_reason() -> None:
    history = daily([10.0] * 10)
    history[4] = Point(500.0, history[4].at, "incident")
    history[6] = Point(None, history[6].at)
    band = judge_point(history, 10.0, START + timedelta(days=10), AnomalySettings(seasonality=None))
    assert band.excluded == {"incident": 1, "no value": 1}
    assert band.used == 8


def test_a_flat_past_lets_only_the_relative_floor_decide() -> None:
    history = daily([200.0] * 10)
    chosen = AnomalySettings(seasonality=None, sensitivity=5, min_relative_change=0.05)
    inside = judge_point(history, 209.0, START + timedelta(days=10), chosen)
    outside = judge_point(history, 211.0, START + timedelta(days=10), chosen)
    assert inside.passed
    assert (inside.lower, inside.upper) == (190.0, 210.0)
    assert not outside.passed
    assert outside.score == pytest.approx(5.5)  # 11 over a spread widened to 10 / 5
    assert judge_point(daily([0.0] * 10), 0.001, None, chosen).score == math.inf
    assert judge_point(history, 200.0, None, chosen).score == 0.0


def test_mad_is_scaled_to_a_standard_deviation() -> None:
    history = daily([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    chosen = AnomalySettings(seasonality=None, sensitivity=1, min_relative_change=0)
    band = judge_point(history, 4.0, None, chosen)
    assert band.centre == 4.0
    # MAD 2, scaled by 1.4826, taken 7/6 wider (a point is nearer its own sample's median than
    # a new one is), and widened by sqrt(1 + (pi/2)/7) for a median of 7 points.
    expected = 2 * 1.4826 * math.sqrt(7 / 6) * math.sqrt(1 + math.pi / 2 / 7)
    assert band.upper == pytest.approx(4.0 + expected)


def test_a_missing_value_passes_unjudged_but_shows_the_band() -> None:
    history = daily([5.0, 6.0, 5.0, 6.0, 5.0, 6.0, 5.0])
    band = judge_point(history, None, None, AnomalySettings(seasonality=None), metric="mean")
    assert band.passed
    assert band.score is None
    assert band.lower is not None
    assert band.sentence.startswith("mean has no value to judge; expected ")


def test_unusable_settings_are_named() -> None:
    problems = AnomalySettings(training_window=5, min_history=9, sensitivity=0).problems()
    assert problems == (
        "min_history (9) cannot exceed training_window (5): the band would never be judged",
        "sensitivity must be a positive number, got 0",
    )
    assert AnomalySettings().problems() == ()


def _with(chosen: AnomalySettings, **changes: object) -> AnomalySettings:
    from dataclasses import replace

    return replace(chosen, **changes)  # type: ignore[arg-type]

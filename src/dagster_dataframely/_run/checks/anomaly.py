"""The anomaly checks, `dy_anomaly__<metric>`: each watched metric against its own past's band.

A run measures the metrics it watches on the rows the table gets, with the same code that
records them on the materialization (`report.metrics`), so the value judged is the value the
next runs learn from. Its history is the metric's series of the partition (or the asset), read
with every other kind's when the run starts, so the evaluated run is never in it; the points
of materializations marked as incidents are kept out (`anomaly_band` computes the band).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import dagster as dg

from dagster_dataframely._model import names
from dagster_dataframely._model.anomaly_check import ROW_COUNT, AnomalyCheck, split_metric
from dagster_dataframely._model.schema import SchemaInfo
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely.errors import (
    InvalidArgumentsError,
    MetricAnomalyError,
    ValidationFailedError,
)

from . import anomaly_band
from .history import History, Point, Series
from .kind import NOTHING_WRITTEN, DeclaredCheck, Judged, Reported, Target, When
from .metric_names import recorded_metrics

INCIDENT = "incident"
"""Why a point never trains a band: its materialization was marked as an incident."""

_SEASON_SPAN = {None: 1, "day_of_week": 7, "hour_of_day": 24, "day_of_month": 31}
"""How many points hold one of a season's: the history read is the window times this."""

_PARTITION_TIMES = ("%Y-%m-%d-%H:%M", "%Y-%m-%d", "%Y-%m")
"""Dagster's default formats of hourly, daily and monthly partition keys."""


@dataclass(frozen=True, slots=True)
class AnomalyVerdict:
    """Each watched metric's band, by metric name, for one run."""

    check: AnomalyCheck
    bands: Mapping[str, anomaly_band.Band]
    writes: bool = True
    """Whether the run writes the table; the checks of a stored table fail no run."""

    @property
    def fails_run(self) -> bool:
        """A metric outside its band, at `ERROR`: the run fails and the table is not written."""
        failed = any(not band.passed for band in self.bands.values())
        return self.writes and failed and self.check.severity == dg.AssetCheckSeverity.ERROR

    def error(self, output: ValidatedOutput, address: str | None) -> ValidationFailedError | None:
        if not self.fails_run:
            return None
        sentences = [band.sentence for band in self.bands.values() if not band.passed]
        return MetricAnomalyError(output.key.to_user_string(), sentences, address=address)


class Anomaly:
    """The anomaly checks, where the quality policy has a `dd.AnomalyCheck`."""

    name = "anomaly"
    when = When.BEFORE_WRITE

    def declare(self, target: Target) -> list[DeclaredCheck]:
        policy = target.policy
        if policy is None or policy.anomaly is None:
            return []
        check = policy.anomaly
        _refuse_unknown_metrics(target.info, check)
        return [
            DeclaredCheck(
                names.anomaly_check_name(metric),
                check.describe(metric),
                blocking=policy.blocks_own_checks,
            )
            for metric in check.metrics
        ]

    def series(self, output: ValidatedOutput) -> tuple[Series, ...]:
        check = _check(output)
        if check is None:
            return ()
        watched = tuple(_series(check, metric, _reads_table(output)) for metric in check.metrics)
        # NOTE: a stored table's evaluations carry the run's incident tag in their points.
        return watched if _reads_table(output) else (*watched, _incidents(check))

    def judge(self, judged: Judged) -> AnomalyVerdict | None:
        check = _check(judged.output)
        if check is None:
            return None
        values = _measured(judged, check)
        incidents = _incident_runs(judged.history, check)
        at = _partition_time(judged.partition_key) or datetime.now(UTC)
        settings = anomaly_band.AnomalySettings(
            training_window=check.training_window,
            min_history=check.min_history,
            sensitivity=check.sensitivity,
            direction=check.direction,
            min_relative_change=check.min_relative_change,
            seasonality=check.seasonality,
            method=check.method,
        )
        bands = {
            metric: anomaly_band.judge_point(
                _training_points(
                    judged.history.get(_series(check, metric, _reads_table(judged.output)), ()),
                    incidents,
                ),
                values.get(metric),
                at,
                settings,
                metric=_metric_words(metric),
            )
            for metric in check.metrics
        }
        return AnomalyVerdict(check, bands, writes=not _reads_table(judged.output))

    def results(
        self, verdict: AnomalyVerdict | None, reported: Reported
    ) -> list[dg.AssetCheckResult]:
        check = _check(reported.output)
        if check is None:
            return []
        results = []
        for metric in check.metrics:
            band = verdict.bands.get(metric) if verdict is not None else None
            recorded: dict[str, Any] = {}
            if band is not None and band.value is not None and _reads_table(reported.output):
                # NOTE: nothing materializes a stored table here: the evaluation records the
                # metric, under the materialization's name, for the next evaluations' band.
                recorded[_key(metric)] = band.value
            results.append(
                dg.AssetCheckResult(
                    check_name=names.anomaly_check_name(metric),
                    asset_key=reported.output.key,
                    passed=band is None or band.passed,
                    severity=check.severity,
                    description=band.sentence + "." if band is not None else NOTHING_WRITTEN,
                    metadata={
                        **(_band_metadata(band) if band else {}),
                        **recorded,
                        **reported.metadata,
                    },
                )
            )
        return results


def _check(output: ValidatedOutput) -> AnomalyCheck | None:
    policy = output.settings.policy
    return policy.anomaly if policy is not None else None


def _key(metric: str) -> str:
    column, name = split_metric(metric)
    return names.ROW_COUNT if column is None else names.metric_key(column, name)


def _window(check: AnomalyCheck) -> int:
    # NOTE: twice the points a band trains on, so as many incidents as training points can be
    # skipped and the window still fills; more than that shortens it.
    return 2 * check.training_window * _SEASON_SPAN[check.seasonality]


def _reads_table(output: ValidatedOutput) -> bool:
    # NOTE: the checks of a stored table (`dd.table_checks`) write nothing, so their history
    # is their own past evaluations, not materializations something else made.
    policy = output.settings.policy
    return policy is not None and not policy.writes


def _series(check: AnomalyCheck, metric: str, evaluations: bool = False) -> Series:
    wide = check.compare_with == "asset"
    source = names.anomaly_check_name(metric) if evaluations else None
    return Series(_key(metric), _window(check), asset_wide=wide, reads_marks=True, check=source)


def _incidents(check: AnomalyCheck) -> Series:
    return Series(names.INCIDENT, _window(check), asset_wide=check.compare_with == "asset")


def _incident_runs(history: History, check: AnomalyCheck) -> set[tuple[str, str | None]]:
    # NOTE: the flag is a metadata key of the materialization itself, so its points are those
    # of the marked materializations, named by run and partition.
    return {(p.run_id, p.partition) for p in history.get(_incidents(check), ()) if p.value}


def _training_points(
    points: Sequence[Point], incidents: set[tuple[str, str | None]]
) -> list[anomaly_band.Point]:
    return [
        anomaly_band.Point(
            value=float(p.value) if isinstance(p.value, int | float) else None,
            at=_partition_time(p.partition) or datetime.fromtimestamp(p.timestamp, UTC),
            excluded=INCIDENT if _is_incident(p, incidents) else None,
        )
        for p in reversed(points)  # the history is newest first; the band reads oldest first
    ]


def _is_incident(point: Point, incidents: set[tuple[str, str | None]]) -> bool:
    # NOTE: a mark set after the run (`dd.mark_incident`, read into the point's tags) decides
    # over the run's tag, so a run started as an incident can be cleared later, and the reverse.
    mark = point.tags.get(names.INCIDENT_TAG)
    if mark is not None:
        return mark == "true"
    return (point.run_id, point.partition) in incidents


def _partition_time(partition_key: str | None) -> datetime | None:
    if partition_key is None:
        return None
    for layout in _PARTITION_TIMES:
        try:
            return datetime.strptime(partition_key, layout).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _measured(judged: Judged, check: AnomalyCheck) -> dict[str, float]:
    values: dict[str, float] = {ROW_COUNT: float(judged.written)}
    columns = [c for c, _ in map(split_metric, check.metrics) if c is not None]
    if not columns or judged.table is None or judged.measure is None:
        return values
    recorded = judged.measure(judged.table, columns, judged.output.info)
    for metric in check.metrics:
        column, name = split_metric(metric)
        if column is not None and names.metric_key(column, name) in recorded:
            values[metric] = recorded[names.metric_key(column, name)]
    return values


def _metric_words(metric: str) -> str:
    column, name = split_metric(metric)
    return "the row count" if column is None else f"{name} of {column}"


def _band_metadata(band: anomaly_band.Band) -> dict[str, Any]:
    figures: dict[str, Any] = {
        names.ANOMALY_VALUE: band.value,
        names.ANOMALY_LOWER: band.lower,
        names.ANOMALY_UPPER: band.upper,
        names.ANOMALY_CENTRE: band.centre,
        names.ANOMALY_SCORE: band.score if band.score is None or abs(band.score) < 1e300 else None,
        names.ANOMALY_TRAINING_POINTS: band.used,
        names.ANOMALY_SPREAD_POINTS: band.spread_from or None,
    }
    metadata = {key: value for key, value in figures.items() if value is not None}
    first, last = band.window
    if first is not None and last is not None:
        metadata[names.ANOMALY_TRAINING_WINDOW] = f"{first.isoformat()} to {last.isoformat()}"
    metadata[names.ANOMALY_EXCLUDED] = dg.MetadataValue.json(dict(band.excluded))
    return metadata


def _refuse_unknown_metrics(info: SchemaInfo, check: AnomalyCheck) -> None:
    for metric in check.metrics:
        column, name = split_metric(metric)
        if column is None:
            continue
        if column not in info.columns:
            raise InvalidArgumentsError(
                "AnomalyCheck",
                f"metric {metric!r} names column {column!r}, which schema {info.name} does not "
                "declare",
                f"Name one of its columns: {sorted(info.columns)}.",
            )
        allowed = recorded_metrics(info.columns[column].dtype, sensitive=column in info.sensitive)
        if name not in allowed:
            why = " (a sensitive column records its null fraction only)" * (
                column in info.sensitive
            )
            raise InvalidArgumentsError(
                "AnomalyCheck",
                f"column {column!r} records no metric {name!r}{why}",
                f"Watch one of {[f'{column}/{m}' for m in allowed]}, or 'row_count'.",
            )


ANOMALY = Anomaly()

"""A check that learns: the app's orders judged against their own past, and a replayed incident.

`app_orders` watches its row count and its channel's null fraction with `dd.AnomalyCheck`.
`make demo` replays the feed: quiet days first, then a day when the app stopped sending the
channel of half its lines (a null burst the schema allows: the channel is nullable). The check
fires on that day at `WARN` (the table is still written), and the demo then marks the run an
incident with `dd.mark_incident`, so it never widens the band of the days after it.
"""

from collections.abc import Mapping
from typing import Any

import dagster as dg
import polars as pl

import dagster_dataframely as dd

from ._data import order_lines
from .schema import Orders

QUIET_DAYS = 2
"""The quiet replays before the incident; with the demo's own run, the check's `min_history`."""

REPLAY = {"day": 0, "broken": False}
"""Which day of the feed `app_orders` returns, and whether the app dropped the channel."""

ANOMALY = dd.AnomalyCheck(
    metrics=["row_count", "channel/null_fraction"], min_history=QUIET_DAYS + 1, seasonality=None
)


@dd.asset(Orders, quality_policy=dd.QualityPolicy(anomaly=ANOMALY), group_name="observability")
def app_orders() -> pl.DataFrame:
    """The app's orders of one day; on a broken day half the lines arrive without a channel."""
    lines = order_lines(200, seed=REPLAY["day"])
    if not REPLAY["broken"]:
        return lines
    dropped = pl.int_range(pl.len()) % 2 == 0
    return lines.with_columns(channel=pl.when(dropped).then(None).otherwise(pl.col("channel")))


def replay_incident(
    instance: dg.DagsterInstance, resources: Mapping[str, Any] | None, run_config: Mapping[str, Any]
) -> tuple[dg.AssetCheckEvaluation, ...]:
    """Quiet days, then the broken one, marked an incident; the checks that failed on it."""
    for day in range(1, QUIET_DAYS + 1):
        REPLAY.update(day=day, broken=False)
        dg.materialize([app_orders], resources=resources, instance=instance, run_config=run_config)
    REPLAY.update(day=QUIET_DAYS + 1, broken=True)
    broken = dg.materialize(
        [app_orders], resources=resources, instance=instance, run_config=run_config
    )
    REPLAY.update(day=0, broken=False)
    dd.mark_incident(instance, app_orders.key, broken.run_id)
    return tuple(e for e in broken.get_asset_check_evaluations() if not e.passed)

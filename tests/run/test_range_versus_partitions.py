"""A range run against the same partitions run one at a time: the same verdicts and rows.

A single-run backfill of `dd.asset` decides and reports each partition on its own, so on any
frame (rules failing or not, a primary key repeated across days or within one, a quarantine
or none, a rule made a warning) each partition's checks, materialization metadata and
quarantined rows are those of a run of that partition alone, and the range fails exactly when
one of those runs does, with the first one's error. The DuckDB manager's version of this
property, with the quality policy's history, is in `integration_tests/test_partition_ranges.py`.
"""

import datetime as dt
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from tests.asset_support import QUIET, first_failure, range_tags, value

from .test_partition_range import DAILY, DAYS, SINGLE_RUN, RangeStore

pytestmark = pytest.mark.filterwarnings("ignore::dagster.PreviewWarning")


class Sales(dy.Schema):
    """One sale: its id unique within its day, its amount not negative, eu sales small."""

    sale_id = dy.String(primary_key=True)
    day = dy.Date(nullable=False)
    region = dy.String(nullable=False)
    amount = dy.Float64(nullable=False, min=0.0)

    @dy.rule()
    def small_in_eu(cls) -> pl.Expr:
        return (pl.col("region") != "eu") | (pl.col("amount") < 5.0)


def _asset(frame: pl.DataFrame, quarantine: bool, warning_rules: list[str]) -> Any:
    @dd.asset(
        Sales,
        quarantine=quarantine,
        warning_rules=warning_rules or None,
        partitions_def=DAILY,
        backfill_policy=SINGLE_RUN,
        metadata={"partition_expr": "day"},
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        days = [dt.date.fromisoformat(key) for key in context.partition_keys]
        return frame.filter(pl.col("day").is_in(days))

    return orders


def _run(asset: Any, store: RangeStore, first: str, last: str | None) -> dict[str, Any]:
    """One run's checks and metadata by partition, its error, and what it stored."""
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize(
            [asset],
            resources={"io_manager": store},
            instance=instance,
            run_config=QUIET,
            raise_on_error=False,
            partition_key=first if last is None else None,
            tags=range_tags(first, last) if last is not None else {},
        )
    checks = {
        (str(e.partition), e.check_name): (
            e.passed,
            e.severity,
            e.description,
            {k: value(v) for k, v in e.metadata.items() if "address" not in k},
        )
        for e in result.get_asset_check_evaluations()
    }
    written = {
        str(e.materialization.partition): {
            k: value(v) for k, v in e.materialization.metadata.items() if "address" not in k
        }
        for e in result.get_asset_materialization_events()
    }
    error = first_failure(result)
    return {"checks": checks, "written": written, "error": error}


def _stored(store: RangeStore, asset: str) -> list[tuple[Any, ...]]:
    """Every row `asset` was given to store, across writes, in order."""
    frames = [obj for _, obj in store.written(asset)]
    return sorted(pl.concat(frames).rows()) if frames else []


ROW = st.tuples(
    st.sampled_from(["a", "b", "c", "d", "e"]),  # few ids: repeats within a day fail the key
    st.sampled_from(DAYS),
    st.sampled_from(["eu", "us"]),
    st.sampled_from([-1.0, 0.0, 1.0, 7.0]),  # below the minimum, and too large for eu
)


@settings(max_examples=12, deadline=None)
@given(
    rows=st.lists(ROW, max_size=12),
    span=st.sampled_from([(0, 2), (0, 1), (1, 2)]),
    quarantine=st.booleans(),
    warning_rules=st.sampled_from([[], ["small_in_eu"], ["amount|min", "small_in_eu"]]),
)
def test_a_range_reports_each_partition_as_runs_of_one_partition_do(
    rows: list[tuple[str, str, str, float]],
    span: tuple[int, int],
    quarantine: bool,
    warning_rules: list[str],
) -> None:
    frame = pl.DataFrame(
        {
            "sale_id": [r[0] for r in rows],
            "day": [dt.date.fromisoformat(r[1]) for r in rows],
            "region": [r[2] for r in rows],
            "amount": [r[3] for r in rows],
        },
        schema={"sale_id": pl.String, "day": pl.Date, "region": pl.String, "amount": pl.Float64},
    )
    asset = _asset(frame, quarantine, warning_rules)
    first, last = span
    ranged_store, single_store = RangeStore(), RangeStore()

    in_range = _run(asset, ranged_store, DAYS[first], DAYS[last])
    one_by_one = [_run(asset, single_store, DAYS[i], None) for i in range(first, last + 1)]

    errors = [o["error"] for o in one_by_one if o["error"] is not None]
    assert in_range["error"] == (errors[0] if errors else None)
    assert in_range["checks"] == {k: v for o in one_by_one for k, v in o["checks"].items()}
    assert all(c[3]["dy_partition"] == key for (key, _), c in in_range["checks"].items())
    if errors:
        assert in_range["written"] == {}
        assert ranged_store.written("orders") == []
    else:
        assert in_range["written"] == {k: v for o in one_by_one for k, v in o["written"].items()}
        assert [keys for keys, _ in ranged_store.written("orders")] == [DAYS[first : last + 1]]
        assert _stored(ranged_store, "orders") == _stored(single_store, "orders")
    assert _stored(ranged_store, "orders_quarantine") == _stored(single_store, "orders_quarantine")
    if not quarantine:
        assert ranged_store.written("orders_quarantine") == []

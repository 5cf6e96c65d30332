"""`dd.evaluate_suggestion`: rules judged on rows the suggestion did not see."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely._suggest.held_out import split_frame
from dagster_dataframely.errors import InvalidArgumentsError

from .suggested_code import load_schema


def _drifting_orders() -> pl.DataFrame:
    """Thirty days of orders whose amounts grow and whose last days bring a new channel."""
    days = [dt.date(2026, 1, 1) + dt.timedelta(days=day) for day in range(30)]
    rows = [
        {
            "day": day,
            "order_id": index * 100 + number,
            "amount": float(10 + index * 10 + number % 7),
            "channel": ("web", "shop", "phone")[number % 3] if index < 24 else "app",
            "quantity": 1 + number % 4,
        }
        for index, day in enumerate(days)
        for number in range(40)
    ]
    return pl.DataFrame(rows)


def test_rules_failing_held_out_rows_are_widened_or_dropped_with_the_reason() -> None:
    data = _drifting_orders()
    report = dd.evaluate_suggestion(data, name="Orders", split_by="day", held_out=0.2)

    actions = dict(report.rules.select("rule", "action").iter_rows())
    assert actions["channel|check__is_in"] == "dropped"
    assert actions["amount|max"] in {"widened", "dropped"}
    assert report.training_rows == 24 * 40
    assert report.held_out_rows == 6 * 40
    assert report.quarantined_before == 6 * 40
    assert report.quarantined_after < report.quarantined_before
    reasons = dict(report.rules.select("rule", "reason").iter_rows())
    assert reasons["channel|check__is_in"].startswith("240 of 240 held-out rows failed (100.00%)")
    schema = load_schema(report.code, "Orders")
    assert schema.filter(data)[1].counts() == {}
    assert "evaluation: dropped" in report.code
    assert "<table" in report._repr_html_()


def test_a_random_split_is_the_same_for_the_same_seed() -> None:
    data = _drifting_orders()
    first = dd.evaluate_suggestion(data, name="Orders", seed=7)
    again = dd.evaluate_suggestion(data, name="Orders", seed=7)
    assert first.rules.equals(again.rules)
    assert (first.training_rows, first.held_out_rows) == (again.training_rows, again.held_out_rows)
    assert first.training_rows + first.held_out_rows == data.height


def test_stable_data_keeps_every_rule() -> None:
    data = pl.DataFrame({"id": range(2_000), "kind": ["a", "b"] * 1_000})
    report = dd.evaluate_suggestion(data, name="Stable", seed=1)
    assert report.rules.height == 0
    assert report.quarantined_before == report.quarantined_after == 0
    assert "col.is_in(_KIND_VALUES)" in report.code


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"held_out": 1.5}, "held_out=1.5 is not a share"),
        ({"split_by": "missing"}, "split_by='missing' is not one of its columns"),
    ],
)
def test_bad_arguments_are_refused(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidArgumentsError, match=message):
        dd.evaluate_suggestion(_drifting_orders(), name="Orders", **arguments)  # type: ignore[arg-type]


def test_the_split_column_keeps_no_upper_bound_and_no_value_list() -> None:
    data = pl.DataFrame(
        {"year": [2007, 2008, 2009] * 100, "mass": [3_000.0, 3_500.0, 4_000.0] * 100}
    )
    report = dd.evaluate_suggestion(data, name="Penguins", split_by="year", held_out=0.34)
    schema = load_schema(report.code, "Penguins")
    next_year = pl.DataFrame({"year": [2010], "mass": [3_700.0]})
    assert schema.filter(next_year)[1].counts() == {}
    assert "split_by column: its newest values are always unseen" in report.code


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(0, 3_000), seed=st.integers(0, 2**32 - 1), share=st.floats(0.01, 0.99))
def test_the_random_split_is_the_rows_a_hash_of_their_position_picks(
    rows: int, seed: int, share: float
) -> None:
    # NOTE: the reference is the split as first written, over `int_range(pl.len())`, which the
    # streaming engine could not stream; a column named like the split's own index is kept.
    frame = pl.LazyFrame({"v": range(rows), "\x00row": range(rows)})
    training, held = split_frame(frame, split_by=None, held_out=share, seed=seed)
    bucket = pl.int_range(pl.len(), dtype=pl.UInt64).hash(seed) % 10_000
    expected = frame.filter(bucket < int(share * 10_000)).collect()
    got = held.collect(engine="streaming")
    assert got.columns == ["v", "\x00row"]
    assert got.sort("v").equals(expected)
    rest = training.collect(engine="streaming")
    assert sorted([*rest["v"], *got["v"]]) == list(range(rows))

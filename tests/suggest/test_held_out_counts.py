"""Held-out failures counted as the rows stream past equal what `Schema.filter` reports."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from typing import Any

import dataframely as dy
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely._suggest import table_profile
from dagster_dataframely._suggest.held_out_counts import count_failures

from .suggested_code import sampled_schemas

# NOTE: values of each sampled column's kind (`suggested_code._COLUMNS`), inside and outside its
# rules, with nulls; keys from a handful of values, so that they repeat.
_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "key": st.integers(0, 5),
    "int": st.integers(-100, 6_000),
    "small_int": st.integers(0, 4),
    "float": st.floats(-0.5, 1.5) | st.sampled_from([math.nan, math.inf]),
    "text": st.text(max_size=14),
    "code": st.sampled_from(["ABC", "AB", "abc", "ABCD", "XYZ"]),
    "flag": st.booleans(),
    "day": st.dates(dt.date(2019, 6, 1), dt.date(2020, 6, 1)),
    "moment": st.datetimes(dt.datetime(2020, 1, 1), dt.datetime(2021, 1, 1)),
    "status": st.sampled_from(["open", "closed"]),
}


def _kind(column: str) -> str:
    return column.rpartition("_")[0]


@st.composite
def _rows(draw: st.DrawFn, schema: type[dy.Schema]) -> pl.DataFrame:
    height = draw(st.integers(1, 40))
    columns = {}
    for name, column in schema.columns().items():
        dtype = column.dtype
        values = draw(st.lists(st.none() | _VALUES[_kind(name)], min_size=height, max_size=height))
        series = pl.Series(
            name, values, dtype=pl.Datetime("us") if _kind(name) == "moment" else None
        )
        if isinstance(dtype, pl.Datetime) and dtype.time_zone is not None:
            series = series.dt.replace_time_zone(dtype.time_zone)
        columns[name] = series.cast(dtype)
    return pl.DataFrame(columns)


def _valid_rows(schema: type[dy.Schema], rows: int, seed: int) -> pl.DataFrame:
    return schema.sample(rows, generator=dy.random.Generator(seed))


def _some_failing(schema: type[dy.Schema], rows: pl.DataFrame, seed: int) -> pl.DataFrame:
    # NOTE: a key column null on the first row fails it; a valid row with a key no other row has
    # passes, so some rows fail and some do not.
    key = schema.primary_key()
    valid = _valid_rows(schema, 1, seed).with_columns(
        pl.lit(10**12).alias(column) for column in key
    )
    failing = rows.with_columns(
        pl.when(pl.int_range(pl.len()) == 0).then(None).otherwise(pl.col(key[0])).alias(key[0])
    )
    return pl.concat([failing, valid])


_OUTCOMES: dict[str, Callable[[type[dy.Schema], pl.DataFrame, int], pl.DataFrame]] = {
    "no row fails": lambda schema, rows, seed: _valid_rows(schema, rows.height, seed),
    "some rows fail": _some_failing,
    "every row fails": lambda schema, rows, seed: rows.with_columns(
        pl.lit(None, dtype=pl.Int64).alias(schema.primary_key()[0])
    ),
}


@pytest.mark.parametrize("budget", [None, 3], ids=["keys at once", "keys in hash parts"])
@pytest.mark.parametrize("outcome", list(_OUTCOMES))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sampled=sampled_schemas(), data=st.data(), seed=st.integers(0, 2**16))
def test_streamed_counts_equal_dataframely_filter(
    outcome: str,
    budget: int | None,
    sampled: tuple[type[dy.Schema], tuple[str, ...]],
    data: st.DataObject,
    seed: int,
) -> None:
    schema, _ = sampled
    rows = _OUTCOMES[outcome](schema, data.draw(_rows(schema)), seed)
    valid, failure = schema.filter(rows)
    with pytest.MonkeyPatch.context() as patch:
        if budget is not None:
            patch.setattr(table_profile, "MAX_VALUES_PER_PASS", budget)
        counted = count_failures(schema, rows.lazy())
        # The row count handed in (as the evaluation's later validations do) sizes the same parts.
        assert count_failures(schema, rows.lazy(), rows.height) == counted
    assert counted.rows == rows.height
    assert counted.counts == failure.counts()
    assert counted.quarantined == rows.height - valid.height
    expected = {"no row fails": 0, "every row fails": rows.height}
    if outcome in expected:
        assert counted.quarantined == expected[outcome]
    else:
        assert 0 < counted.quarantined < rows.height


def test_a_schema_without_rules_fails_no_row() -> None:
    schema = type("Loose", (dy.Schema,), {"note": dy.String(nullable=True)})
    counted = count_failures(schema, pl.LazyFrame({"note": ["a", None, "a"]}))
    assert (counted.rows, counted.counts, counted.quarantined) == (3, {}, 0)


def test_the_held_out_rows_are_never_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    # NOTE: every frame a query returns is recorded: the evaluation's own queries return counts
    # and a few dozen values, never the 400 held-out rows (nor the 1,600 training ones).
    data = pl.DataFrame(
        {
            "day": [
                dt.date(2026, 1, 1) + dt.timedelta(days=index // 100) for index in range(2_000)
            ],
            "order_id": range(2_000),
            "amount": [float(index % 97) for index in range(2_000)],
        }
    )
    returned: list[int] = []
    collect = pl.LazyFrame.collect

    def recording(self: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:
        frame = collect(self, *args, **kwargs)
        returned.append(frame.height)
        return frame

    monkeypatch.setattr(pl.LazyFrame, "collect", recording)
    report = dd.evaluate_suggestion(data.lazy(), name="Orders", split_by="day", held_out=0.2)
    assert report.held_out_rows == 400
    assert report.quarantined_before > 0
    assert max(returned) < 100

"""Summary statistics: one table per dtype group, exact values, and no string value ever shown."""

from __future__ import annotations

import datetime as dt
import math
import statistics
from decimal import Decimal
from typing import Any

import polars as pl
import pytest
from dagster._serdes import serialize_value
from hypothesis import event, given, settings
from hypothesis import strategies as st
from polars.testing.parametric import dataframes

from dagster_dataframely._model.shown_values import MASK
from dagster_dataframely._run.report import distinct
from dagster_dataframely._run.report.distinct import DistinctCount
from dagster_dataframely._run.report.statistics import statistics_tables

COLUMNS = {
    "numeric": ["column", "count", "null_count", "mean", "std", "min", "p50", "max"],
    "temporal": ["column", "count", "null_count", "min", "max", "span"],
    "string": ["column", "count", "null_count", "n_unique", "min_len", "max_len", "n_empty"],
    "boolean": ["column", "count", "null_count", "n_true", "n_false", "true_rate"],
}


def _rows(frame: pl.DataFrame, group: str) -> list[dict[str, Any]]:
    return [dict(record.data) for record in statistics_tables(frame)[group].records]


def _row(series: pl.Series, group: str) -> dict[str, Any]:
    (row,) = _rows(series.to_frame(), group)
    return row


INTEGERS = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64]


@pytest.mark.parametrize("dtype", INTEGERS)
def test_integer_statistics(dtype: pl.DataType) -> None:
    row = _row(pl.Series("n", [1, 2, None, 4], dtype=dtype), "numeric")
    # mean 7/3 and std sqrt(7/3) rounded to 4 places; min and max stay integers.
    assert row == {
        "column": "n",
        "count": 3,
        "null_count": 1,
        "mean": 2.3333,
        "std": 1.5275,
        "min": 1,
        "p50": 2.0,
        "max": 4,
    }
    assert type(row["min"]) is int
    assert type(row["max"]) is int


@pytest.mark.parametrize("dtype", [pl.Float32, pl.Float64])
def test_float_statistics(dtype: pl.DataType) -> None:
    row = _row(pl.Series("f", [0.5, 1.25, None, -2.0, 4.0], dtype=dtype), "numeric")
    assert row == {
        "column": "f",
        "count": 4,
        "null_count": 1,
        "mean": 0.9375,
        "std": 2.4696,  # sqrt(18.296875 / 3)
        "min": -2.0,
        "p50": 0.875,
        "max": 4.0,
    }


def test_float32_rounding_shows_no_single_precision_noise() -> None:
    row = _row(pl.Series("f", [0.1, 0.2], dtype=pl.Float32), "numeric")
    assert row["mean"] == 0.15
    assert row["p50"] == 0.15


def test_median_is_exact() -> None:
    values = [*range(1, 1000), 10**9]
    assert _row(pl.Series("n", values), "numeric")["p50"] == 500.5


def test_min_and_max_are_exact_for_large_integers() -> None:
    row = _row(pl.Series("n", [2**62 + 1, 2**62 + 3], dtype=pl.Int64), "numeric")
    assert (row["min"], row["max"]) == (2**62 + 1, 2**62 + 3)


def test_decimal_statistics_are_floats() -> None:
    series = pl.Series(
        "amount",
        [Decimal("1.10"), Decimal("2.25"), None, Decimal("-3.00")],
        dtype=pl.Decimal(10, 2),
    )
    row = _row(series, "numeric")
    assert row == {
        "column": "amount",
        "count": 3,
        "null_count": 1,
        "mean": 0.1167,
        "std": 2.7597,
        "min": -3.0,
        "p50": 1.1,
        "max": 2.25,
    }
    assert type(row["min"]) is float


def test_nan_follows_polars_and_is_shown_as_text() -> None:
    row = _row(pl.Series("f", [1.0, math.nan, 3.0]), "numeric")
    # Polars skips NaN in min and max, and propagates it through the mean and std.
    assert row["mean"] == "NaN"
    assert row["std"] == "NaN"
    assert (row["min"], row["max"]) == (1.0, 3.0)
    assert _row(pl.Series("f", [1.0, math.inf]), "numeric")["max"] == "inf"


def test_one_value_has_no_std() -> None:
    assert _row(pl.Series("n", [5]), "numeric")["std"] is None


@pytest.mark.parametrize(
    ("values", "dtype", "expected"),
    [
        (
            [dt.date(2024, 1, 1), None, dt.date(2024, 2, 1), dt.date(2024, 1, 15)],
            pl.Date,
            ("2024-01-01", "2024-02-01", "31d"),
        ),
        (
            [dt.datetime(2024, 1, 1, 0, 0, 0, 5000), None, dt.datetime(2024, 1, 9)],
            pl.Datetime("ms"),
            ("2024-01-01T00:00:00.005", "2024-01-09T00:00:00.000", "7d 23h 59m 59s 995ms"),
        ),
        (
            [dt.datetime(2024, 1, 1), None, dt.datetime(2024, 1, 1, 0, 1, 30)],
            pl.Datetime("ns"),
            ("2024-01-01T00:00:00.000000000", "2024-01-01T00:01:30.000000000", "1m 30s"),
        ),
        (
            [dt.datetime(2024, 1, 9, tzinfo=dt.UTC), None, dt.datetime(2024, 1, 1, tzinfo=dt.UTC)],
            pl.Datetime("us", "UTC"),
            ("2024-01-01T00:00:00.000000+00:00", "2024-01-09T00:00:00.000000+00:00", "8d"),
        ),
        (
            [dt.time(2, 0, 30), None, dt.time(1, 0)],
            pl.Time,
            ("01:00:00", "02:00:30", "1h 30s"),
        ),
        (
            [dt.timedelta(days=1), None, dt.timedelta(days=9)],
            pl.Duration("us"),
            ("1d", "9d", "8d"),
        ),
    ],
)
def test_temporal_statistics(
    values: list[object], dtype: pl.DataType, expected: tuple[str, str, str]
) -> None:
    row = _row(pl.Series("t", values, dtype=dtype), "temporal")
    assert row == {
        "column": "t",
        "count": len(values) - 1,
        "null_count": 1,
        "min": expected[0],
        "max": expected[1],
        "span": expected[2],
    }


def test_a_time_zone_keeps_its_offset() -> None:
    series = pl.Series("t", [dt.datetime(2024, 7, 1, 9)]).dt.replace_time_zone("Europe/Paris")
    row = _row(series, "temporal")
    assert row["min"] == "2024-07-01T09:00:00.000000+02:00"
    assert row["span"] == "0µs"


@pytest.mark.parametrize(
    "dtype", [pl.String, pl.Categorical, pl.Enum(["", "ab", "é", "日本", "unused-and-longer"])]
)
def test_string_statistics_count_bytes(dtype: pl.DataType) -> None:
    series = pl.Series("s", ["é", "", None, "日本", "é", "ab"], dtype=dtype)
    # "é" is 2 bytes, "日本" 6: lengths are bytes, not characters.
    assert _row(series, "string") == {
        "column": "s",
        "count": 5,
        "null_count": 1,
        "n_unique": 4,
        "min_len": 0,
        "max_len": 6,
        "n_empty": 1,
    }


def test_binary_statistics_count_bytes() -> None:
    series = pl.Series("b", [b"\x00\x01\x02", b"", None, b"\x00\x01\x02", b"z"])
    assert _row(series, "string") == {
        "column": "b",
        "count": 4,
        "null_count": 1,
        "n_unique": 3,
        "min_len": 0,
        "max_len": 3,
        "n_empty": 1,
    }


def test_n_unique_does_not_count_null() -> None:
    assert _row(pl.Series("s", ["a", None, None]), "string")["n_unique"] == 1
    assert _row(pl.Series("s", ["a", "b"]), "string")["n_unique"] == 2


@pytest.mark.parametrize("dtype", [pl.String, pl.Binary])
@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.sampled_from(["", "a", "ab", "b", "\u00e9", "a\x00"])))
)
def test_n_unique_is_exact_whatever_the_layout(
    dtype: pl.DataType, values: list[str | None]
) -> None:
    """Sorted, grouped, all different or shuffled: every layout gives Polars' exact count."""
    series = pl.Series("s", values, dtype=pl.String).cast(dtype)
    expected = series.drop_nulls().n_unique()
    for variant in (
        series,
        series.sort(),
        series.sort(descending=True, nulls_last=True),
        series.unique(maintain_order=True),
        series.shuffle(seed=len(values)),
    ):
        assert _row(variant, "string")["n_unique"] == expected, variant.to_list()


def test_n_unique_of_many_values_is_exact_grouped_and_shuffled() -> None:
    """Large enough to take every counting path: known, sorted, partitioned, plain exact."""
    ids = pl.Series("id", [f"ORD-{i // 3:07d}" for i in range(30_000)])
    nulls = pl.Series("id", [None] * 100, dtype=pl.String)
    distinct = ids.unique(maintain_order=True)
    variants = {
        "sorted": ids,
        "nulls first, sorted": pl.concat([nulls, ids]),
        "grouped, not sorted": pl.concat([ids.tail(3), ids.head(29_997)]),
        "grouped, with nulls between groups": pl.concat([ids.tail(3), nulls, ids.head(29_997)]),
        "shuffled": ids.shuffle(seed=1),
        "one repeat far away, with nulls": pl.concat([distinct, nulls, distinct.head(1), nulls]),
        "all different, shuffled": distinct.shuffle(seed=2),
        "two values": ids.tail(2),
    }
    for name, series in variants.items():
        expected = series.drop_nulls().n_unique()
        assert _row(series, "string")["n_unique"] == expected, name


def _strategies(frame: pl.DataFrame) -> list[str]:
    return [
        DistinctCount.plan(frame, position, "k", known=False).strategy
        for position in range(frame.width)
    ]


@pytest.mark.parametrize("parts", [1, 2, 64])
@pytest.mark.parametrize("dtype", [pl.String, pl.Binary])
def test_a_count_by_parts_is_exact_when_parts_hold_many_values(
    monkeypatch: pytest.MonkeyPatch, parts: int, dtype: pl.DataType
) -> None:
    """The hash only says where a value is counted: values sharing a part are still told apart.

    One part puts every value with every other (as if all of them shared a hash); the values
    include the empty string, a trailing NUL, a prefix of another and a value that repeats far
    away, with nulls anywhere.
    """
    monkeypatch.setattr(distinct, "parts_for", lambda values: parts)
    ids = [f"ORD-{i:05d}" for i in range(3_000)]
    values = [*ids, "", "ORD-00001\x00", "ORD-0000", "\u00e9", ids[7], None, ids[0], None]
    series = pl.Series("s", values, dtype=pl.String).cast(dtype).shuffle(seed=parts)
    frame = series.to_frame()
    assert _strategies(frame) == ["partitioned"]
    assert _row(series, "string")["n_unique"] == 3_004 == series.drop_nulls().n_unique()
    part = (pl.col("s").hash() % parts).alias("part")
    by_hash = frame.group_by(part).agg(pl.col("s").n_unique())
    assert by_hash.get_column("s").max() > 1  # some part holds several different values


def test_a_larger_column_is_cut_into_more_parts_and_still_counted_exactly() -> None:
    """The part count follows the column's size (with nulls not counted); every sum is exact."""
    seen = []
    for size in (20_000, 70_000, 140_000):
        ids = pl.Series("s", [f"ORD-{i // 2:07d}" for i in range(size)])
        series = pl.concat([ids, pl.Series("s", [None] * 50_000, dtype=pl.String)])
        series = series.shuffle(seed=size)
        plan = DistinctCount.plan(series.to_frame(), 0, "k", known=False)
        assert plan.strategy == "partitioned"
        seen.append(plan.parts)
        assert _row(series, "string")["n_unique"] == size // 2
    assert seen == [1, 2, 4]


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.text(max_size=3)), min_size=2, max_size=60),
    parts=st.sampled_from([1, 3, 64]),
)
def test_a_count_by_parts_is_polars_exact_count(values: list[str | None], parts: int) -> None:
    """Any values the sample finds nearly all different: the parts add up to `n_unique`."""
    series = pl.Series("s", values, dtype=pl.String)
    plan = DistinctCount.plan(series.to_frame(), 0, "k", known=False)
    if plan.strategy != "partitioned":
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(distinct, "parts_for", lambda values: parts)
        assert _row(series, "string")["n_unique"] == series.drop_nulls().n_unique()


@pytest.mark.parametrize("dtype", [pl.String, pl.Binary])
def test_a_large_text_column_of_few_values_is_counted_exactly_by_its_groups(
    monkeypatch: pytest.MonkeyPatch, dtype: pl.DataType
) -> None:
    """From `GROUPED_FROM` values, few distinct values shuffled: a grouping of its own, beside.

    The values include the empty string, a trailing NUL and a prefix of another, with nulls
    anywhere; nulls form a group of their own, which the count leaves out.
    """
    queries = _count_queries(monkeypatch)
    emails = [f"user{i}@example.com" for i in range(5_000)]
    odd = ["", "user1@example.com\x00", "user1@example.co"]
    values = [*(emails * (distinct.GROUPED_FROM // 5_000)), *odd, None, None]
    series = pl.Series("s", values, dtype=pl.String).cast(dtype).shuffle(seed=5)
    assert _strategies(series.to_frame()) == ["grouped"]
    assert _row(series, "string")["n_unique"] == 5_003 == len(set(values) - {None})
    assert len(queries) == 2  # the statistics, and the grouping of `s` alone
    assert "AGGREGATE" in queries[1].explain()


def test_a_smaller_column_of_few_values_stays_in_the_one_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    queries = _count_queries(monkeypatch)
    size = distinct.GROUPED_FROM - 1
    series = pl.Series("s", [f"v{i % 50}" for i in range(size)]).shuffle(seed=6)
    assert _strategies(series.to_frame()) == ["exact"]
    assert _row(series, "string")["n_unique"] == 50
    assert len(queries) == 1


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(
        st.one_of(
            st.none(),
            st.text(max_size=2),
            # From 13 bytes, past the view: a prefix of another, a trailing NUL, non-ASCII.
            st.text(max_size=2).map(lambda tail: "user@example.com" + tail),
            st.sampled_from(["twelve bytes", "twelve bytes\x00", "\u00e9" * 7]),
        ),
        max_size=60,
    )
)
def test_a_count_by_groups_and_by_n_unique_are_polars_exact_count(
    values: list[str | None],
) -> None:
    """Few values, grouped from the first value: by a `group_by` when long, by `n_unique` when
    they fit in a view; either way, whatever the values, the count is `n_unique` without nulls."""
    series = pl.Series("s", values, dtype=pl.String).shuffle(seed=len(values))
    counted = set()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(distinct, "GROUPED_FROM", 1)
        for inline_bytes, strategy in ((-1, "grouped"), (1_000, "exact")):
            patch.setattr(distinct, "INLINE_BYTES", inline_bytes)
            plan = DistinctCount.plan(series.to_frame(), 0, "k", known=False)
            if plan.strategy not in ("grouped", "exact"):
                event("many distinct values")
                return  # many distinct values: counted by parts, tested above
            assert plan.strategy == strategy or series.drop_nulls().is_empty()
            counted.add(_row(series, "string")["n_unique"])
    assert counted == {series.drop_nulls().n_unique()}


def test_a_large_text_column_of_few_short_values_stays_in_the_one_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Few distinct values that fit in a view, from `GROUPED_FROM`: `n_unique`, not a grouping."""
    queries = _count_queries(monkeypatch)
    skus = [f"SKU-{i}" for i in range(900)]
    values = [*(skus * (distinct.GROUPED_FROM // 900 + 1)), "", "SKU-1\x00", "SKU-", None]
    series = pl.Series("s", values).shuffle(seed=7)
    assert _strategies(series.to_frame()) == ["exact"]
    assert _row(series, "string")["n_unique"] == 903 == len(set(values) - {None})
    assert len(queries) == 1


def test_sorted_grouped_and_shuffled_ids_take_their_cheapest_count() -> None:
    """Sorted: its runs; grouped or shuffled with nearly all values different: by parts."""
    ids = pl.Series("s", [f"ORD-{i // 2:07d}" for i in range(20_000)])
    grouped = pl.concat([ids.tail(2), ids.head(19_998)])
    others = pl.Series("s", [f"ID-{i:07d}" for i in range(19_900)])
    shuffled = pl.concat([others, others.head(100)]).shuffle(seed=3)
    frame = pl.DataFrame({"sorted": ids, "grouped": grouped, "shuffled": shuffled})
    assert _strategies(frame) == ["sorted", "partitioned", "partitioned"]
    assert [row["n_unique"] for row in _rows(frame, "string")] == [10_000, 10_000, 19_900]


@pytest.mark.parametrize(("precision", "digits"), [(10, 10), (15, 15), (38, 15)])
def test_a_decimal_median_is_exact_at_the_widest_values(precision: int, digits: int) -> None:
    """Up to 15 digits the median is selected among `Int64`s, above among Polars' `Int128`s:
    both give the exact median of values with 15 digits, the most a `Float64` holds exactly."""
    scale = 2
    top = Decimal(10**digits - 1).scaleb(-scale)
    values = [top, -top, top, top - Decimal("0.01"), Decimal("0.01"), -top, top]
    for sample in (values, values[:-1], [top, top - Decimal("0.01")]):
        series = pl.Series("d", [*sample, None], dtype=pl.Decimal(precision, scale))
        expected = round(float(statistics.median(sample)), 4)
        assert _row(series, "numeric")["p50"] == expected


def test_no_string_value_appears_in_the_table() -> None:
    values = ["alice@example.com", "bob@example.org", "carol.secret", None, "zz-top-secret"]
    frame = pl.DataFrame(
        {
            "email": values,
            "kind": pl.Series(values, dtype=pl.Categorical),
            "level": pl.Series(values, dtype=pl.Enum([v for v in values if v])),
            "raw": pl.Series([v.encode() if v else None for v in values]),
        }
    )
    tables = statistics_tables(frame)
    assert list(tables) == ["string"]
    serialized = serialize_value(tables["string"])
    for value in filter(None, values):
        assert value not in serialized
        assert value.encode().hex() not in serialized


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([True, None, False, True], (3, 1, 2, 1, 0.6667)),
        ([False, False], (2, 0, 0, 2, 0.0)),
        ([None, None], (0, 2, 0, 0, None)),
    ],
)
def test_boolean_statistics(values: list[bool | None], expected: tuple[object, ...]) -> None:
    row = _row(pl.Series("b", values, dtype=pl.Boolean), "boolean")
    assert row == dict(zip(COLUMNS["boolean"], ("b", *expected), strict=True))


def test_all_null_columns_have_counts_and_no_values() -> None:
    frame = pl.DataFrame(
        {"n": [None, None], "t": [None, None], "s": [None, None]},
        schema={"n": pl.Decimal(10, 2), "t": pl.Datetime("us", "UTC"), "s": pl.String},
    )
    tables = statistics_tables(frame)
    assert _rows(frame, "numeric") == [
        {
            "column": "n",
            "count": 0,
            "null_count": 2,
            "mean": None,
            "std": None,
            "min": None,
            "p50": None,
            "max": None,
        }
    ]
    assert [dict(r.data) for r in tables["temporal"].records] == [
        {"column": "t", "count": 0, "null_count": 2, "min": None, "max": None, "span": None}
    ]
    assert [dict(r.data) for r in tables["string"].records] == [
        {
            "column": "s",
            "count": 0,
            "null_count": 2,
            "n_unique": 0,
            "min_len": None,
            "max_len": None,
            "n_empty": 0,
        }
    ]


def test_an_empty_frame_still_has_its_groups_with_count_zero() -> None:
    frame = pl.DataFrame(
        schema={"n": pl.Float64, "d": pl.Date, "s": pl.Categorical, "b": pl.Boolean}
    )
    tables = statistics_tables(frame)
    assert list(tables) == ["numeric", "temporal", "string", "boolean"]
    for value in tables.values():
        (record,) = value.records
        assert record.data["count"] == 0
        assert record.data["null_count"] == 0


def test_only_present_groups_and_nested_columns_in_none() -> None:
    frame = pl.DataFrame(
        {
            "l": [[1]],
            "a": [[1, 2]],
            "st": [{"k": "secret"}],
            "nothing": [None],
            "o": pl.Series([object()], dtype=pl.Object),
            "b": [True],
        },
        schema_overrides={"a": pl.Array(pl.Int64, 2), "nothing": pl.Null},
    )
    tables = statistics_tables(frame)
    assert list(tables) == ["boolean"]
    assert [record.data["column"] for record in tables["boolean"].records] == ["b"]
    assert statistics_tables(frame.drop("b")) == {}
    assert statistics_tables(pl.DataFrame()) == {}


def test_each_table_has_its_columns_and_rows_in_frame_order() -> None:
    frame = pl.DataFrame(
        {
            "z": [1],
            "when": [dt.date(2024, 1, 1)],
            "name": ["x"],
            "a": [1.5],
            "ok": [True],
            "amount": [Decimal("1.00")],
            "at": [dt.time(1)],
        }
    )
    tables = statistics_tables(frame)
    assert list(tables) == ["numeric", "temporal", "string", "boolean"]
    for group, value in tables.items():
        assert [column.name for column in value.schema.columns] == COLUMNS[group]
        for record in value.records:
            assert list(record.data) == COLUMNS[group]
    assert [r.data["column"] for r in tables["numeric"].records] == ["z", "a", "amount"]
    assert [r.data["column"] for r in tables["temporal"].records] == ["when", "at"]


def test_counts_are_python_ints() -> None:
    frame = pl.DataFrame({"n": [1, None], "s": ["a", ""], "b": [True, None]})
    for value in statistics_tables(frame).values():
        for record in value.records:
            for name in ("count", "null_count", "n_unique", "min_len", "n_empty", "n_true"):
                if name in record.data:
                    assert type(record.data[name]) is int


def test_column_names_are_not_patterns() -> None:
    frame = pl.DataFrame({"*": [1, 2], "^a.*$": [3, 4], "ab": [5, 6]})
    rows = _rows(frame, "numeric")
    assert [(row["column"], row["min"]) for row in rows] == [("*", 1), ("^a.*$", 3), ("ab", 5)]


def _count_queries(monkeypatch: pytest.MonkeyPatch) -> list[pl.LazyFrame]:
    """Record every query run, whether by `LazyFrame.collect` or by `pl.collect_all`."""
    queries: list[pl.LazyFrame] = []
    collect, collect_all = pl.LazyFrame.collect, pl.collect_all

    def counting(self: pl.LazyFrame, *args: Any, **kwargs: Any) -> Any:
        queries.append(self)
        return collect(self, *args, **kwargs)

    def counting_all(frames: list[pl.LazyFrame], *args: Any, **kwargs: Any) -> Any:
        queries.extend(frames)
        return collect_all(frames, *args, **kwargs)

    monkeypatch.setattr(pl.LazyFrame, "collect", counting)
    monkeypatch.setattr(pl, "collect_all", counting_all)
    return queries


def test_all_statistics_come_from_one_query(monkeypatch: pytest.MonkeyPatch) -> None:
    queries = _count_queries(monkeypatch)
    frame = pl.DataFrame(
        {"a": [1], "b": [2.0], "c": ["x"], "d": ["y"], "e": [True], "f": [dt.date(2024, 1, 1)]}
    )
    assert len(statistics_tables(frame)) == 4
    assert len(queries) == 1


def test_sorted_ids_are_counted_in_the_one_query(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sorted ids (either way) are counted by their runs; few distinct values by `n_unique`."""
    queries = _count_queries(monkeypatch)
    ids = [f"ORD-{i // 2:07d}" for i in range(20_000)]
    frame = pl.DataFrame({"grouped": ids, "reversed": ids[::-1], "all_different": ids[::2] * 2})
    rows = _rows(frame, "string")
    assert [row["n_unique"] for row in rows] == [10_000, 10_000, 10_000]
    assert len(queries) == 1


def test_only_unsorted_many_valued_columns_take_a_second_query(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Many distinct values out of order: that column alone is counted by parts, beside."""
    queries = _count_queries(monkeypatch)
    ids = [f"ORD-{i:07d}" for i in range(20_000)]
    frame = pl.DataFrame({"repeated": [*ids, ids[0]], "grouped": [*ids, ids[-1]]})
    assert [row["n_unique"] for row in _rows(frame, "string")] == [20_000, 20_000]
    assert len(queries) == 2  # the statistics, and a count of `repeated` alone
    assert 'PROJECT["repeated"] 1/2 COLUMNS' in queries[1].explain()


@settings(max_examples=50, deadline=None)
@given(dataframes(max_cols=5, max_size=5, excluded_dtypes=[pl.Object]))
def test_any_frame_gets_consistent_counts(frame: pl.DataFrame) -> None:
    for value in statistics_tables(frame).values():
        serialize_value(value)
        for record in value.records:
            count, null_count = record.data["count"], record.data["null_count"]
            assert isinstance(count, int)
            assert isinstance(null_count, int)
            assert count + null_count == frame.height


def test_a_sensitive_column_shows_its_counts_and_no_statistic_of_its_values() -> None:
    frame = pl.DataFrame(
        {
            "salary": [52_000, 61_500, None],
            "born": [dt.date(1971, 3, 4), None, dt.date(1990, 5, 6)],
            "email": ["a@secret.example", "b@secret.example", None],
            "flagged": [True, None, None],
            "shown": [1, 2, 3],
        }
    )
    masked = {"salary", "born", "email", "flagged"}
    tables = statistics_tables(frame, masked=masked)
    rows = {
        record.data["column"]: dict(record.data)
        for table in tables.values()
        for record in table.records
    }
    for name in masked:
        counts = {"count": frame[name].count(), "null_count": frame[name].null_count()}
        assert {k: v for k, v in rows[name].items() if k in counts} == counts, name
        others = {k: v for k, v in rows[name].items() if k not in {"column", *counts}}
        assert set(others.values()) == {MASK}, name
    # An unmasked column of the same table is unchanged.
    assert (
        rows["shown"]
        == {r.data["column"]: dict(r.data) for r in statistics_tables(frame)["numeric"].records}[
            "shown"
        ]
    )
    text = serialize_value(tables)
    for secret in ("52000", "61500", "1971", "1990", "secret.example", "0.3333"):
        assert secret not in text


def test_a_sensitive_column_costs_no_statistic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only its two counts are computed: nothing that reads its values runs, not even a count
    of distinct values that would take a second query for an unmasked column."""
    ids = [f"ORD-{i:07d}" for i in range(20_000)]
    frame = pl.DataFrame({"email": [*ids, ids[0]]})
    queries = _count_queries(monkeypatch)
    statistics_tables(frame, masked={"email"})
    assert len(queries) == 1
    assert queries[0].collect_schema().names() == ["0:count", "0:null_count"]

"""A Polars frame as a Dagster table value: every cell a type Dagster and the UI accept."""

from __future__ import annotations

import datetime as dt
import json
import math
import operator
import re
from decimal import Decimal

import dagster as dg
import polars as pl
import pytest
from dagster._check import CheckError
from dagster._serdes import deserialize_value, serialize_value
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing.parametric import dataframes

from dagster_dataframely._model.shown_values import CELL_LIMIT, MASK, cut_text, dtype_text
from dagster_dataframely._run.checks.tables import _records, _shown_cell, table_value


def _cells(frame: pl.DataFrame) -> list[dict[str, object]]:
    return [dict(record.data) for record in table_value(frame).records]


def _column(series: pl.Series) -> list[object]:
    return [row[series.name] for row in _cells(series.to_frame())]


@pytest.mark.parametrize(
    "dtype",
    [
        pl.Int8,
        pl.Int16,
        pl.Int32,
        pl.Int64,
        pl.UInt8,
        pl.UInt16,
        pl.UInt32,
        pl.UInt64,
        pl.Float32,
        pl.Float64,
    ],
)
def test_numbers_stay_numbers(dtype: pl.DataType) -> None:
    values = _column(pl.Series("x", [1, None, 3], dtype=dtype))
    assert values == [1, None, 3]
    assert [type(value) for value in values] == [
        float if dtype.is_float() else int,
        type(None),
        float if dtype.is_float() else int,
    ]


def test_large_integers_keep_every_digit() -> None:
    assert _column(pl.Series("x", [2**63 - 1, -(2**63)], dtype=pl.Int64)) == [2**63 - 1, -(2**63)]
    assert _column(pl.Series("x", [2**64 - 1], dtype=pl.UInt64)) == [2**64 - 1]


def test_booleans_strings_and_nulls_stay() -> None:
    frame = pl.DataFrame(
        {"b": [True, False, None], "s": ["é", "", None], "n": [None, None, None]},
        schema={"b": pl.Boolean, "s": pl.String, "n": pl.Null},
    )
    assert _cells(frame) == [
        {"b": True, "s": "é", "n": None},
        {"b": False, "s": "", "n": None},
        {"b": None, "s": None, "n": None},
    ]


def test_decimal_keeps_every_digit() -> None:
    series = pl.Series(
        "amount",
        [Decimal("12345678901234567890.12"), Decimal("-0.50"), None],
        dtype=pl.Decimal(38, 2),
    )
    assert _column(series) == ["12345678901234567890.12", "-0.50", None]


def test_categorical_and_enum_are_their_text() -> None:
    assert _column(pl.Series("c", ["b", None, "a"], dtype=pl.Categorical)) == ["b", None, "a"]
    assert _column(pl.Series("e", ["b", None], dtype=pl.Enum(["a", "b"]))) == ["b", None]


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [
        (pl.Date, "2024-03-01"),
        (pl.Datetime("ms"), "2024-03-01T12:30:05.123"),
        (pl.Datetime("us"), "2024-03-01T12:30:05.123456"),
        (pl.Datetime("ns"), "2024-03-01T12:30:05.123456000"),
        (pl.Datetime("us", "UTC"), "2024-03-01T12:30:05.123456+00:00"),
        (pl.Time, "12:30:05.123456"),
    ],
)
def test_dates_and_times_are_iso_8601(dtype: pl.DataType, expected: str) -> None:
    moment = dt.datetime(2024, 3, 1, 12, 30, 5, 123456)
    series = pl.Series("t", [moment, None]).cast(dtype)
    assert _column(series) == [expected, None]


def test_a_time_zone_shows_its_own_offset() -> None:
    series = pl.Series("t", [dt.datetime(2024, 7, 1, 9)]).dt.replace_time_zone("Europe/Paris")
    (text,) = _column(series)
    assert text == "2024-07-01T09:00:00.000000+02:00"
    assert dt.datetime.fromisoformat(str(text)) == series.item()


def test_durations_are_in_polars_form() -> None:
    series = pl.Series("d", [dt.timedelta(days=8), dt.timedelta(seconds=90), None])
    assert _column(series) == ["8d", "1m 30s", None]


def test_binary_is_hex() -> None:
    assert _column(pl.Series("b", [b"\x00\xffA", b"", None])) == ["00ff41", "", None]


def test_non_finite_floats_are_text() -> None:
    series = pl.Series("f", [math.nan, math.inf, -math.inf, 1.5, None])
    value = table_value(series.to_frame())
    assert [record.data["f"] for record in value.records] == ["NaN", "inf", "-inf", 1.5, None]
    # The UI receives each record as JSON, which has no NaN or Infinity.
    for record in value.records:
        json.dumps(record.data, allow_nan=False)


def test_nested_values_are_compact_json() -> None:
    frame = pl.DataFrame(
        {
            "l": [[1, None], [], None],
            "a": [[1, 2], None, [3, 4]],
            "s": [{"k": "x", "n": 1}, None, {"k": None, "n": 2}],
        },
        schema={
            "l": pl.List(pl.Int64),
            "a": pl.Array(pl.Int64, 2),
            "s": pl.Struct({"k": pl.String, "n": pl.Int64}),
        },
    )
    assert _cells(frame) == [
        {"l": "[1,null]", "a": "[1,2]", "s": '{"k":"x","n":1}'},
        {"l": "[]", "a": None, "s": None},
        {"l": None, "a": "[3,4]", "s": '{"k":null,"n":2}'},
    ]


def test_nested_leaves_are_shown_as_at_top_level() -> None:
    dtype = pl.Struct(
        {
            "amount": pl.Decimal(38, 2),
            "day": pl.Date,
            "took": pl.Duration("us"),
            "raw": pl.Binary,
            "tags": pl.List(pl.Categorical),
            "inner": pl.Struct({"at": pl.Time}),
        }
    )
    row = {
        "amount": Decimal("12345678901234567890.12"),
        "day": dt.date(2024, 1, 31),
        "took": dt.timedelta(seconds=90),
        "raw": b"\x01",
        "tags": ["a", None],
        "inner": {"at": dt.time(7, 5)},
    }
    (text,) = _column(pl.Series("n", [row], dtype=dtype))
    assert json.loads(str(text)) == {
        "amount": "12345678901234567890.12",
        "day": "2024-01-31",
        "took": "1m 30s",
        "raw": "01",
        "tags": ["a", None],
        "inner": {"at": "07:05:00"},
    }


def test_nested_nulls_and_arrays_keep_their_shape() -> None:
    frame = pl.DataFrame(
        {
            "structs": [[{"k": 1}, None]],
            "days": [[dt.date(2024, 1, 1), dt.date(2024, 1, 2)]],
            "grid": [[[Decimal("1.50"), None], [Decimal("-2.00"), Decimal("3.25")]]],
        },
        schema={
            "structs": pl.List(pl.Struct({"k": pl.Int64})),
            "days": pl.Array(pl.Date, 2),
            "grid": pl.Array(pl.Decimal(10, 2), (2, 2)),
        },
    )
    assert _cells(frame) == [
        {
            "structs": '[{"k":1},null]',
            "days": '["2024-01-01","2024-01-02"]',
            "grid": '[["1.50",null],["-2.00","3.25"]]',
        }
    ]


def test_python_objects_are_their_str() -> None:
    class Thing:
        def __str__(self) -> str:
            return "a thing"

    series = pl.Series("o", [Thing(), None], dtype=pl.Object)
    assert _column(series) == ["a thing", None]


def test_columns_keep_frame_order_and_dtype_names() -> None:
    frame = pl.DataFrame(
        {"z": [1], "a": ["x"], "m": [dt.datetime(2024, 1, 1)]},
        schema={"z": pl.Int32, "a": pl.String, "m": pl.Datetime("ms", "UTC")},
    )
    value = table_value(frame)
    assert [(column.name, column.type) for column in value.schema.columns] == [
        ("z", "Int32"),
        ("a", "String"),
        ("m", "Datetime(time_unit='ms', time_zone='UTC')"),
    ]
    assert list(value.records[0].data) == ["z", "a", "m"]


def test_column_names_are_not_patterns() -> None:
    frame = pl.DataFrame({"*": [1], "^a.*$": [2], "ab": [3]})
    assert _cells(frame) == [{"*": 1, "^a.*$": 2, "ab": 3}]


def test_an_empty_frame_gives_no_records() -> None:
    value = table_value(pl.DataFrame(schema={"a": pl.Int64, "b": pl.Decimal(10, 2)}))
    assert isinstance(value, dg.TableMetadataValue)
    assert value.records == []
    assert [column.name for column in value.schema.columns] == ["a", "b"]


@settings(max_examples=50, deadline=None)
@given(dataframes(max_cols=4, max_size=4, excluded_dtypes=[pl.Object]))
def test_any_frame_serializes(frame: pl.DataFrame) -> None:
    value = table_value(frame)
    assert len(value.records) == frame.height
    assert deserialize_value(serialize_value(value), dg.TableMetadataValue) == value
    for record in value.records:
        json.dumps(record.data, allow_nan=False)
    # The records skip Dagster's checks: its checked constructors accept them and build the same.
    checked = dg.MetadataValue.table(
        records=[dg.TableRecord(dict(record.data)) for record in value.records],
        schema=value.schema,
    )
    assert checked == value


def test_a_cell_of_another_type_is_refused_as_dagster_refuses_it() -> None:
    """The unchecked records are only for dtypes whose values are cells; any other is checked."""
    with pytest.raises(CheckError, match="key day"):
        _records(pl.DataFrame({"day": [dt.date(2024, 1, 1)]}))


# Bounded cells: every text is cut to `CELL_LIMIT` characters, with a marker saying how long the
# whole value was, so a huge value cannot make an event huge.

CUT_FORM = re.compile(
    r"^(?P<head>.*)…\[cut: (?P<length>[0-9]+) (?P<unit>characters|bytes)\]$", re.S
)


def _cut(text: object) -> tuple[str, int, str]:
    """The head, whole length and unit of a cut cell; fails on a cell that was not cut."""
    match = CUT_FORM.match(str(text))
    assert match is not None, f"not cut: {str(text)[:80]!r}"
    return match["head"], int(match["length"]), match["unit"]


LENGTHS = st.integers(0, 3 * CELL_LIMIT)
"""Around the limit as often as far from it: text strategies rarely draw long values."""
# Polars strings are UTF-8, so a lone surrogate (category Cs) can never be a cell.
TEXTS = st.text(max_size=8) | st.builds(
    operator.mul, st.characters(exclude_categories=("Cs",)), LENGTHS
)
BINARIES = st.binary(max_size=8) | st.builds(
    operator.mul, st.binary(min_size=1, max_size=2), LENGTHS
)


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXTS | st.none(), max_size=6))
def test_a_text_cell_is_cut_as_the_manager_filter_cuts_it(texts: list[str | None]) -> None:
    """The Polars cut and the Python one (for the manager's tables) write the same cell."""
    shown = _column(pl.Series("s", texts, dtype=pl.String))
    assert shown == [None if text is None else cut_text(text) for text in texts]


@settings(max_examples=40, deadline=None)
@given(st.lists(BINARIES, min_size=1, max_size=4))
def test_a_binary_cell_is_cut_before_it_becomes_hex(values: list[bytes]) -> None:
    kept = CELL_LIMIT // 2
    for value, cell in zip(values, _column(pl.Series("b", values)), strict=True):
        if len(value) <= kept:
            assert cell == value.hex()
        else:
            assert _cut(cell) == (value[:kept].hex(), len(value), "bytes")


def test_nested_categorical_and_object_cells_are_cut_too() -> None:
    class Big:
        def __str__(self) -> str:
            return "o" * 1000

    frame = pl.DataFrame(
        {
            "l": [list(range(500))],
            "s": [{"k": "x" * 1000}],
            "c": pl.Series(["c" * 1000], dtype=pl.Categorical),
            "o": pl.Series([Big()], dtype=pl.Object),
        }
    )
    (row,) = _cells(frame)
    whole = {
        "l": json.dumps(list(range(500)), separators=(",", ":")),
        "s": json.dumps({"k": "x" * 1000}, separators=(",", ":")),
        "c": "c" * 1000,
        "o": "o" * 1000,
    }
    for name, text in whole.items():
        assert _cut(row[name]) == (text[:CELL_LIMIT], len(text), "characters"), name


def test_a_cell_at_the_limit_is_whole_and_numbers_are_never_cut() -> None:
    frame = pl.DataFrame({"s": ["é" * CELL_LIMIT], "n": [10**18], "d": [Decimal("1" * 30)]})
    assert _cells(frame) == [{"s": "é" * CELL_LIMIT, "n": 10**18, "d": "1" * 30}]


def test_a_twenty_megabyte_cell_gives_a_cell_of_a_few_hundred_characters() -> None:
    huge = "x" * 20_000_000
    frame = pl.DataFrame({"s": [huge, huge], "b": [huge.encode(), huge.encode()]})
    value = table_value(frame)
    # Four cells of at most the limit and their marker, and the table's own few hundred bytes.
    assert len(serialize_value(value)) < 4 * (CELL_LIMIT + 40) + 1000
    assert _cut(value.records[0].data["s"])[1:] == (20_000_000, "characters")
    assert _cut(value.records[0].data["b"])[1:] == (20_000_000, "bytes")


# Sensitive columns: a masked column shows `MASK` for every value, whatever its dtype.


@settings(max_examples=50, deadline=None)
@given(dataframes(max_cols=4, max_size=4, excluded_dtypes=[pl.Object]))
def test_a_masked_column_shows_the_mask_for_every_value_and_keeps_its_nulls(
    frame: pl.DataFrame,
) -> None:
    masked = set(frame.columns[::2])
    value = table_value(frame, masked)
    for record, row in zip(value.records, frame.iter_rows(named=True), strict=True):
        for name in masked:
            assert record.data[name] == (None if row[name] is None else MASK)
    # A masked column's dtype is shown without its categories (an Enum's are its values).
    assert [column.type for column in value.schema.columns] == [
        dtype_text(dtype, sensitive=name in masked) for name, dtype in frame.schema.items()
    ]
    unmasked = [name for name in frame.columns if name not in masked]
    if not unmasked:
        return
    assert [{name: record.data[name] for name in unmasked} for record in value.records] == [
        {name: record.data[name] for name in unmasked}
        for record in table_value(frame.select(unmasked)).records
    ]


@settings(max_examples=60, deadline=None)
@given(
    dataframes(max_cols=5, max_size=5, excluded_dtypes=[pl.Object]),
    st.lists(TEXTS | st.none(), min_size=5, max_size=5),
)
def test_a_column_kept_as_it_is_shows_what_every_cell_expression_would(
    frame: pl.DataFrame, texts: list[str | None]
) -> None:
    """Numbers and texts of at most `CELL_LIMIT` bytes skip the cell expressions: same cells."""
    frame = frame.with_columns(pl.Series("t", texts[: frame.height], dtype=pl.String))
    everything = frame.rechunk().select(
        _shown_cell(pl.nth(p), dtype).alias(name)
        for p, (name, dtype) in enumerate(frame.schema.items())
    )
    assert [r.data for r in table_value(frame).records] == [r.data for r in _records(everything)]

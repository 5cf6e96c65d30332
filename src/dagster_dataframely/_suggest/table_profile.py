"""Two streaming passes over the source: counts, nulls, bounds, cardinality, lengths, classes,
and whether the primary key candidates are unique."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from dagster_dataframely._suggest.table_source import Source, refused

# NOTE: at most this many distinct values make a column a candidate for `is_in`; their counts
# are read in the second pass only for columns whose estimate is below it.
MAX_CATEGORIES = 20
# NOTE: only the columns most likely to identify a row are tested as a primary key, so the
# search costs a bounded number of exact distinct counts, never a scan per pair of rows.
MAX_KEY_CANDIDATES = 6
# NOTE: an exact distinct count holds each distinct value (about 40 bytes a value was measured
# at 20M rows); above this many values a count is split by hash into several passes, each
# holding at most this many, so memory stays bounded whatever the table's size.
MAX_VALUES_PER_PASS = 5_000_000

# NOTE: a regex is suggested only for these clear classes, each tested as one boolean
# aggregation over the non-null values (anchored, so a value must match whole).
REGEX_CLASSES: Mapping[str, str] = {
    "digits": r"^[0-9]+$",
    "ISO date": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "email": r"^[^@\s]+@[^@\s]+\.[^@\s]+$",
    "upper-case code": r"^[A-Z0-9]+$",
}

_INTEGERS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)
_FLOATS = (pl.Float32, pl.Float64)
_TEMPORAL = (pl.Date, pl.Datetime, pl.Time, pl.Duration)
_OTHERS = (pl.String, pl.Boolean, pl.Enum, pl.Categorical, pl.Decimal)


def is_integer(dtype: pl.DataType) -> bool:
    return isinstance(dtype, _INTEGERS)


def is_float(dtype: pl.DataType) -> bool:
    return isinstance(dtype, _FLOATS)


def is_string(dtype: pl.DataType) -> bool:
    return isinstance(dtype, pl.String)


def is_supported(dtype: pl.DataType) -> bool:
    """Whether a suggestion can write a Dataframely column for the dtype."""
    return isinstance(dtype, (*_INTEGERS, *_FLOATS, *_TEMPORAL, *_OTHERS))


@dataclasses.dataclass(frozen=True)
class ColumnProfile:
    """What one pass saw of one column (values only where a rule may use them)."""

    name: str
    dtype: pl.DataType
    rows: int
    nulls: int
    approx_unique: int
    minimum: Any = None
    maximum: Any = None
    nans: int = 0
    infinities: int = 0
    min_length: int | None = None
    max_length: int | None = None
    classes: tuple[str, ...] = ()
    value_counts: Mapping[Any, int] | None = None
    unique: bool = False

    @property
    def non_null(self) -> int:
        return self.rows - self.nulls


@dataclasses.dataclass(frozen=True)
class TableProfile:
    """The columns' profiles and the row count, in the source's column order."""

    rows: int
    columns: Sequence[ColumnProfile]

    def column(self, name: str) -> ColumnProfile:
        return next(column for column in self.columns if column.name == name)


def _aggregations(name: str, dtype: pl.DataType) -> dict[str, pl.Expr]:
    column = pl.col(name)
    found: dict[str, pl.Expr] = {
        "nulls": column.null_count(),
        "approx_unique": column.approx_n_unique(),
    }
    if is_integer(dtype) or isinstance(dtype, (*_TEMPORAL, pl.Decimal)):
        found |= {"minimum": column.min(), "maximum": column.max()}
    if is_float(dtype):
        finite = column.filter(column.is_finite())
        found |= {
            "minimum": finite.min(),
            "maximum": finite.max(),
            "nans": column.is_nan().sum(),
            "infinities": column.is_infinite().sum(),
        }
    if is_string(dtype):
        lengths = column.str.len_bytes()
        found |= {"min_length": lengths.min(), "max_length": lengths.max()}
    return {f"{name}\x00{key}": expression for key, expression in found.items()}


def _orderable(dtype: pl.DataType) -> bool:
    return is_integer(dtype) or is_string(dtype) or isinstance(dtype, pl.Date | pl.Datetime)


def _increasing(frame: pl.LazyFrame, name: str) -> bool:
    # NOTE: a column strictly increasing in the source's order is unique, proved without
    # holding its values (a surrogate id is usually written in order). Its own query: beside
    # other aggregations, `shift` made the streaming engine hold every column (1.5 GiB at 20M
    # rows, measured), alone it reads the one column in streaming batches.
    column = pl.col(name)
    return bool(_collect(frame.select((column > column.shift(1)).all())).item())


def _collect(frame: pl.LazyFrame) -> pl.DataFrame:
    return frame.collect(engine="streaming")


def key_candidates(profile: TableProfile) -> list[ColumnProfile]:
    """The complete columns that may identify a row, the most distinct first (at most 6)."""
    complete = [
        column
        for column in profile.columns
        if column.nulls == 0
        and not is_float(column.dtype)
        and not isinstance(column.dtype, pl.Boolean)
    ]
    return sorted(complete, key=lambda column: -column.approx_unique)[:MAX_KEY_CANDIDATES]


def may_be_unique(columns: Sequence[ColumnProfile], rows: int) -> bool:
    """Whether the columns' estimated distinct counts allow a unique combination."""
    # NOTE: the streaming estimate was seen 10% under the exact count on 150 rows, hence the
    # generous slack before ruling a combination out.
    return math.prod(column.approx_unique for column in columns) * 1.5 >= rows


def _distinct_plan(
    combinations: Sequence[Sequence[str]], partitions: int, part: int
) -> list[pl.Expr]:
    plan = []
    for index, names in enumerate(combinations):
        values = pl.struct(list(names))
        if partitions > 1:
            values = values.filter(in_part(values, partitions, part))
        plan.append(values.n_unique().alias(f"\x00distinct{index}"))
    return plan


def value_parts(rows: int, combinations: int = 1) -> int:
    """How many hash parts keep each pass over the values of `combinations` of `rows` rows
    within `MAX_VALUES_PER_PASS` values."""
    return max(1, math.ceil(rows * combinations / MAX_VALUES_PER_PASS))


def in_part(values: pl.Expr, parts: int, part: int) -> pl.Expr:
    """Whether a row's `values` fall in hash part `part` of `parts`."""
    # NOTE: equal values hash alike, so each lands in one part: the parts' distinct counts add up
    # to the whole's, and a value's repeats are all in its own part.
    return values.hash(seed=0) % parts == part


def distinct_counts(
    frame: pl.LazyFrame, combinations: Sequence[Sequence[str]], rows: int
) -> list[int]:
    """The exact distinct count of each combination of columns, in bounded memory."""
    if not combinations:
        return []
    partitions = value_parts(rows, len(combinations))
    totals = [0] * len(combinations)
    for part in range(partitions):
        counts = _collect(frame.select(_distinct_plan(combinations, partitions, part))).row(0)
        totals = [total + int(count) for total, count in zip(totals, counts, strict=True)]
    return totals


def profile_table(
    frame: pl.LazyFrame, source: Source, *, progress: Callable[[str], None] | None = None
) -> TableProfile:
    """Profile every column in one streaming aggregation, then, in a second one, count the
    low-cardinality columns' values, test the regex classes that the lengths allow and count
    the distinct values of the primary key candidates. Above `MAX_VALUES_PER_PASS` values, a
    candidate strictly increasing in the source's order is unique without a count, and the
    others are counted in parts by hash, each pass holding at most that many values."""
    try:
        schema = frame.collect_schema()
    except pl.exceptions.PolarsError as error:
        raise refused(
            source, f"its columns cannot be read ({error})", "Check the source."
        ) from error
    unsupported = {name: dtype for name, dtype in schema.items() if not is_supported(dtype)}
    if unsupported:
        listing = ", ".join(f"{name!r} ({dtype})" for name, dtype in unsupported.items())
        raise refused(
            source,
            f"no Dataframely column is suggested for the dtype of {listing}",
            "Drop or cast these columns first (for example `frame.drop(...)`), then declare "
            "them by hand in the suggested schema.",
        )
    plan: dict[str, pl.Expr] = {"\x00rows": pl.len()}
    for name, dtype in schema.items():
        plan |= _aggregations(name, dtype)
    if progress is not None:
        progress(f"profiling {len(schema)} columns (pass 1 of 2)")
    row = _read(frame.select(**plan), source)
    rows = int(row["\x00rows"])
    if rows == 0:
        raise refused(
            source,
            "it has no rows, so nothing can be learned from it",
            "Suggest from a table with rows (at least a few hundred make useful bounds).",
        )
    fields: dict[str, dict[str, Any]] = {name: {} for name in schema}
    for key, value in row.items():
        name, _, field = key.partition("\x00")
        if name:
            fields[name][field] = value
    first = TableProfile(
        rows=rows,
        columns=[
            ColumnProfile(
                name=name,
                dtype=dtype,
                rows=rows,
                nulls=int(fields[name]["nulls"]),
                approx_unique=int(fields[name]["approx_unique"]),
                minimum=fields[name].get("minimum"),
                maximum=fields[name].get("maximum"),
                nans=int(fields[name].get("nans") or 0),
                infinities=int(fields[name].get("infinities") or 0),
                min_length=fields[name].get("min_length"),
                max_length=fields[name].get("max_length"),
            )
            for name, dtype in schema.items()
        ],
    )
    if progress is not None:
        progress(f"profiled {rows} rows; counting values and keys (pass 2 of 2)")
    return _second_pass(frame, first, source)


def _read(plan: pl.LazyFrame, source: Source) -> dict[str, Any]:
    try:
        return _collect(plan).row(0, named=True)
    except (OSError, pl.exceptions.PolarsError) as error:
        raise refused(
            source,
            f"its rows cannot be read ({type(error).__name__}: {str(error).splitlines()[0]})",
            "Check that every file has the same columns and dtypes, or pass a frame.",
        ) from error


def _plausible_classes(column: ColumnProfile) -> list[str]:
    # NOTE: a class whose values cannot have the lengths seen is not tested over the rows:
    # an ISO date is 10 bytes, an email at least 5, and an upper-case code becomes a regex
    # only for fixed-width values. Digits are tested first and win over a code.
    shortest, longest = column.min_length, column.max_length
    if shortest is None or longest is None:
        return []
    return [
        label
        for label, possible in {
            "digits": True,
            "ISO date": shortest == longest == 10,
            "email": shortest >= 5,
            "upper-case code": shortest == longest,
        }.items()
        if possible
    ]


def _second_pass(frame: pl.LazyFrame, first: TableProfile, source: Source) -> TableProfile:
    counted = [
        column.name
        for column in first.columns
        if (is_integer(column.dtype) or is_string(column.dtype))
        and column.approx_unique <= MAX_CATEGORIES + 5
    ]
    plan: dict[str, pl.Expr] = {}
    for column in first.columns:
        if is_string(column.dtype) and column.name not in counted and column.non_null:
            plan |= {
                f"{column.name}\x00class:{label}": pl.col(column.name)
                .str.contains(REGEX_CLASSES[label])
                .all()
                for label in _plausible_classes(column)
            }
    tested = [
        column.name for column in key_candidates(first) if may_be_unique([column], first.rows)
    ]
    # NOTE: a candidate in order is unique without a count (the exact count of 20M ids took
    # 13.4 s and 753 MiB, their order check 0.8 s and 140 MiB, measured); the others' counts join
    # this pass when they fit in memory at once, else they take passes over parts of them.
    ordered = {
        name for name in tested if _orderable(first.column(name).dtype) and _increasing(frame, name)
    }
    unordered = [name for name in tested if name not in ordered]
    folded = value_parts(first.rows, len(unordered)) == 1
    if folded:
        plan |= {f"{name}\x00distinct": pl.col(name).n_unique() for name in unordered}
    # NOTE: the value counts are streaming group-bys (an aggregation's `value_counts` was seen
    # to hold the whole column: 999 MiB at 20M rows, against 131 MiB, measured).
    parts = [frame.select(**plan)] if plan else []
    parts += [
        # NOTE: renamed first, so a column named like the count field ("count") cannot
        # collide; the estimate keeps these columns to a few dozen values each.
        frame.group_by(pl.col(name).alias("value"))
        .len(name="rows")
        .filter(pl.col("value").is_not_null())
        .select(pl.struct("value", "rows").implode().alias(f"{name}\x00counts"))
        for name in counted
    ]
    # NOTE: one query per part, each reading only its columns: in one plan, a DuckDB
    # table's lazy source was read twice at once, which DuckDB refuses.
    row: dict[str, Any] = {}
    for part in parts:
        row |= _read(part, source)
    exact = (
        [row[f"{name}\x00distinct"] for name in unordered]
        if folded
        else distinct_counts(frame, [[name] for name in unordered], first.rows)
    )
    distinct = dict.fromkeys(ordered, first.rows) | dict(zip(unordered, exact, strict=True))
    columns = []
    for column in first.columns:
        counts = row.get(f"{column.name}\x00counts")
        values = None if counts is None else {item["value"]: int(item["rows"]) for item in counts}
        if values is not None and is_string(column.dtype):
            classes = _classes_of(list(values))
        else:
            classes = tuple(
                label
                for label in REGEX_CLASSES
                if row.get(f"{column.name}\x00class:{label}") and column.non_null
            )
        columns.append(
            dataclasses.replace(
                column,
                classes=classes,
                value_counts=values
                if values is not None and len(values) <= MAX_CATEGORIES
                else None,
                unique=distinct.get(column.name) == first.rows,
            )
        )
    return TableProfile(rows=first.rows, columns=columns)


def _classes_of(values: Sequence[str]) -> tuple[str, ...]:
    # NOTE: a low-cardinality column's distinct values are all at hand: its classes are tested
    # on them, by the same regex engine as a column's rows would be.
    if not values:
        return ()
    series = pl.Series(values, dtype=pl.String)
    return tuple(
        label for label, pattern in REGEX_CLASSES.items() if series.str.contains(pattern).all()
    )

"""One aggregation plan over the source: counts, nulls, bounds, cardinality, lengths, classes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl

from dagster_dataframely._suggest.table_source import Source, refused

# NOTE: at most this many distinct values make a column a candidate for `is_in`; their counts
# are read in the second (small) query only for columns whose estimate is below it.
MAX_CATEGORIES = 20

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
        found |= {
            f"class:{label}": column.str.contains(pattern).all()
            for label, pattern in REGEX_CLASSES.items()
        }
    return {f"{name}\x00{key}": expression for key, expression in found.items()}


def _collect(frame: pl.LazyFrame) -> pl.DataFrame:
    return frame.collect(engine="streaming")


def profile_table(
    frame: pl.LazyFrame,
    source: Source,
    *,
    progress: Callable[[str], None] | None = None,
) -> TableProfile:
    """Profile every column in one streaming aggregation, then count the few low-cardinality
    columns' values in a second, small one."""
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
        progress(f"profiling {len(schema)} columns in one pass")
    try:
        row = _collect(frame.select(**plan)).row(0, named=True)
    except (OSError, pl.exceptions.PolarsError) as error:
        raise refused(
            source,
            f"its rows cannot be read ({type(error).__name__}: {str(error).splitlines()[0]})",
            "Check that every file has the same columns and dtypes, or pass a frame.",
        ) from error
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
    low_cardinality = [
        name
        for name, dtype in schema.items()
        if (is_integer(dtype) or is_string(dtype))
        and fields[name]["approx_unique"] <= MAX_CATEGORIES + 5
    ]
    counts = _value_counts(frame, low_cardinality)
    if progress is not None:
        progress(f"profiled {rows} rows")
    return TableProfile(
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
                classes=tuple(
                    label
                    for label in REGEX_CLASSES
                    if fields[name].get(f"class:{label}") and fields[name]["nulls"] < rows
                ),
                value_counts=counts.get(name),
            )
            for name, dtype in schema.items()
        ],
    )


def _value_counts(frame: pl.LazyFrame, names: Sequence[str]) -> dict[str, dict[Any, int]]:
    if not names:
        return {}
    # NOTE: `approx_n_unique` may under-count, so each column's distinct values are capped at
    # one more than a category list may hold: a column over it gets no `is_in`.
    plan = [
        # NOTE: renamed first, so a column named like the count field ("count") cannot collide.
        pl.col(name)
        .alias("value")
        .drop_nulls()
        .value_counts(name="rows")
        .head(MAX_CATEGORIES + 1)
        .implode()
        .alias(name)
        for name in names
    ]
    row = _collect(frame.select(plan)).row(0, named=True)
    return {
        name: {item["value"]: int(item["rows"]) for item in row[name]}
        for name in names
        if len(row[name]) <= MAX_CATEGORIES
    }

"""From a column's profile to its suggested rules, each with the evidence that supports it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Collection, Sequence
from typing import Any

import polars as pl

from dagster_dataframely._suggest.table_profile import (
    MAX_CATEGORIES,
    REGEX_CLASSES,
    ColumnProfile,
    TableProfile,
    is_float,
    is_integer,
    is_string,
)

# NOTE: the share of a range added on each side of a numeric bound, so that the next day's
# data is not rejected for a value just past the one seen (Deequ's known over-fit).
MARGIN = 0.1
# NOTE: the z-score of the one-sided 95% Wilson lower bound on completeness, as Deequ bounds a
# nearly complete column's completeness instead of asking it to be complete.
_Z = 1.645
NEARLY_COMPLETE = 0.9
# NOTE: a category list needs each value seen repeatedly; with most values seen once the
# column is an identifier or free text, and the next rows bring new values.
MAX_SINGLETON_SHARE = 0.5
MIN_ROWS_PER_CATEGORY = 5


@dataclasses.dataclass
class ColumnSuggestion:
    """One column's suggested declaration: its rules (None when not suggested) and evidence."""

    name: str
    dtype: pl.DataType
    sensitive: bool
    nullable: bool
    primary_key: bool = False
    minimum: Any = None
    maximum: Any = None
    allow_nan: bool = False
    allow_inf: bool = False
    min_length: int | None = None
    max_length: int | None = None
    regex: str | None = None
    is_in: list[Any] | None = None
    evidence: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)


def completeness_bound(non_null: int, rows: int) -> float:
    """The one-sided 95% Wilson lower bound of the share of non-null values."""
    share = non_null / rows
    denominator = 1 + _Z**2 / rows
    centre = share + _Z**2 / (2 * rows)
    spread = _Z * math.sqrt(share * (1 - share) / rows + _Z**2 / (4 * rows**2))
    return max(0.0, (centre - spread) / denominator)


def _nice_floor(value: float, step: float) -> float:
    return math.floor(value / step) * step


def _step(margin: float) -> float:
    return 10.0 ** math.floor(math.log10(margin)) if margin > 0 else 1.0


def widened(minimum: Any, maximum: Any, dtype: pl.DataType, margin: float) -> tuple[Any, Any]:
    """The seen bounds widened by `margin` of their range on each side, rounded outward to a
    round number; a bound at or above zero stays at or above zero."""
    span = float(maximum - minimum)
    extra = margin * span if span > 0 else max(1.0, abs(float(maximum)) * margin)
    step = _step(extra)
    if is_integer(dtype):
        # NOTE: integer arithmetic: a float cannot hold an Int64 id near 2**63 exactly, and a
        # rounded bound could then fall inside the values seen.
        whole = max(1, int(step))
        int_low = (int(minimum) - math.ceil(extra)) // whole * whole
        int_high = -((-(int(maximum) + math.ceil(extra))) // whole) * whole
        lowest, highest = _integer_range(dtype)
        return max(int_low, lowest, 0 if minimum >= 0 else lowest), min(int_high, highest)
    low = _nice_floor(float(minimum) - extra, step)
    high = -_nice_floor(-(float(maximum) + extra), step)
    if minimum >= 0:
        low = max(low, 0.0)
    digits = max(0, -math.floor(math.log10(step)))
    return round(low, digits), round(high, digits)


def widened_moments(minimum: Any, maximum: Any, margin: float) -> tuple[Any, Any]:
    """Dates or datetimes widened by `margin` of their range on each side (at least a day),
    rounded outward to whole days (a datetime keeps its time zone)."""
    extra = max(dt.timedelta(days=1), (maximum - minimum) * margin)
    if not isinstance(minimum, dt.datetime):
        whole = dt.timedelta(days=math.ceil(extra / dt.timedelta(days=1)))
        return _shifted(minimum, -whole), _shifted(maximum, whole)
    low = _shifted(minimum, -extra)
    high = _shifted(maximum, extra)
    midnight = {"hour": 0, "minute": 0, "second": 0, "microsecond": 0}
    low = low.replace(**midnight)
    if high.replace(**midnight) != high:
        high = _shifted(high.replace(**midnight), dt.timedelta(days=1))
    return low, high


def _shifted(moment: Any, delta: dt.timedelta) -> Any:
    # NOTE: a bound past the calendar's ends stays at the end: the values seen are inside it.
    try:
        return moment + delta
    except OverflowError:
        if isinstance(moment, dt.datetime):
            end = dt.datetime.min if delta < dt.timedelta(0) else dt.datetime.max
            return end.replace(tzinfo=moment.tzinfo)
        return dt.date.min if delta < dt.timedelta(0) else dt.date.max


def _integer_range(dtype: pl.DataType) -> tuple[int, int]:
    bits_by_type: dict[type[pl.DataType], int] = {
        pl.Int8: 8, pl.Int16: 16, pl.Int32: 32, pl.Int64: 64,
        pl.UInt8: 8, pl.UInt16: 16, pl.UInt32: 32, pl.UInt64: 64,
    }  # fmt: skip
    bits = bits_by_type[type(dtype)]
    if dtype.is_signed_integer():
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return 0, 2**bits - 1


def _rows(count: int) -> str:
    return f"{count:,} row" if count == 1 else f"{count:,} rows"


def suggest_column(
    column: ColumnProfile, *, primary_key: bool, sensitive: bool, margin: float = MARGIN
) -> ColumnSuggestion:
    """The rules one column's profile supports; a sensitive column's values never appear."""
    suggestion = ColumnSuggestion(
        name=column.name,
        dtype=column.dtype,
        sensitive=sensitive,
        nullable=column.nulls > 0,
        primary_key=primary_key,
    )
    seen = f"{_rows(column.rows)}"
    if column.nulls == 0:
        suggestion.evidence.append(f"{seen}, no null")
    else:
        share = column.non_null / column.rows
        bound = completeness_bound(column.non_null, column.rows)
        suggestion.evidence.append(f"{seen}, {_rows(column.nulls)} null ({share:.2%} complete)")
        if share >= NEARLY_COMPLETE:
            tolerated = math.ceil((1 - bound) * 10_000) / 10_000
            suggestion.notes.append(
                f"nearly complete: expect at least {bound:.2%} non-null (one-sided 95% bound). "
                f"To quarantine the nulls instead: nullable=False and "
                f'dd.QualityPolicy(rules={{"{column.name}|nullability": '
                f"dd.Threshold(fail_above={tolerated})}})"
            )
    if primary_key:
        suggestion.evidence.append("unique over every row: part of the primary key")
    if column.non_null == 0:
        return suggestion
    if is_float(column.dtype):
        suggestion.allow_nan = column.nans > 0
        suggestion.allow_inf = column.infinities > 0
        if column.nans or column.infinities:
            suggestion.evidence.append(f"{_rows(column.nans)} NaN, {_rows(column.infinities)} inf")
    if sensitive:
        suggestion.evidence.append("sensitive: no value shown, no value rule suggested")
        _suggest_lengths(suggestion, column, margin)
        return suggestion
    categories = _categories(column)
    if categories is not None and (is_integer(column.dtype) or is_string(column.dtype)):
        suggestion.is_in = sorted(categories)
        rarest = min(categories.values())
        suggestion.evidence.append(
            f"{len(categories)} distinct values, the rarest seen in {_rows(rarest)}"
        )
    elif column.minimum is not None and (is_integer(column.dtype) or is_float(column.dtype)):
        suggestion.minimum, suggestion.maximum = widened(
            column.minimum, column.maximum, column.dtype, margin
        )
        suggestion.evidence.append(
            f"seen {column.minimum!r} to {column.maximum!r}; bounds widened by "
            f"{margin:.0%} of the range"
        )
    elif column.minimum is not None and isinstance(column.dtype, pl.Date | pl.Datetime):
        suggestion.minimum, suggestion.maximum = widened_moments(
            column.minimum, column.maximum, margin
        )
        suggestion.evidence.append(
            f"seen {column.minimum} to {column.maximum}; bounds widened by {margin:.0%} of the "
            f"range (at least a day), to whole days"
        )
    elif column.minimum is not None:
        suggestion.evidence.append(f"seen {column.minimum} to {column.maximum} (no bound)")
    if is_string(column.dtype) and suggestion.is_in is None:
        _suggest_lengths(suggestion, column, margin)
    return suggestion


def _categories(column: ColumnProfile) -> dict[Any, int] | None:
    counts = column.value_counts
    if counts is None or len(counts) > MAX_CATEGORIES or len(counts) < 2:
        return None
    singletons = sum(1 for count in counts.values() if count == 1)
    if singletons > MAX_SINGLETON_SHARE * len(counts):
        return None
    if column.non_null < MIN_ROWS_PER_CATEGORY * len(counts):
        return None
    return dict(counts)


def _suggest_lengths(suggestion: ColumnSuggestion, column: ColumnProfile, margin: float) -> None:
    if column.min_length is None or column.max_length is None:
        return
    shortest, longest = int(column.min_length), int(column.max_length)
    label = next(iter(column.classes), None)
    if shortest == longest and shortest > 0:
        suggestion.min_length = suggestion.max_length = shortest
        suggestion.evidence.append(f"every value {shortest} bytes long")
    else:
        suggestion.min_length = 1 if shortest >= 1 else None
        suggestion.max_length = longest + max(1, math.ceil(longest * margin))
        suggestion.evidence.append(
            f"lengths {shortest} to {longest} bytes; max widened by {margin:.0%}"
        )
    if label is not None and (label != "upper-case code" or shortest == longest):
        suggestion.regex = REGEX_CLASSES[label]
        suggestion.evidence.append(f"every value matches the {label} class")


def suggest_columns(
    profile: TableProfile,
    primary_key: Sequence[str],
    sensitive: Collection[str],
    margin: float = MARGIN,
) -> list[ColumnSuggestion]:
    """Every column's suggestion, in the source's order."""
    return [
        suggest_column(
            column,
            primary_key=column.name in primary_key,
            sensitive=column.name in sensitive,
            margin=margin,
        )
        for column in profile.columns
    ]

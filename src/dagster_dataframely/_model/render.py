"""A Dataframely rule as the short text a data engineer reads in the catalog.

Rules are rendered as operators (`>= 0.0`, `length <= 64 bytes`, `matches ^[a-z]+$`) from the
column's own settings, never from the Polars expression, so the text stays stable across Polars
versions and shows the bound a user wrote.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import dataframely as dy
import polars as pl

CUSTOM_CHECK = "custom check"

_NOT_IN_COLUMNS_TAB = frozenset({"nullability", "unique", "inf", "nan"})
"""Rules the Columns tab omits: Dagster has its own fields for the first two, and Dataframely adds
the last two to every float column, so they would only be noise."""

_NOT_IN_NESTED_TEXT = frozenset({"inf", "nan"})

_DUPLICATE_SUFFIX = re.compile(r"(^|__)\d+$")

_BOUNDS = {"min": ">=", "min_exclusive": ">", "max": "<=", "max_exclusive": "<"}

_FIXED = {
    "nullability": "is not null",
    "unique": "is unique",
    "inf": "is not infinite",
    "nan": "is not NaN",
    "primary_key": "elements are unique",
}


def render_value(value: object) -> str:
    """Render a bound or a member of `is_in` as a user would write it in a filter."""
    if isinstance(value, dt.timedelta):
        return duration_text(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    return str(value)


def duration_text(value: dt.timedelta) -> str:
    """Render a duration in Polars' own form (`8d`, `1m 30s`), which Polars users read daily."""
    rendered: str = pl.select(pl.lit(value).dt.to_string("polars")).item()
    return rendered


def columns_tab_constraints(column: dy.Column, kinds: Iterable[str]) -> list[str]:
    """The column constraints the Columns tab shows beside `column`, one per rule kind.

    A rule we cannot render falls back to its name rather than disappearing from the tab.
    """
    shown = []
    for kind in kinds:
        if kind in _NOT_IN_COLUMNS_TAB:
            continue
        text = render_rule(column, kind, omit=_NOT_IN_NESTED_TEXT)
        if text != "":  # the empty string marks a nested rule the tab leaves out
            shown.append(text or kind)
    return shown


def primary_key_text(columns: Iterable[str]) -> str:
    """The table constraint a (possibly composite) primary key renders as."""
    return f"primary key ({', '.join(columns)})"


def render_rule(column: dy.Column, kind: str, *, omit: frozenset[str] = frozenset()) -> str | None:
    """Render the rule `<column>|<kind>` as operator text, or None for a rule we cannot read.

    `kind` is the part of Dataframely's rule name after the `|`: `min`, `max_length`,
    `inner_city_nullability`, `check__lowercase` and so on. The nested rules of a kind in
    `omit` render as the empty string.
    """
    nested = _render_nested(column, kind, omit=omit)
    if nested is not None:
        return nested
    if kind in _BOUNDS:
        return f"{_BOUNDS[kind]} {render_value(getattr(column, kind))}"
    if kind in _FIXED:
        return _FIXED[kind]
    if kind in ("min_length", "max_length"):
        operator = ">=" if kind == "min_length" else "<="
        unit = " bytes" if isinstance(column, dy.String) else " elements"
        return f"length {operator} {getattr(column, kind)}{unit}"
    if kind == "regex":
        return f"matches {column.regex}"  # type: ignore[attr-defined]
    if kind == "is_in":
        members = ", ".join(render_value(v) for v in column.is_in)  # type: ignore[attr-defined]
        return f"in ({members})"
    if kind == "resolution":
        return f"aligned to {column.resolution}"  # type: ignore[attr-defined]
    if kind == "check" or kind.startswith("check__"):
        return _check_name_part(column, kind) or CUSTOM_CHECK
    return None


def _render_nested(column: dy.Column, kind: str, *, omit: frozenset[str]) -> str | None:
    if not kind.startswith("inner_"):
        return None
    rest = kind.removeprefix("inner_")
    inner = getattr(column, "inner", None)
    if isinstance(inner, dy.Column):  # List and Array: one inner column for every element
        if rest in omit:
            return ""
        text = render_rule(inner, rest, omit=omit)
        return None if text is None else f"each element {text}" if text else ""
    if isinstance(inner, Mapping):  # Struct: one inner column per field
        # The longest field name first, so `a_b` wins over `a` for `inner_a_b_min`.
        for field in sorted(inner, key=len, reverse=True):
            if rest.startswith(f"{field}_"):
                field_kind = rest.removeprefix(f"{field}_")
                if field_kind in omit:
                    return ""
                text = render_rule(inner[field], field_kind, omit=omit)
                if text is not None:
                    return f"field {field} {text}" if text else ""
    return None


def _check_name_part(column: dy.Column, kind: str) -> str:
    # NOTE: Dataframely names a dict entry `check__<key>`, a function `check__<name>` and a lambda
    # `check`, adding `__<i>` where names repeat; the empty string is an unnamed lambda.
    name = kind.removeprefix("check").removeprefix("__")
    return name if isinstance(column.check, Mapping) else _DUPLICATE_SUFFIX.sub("", name)


def check_function(column: dy.Column, kind: str) -> Callable[..., Any] | None:
    """The named callable behind the `check=` rule `kind`, to read its docstring."""
    check = column.check
    if check is None:  # most columns: skip reading a name out of `kind`
        return None
    name = _check_name_part(column, kind)
    if not name:
        return None
    if isinstance(check, Mapping):
        function: Callable[..., Any] | None = check.get(name)
        return function
    functions = list(check) if isinstance(check, Iterable) else [check]
    return next((f for f in functions if f.__name__ == name), None)

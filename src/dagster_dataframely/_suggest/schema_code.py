"""A suggestion as Python source: a `dy.Schema` subclass, already as `ruff format` writes it."""

from __future__ import annotations

import datetime as dt
import keyword
import re
import textwrap
from collections.abc import Sequence
from typing import Any

import dataframely as dy
import polars as pl

from dagster_dataframely._suggest.column_rules import ColumnSuggestion

_LINE = 100
_SCHEMA_NAMES = frozenset(dir(dy.Schema))


def attribute_names(names: Sequence[str]) -> list[str]:
    """One Python attribute per column: the name itself where it can be one, else a clean
    identifier (the column keeps its name through `alias=`)."""
    taken: set[str] = set()
    attributes = []
    for name in names:
        attribute = re.sub(r"\W+", "_", name).strip("_").lower() or "column"
        if attribute[0].isdigit():
            attribute = f"column_{attribute}"
        if keyword.iskeyword(attribute) or attribute in _SCHEMA_NAMES or attribute.startswith("_"):
            attribute = f"{attribute}_"
        base, number = attribute, 2
        while attribute in taken:
            attribute, number = f"{base}_{number}", number + 1
        taken.add(attribute)
        attributes.append(attribute)
    return attributes


def _literal(value: Any) -> str:
    if isinstance(value, dt.datetime):
        # NOTE: keyword-free, as `repr` writes it, but through the module's `dt` import, and a
        # time zone as the `ZoneInfo` the column's dtype names.
        parts = [value.year, value.month, value.day, value.hour, value.minute]
        zone = f', tzinfo=ZoneInfo("{value.tzinfo}")' if value.tzinfo is not None else ""
        return f"dt.datetime({', '.join(map(str, parts))}{zone})"
    if isinstance(value, dt.date):
        return f"dt.date({value.year}, {value.month}, {value.day})"
    # NOTE: `repr` of these types is a valid literal that `ruff format` leaves unchanged, but
    # for strings, which it writes with double quotes.
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return f'float("{value}")'
    return repr(value)


def _constructor(column: ColumnSuggestion, attribute: str) -> tuple[str, list[str]]:
    dtype = column.dtype
    if isinstance(dtype, pl.Datetime):
        args = [] if dtype.time_unit == "us" else [f'time_unit="{dtype.time_unit}"']
        if dtype.time_zone is not None:
            args.append(f"time_zone={_literal(dtype.time_zone)}")
        return "Datetime", args
    if isinstance(dtype, pl.Decimal):
        return "Decimal", [f"precision={dtype.precision}", f"scale={dtype.scale}"]
    if isinstance(dtype, pl.Enum):
        return "Enum", [_constant_name(attribute, "CATEGORIES")]
    if isinstance(dtype, pl.Duration):
        return "Duration", [] if dtype.time_unit == "us" else [f'time_unit="{dtype.time_unit}"']
    return {pl.String: "String", pl.Boolean: "Bool"}.get(type(dtype), str(type(dtype).__name__)), []


def _constant_name(attribute: str, kind: str) -> str:
    return f"_{attribute.upper().rstrip('_')}_{kind}"


def _arguments(column: ColumnSuggestion, attribute: str) -> list[str]:
    constructor_args = _constructor(column, attribute)[1]
    args = [*constructor_args, f"nullable={column.nullable}"]
    if column.primary_key:
        args.append("primary_key=True")
    if column.minimum is not None:
        args.append(f"min={_literal(column.minimum)}")
    if column.maximum is not None:
        args.append(f"max={_literal(column.maximum)}")
    if column.allow_nan:
        args.append("allow_nan=True")
    if column.allow_inf:
        args.append("allow_inf=True")
    if column.min_length is not None:
        args.append(f"min_length={column.min_length}")
    if column.max_length is not None:
        args.append(f"max_length={column.max_length}")
    if column.regex is not None:
        # NOTE: a raw string, so the pattern reads as written; the classes hold no quote.
        args.append(f'regex=r"{column.regex}"')
    if column.is_in is not None:
        values = _constant_name(attribute, "VALUES")
        if isinstance(column.dtype, pl.String):
            args.append(f'check={{"is_in": lambda col: col.is_in({values})}}')
        else:
            args.append(f"is_in={values}")
    if attribute != column.name:
        args.append(f"alias={_literal(column.name)}")
    if column.sensitive:
        args.append('metadata={"pii": True}')
    return args


def _call(indent: int, head: str, args: list[str]) -> list[str]:
    pad = " " * indent
    single = f"{pad}{head}({', '.join(args)})"
    if len(single) <= _LINE:
        return [single]
    inner = " " * (indent + 4) + ", ".join(args)
    if len(inner) <= _LINE:
        return [f"{pad}{head}(", inner, f"{pad})"]
    return [f"{pad}{head}(", *(f"{pad}    {arg}," for arg in args), f"{pad})"]


def _list_constant(name: str, values: Sequence[Any]) -> list[str]:
    items = [_literal(value) for value in values]
    single = f"{name} = [{', '.join(items)}]"
    if len(single) <= _LINE:
        return [single]
    return [f"{name} = [", *(f"    {item}," for item in items), "]"]


def _comments(indent: int, lines: Sequence[str]) -> list[str]:
    pad = " " * indent
    wrapped: list[str] = []
    for line in lines:
        wrapped.extend(
            textwrap.wrap(
                line, width=_LINE, initial_indent=f"{pad}# ", subsequent_indent=f"{pad}#   "
            )
        )
    return wrapped


def render_schema(name: str, columns: Sequence[ColumnSuggestion], header: Sequence[str]) -> str:
    """The module text: imports, the value lists, then the schema with one evidence comment per
    column above its declaration."""
    attributes = attribute_names([column.name for column in columns])
    bounds = [bound for column in columns for bound in (column.minimum, column.maximum)]
    # NOTE: the standard library's imports first, as isort groups them.
    standard = [
        *(["import datetime as dt"] if any(isinstance(b, dt.date) for b in bounds) else []),
        *(
            ["from zoneinfo import ZoneInfo"]
            if any(isinstance(b, dt.datetime) and b.tzinfo is not None for b in bounds)
            else []
        ),
    ]
    imports = [*standard, *([""] if standard else []), "import dataframely as dy"]
    lines = [*_comments(0, header), "", *imports, ""]
    constants: list[str] = []
    for column, attribute in zip(columns, attributes, strict=True):
        if isinstance(column.dtype, pl.Enum):
            constants += _list_constant(
                _constant_name(attribute, "CATEGORIES"), column.dtype.categories.to_list()
            )
        if column.is_in is not None:
            constants += _list_constant(_constant_name(attribute, "VALUES"), column.is_in)
    if constants:
        lines += ["", *constants, ""]
    lines += ["", f"class {name}(dy.Schema):"]
    for index, (column, attribute) in enumerate(zip(columns, attributes, strict=True)):
        if index:
            lines.append("")
        lines += _comments(4, [*column.evidence, *column.notes])
        kind = _constructor(column, attribute)[0]
        lines += _call(4, f"{attribute} = dy.{kind}", _arguments(column, attribute))
    return "\n".join(lines) + "\n"

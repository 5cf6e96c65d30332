"""Helpers of the suggestion tests: random schemas for `Schema.sample`, and loading the code."""

from __future__ import annotations

import datetime as dt
from typing import Any

import dataframely as dy
from hypothesis import strategies as st


def load_schema(code: str, name: str) -> type[dy.Schema]:
    """The schema class the suggested module declares, as importing the module would give."""
    namespace: dict[str, Any] = {}
    exec(compile(code, f"<suggested {name}>", "exec"), namespace)
    schema = namespace[name]
    assert issubclass(schema, dy.Schema)
    return schema


_COLUMNS = {
    "int": lambda nullable: dy.Int64(nullable=nullable, min=-50, max=5_000),
    "small_int": lambda nullable: dy.Int32(nullable=nullable, is_in=[1, 2, 3]),
    "float": lambda nullable: dy.Float64(nullable=nullable, min=0.0, max=1.0),
    "text": lambda nullable: dy.String(nullable=nullable, min_length=1, max_length=12),
    "code": lambda nullable: dy.String(nullable=nullable, regex=r"^[A-Z]{3}$"),
    "flag": lambda nullable: dy.Bool(nullable=nullable),
    "day": lambda nullable: dy.Date(nullable=nullable, min=dt.date(2020, 1, 1)),
    "moment": lambda nullable: dy.Datetime(nullable=nullable, time_zone="UTC"),
    "status": lambda nullable: dy.Enum(["open", "closed"], nullable=nullable),
}


@st.composite
def sampled_schemas(draw: st.DrawFn) -> tuple[type[dy.Schema], tuple[str, ...]]:
    """A schema of a few random columns, with a primary key of one or two columns."""
    kinds = draw(st.lists(st.sampled_from(sorted(_COLUMNS)), min_size=1, max_size=5))
    key_size = draw(st.integers(1, 2))
    attributes: dict[str, Any] = {
        f"key_{index}": dy.Int64(primary_key=True) for index in range(key_size)
    }
    for index, kind in enumerate(kinds):
        attributes[f"{kind}_{index}"] = _COLUMNS[kind](draw(st.booleans()))
    schema = type("Sampled", (dy.Schema,), attributes)
    return schema, tuple(f"key_{index}" for index in range(key_size))

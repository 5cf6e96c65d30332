"""How a rule's expression reads: row by row, or over `.over()` windows of key columns.

The streamed split evaluates a rule while the rows are staged when its expression gives each
row's outcome from that row alone. This reads the expression's serialized tree (Polars' own
description of it) and answers only from what it knows: a node it does not know sends the rule
to the whole-frame pass, which costs memory and never changes a result.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

import polars as pl

_ELEMENTWISE: Mapping[str, frozenset[str]] = {
    "": frozenset({"Abs", "Negate"}),
    "Boolean": frozenset(
        {
            "IsNull",
            "IsNotNull",
            "Not",
            "IsNan",
            "IsNotNan",
            "IsInfinite",
            "IsFinite",
            "IsIn",
            "IsBetween",
            "AllHorizontal",
            "AnyHorizontal",
        }
    ),
    "StringExpr": frozenset(
        {
            "Contains",
            "LenBytes",
            "LenChars",
            "StartsWith",
            "EndsWith",
            "Lowercase",
            "Uppercase",
            "CountMatches",
        }
    ),
}
"""Polars functions known to give each row's value from that row alone, by namespace.

Only what is listed counts: a function missing here sends its rule to the whole-frame pass,
which costs memory and never changes a result.
"""


def is_elementwise(expr: pl.Expr) -> bool:
    """Whether `expr` gives each row's value from that row alone, read from its plan.

    Polars' serialized form of an expression is not a stable format, so anything not
    recognized counts as not element-wise: the rule is then evaluated over the whole frame.
    Where Polars says itself whether an expression keeps its input's length (polars 2), it
    must agree: the staging pass broadcasts any one value, where the in-memory path refuses
    one that is not a scalar (`head(1)`).
    """
    tree = _serialized(expr)
    return tree is not None and _elementwise(tree) and _keeps_length(expr)


def _keeps_length(expr: pl.Expr) -> bool:
    # NOTE: `meta.is_length_preserving` and `meta.is_scalar` are public since polars 2.0; polars
    # 1.x has neither, and there the rule is taken to keep its length.
    preserving = getattr(expr.meta, "is_length_preserving", None)
    scalar = getattr(expr.meta, "is_scalar", None)
    return preserving is None or scalar is None or bool(preserving()) or bool(scalar())


def window_keys(expr: pl.Expr) -> frozenset[str] | None:
    """The columns every `.over()` window of `expr` is partitioned by, if only windows stop it
    being row by row; else None.

    Such a rule gives each row its value from the rows of its own group: the rows that share
    its values in those columns. So it can be evaluated over any split of the rows that keeps
    each group whole, such as hash parts of those columns. None when the expression has no
    window, a window is partitioned by anything but columns, maps its groups other than back
    to their rows, holds another window or a literal series, or the windows share no column.
    """
    tree = _serialized(expr)
    windows: list[frozenset[str]] = []
    if tree is None or not _elementwise(tree, windows) or not windows:
        return None
    shared = frozenset.intersection(*windows)
    return shared or None


def _serialized(expr: pl.Expr) -> object | None:
    try:
        tree: object = json.loads(expr.meta.serialize(format="json"))
    except (pl.exceptions.PolarsError, ValueError):
        return None
    return tree


def _elementwise(node: object, windows: list[frozenset[str]] | None = None) -> bool:
    if not isinstance(node, dict) or len(node) != 1:
        return False
    ((kind, body),) = node.items()
    if kind == "Over" and windows is not None:
        keys = _window_partition(body)
        if keys is not None:
            windows.append(keys)
        return keys is not None
    if kind == "Column":
        return isinstance(body, str)
    if kind == "Literal":
        return _is_one_value(body)
    if kind == "BinaryExpr":
        return _elementwise(body.get("left"), windows) and _elementwise(body.get("right"), windows)
    if kind == "Cast":
        return _elementwise(body.get("expr"), windows)
    if kind == "Ternary":
        parts = ("predicate", "truthy", "falsy")
        return all(_elementwise(body.get(part), windows) for part in parts)
    if kind == "Alias":
        return isinstance(body, list) and bool(body) and _elementwise(body[0], windows)
    if kind == "Function":
        return _elementwise_function(body, windows)
    return False


_WINDOW_FIELDS: Final = frozenset({"function", "partition_by", "order_by", "mapping"})
"""The fields of a serialized `.over()` window (polars 1.44 to 2.1)."""


def _window_partition(body: Any) -> frozenset[str] | None:
    # NOTE: a window with a field beyond the four read here (an option of another Polars version) is
    # not trusted to keep to its group.
    if not isinstance(body, dict) or set(body) != _WINDOW_FIELDS:
        return None
    if body.get("mapping") != "GroupsToRows":
        return None
    partition = body.get("partition_by")
    if not isinstance(partition, list) or not partition:
        return None
    columns = [key.get("Column") if isinstance(key, dict) else None for key in partition]
    if not all(isinstance(column, str) for column in columns):
        return None
    inner = (body.get("function"), body.get("order_by"))
    if any(_holds(part, _is_window_or_series) for part in inner):
        return None
    return frozenset(cast(list[str], columns))


def _is_window_or_series(kind: str, body: object) -> bool:
    return kind == "Over" or (kind == "Literal" and not _is_one_value(body))


def _is_one_value(literal: object) -> bool:
    return isinstance(literal, dict) and set(literal) <= {"Scalar", "Dyn"}


def _holds(node: object, found: Callable[[str, object], bool]) -> bool:
    if isinstance(node, dict):
        if any(found(kind, body) for kind, body in node.items()):
            return True
        return any(_holds(value, found) for value in node.values())
    if isinstance(node, list):
        return any(_holds(item, found) for item in node)
    return False


def _elementwise_function(body: Any, windows: list[frozenset[str]] | None = None) -> bool:
    if not isinstance(body, dict) or not isinstance(body.get("input"), list):
        return False
    function, inputs = body.get("function"), body["input"]
    if isinstance(function, str):
        namespace, name = "", function
    elif isinstance(function, dict) and len(function) == 1:
        ((namespace, inner),) = function.items()
        name = inner if isinstance(inner, str) else next(iter(inner), "") if inner else ""
    else:
        return False
    if name not in _ELEMENTWISE.get(namespace, frozenset()):
        return False
    if name == "IsIn" and not (len(inputs) == 2 and "Literal" in inputs[1]):
        return False  # membership in another column is not a row's own value
    return all(_elementwise(i, windows) for i in inputs)

"""Generated schemas and frames: `@dy.rule()`s drawn from a grammar of Polars expressions.

The streamed split (`streaming=True`) must give what the in-memory split gives for any rule
Dataframely accepts, and refuse what it refuses with the same error. The grammar draws the
rules that tell the two apart: row-wise comparisons, aggregates (a scalar, broadcast to every
row), `.over()` windows with one or two key columns, `filter`/`head` (another length, refused),
`shift`/`cum_sum`/`rank`/`is_first_distinct` (one value per row, each from other rows),
literals and nulls, and now and then a rule whose result is no `Boolean`. The frames are
small, over tiny domains, so empty and one-row frames, repeated keys and nulls are frequent.

`DAGSTER_DATAFRAMELY_THOROUGH=1` runs many more examples (see CONTRIBUTING.md).
`in_memory_error_without_shared_subexpressions` gives the one way the streamed split's errors
may read differently from the in-memory path's.
"""

from __future__ import annotations

import math
import os
from typing import Any

import dataframely as dy
import polars as pl
from hypothesis import strategies as st

from dagster_dataframely._model.schema import dataframely_rules
from dagster_dataframely._upstream import evaluated_rules

THOROUGH = os.environ.get("DAGSTER_DATAFRAMELY_THOROUGH") == "1"
"""Whether the long profile runs: many more examples of the generated-rule properties."""


def examples(normal: int, thorough: int) -> int:
    """How many examples a generated-rule property draws: `normal` in `make test`."""
    return thorough if THOROUGH else normal


DTYPES: dict[str, pl.DataType] = {
    "k": pl.Int64(),
    "g": pl.String(),
    "v": pl.Int64(),
    "x": pl.Float64(),
    "b": pl.Boolean(),
}
"""The generated schemas' columns: a key, a group, an integer, a float and a flag."""

VALUES: dict[str, list[Any]] = {
    "k": [0, 1, 2, None],
    "g": ["a", "b", "c", None],
    "v": [-2, -1, 0, 1, 2, 5, None],
    "x": [-1.5, 0.0, 0.5, 3.0, math.nan, None],
    "b": [True, False, None],
}

WINDOW_KEYS = [["g"], ["k"], ["g", "k"]]


def _numbers(depth: int) -> st.SearchStrategy[pl.Expr]:
    """A numeric expression: a column, a literal, arithmetic, an aggregate, a window."""
    leaves = st.one_of(
        st.sampled_from(["v", "x", "k"]).map(pl.col),
        st.sampled_from([0, 1, 2, -1]).map(pl.lit),
        st.just(pl.lit(None, dtype=pl.Int64)),
        st.just(pl.len()),
    )
    if depth <= 0:
        return leaves
    inner = st.deferred(lambda: _numbers(depth - 1))
    return st.one_of(
        leaves,
        st.tuples(inner, st.sampled_from(["+", "-", "*"]), inner).map(_arithmetic),
        inner.map(lambda e: e.abs()),
        st.tuples(inner, st.sampled_from(list(AGGREGATES))).map(lambda p: AGGREGATES[p[1]](p[0])),
        st.tuples(inner, st.sampled_from(list(SEQUENCES))).map(lambda p: SEQUENCES[p[1]](p[0])),
        st.tuples(inner, st.deferred(lambda: _booleans(depth - 1))).map(
            lambda p: p[0].filter(p[1])
        ),
        st.tuples(inner, st.sampled_from(list(AGGREGATES)), st.sampled_from(WINDOW_KEYS)).map(
            lambda p: AGGREGATES[p[1]](p[0]).over(p[2])
        ),
        st.tuples(inner, st.sampled_from(list(SEQUENCES)), st.sampled_from(WINDOW_KEYS)).map(
            lambda p: SEQUENCES[p[1]](p[0]).over(p[2])
        ),
    )


AGGREGATES = {
    "sum": lambda e: e.sum(),
    "max": lambda e: e.max(),
    "min": lambda e: e.min(),
    "mean": lambda e: e.mean(),
    "n_unique": lambda e: e.n_unique(),
    "count": lambda e: e.count(),
    "first": lambda e: e.first(),
}
"""One value from many rows: a scalar over the frame, one value per group in a window."""

SEQUENCES = {
    "shift": lambda e: e.shift(1),
    "shift_back": lambda e: e.shift(-1),
    "cum_sum": lambda e: e.cum_sum(),
    "rank": lambda e: e.rank("min"),
    "head": lambda e: e.head(2),
}
"""One value per row, each from other rows (`head` excepted: two values)."""


def _arithmetic(parts: tuple[pl.Expr, str, pl.Expr]) -> pl.Expr:
    left, op, right = parts
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    return left * right


def _booleans(depth: int) -> st.SearchStrategy[pl.Expr]:
    """A `Boolean` expression: comparisons, logic, membership, nulls, `all`/`any`, windows."""
    numbers = _numbers(depth)
    leaves = st.one_of(
        st.just(pl.col("b")),
        st.sampled_from([True, False]).map(pl.lit),
        st.just(pl.lit(None, dtype=pl.Boolean)),
        st.sampled_from(["a", "b"]).map(lambda s: pl.col("g") == s),
        st.just(pl.col("g").is_in(["a", "c"])),
    )
    comparisons = st.tuples(numbers, st.sampled_from(["<", "<=", "==", "!=", ">"]), numbers).map(
        _compare
    )
    if depth <= 0:
        return st.one_of(leaves, comparisons)
    inner = st.deferred(lambda: _booleans(depth - 1))
    return st.one_of(
        leaves,
        comparisons,
        st.tuples(inner, inner).map(lambda p: p[0] & p[1]),
        st.tuples(inner, inner).map(lambda p: p[0] | p[1]),
        inner.map(lambda e: ~e),
        numbers.map(lambda e: e.is_null()),
        numbers.map(lambda e: e.is_in([0, 1, 2])),
        numbers.map(lambda e: e.is_between(-1, 2)),
        st.sampled_from(["v", "g", "k"]).map(lambda c: pl.col(c).is_first_distinct()),
        st.sampled_from(["v", "g"]).map(lambda c: pl.col(c).is_duplicated()),
        inner.map(lambda e: e.all()),
        inner.map(lambda e: e.any()),
        st.tuples(inner, st.sampled_from(["all", "any"]), st.sampled_from(WINDOW_KEYS)).map(
            lambda p: getattr(p[0], p[1])().over(p[2])
        ),
        st.tuples(inner, st.sampled_from(WINDOW_KEYS)).map(lambda p: p[0].shift(1).over(p[1])),
        st.tuples(inner, inner, inner).map(lambda p: pl.when(p[0]).then(p[1]).otherwise(p[2])),
    )


def _compare(parts: tuple[pl.Expr, str, pl.Expr]) -> pl.Expr:
    left, op, right = parts
    return {
        "<": left < right,
        "<=": left <= right,
        "==": left == right,
        "!=": left != right,
        ">": left > right,
    }[op]


RULES = st.one_of(
    _booleans(2),
    _booleans(2),
    _booleans(2),
    _booleans(2),
    _booleans(2),
    _booleans(2),
    _numbers(1),  # no Boolean: Dataframely refuses it
)
"""One generated rule: a `Boolean` expression, now and then one that is no `Boolean`."""


@st.composite
def schemas(draw: st.DrawFn) -> type[dy.Schema]:
    """A schema of the five columns, maybe a primary key and a column rule, and 1-3 rules."""
    key = draw(st.sampled_from([(), ("k",), ("g", "k")]))
    v_min = draw(st.sampled_from([None, 0]))
    namespace: dict[str, Any] = {
        "k": dy.Int64(primary_key="k" in key, nullable="k" not in key),
        "g": dy.String(primary_key="g" in key, nullable="g" not in key),
        "v": dy.Int64(nullable=True, min=v_min),
        "x": dy.Float64(nullable=True),
        "b": dy.Bool(nullable=True),
    }
    for index, expr in enumerate(draw(st.lists(RULES, min_size=1, max_size=3))):
        namespace[f"rule_{index}"] = dy.rule()(_returning(expr))
    return type("Generated", (dy.Schema,), namespace)


def _returning(expr: pl.Expr) -> Any:
    """A rule function returning `expr`, whatever the schema it is called with."""

    def rule(cls: Any) -> pl.Expr:
        return expr

    rule.__doc__ = str(expr)
    return rule


FRAMES = st.lists(
    st.tuples(*(st.sampled_from(VALUES[column]) for column in DTYPES)), max_size=10
).map(lambda rows: pl.DataFrame(rows, schema=DTYPES, orient="row"))
"""Small frames over tiny domains: empty and one-row frames are drawn often."""


def in_memory_error_without_shared_subexpressions(
    schema: type[dy.Schema], frame: pl.DataFrame
) -> tuple[type[Exception], str] | None:
    """The in-memory path's error, its plan evaluated without common-subexpression elimination.

    Where rules share a subexpression, Polars evaluates it once under a placeholder name
    (`__POLARS_CSER_...`), which the in-memory path's message then shows; the streamed split
    evaluates a failing rule alone, so its message shows the expression itself.
    """
    plan, _, _ = evaluated_rules(schema, frame.lazy(), dataframely_rules(schema))
    try:
        plan.collect(engine="in-memory", optimizations=pl.QueryOptFlags(comm_subexpr_elim=False))
    except pl.exceptions.PolarsError as error:
        return error_cause(error)
    return None


def error_cause(error: BaseException) -> tuple[type[BaseException], str]:
    """An error as the properties compare it: its type and its message's first paragraph.

    Polars appends the expression that raised; where several rules fail, which one that is
    depends on which of its threads fails first, so two runs of one plan can name different
    rules for the same cause.
    """
    return type(error), str(error).split("\n\n", 1)[0]

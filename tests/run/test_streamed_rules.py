"""Property: the streamed split is the in-memory split, for every rule Dataframely accepts.

Rules are drawn from a grammar (`tests/rule_grammar.py`) as `@dy.rule()`s of a generated
schema. For each frame the streamed split (`streamed_split`, what `streaming=True` runs) and the
in-memory split (`split_rows`, Dataframely's `Schema.filter`) must give the same valid rows, the
same invalid rows with every rule's outcome, and the same counts, in the same order; or both
raise, the same error for the same cause (`error_cause`). Which rules are evaluated while the
rows are staged is read from the expression, and that reading must only move memory: the
property also runs with every `Boolean` rule read as row by row, and with windows evaluated
over hash parts of two rows. `integration_tests/test_streamed_rules.py` compares whole runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from unittest import mock

import dataframely as dy
import polars as pl
import pytest
from hypothesis import given, settings
from polars.testing import assert_frame_equal

from dagster_dataframely._model.schema import read_schema
from dagster_dataframely._run.split import streaming
from dagster_dataframely._run.split.failures import Failures
from dagster_dataframely._run.split.split import split_rows
from dagster_dataframely._run.split.staging import Staging
from dagster_dataframely._run.split.streaming import streamed_split
from tests.rule_grammar import (
    FRAMES,
    error_cause,
    examples,
    in_memory_error_without_shared_subexpressions,
    schemas,
)

FAILED_IN_POLARS = (pl.exceptions.PolarsError, pl.exceptions.PanicException)
"""What a split may raise from Polars itself: an error, or a panic on a rule that Polars cannot
evaluate on either engine; the two paths must raise the same."""


@dataclass
class Split:
    """What one split gave: its rows and rule outcomes, or the error it raised."""

    valid: pl.DataFrame | None = None
    failures: Failures | None = None
    error: tuple[type[BaseException], str] | None = None


def in_memory(schema: type[dy.Schema], frame: pl.DataFrame) -> Split:
    info = read_schema(schema)
    try:
        split = split_rows(info, frame.lazy())
    except FAILED_IN_POLARS as error:
        return Split(error=error_cause(error))
    return Split(split.result, Failures.from_failure_info(info, split.failure))


def streamed(schema: type[dy.Schema], frame: pl.DataFrame) -> Split:
    staging = Staging()
    try:
        valid, failures = streamed_split(read_schema(schema), frame.lazy(), staging, asset="t")
        return Split(valid.collect(), failures)
    except FAILED_IN_POLARS as error:
        return Split(error=error_cause(error))
    finally:
        staging.remove()
        assert staging.directory is None


def assert_same_split(
    streamed: Split, in_memory: Split, without_shared: tuple[type[Exception], str] | None = None
) -> None:
    if streamed.error != in_memory.error:
        assert in_memory.error is not None
        assert streamed.error == without_shared
    if in_memory.error is not None:
        return
    assert streamed.valid is not None
    assert in_memory.valid is not None
    assert streamed.failures is not None
    assert in_memory.failures is not None
    assert_frame_equal(streamed.valid, in_memory.valid)
    assert_frame_equal(streamed.failures.outcomes, in_memory.failures.outcomes)
    assert streamed.failures.counts == in_memory.failures.counts


def _read_as_row_by_row_where_in_memory_accepts(frame: pl.DataFrame) -> Callable[[pl.Expr], bool]:
    """A reading of every rule the in-memory path accepts over `frame` as row by row.

    The misreading that matters: an aggregate, a window, `shift`, `rank` or `cum_sum` staged
    as if each row's value came from that row alone. A rule of another length is refused in
    memory; the staging pass sees such a rule only where the reading itself is wrong about its
    length, which `test_a_rule_misread_as_row_by_row_*` below covers. The staging pass runs
    on Polars' streaming engine, so it is only as right as that engine: the few expressions
    on which the two engines disagree (`pl.len() < pl.lit(0).filter(...)` has two values on
    one, one on the other) are not read as row by row here, as they hold an aggregate and a
    filter that the package's reading never accepts.
    """

    def reading(expr: pl.Expr) -> bool:
        plan = frame.lazy().with_columns(dy_probe=expr.fill_null(True))
        try:
            in_memory = plan.collect(engine="in-memory")
            streamed = plan.collect(engine="streaming")
        except (pl.exceptions.PolarsError, pl.exceptions.PanicException):
            # NOTE: Polars' streaming engine sometimes panics on an aggregate collected in
            # `with_columns` (an assertion on the dtype in its `max` reduction, depending on
            # thread timing): the engines disagree there, so it is not read as row by row.
            return False
        probe = in_memory.get_column("dy_probe")
        return probe.equals(streamed.get_column("dy_probe"), null_equal=True)

    return reading


READINGS = [
    "as read",
    "aggregates, windows and sequences read as row by row",
    "windows over hash parts of two rows",
]


@pytest.mark.parametrize("reading", READINGS)
@pytest.mark.timeout(examples(normal=300, thorough=0))  # 0: the long profile has no limit
@settings(max_examples=examples(normal=120, thorough=5_000))
@given(schema=schemas(), frame=FRAMES)
def test_the_streamed_split_is_the_in_memory_split_for_generated_rules(
    reading: str, schema: type[dy.Schema], frame: pl.DataFrame
) -> None:
    patches: dict[str, Any] = {"ROWS_PER_WINDOW_PART": streaming.ROWS_PER_WINDOW_PART}
    if reading == READINGS[1]:
        patches["is_elementwise"] = _read_as_row_by_row_where_in_memory_accepts(frame)
    if reading == READINGS[2]:
        patches["ROWS_PER_WINDOW_PART"] = 2
    with mock.patch.multiple(streaming, **patches):
        result = streamed(schema, frame)
    expected = in_memory(schema, frame)
    without_shared = None
    if expected.error is not None and result.error != expected.error:
        without_shared = in_memory_error_without_shared_subexpressions(schema, frame)
    assert_same_split(result, expected, without_shared)


def _schema(**rules: Any) -> type[dy.Schema]:
    namespace: dict[str, Any] = {"v": dy.Int64(nullable=True), "g": dy.String(nullable=True)}
    for name, expr in rules.items():
        namespace[name] = dy.rule()(lambda cls, expr=expr: expr)
    return type("Handwritten", (dy.Schema,), namespace)


SEVEN = pl.DataFrame({"v": [1, 2, 3, 4, 5, 6, 7], "g": ["a", "b"] * 3 + ["a"]})


@pytest.mark.parametrize(
    "rule",
    [
        pl.len() < 3,
        pl.col("v").sum() < 10,
        pl.col("v").max() < 3,
        (pl.col("v") > 2).all(),
        pl.col("v").n_unique() == pl.len(),
        pl.lit(False),
    ],
    ids=str,
)
def test_a_rule_of_one_value_fails_or_passes_every_row_as_in_memory(rule: pl.Expr) -> None:
    """The issue's cases: streamed, only the first row was quarantined, six invalid rows kept."""
    schema = _schema(r=rule)
    result, expected = streamed(schema, SEVEN), in_memory(schema, SEVEN)
    assert_same_split(result, expected)
    assert result.valid is not None
    assert result.valid.height in (0, 7)


@pytest.mark.parametrize(
    "rule",
    [
        pl.col("v").filter(pl.col("v") > 3) < 8,
        pl.col("v").head(3) > 0,
        pl.lit(pl.Series([True, False])),
    ],
    ids=str,
)
@pytest.mark.parametrize("rows", [0, 1, 7])
def test_a_rule_of_another_length_is_refused_with_the_in_memory_error(
    rule: pl.Expr, rows: int
) -> None:
    """In memory, `with_columns` broadcasts one value and refuses another length (ShapeError)."""
    schema = _schema(r=rule)
    frame = SEVEN.head(rows)
    result, expected = streamed(schema, frame), in_memory(schema, frame)
    assert_same_split(result, expected)
    if rows == 7:
        assert result.error is not None
        assert result.error[0] is pl.exceptions.ShapeError


def test_a_rule_polars_panics_on_panics_the_same_on_both_paths() -> None:
    """A generated case (seed 171229616700144496485286715428179931701): Polars' in-memory engine
    panics on a conditional whose branch is a filtered count, so the streamed split panicked
    while the property only expected Polars errors from either path."""
    b = pl.col("b")
    schema = type(
        "Panicking",
        (dy.Schema,),
        {
            "b": dy.Bool(nullable=True),
            "r": dy.rule()(
                lambda cls: pl.when(b).then(b).otherwise(pl.len().filter(b) < pl.len().filter(b))
            ),
        },
    )
    frame = pl.DataFrame({"b": [True] * 9 + [None]})
    # NOTE: Polars 1.x panics on both paths; Polars 2.x evaluates the rule on both.
    assert_same_split(streamed(schema, frame), in_memory(schema, frame))


def test_the_first_rule_refused_in_dataframelys_order_is_the_one_named() -> None:
    schema = _schema(
        a=pl.col("v").sum() < 10,  # one value: fine
        b=pl.col("v").cum_sum(),  # no Boolean: refused after every length is checked
        c=pl.col("v").head(3) > 0,  # another length: refused first
        d=pl.col("g").head(2) == "a",
    )
    result = streamed(schema, SEVEN)
    assert result.error is not None
    assert "'c'" in result.error[1]
    assert_same_split(result, in_memory(schema, SEVEN))


def test_a_rule_that_is_no_boolean_is_refused_with_dataframelys_error() -> None:
    schema = _schema(a=pl.col("v") > 0, b=pl.col("v") + 1)
    result = streamed(schema, SEVEN)
    assert result.error is not None
    assert "did not evaluate to a boolean" in result.error[1]
    assert_same_split(result, in_memory(schema, SEVEN))


def test_a_rule_polars_cannot_plan_is_refused_with_the_in_memory_error() -> None:
    schema = _schema(r=pl.col("g").str.len_chars() > pl.col("v").str.len_chars())
    result = streamed(schema, SEVEN)
    assert result.error is not None
    assert_same_split(result, in_memory(schema, SEVEN))


@pytest.mark.parametrize("rule", [pl.col("v").sum() < 10, pl.lit(pl.Series([True, False]))])
def test_a_rule_misread_as_row_by_row_cannot_repeat_a_one_row_frame(rule: pl.Expr) -> None:
    """The streaming engine repeats a one-row frame beside a longer column; the staging sees it."""
    schema = _schema(r=rule)
    frame = SEVEN.head(1)
    with mock.patch.object(streaming, "is_elementwise", return_value=True):
        result = streamed(schema, frame)
    assert_same_split(result, in_memory(schema, frame))


def test_a_rule_misread_as_a_window_is_evaluated_over_the_whole_frame() -> None:
    """A part's result that is not one value per row sends the rule back to every row.

    Over all seven rows the sum is 28, so every row fails; any part of fewer rows passes.
    """
    schema = _schema(r=pl.col("v").sum() < 28)
    with mock.patch.multiple(
        streaming, window_keys=lambda expr: frozenset({"v"}), ROWS_PER_WINDOW_PART=2
    ):
        result = streamed(schema, SEVEN)
    assert result.valid is not None
    assert result.valid.height == 0
    assert_same_split(result, in_memory(schema, SEVEN))

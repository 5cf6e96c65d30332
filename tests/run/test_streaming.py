"""Which rules the streamed split evaluates while staging the rows, and which over them after.

A rule read as row by row is evaluated while the rows are staged, beside every row; any other
rule over the staged rows afterwards, reading only its own columns. Polars evaluates either
beside every row, so the reading moves memory, never an outcome:
`test_streamed_rules.py` compares the split with the in-memory one for rules misread on
purpose. A window rule read as keeping to its groups is evaluated one hash part of its keys at a
time, which only the reading of its windows makes right, so that reading trusts no window
field it does not know. The rows themselves are compared with Dataframely's split in
`test_no_row_lost.py`. Where no IO manager sinks a `LazyFrame`, a `streaming=True` asset
validates in memory, as without it.
"""

from __future__ import annotations

import json
from unittest import mock

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from dagster_dataframely._run.split import rule_shape
from dagster_dataframely._run.split.rule_shape import is_elementwise, window_keys


@pytest.mark.parametrize(
    "expr",
    [
        pl.col("amount") >= 0,
        (pl.col("status") != "paid") | (pl.col("amount") > 0),
        (pl.col("amount") - pl.col("quantity").cast(pl.Float64) * 2.5).abs() < 0.005,
        pl.col("sku").str.len_chars() <= 32,
        pl.col("email").str.contains(r"^[^@]+@[^@]+$"),
        pl.col("channel").is_in(["web", "app"]),
        pl.col("quantity").is_between(1, 1_000),
        pl.col("ship_by").is_null() | pl.col("ship_by").is_not_null(),
        pl.when(pl.col("a") > 0).then(pl.col("b")).otherwise(pl.lit(True)),
    ],
    ids=str,
)
def test_a_row_by_row_rule_is_evaluated_in_the_streaming_pass(expr: pl.Expr) -> None:
    assert is_elementwise(expr)


@pytest.mark.parametrize(
    "expr",
    [
        pl.col("currency").n_unique().over("order_id") == 1,
        pl.col("amount") <= pl.col("amount").mean() * 10,
        pl.col("amount").sum() > 0,
        pl.col("order_id").is_in(pl.col("parent_id")),
        pl.col("order_id").is_duplicated().not_(),
        pl.col("amount").shift(1).is_null(),
        pl.col("amount").rank() < 10,
    ],
    ids=str,
)
def test_a_rule_over_other_rows_is_evaluated_over_the_whole_frame(expr: pl.Expr) -> None:
    assert not is_elementwise(expr)


@pytest.mark.parametrize(
    ("expr", "keys"),
    [
        (pl.col("currency").n_unique().over("order_id") == 1, ("order_id",)),
        (pl.col("amount").sum().over("order_id", "line_no") > 0, ("line_no", "order_id")),
        (
            (pl.col("a").max().over("k", "j") > 0) & (pl.col("b").min().over("k") < pl.col("c")),
            ("k",),
        ),
        (pl.col("a").cum_sum().over("k", order_by="t") < 10, ("k",)),
        ((pl.col("a") - pl.col("a").mean()).abs().over("k") < 3, ("k",)),
    ],
    ids=str,
)
def test_a_rule_of_windows_sharing_key_columns_can_be_evaluated_a_part_of_the_keys_at_a_time(
    expr: pl.Expr, keys: tuple[str, ...]
) -> None:
    assert window_keys(expr) == set(keys)


@pytest.mark.parametrize(
    "expr",
    [
        pl.col("amount") >= 0,  # no window: evaluated row by row instead
        pl.col("amount") <= pl.col("amount").mean() * 10,
        (pl.col("a").max().over("k") > 0) & (pl.col("b").max().over("j") > 0),  # no shared key
        pl.col("a").max().over("k") > pl.col("a").mean(),  # an aggregate outside the window
        pl.col("a").max().over(pl.col("k") // 2) > 0,  # partitioned by an expression
        pl.col("a").max().over("k", mapping_strategy="join").list.len() > 0,
        (pl.col("a") - pl.col("a").max().over("j")).max().over("k") > 0,  # a window in a window
        pl.col("a").is_in(pl.lit(pl.Series([1, 2]))).any().over("k"),  # a literal series
        pl.col("a").max().over("k").shift(1) > 0,  # a row's value from another group's row
    ],
    ids=str,
)
def test_a_rule_reaching_past_its_group_is_evaluated_over_the_whole_frame(expr: pl.Expr) -> None:
    assert window_keys(expr) is None


class Keyed(dy.Schema):
    key = dy.String(primary_key=True)
    value = dy.Int64(min=0)


@dd.asset(Keyed, streaming=True)
def keyed() -> pl.LazyFrame:
    return pl.LazyFrame({"key": ["b", "a", "c"], "value": [2, 1, 3]})


def test_a_direct_call_validates_the_rows_in_memory() -> None:
    (table,) = [e for e in keyed() if isinstance(e, dg.MaterializeResult)]
    assert_frame_equal(table.value, pl.DataFrame({"key": ["b", "a", "c"], "value": [2, 1, 3]}))


def test_a_manager_that_cannot_sink_stores_the_rows_validated_in_memory() -> None:
    result = dg.materialize([keyed])  # the default manager pickles the value
    stored = result.output_for_node("keyed")
    assert_frame_equal(stored, pl.DataFrame({"key": ["b", "a", "c"], "value": [2, 1, 3]}))


@pytest.mark.skipif(
    not hasattr(pl.col("v").meta, "is_length_preserving"),
    reason="polars 1.x has no meta.is_length_preserving; `make test-newest` runs this on polars 2",
)
@pytest.mark.parametrize(
    "expr",
    [
        pl.col("v").head(1) > 0,
        pl.col("v").filter(pl.col("v") > 0) > 0,
        pl.col("v").drop_nulls() > 0,
        pl.lit(pl.Series([True, False])),
    ],
    ids=str,
)
def test_a_rule_polars_says_changes_its_length_is_never_read_as_row_by_row(expr: pl.Expr) -> None:
    """Should the serialized form be misread, Polars' own account of the length still counts."""
    with mock.patch.object(rule_shape, "_elementwise", return_value=True):
        assert not rule_shape.is_elementwise(expr)
    assert rule_shape.is_elementwise(pl.col("v") > 0)


def test_a_window_with_a_field_the_reading_does_not_know_is_not_split_into_parts() -> None:
    """A field a later Polars adds to `.over()` could let it reach past its group."""
    tree = json.loads((pl.col("a").max().over("k") > 0).meta.serialize(format="json"))
    tree["BinaryExpr"]["left"]["Over"]["frame"] = "Rows(-1, 1)"
    with mock.patch.object(rule_shape, "_serialized", return_value=tree):
        assert rule_shape.window_keys(pl.col("a").max().over("k") > 0) is None
    assert rule_shape.window_keys(pl.col("a").max().over("k") > 0) == {"k"}

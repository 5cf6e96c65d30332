"""A schema change never fails a run and never costs a stored row, on every way of storing.

The matrix: {add a rule, remove a rule, rename a rule, add a nullable column} x {parquet,
DuckDB, each wrapped in `QuarantineAwareIOManager`, plain and staged} x {unpartitioned,
daily}. Each cell runs the asset with the old schema, then with the new one, and reads the
stored table and quarantine back after every run: the new run's rows are there, with the new
schema's columns, and every row stored before that the new run does not replace is still
there, with its values. On DuckDB a table gains the new column before the write (older rows
read NULL in it), and a removed rule's column stays, NULL for new rows; a parquet file is
rewritten whole, with the new schema's columns only.
"""

from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from .conftest import (
    AMOUNT_MIN,
    DAILY,
    DAY_1,
    DAY_2,
    QUIET,
    UNPARTITIONED,
    Orders,
    invalid_ids,
    materialize,
    orders_asset,
    orders_frame,
    valid_ids,
)
from .storage_modes import PARTITIONED, Storage

pytestmark = pytest.mark.integration

# The wrapper passes an unstaged parquet write to the manager as it is (the conformance suite
# shows it), so the matrix leaves that mode out.
MODES = ("parquet", "duckdb", "wrapped-duckdb", "staged-parquet", "staged-duckdb")


class WithLimit(Orders):
    """The suite's orders, plus a rule: an order under 1000."""

    @dy.rule()
    def below_limit(cls) -> pl.Expr:
        return pl.col("amount") < 1000


class WithCap(Orders):
    """`WithLimit` with its rule renamed."""

    @dy.rule()
    def under_cap(cls) -> pl.Expr:
        return pl.col("amount") < 1000


class WithNote(Orders):
    """The suite's orders, plus a nullable column."""

    note = dy.String(nullable=True)


LIMIT = "dy_rule__below_limit"
CAP = "dy_rule__under_cap"

# (schema before, schema after, the rule columns of each beside the suite's own)
CHANGES: dict[str, tuple[type[dy.Schema], type[dy.Schema], set[str], set[str]]] = {
    "add-rule": (Orders, WithLimit, set(), {LIMIT}),
    "remove-rule": (WithLimit, Orders, {LIMIT}, set()),
    "rename-rule": (WithLimit, WithCap, {LIMIT}, {CAP}),
    "add-column": (Orders, WithNote, set(), set()),
}


def _frame(schema: type[dy.Schema], day: str, tag: str, invalid: int) -> pl.DataFrame:
    frame = orders_frame(day, tag=tag, invalid=invalid)
    if "note" in schema.column_names():
        frame = frame.with_columns(note=pl.concat_str(pl.lit("note of "), "order_id"))
    return frame


def _check_table(stored: pl.DataFrame | None, frame: pl.DataFrame) -> pl.DataFrame:
    """The table holds exactly the frame's valid rows, in every column the frame has."""
    assert stored is not None
    valid = frame.filter(pl.col("amount") >= 0).sort("order_id")
    assert_frame_equal(stored.select(valid.columns).sort("order_id"), valid)
    return stored


def _check_quarantine(
    stored: pl.DataFrame | None, frame: pl.DataFrame, rules: set[str]
) -> pl.DataFrame:
    """The quarantine holds exactly the frame's invalid rows, with their rule columns."""
    assert stored is not None
    invalid = frame.filter(pl.col("amount") < 0).sort("order_id")
    assert_frame_equal(stored.select(invalid.columns).sort("order_id"), invalid)
    assert stored[AMOUNT_MIN].to_list() == ["invalid"] * stored.height
    for rule in rules:
        assert stored[rule].to_list() == ["valid"] * stored.height, rule
    return stored


@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("mode", MODES)
@PARTITIONED
def test_a_schema_change_keeps_every_row(
    tmp_path: Path, mode: str, change: str, partitioned: bool
) -> None:
    before, after, old_rules, new_rules = CHANGES[change]
    storage = Storage(mode, tmp_path)
    days = [DAY_1, DAY_2] if partitioned else [UNPARTITIONED]
    options: dict[str, Any] = (
        {"partitions_def": DAILY, "metadata": {"partition_expr": "day"}} if partitioned else {}
    )
    first = {day: _frame(before, day or DAY_1, "first", invalid=1) for day in days}
    for day in days:
        asset = orders_asset(first, schema=before, **options)
        materialize([asset], storage.io_manager(), partition_key=day or None)

    # The last partition (or the whole asset) runs again, with the new schema.
    changed = days[-1]
    second = {changed: _frame(after, changed or DAY_1, "second", invalid=2)}
    asset = orders_asset(second, schema=after, **options)
    materialize([asset], storage.io_manager(), partition_key=changed or None)

    _check_table(storage.read("orders", changed or None), second[changed])
    quarantine = _check_quarantine(
        storage.read("orders_quarantine", changed or None), second[changed], new_rules
    )
    for rule in old_rules - new_rules:
        if storage.kind == "duckdb":  # the column stays, NULL for the new rows
            assert quarantine[rule].to_list() == [None] * quarantine.height
        else:  # the file is rewritten whole, with the new schema's columns
            assert rule not in quarantine.columns

    # A partition the new schema has not run yet keeps its rows and their values.
    for kept in days[:-1]:
        old_table = _check_table(storage.read("orders", kept), first[kept])
        old_quarantine = _check_quarantine(
            storage.read("orders_quarantine", kept), first[kept], old_rules
        )
        assert set(old_table["order_id"]) == valid_ids(first[kept])
        assert set(old_quarantine["order_id"]) == invalid_ids(first[kept])
        if storage.kind == "duckdb":  # one table: the new columns read NULL for the old rows
            for rule in new_rules - old_rules:
                assert old_quarantine[rule].to_list() == [None] * old_quarantine.height
            if change == "add-column":
                assert old_table["note"].to_list() == [None] * old_table.height
                assert old_quarantine["note"].to_list() == [None] * old_quarantine.height


class WithTextAmount(dy.Schema):
    """The suite's orders with `amount` turned into text: a change DuckDB cannot insert."""

    order_id = dy.String(primary_key=True)
    day = dy.Date(nullable=False)
    placed_at = dy.Datetime(nullable=False)
    region = dy.String(nullable=False)
    amount = dy.String(nullable=False, regex=r"^\d")


@pytest.mark.parametrize("mode", ["duckdb", "wrapped-duckdb"])
def test_a_failed_quarantine_write_on_duckdb_leaves_the_old_rows(tmp_path: Path, mode: str) -> None:
    """The quarantine's slice is replaced in one transaction, even without `staged_writes`."""
    storage = Storage(mode, tmp_path)
    first = {UNPARTITIONED: orders_frame(DAY_1, tag="first", invalid=1)}
    materialize([orders_asset(first)], storage.io_manager())
    text = orders_frame(DAY_1, tag="second", invalid=1).with_columns(
        amount=pl.when(pl.col("amount") >= 0).then(pl.lit("12")).otherwise(pl.lit("oops"))
    )

    result = dg.materialize(
        [orders_asset({UNPARTITIONED: text}, schema=WithTextAmount)],
        resources={"io_manager": storage.io_manager()},
        run_config=QUIET,
        raise_on_error=False,
    )

    assert not result.success  # a double column cannot take "oops": the insert fails
    _check_quarantine(storage.read("orders_quarantine"), first[UNPARTITIONED], set())
    _check_table(storage.read("orders"), first[UNPARTITIONED])  # written after: never reached

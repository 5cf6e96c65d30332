"""The failure summary leads with the reason: why each sampled row failed, and how many rows did.

The quarantine's columns (the schema's, then one per rule) put a row's reason far to the right
in the UI; the sample's leading `dy_failed_rules` names it first, and `invalid_by_rules` shows
its count before its (wide) rule list. The quarantine itself keeps the spec's columns.
"""

from collections import Counter
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from dagster_dataframely import wiring
from dagster_dataframely._model.schema import read_schema
from dagster_dataframely._run.split.failures import Failures
from tests.asset_support import Materialize, SmallOrders, run_tables

KEY = dg.AssetKey("orders")
# `c` fails `amount|min`; both `e` rows share a key, and the second also fails `amount|min`;
# `d` fails `amount|nullability`.
ROWS = pl.DataFrame(
    {
        "order_id": ["a", "c", "e", "e", "d"],
        "amount": [1.0, -1.0, 4.0, -3.0, None],
    }
)
FAILED = [
    "dy_rule__amount__min",
    "dy_rule__primary_key",
    "dy_rule__primary_key, dy_rule__amount__min",
    "dy_rule__amount__nullability",
]


class Lines(dy.Schema):
    """Two column rules and a schema rule, so a row can fail rules of both kinds at once."""

    sku = dy.String(min_length=3)
    quantity = dy.Int64(min=1)
    price = dy.Float64(min=0.0)

    @dy.rule()
    def free_lines_are_single(cls) -> pl.Expr:
        return (pl.col("price") > 0) | (pl.col("quantity") == 1)


class Keep:
    """A quarantine writer that keeps the frame it receives."""

    def __init__(self) -> None:
        self.frames: list[pl.DataFrame] = []

    def __call__(self, frame: pl.DataFrame) -> str:
        self.frames.append(frame)
        return "memory://orders_quarantine"


def _validate(
    schema: type[dy.Schema], frame: pl.DataFrame, **settings: Any
) -> tuple[dict[str, Any], pl.DataFrame]:
    writer = Keep()
    events = list(
        wiring.validation_results(
            schema, frame, valid_key=KEY, quarantine_writer=writer, **settings
        )
    )
    (table,) = [e for e in events if isinstance(e, dg.MaterializeResult)]
    (quarantined,) = writer.frames
    return dict(table.metadata or {}), quarantined


def _columns(table: dg.TableMetadataValue) -> list[str]:
    return [column.name for column in table.schema.columns]


def _rows(table: dg.TableMetadataValue) -> list[dict[str, Any]]:
    return [record.data for record in table.records]


def test_the_sample_leads_with_each_rows_failed_rules() -> None:
    metadata, quarantined = _validate(SmallOrders, ROWS)

    sample = metadata["dataframely/invalid_sample"]
    assert _columns(sample) == ["dy_failed_rules", *quarantined.columns]
    assert [row["dy_failed_rules"] for row in _rows(sample)] == FAILED


def test_the_sample_keeps_every_quarantine_column_and_value() -> None:
    metadata, quarantined = _validate(SmallOrders, ROWS)

    shown = pl.DataFrame(_rows(metadata["dataframely/invalid_sample"]))
    assert_frame_equal(shown.drop("dy_failed_rules"), quarantined, check_dtypes=False)


def test_failed_rules_are_exactly_the_invalid_rule_columns_in_schema_order() -> None:
    frame = pl.DataFrame(
        {
            "sku": ["ab", "abc", "x", "abcd"],
            "quantity": [0, 3, 2, 5],
            "price": [1.0, 0.0, -1.0, 2.0],
        }
    )
    metadata, quarantined = _validate(Lines, frame)

    rule_columns = [c for c in quarantined.columns if c.startswith("dy_rule__")]
    expected = [
        ", ".join(c for c in rule_columns if row[c] == "invalid")
        for row in quarantined.iter_rows(named=True)
    ]
    shown = [row["dy_failed_rules"] for row in _rows(metadata["dataframely/invalid_sample"])]
    assert shown == expected
    assert "dy_rule__free_lines_are_single, dy_rule__sku__min_length, dy_rule__price__min" in shown


def test_the_sample_is_capped_by_row_sample() -> None:
    metadata, _ = _validate(SmallOrders, ROWS, row_sample=2)

    rows = _rows(metadata["dataframely/invalid_sample"])
    assert [row["dy_failed_rules"] for row in rows] == FAILED[:2]


def test_invalid_by_rules_shows_the_count_first() -> None:
    metadata, _ = _validate(SmallOrders, ROWS)

    by_rules = metadata["dataframely/invalid_by_rules"]
    assert _columns(by_rules) == ["rows", "rules"]
    assert [list(row) for row in _rows(by_rules)] == [["rows", "rules"]] * 4
    assert _rows(by_rules)[1] == {"rows": 1, "rules": "dy_rule__primary_key, dy_rule__amount__min"}


def test_the_quarantine_keeps_the_specs_columns() -> None:
    _, quarantined = _validate(SmallOrders, ROWS)

    assert "dy_failed_rules" not in quarantined.columns
    assert quarantined.columns[:2] == ["order_id", "amount"]


def test_a_run_records_the_reason_first(materialize: Materialize, warehouse: Path) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return ROWS

    (table,) = run_tables(materialize([orders]), "orders")

    sample = table.metadata["dataframely/invalid_sample"]
    assert isinstance(sample, dg.TableMetadataValue)
    assert _columns(sample)[0] == "dy_failed_rules"
    assert [row["dy_failed_rules"] for row in _rows(sample)] == FAILED
    by_rules = table.metadata["dataframely/invalid_by_rules"]
    assert isinstance(by_rules, dg.TableMetadataValue)
    assert _columns(by_rules) == ["rows", "rules"]
    stored = pl.read_parquet(warehouse / "orders_quarantine.parquet")
    assert "dy_failed_rules" not in stored.columns


class Bounded(dy.Schema):
    """Two rules on one nullable column, so each rule column can hold any outcome."""

    amount = dy.Int64(nullable=True, min=0, max=9)


OUTCOMES = st.lists(st.sampled_from([True, False, None]), min_size=3, max_size=3)
"""One rule's outcome on each of three rows: True passed, False failed, None unknown."""
PASSED = st.just([True, True, True])
"""A rule every row passed, the quarantine's commonest column in a wide schema."""


@settings(max_examples=60, deadline=None)
@given(PASSED | OUTCOMES, PASSED | OUTCOMES)
def test_each_rule_column_spells_each_rows_outcome(
    at_least: list[bool | None], at_most: list[bool | None]
) -> None:
    """Word for word, whether a rule failed some rows, left some unknown, or passed them all."""
    outcomes = pl.DataFrame(
        {"amount": [-1, 5, 12], "amount|min": at_least, "amount|max": at_most},
        schema={"amount": pl.Int64, "amount|min": pl.Boolean, "amount|max": pl.Boolean},
    )
    failure = dy.FailureInfo(outcomes.lazy(), ["amount|min", "amount|max"])
    frame = wiring.quarantine_frame(Bounded, failure)
    words = {True: "valid", False: "invalid", None: "unknown"}
    assert frame.schema == pl.Schema(
        {"amount": pl.Int64, "dy_rule__amount__min": pl.String, "dy_rule__amount__max": pl.String}
    )
    assert frame.get_column("dy_rule__amount__min").to_list() == [words[o] for o in at_least]
    assert frame.get_column("dy_rule__amount__max").to_list() == [words[o] for o in at_most]


class Ranged(dy.Schema):
    """Three rules on two nullable columns: rows can fail any set of them, or none for sure."""

    amount = dy.Int64(nullable=True, min=0, max=9)
    code = dy.String(nullable=True, max_length=3)


RANGED_RULES = ["amount|min", "amount|max", "code|max_length"]
ROW_OUTCOMES = st.lists(st.sampled_from([True, False, None]), min_size=3, max_size=3)
"""One row's outcome of each rule of `Ranged`; a row of only True and None is quarantined too."""


@settings(max_examples=80, deadline=None)
@given(st.lists(ROW_OUTCOMES, min_size=1, max_size=8), st.integers(0, 9))
def test_failed_rules_and_rule_sets_are_each_rows_false_outcomes(
    rows: list[list[bool | None]], limit: int
) -> None:
    """Every failed rule of a row, in schema order; a rule no row failed, or one a row left
    unknown, is in no row's set (`rule_sets` groups on the rules some row failed only)."""
    info = read_schema(Ranged)
    columns = {"amount": [None] * len(rows), "code": [None] * len(rows)}
    by_rule = dict(zip(RANGED_RULES, map(list, zip(*rows, strict=True)), strict=True))
    outcomes = pl.DataFrame(
        {**columns, **by_rule},
        schema={"amount": pl.Int64, "code": pl.String, **dict.fromkeys(RANGED_RULES, pl.Boolean)},
    )
    failures = Failures.from_failure_info(info, dy.FailureInfo(outcomes.lazy(), RANGED_RULES))
    failed = [
        tuple(r for r, ok in zip(RANGED_RULES, row, strict=True) if ok is False) for row in rows
    ]
    checks = {r.name: r.check_name for r in info.rules}

    sample = failures.sample(limit)
    assert sample.get_column("dy_failed_rules").to_list() == [
        ", ".join(checks[r] for r in rules) for rules in failed[:limit]
    ]
    order = {name: i for i, name in enumerate(RANGED_RULES)}
    expected = sorted(
        Counter(failed).items(), key=lambda item: (-item[1], [order[r] for r in item[0]])
    )
    assert failures.rule_sets() == expected

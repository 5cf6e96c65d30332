"""The code version `dd.asset` derives from the schema, and `dd.wiring.schema_version`.

Dagster marks an asset (and what is downstream of it) as changed when its code version changes,
so the version must change with anything that decides which rows are valid, and must not change
between processes, machines or Python versions for the same schema.
"""

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely._model.collection import read_collection
from tests.schemas import BookLines, BookOrders, OrderBook, OrderLines

ROOT = Path(__file__).resolve().parents[2]


def _rule(body: Callable[[], pl.Expr], doc: str | None = None) -> Any:
    def rule(cls: type[dy.Schema]) -> pl.Expr:
        return body()

    rule.__doc__ = doc
    return dy.rule()(rule)


def _base() -> dict[str, Any]:
    """A schema with a key, a bound, a pattern, a long `is_in` list and a `@dy.rule`."""
    return {
        "__doc__": "Orders.",
        "order_id": dy.String(primary_key=True, regex=r"^o-"),
        "amount": dy.Float64(min=0.0),
        "channel": dy.Int64(is_in=list(range(200)), nullable=True),
        "big_amount_has_channel": _rule(
            lambda: (pl.col("amount") < 1000) | pl.col("channel").is_not_null()
        ),
    }


def _schema(name: str = "Orders", **changes: Any) -> type[dy.Schema]:
    """The base schema with attributes replaced, added, or removed (given as None)."""
    attributes = {**_base(), **changes}
    return type(name, (dy.Schema,), {k: v for k, v in attributes.items() if v is not None})


CHANGES: dict[str, dict[str, Any]] = {
    "a column added": {"note": dy.String(nullable=True)},
    "a column removed": {"channel": None, "big_amount_has_channel": None},
    "a column renamed": {"order_id": None, "order_ref": dy.String(primary_key=True, regex=r"^o-")},
    "a dtype": {"amount": dy.Float32(min=0.0)},
    "nullability": {"amount": dy.Float64(min=0.0, nullable=True)},
    "the primary key": {"order_id": dy.String(regex=r"^o-")},
    "unique": {"amount": dy.Float64(min=0.0, unique=True)},
    "a bound": {"amount": dy.Float64(min=1.0)},
    "a bound's kind": {"amount": dy.Float64(min_exclusive=0.0)},
    "a pattern": {"order_id": dy.String(primary_key=True, regex=r"^p-")},
    # `str()` of this rule prints `[0, 1, … 199]` either way: only the serialization sees it.
    "an is_in value past what str() shows": {
        "channel": dy.Int64(is_in=[*range(150), 999, *range(151, 200)], nullable=True)
    },
    "a column check": {"amount": dy.Float64(min=0.0, check=lambda c: c < 1e6)},
    "a @dy.rule's expression": {
        "big_amount_has_channel": _rule(
            lambda: (pl.col("amount") < 5000) | pl.col("channel").is_not_null()
        )
    },
    "a @dy.rule added": {"positive": _rule(lambda: pl.col("amount") > 0)},
    "a @dy.rule removed": {"big_amount_has_channel": None},
}


def test_the_version_is_sixteen_hex_digits_and_the_same_for_an_equal_schema() -> None:
    version = dd.wiring.schema_version(_schema())
    assert re.fullmatch(r"[0-9a-f]{16}", version)
    assert dd.wiring.schema_version(_schema()) == version


@pytest.mark.parametrize("changes", CHANGES.values(), ids=CHANGES.keys())
def test_the_version_changes_with_the_schema(changes: dict[str, Any]) -> None:
    assert dd.wiring.schema_version(_schema(**changes)) != dd.wiring.schema_version(_schema())


SAME: dict[str, tuple[str, dict[str, Any]]] = {
    "the class name": ("Purchases", {}),
    "the docstring": ("Orders", {"__doc__": "Something else entirely."}),
    "a column description": (
        "Orders",
        {"amount": dy.Float64(min=0.0, description="What the customer paid.")},
    ),
    "a rule's docstring": (
        "Orders",
        {
            "big_amount_has_channel": _rule(
                lambda: (pl.col("amount") < 1000) | pl.col("channel").is_not_null(),
                doc="Big orders name their channel.",
            )
        },
    ),
}


@pytest.mark.parametrize(("name", "changes"), SAME.values(), ids=SAME.keys())
def test_documentation_and_names_do_not_change_the_version(
    name: str, changes: dict[str, Any]
) -> None:
    assert dd.wiring.schema_version(_schema(name, **changes)) == dd.wiring.schema_version(_schema())


@pytest.mark.parametrize("hash_seed", ["0", "4242"])
def test_another_process_with_another_hash_seed_computes_the_same_version(hash_seed: str) -> None:
    # `OrderLines` has an Enum, a Decimal, a Datetime with a time zone, bounds, a pattern, an
    # `is_in` list and two `@dy.rule`s: everything whose serialization could depend on the
    # process.
    script = (
        "from tests.schemas import OrderLines\n"
        "import dagster_dataframely as dd\n"
        "print(dd.wiring.schema_version(OrderLines))\n"
    )
    completed = subprocess.run(  # the interpreter running this suite
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": hash_seed},
        capture_output=True,
        text=True,
        check=True,
    )
    assert completed.stdout.strip() == dd.wiring.schema_version(OrderLines)


def test_dd_asset_uses_the_schema_version_when_no_code_version_is_passed() -> None:
    @dd.asset(OrderLines)
    def order_lines() -> pl.DataFrame:
        return OrderLines.create_empty()

    (spec,) = order_lines.specs
    assert spec.code_version == dd.wiring.schema_version(OrderLines)


def test_a_passed_code_version_is_used_unchanged() -> None:
    @dd.asset(OrderLines, code_version="2026-11-30")
    def order_lines() -> pl.DataFrame:
        return OrderLines.create_empty()

    (spec,) = order_lines.specs
    assert spec.code_version == "2026-11-30"


def test_a_hand_wired_asset_gets_the_version_dd_asset_would_set() -> None:
    @dd.asset(OrderLines)
    def validated() -> pl.DataFrame:
        return OrderLines.create_empty()

    @dg.asset(code_version=dd.wiring.schema_version(OrderLines))
    def hand_wired() -> pl.DataFrame:
        return OrderLines.create_empty()

    assert hand_wired.code_versions_by_key == {
        hand_wired.key: validated.specs_by_key[validated.key].code_version
    }


def test_a_rule_that_cannot_build_its_expression_still_gets_a_version() -> None:
    def broken() -> pl.Expr:
        raise RuntimeError("the rule is broken")

    schema = _schema(big_amount_has_channel=_rule(broken))

    @dd.asset(schema)
    def orders() -> pl.DataFrame:
        return schema.create_empty()

    (spec,) = orders.specs
    assert spec.code_version == dd.wiring.schema_version(schema)
    assert spec.code_version != dd.wiring.schema_version(_schema())


def test_a_rule_polars_cannot_serialize_leaves_every_other_rule_in_the_version() -> None:
    # Polars refuses to write an `Object` literal as JSON: the rules are then digested one by
    # one, that rule as printed, and a change only the serialization sees still shows.
    unserializable = {
        "has_a_marker": _rule(
            lambda: pl.lit(pl.Series([object()], dtype=pl.Object)).first().is_not_null()
        )
    }
    with pytest.raises(pl.exceptions.ComputeError):
        (pl.lit(pl.Series([object()], dtype=pl.Object)).first()).meta.serialize(format="json")
    changed = {**unserializable, **CHANGES["an is_in value past what str() shows"]}

    version = dd.wiring.schema_version(_schema(**unserializable))
    assert version == dd.wiring.schema_version(_schema(**unserializable))
    assert version != dd.wiring.schema_version(_schema())
    assert dd.wiring.schema_version(_schema(**changed)) != version


# --- a Collection member's version digests its filters' queries ---------------------------------

KNOWN_ORDERS = [f"o-{i}" for i in range(200)]


def _book(known: list[str]) -> type[dy.Collection]:
    """Orders and lines, with a filter keeping only lines of orders in `known`."""

    class Book(dy.Collection):
        orders: dy.LazyFrame[BookOrders]
        lines: dy.LazyFrame[BookLines]

        @dy.filter()
        def known_order(self) -> pl.LazyFrame:
            return self.lines.filter(pl.col("order_id").is_in(known)).select("order_id")

    return Book


def _member_versions(collection: type[dy.Collection]) -> dict[str, str | None]:
    @dd.collection_asset(collection)
    def book() -> None:
        return None

    return {key.to_user_string(): spec.code_version for key, spec in book.specs_by_key.items()}


def test_a_member_version_changes_with_a_literal_its_filter_s_printed_plan_shortens() -> None:
    changed = [*KNOWN_ORDERS[:117], "o-x", *KNOWN_ORDERS[118:]]
    # Polars prints the two filters alike: only the serialized plan tells them apart.
    printed = {
        info.members["lines"].info.rules[-1].expression()
        for info in (read_collection(_book(KNOWN_ORDERS)), read_collection(_book(changed)))
    }
    assert len(printed) == 1

    before, after = _member_versions(_book(KNOWN_ORDERS)), _member_versions(_book(changed))
    assert before == _member_versions(_book(list(KNOWN_ORDERS)))
    assert before["lines"] != after["lines"]
    assert before["orders"] != after["orders"]  # the filter constrains every member


class CachedBook(dy.Collection):
    """A filter whose plan holds a `.cache()` node, an id Polars draws anew on every build."""

    orders: dy.LazyFrame[BookOrders]
    lines: dy.LazyFrame[BookLines]

    @dy.filter()
    def has_order(self) -> pl.LazyFrame:
        orders = self.orders.rename({"order_id": "id"}).cache()
        per_order = self.lines.group_by("order_id").agg(pl.len().alias("lines"))
        return (
            per_order.join(orders, left_on="order_id", right_on="id")
            .filter(pl.col("order_id").is_in(KNOWN_ORDERS))
            .select("order_id")
        )


def test_another_process_computes_the_same_member_versions() -> None:
    # One process for both (an interpreter takes seconds to import Dagster), under another
    # hash seed than this one's.
    script = (
        "from tests.model.test_code_version import CachedBook, OrderBook, _member_versions\n"
        "print([sorted(_member_versions(c).items()) for c in (OrderBook, CachedBook)])\n"
    )
    completed = subprocess.run(  # the interpreter running this suite
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": "4242"},
        capture_output=True,
        text=True,
        check=True,
    )
    here = [sorted(_member_versions(c).items()) for c in (OrderBook, CachedBook)]
    assert completed.stdout.strip() == str(here)

"""The decorators read a hint through its aliases, and name two same-named schemas apart.

`-> OrdersFrame` (`type OrdersFrame = dy.DataFrame[Orders]`, or typing_extensions'
`TypeAliasType`, or a `NewType`) was read as naming no schema: a bare `@dd.asset` said the hint
names none, and `dd.asset(Other)` on it was accepted without a word. It now declares the asset
`-> dy.DataFrame[Orders]` declares, for every decorator and input. A mismatch between two
schemas of one name from two modules said "declared with the schema Orders but its return hint
names Orders"; each is now named with its module where the short names are equal.
"""

from pathlib import Path
from typing import NewType, TypedDict, TypeVar

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from typing_extensions import TypeAliasType

import dagster_dataframely as dd
from dagster_dataframely.errors import SchemaHintMismatchError
from tests import order_lines
from tests.conftest import Materialize
from tests.hinted_support import declared, definition
from tests.schemas import OrderBook, OrderLines, Orders

S = TypeVar("S", bound=dy.Schema)

OrdersFrame = TypeAliasType("OrdersFrame", dy.DataFrame[Orders])
Frame = TypeAliasType("Frame", dy.LazyFrame[S] | None, type_params=(S,))
OrdersNewType = NewType("OrdersNewType", dy.DataFrame[Orders])  # type: ignore[valid-newtype]
Book = TypeAliasType("Book", OrderBook | None)


def _plain() -> dy.DataFrame[Orders]:
    return pl.DataFrame({"order_id": ["a"], "amount": [1.0]})  # type: ignore[return-value]


def _alias() -> OrdersFrame:  # type: ignore[valid-type]
    return _plain()


def _generic_alias() -> Frame[Orders]:  # type: ignore[valid-type]
    return _plain().lazy()  # type: ignore[return-value]


def _new_type() -> OrdersNewType:
    return OrdersNewType(_plain())


ALIASED = {"a type alias": _alias, "a generic alias": _generic_alias, "a NewType": _new_type}


@pytest.mark.parametrize(
    ("hint", "written_out"),
    [
        (OrdersFrame, dy.DataFrame[Orders]),
        (Frame[Orders], dy.LazyFrame[Orders] | None),
        (OrdersNewType, dy.DataFrame[Orders]),
    ],
    ids=ALIASED.keys(),
)
def test_a_bare_decorator_on_an_aliased_hint_declares_the_hinted_asset(
    hint: object, written_out: object
) -> None:
    # Before: "it was called without its schema, and the return hint of ... names none".
    for decorator in (dd.asset, dd.asset(quarantine=True)):
        aliased = declared(decorator, None, hint)

        assert isinstance(aliased, dg.AssetsDefinition), aliased
        assert definition(aliased) == definition(declared(decorator, None, written_out))


@pytest.mark.parametrize("function", ALIASED.values(), ids=ALIASED.keys())
def test_an_aliased_hint_naming_another_schema_than_the_argument_is_refused(
    function: object,
) -> None:
    # Before: accepted, the alias read as naming no schema.
    with pytest.raises(SchemaHintMismatchError) as raised:
        dd.asset(OrderLines)(function)  # type: ignore[call-overload]

    name = function.__name__  # type: ignore[attr-defined]
    assert str(raised.value) == (
        f"{name!r} is declared with the schema OrderLines but its return hint names Orders. "
        "Name one schema: drop the decorator's schema argument to use the hint's, or change "
        "the hint to name OrderLines."
    )


def test_a_run_of_an_aliased_asset_validates_against_the_aliased_schema(
    materialize: Materialize, warehouse: Path
) -> None:
    @dd.asset(quarantine=True)
    def orders() -> OrdersFrame:  # type: ignore[valid-type]
        # The rows as they arrived, for the package to split.
        return pl.DataFrame({"order_id": ["a", "b"], "amount": [1.0, -1.0]})  # type: ignore[return-value]

    materialize([orders])

    assert pl.read_parquet(warehouse / "orders.parquet")["order_id"].to_list() == ["a"]
    quarantined = pl.read_parquet(warehouse / "orders_quarantine.parquet")
    assert quarantined["order_id"].to_list() == ["b"]


class AliasedOutputs(TypedDict):
    orders: OrdersFrame  # type: ignore[valid-type]
    lines: Frame[OrderLines]  # type: ignore[valid-type]


def test_a_multi_asset_reads_each_entry_through_its_alias() -> None:
    def outputs() -> AliasedOutputs:
        raise NotImplementedError

    aliased = dd.multi_asset(outs={"orders": dd.AssetOut(), "lines": dd.AssetOut()})(outputs)
    given = dd.multi_asset(outs={"orders": dd.AssetOut(Orders), "lines": dd.AssetOut(OrderLines)})(
        outputs
    )

    assert definition(aliased) == definition(given)
    with pytest.raises(SchemaHintMismatchError, match="names Orders for it"):
        dd.multi_asset(outs={"orders": dd.AssetOut(OrderLines), "lines": dd.AssetOut()})(outputs)


def test_a_collection_asset_reads_its_collection_through_an_alias() -> None:
    def book() -> Book:  # type: ignore[valid-type]
        return None

    assert definition(dd.collection_asset(book)) == definition(dd.collection_asset(OrderBook)(book))


def test_an_aliased_input_loads_as_its_polars_type() -> None:
    @dd.asset
    def totals(orders: Frame[Orders]) -> dy.DataFrame[OrderLines]:  # type: ignore[valid-type]
        raise NotImplementedError

    assert totals.op.ins["orders"].dagster_type.display_name == "LazyFrame?"


# --- two schemas of one name: each named with its module ------------------------------------


def test_two_schemas_of_one_name_are_named_with_their_modules() -> None:
    assert Orders.__name__ == order_lines.Orders.__name__  # the same short name, two modules

    def orders() -> dy.DataFrame[order_lines.Orders]:
        raise NotImplementedError

    with pytest.raises(SchemaHintMismatchError) as raised:
        dd.asset(Orders)(orders)

    assert str(raised.value) == (
        "'orders' is declared with the schema tests.schemas.Orders but its return hint names "
        "tests.order_lines.Orders. Name one schema: drop the decorator's schema argument to use "
        "the hint's, or change the hint to name tests.schemas.Orders."
    )


def test_a_multi_assets_outputs_name_same_named_schemas_with_their_modules() -> None:
    def orders_and_lines() -> tuple[dy.DataFrame[order_lines.Orders], dy.DataFrame[OrderLines]]:
        raise NotImplementedError

    decorator = dd.multi_asset(outs={"orders": dd.AssetOut(Orders), "lines": dd.AssetOut()})

    with pytest.raises(SchemaHintMismatchError) as raised:
        decorator(orders_and_lines)

    assert str(raised.value) == (
        "The output 'orders' of 'orders_and_lines' is declared with the schema "
        "tests.schemas.Orders but the return hint names tests.order_lines.Orders for it. Name "
        "one schema: write its dd.AssetOut without the schema to use the hint's, or change the "
        "hint to name tests.schemas.Orders."
    )


class OrderBook2(dy.Collection):
    """Named `OrderBook` below: a second Collection of that name, in this module."""

    orders: dy.LazyFrame[Orders]


OrderBook2.__name__ = OrderBook2.__qualname__ = "OrderBook"


def test_a_collection_asset_names_same_named_collections_with_their_modules() -> None:
    def order_book() -> OrderBook2:
        raise NotImplementedError

    with pytest.raises(SchemaHintMismatchError) as raised:
        dd.collection_asset(OrderBook)(order_book)

    assert str(raised.value) == (
        "'order_book' is declared with the Collection tests.schemas.OrderBook but its return "
        "hint names tests.api.test_hinted_aliases.OrderBook. Name one Collection: drop the "
        "decorator's Collection argument to use the hint's, or change the hint to name "
        "tests.schemas.OrderBook."
    )


def test_two_classes_of_one_qualified_name_are_told_apart() -> None:
    def make() -> type[dy.Schema]:
        class Orders(dy.Schema):
            order_id = dy.String(primary_key=True)

        return Orders

    first, second = make(), make()

    def orders() -> dy.DataFrame[second]:  # type: ignore[valid-type]
        raise NotImplementedError

    with pytest.raises(SchemaHintMismatchError) as raised:
        dd.asset(first)(orders)

    test = "test_two_classes_of_one_qualified_name_are_told_apart"
    name = f"{__name__}.{test}.<locals>.make.<locals>.Orders"
    assert str(raised.value) == (
        f"'orders' is declared with the schema {name} but its return hint names {name} (another "
        "class of that name). Name one schema: drop the decorator's schema argument to use the "
        f"hint's, or change the hint to name {name}."
    )

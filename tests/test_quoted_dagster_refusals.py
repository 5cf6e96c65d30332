"""The messages the docs quote from Dagster are the ones a plain `@dg.asset` raises today.

"Declaring an asset" quotes Dagster's refusal of a Dataframely hint on a plain `@dg.asset`, for
a return and for an input, with its fix. A reader matches the text against their terminal, so
each quoted line is compared with what the installed Dagster raises for the same hint on a
schema named `Orders` in a module named `shop`, as the page has it.
"""

import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import dagster as dg
import dataframely as dy
import pytest

PAGE = Path(__file__).parents[1] / "docs" / "guide" / "declaring-an-asset.md"


@pytest.fixture
def shop_orders() -> Iterator[type[dy.Schema]]:
    """A schema `Orders` defined in a module `shop`, so Dagster names it `shop.Orders`."""
    module = types.ModuleType("shop")
    exec("import dataframely as dy\nclass Orders(dy.Schema):\n    a = dy.Int64()", module.__dict__)
    sys.modules["shop"] = module
    yield module.Orders
    del sys.modules["shop"]


def quoted(kind: str) -> str:
    """The page's quoted refusal of the hint of a `kind` ("return" or "argument")."""
    (line,) = [
        line
        for line in PAGE.read_text().splitlines()
        if line.startswith("DagsterInvalidDefinitionError: Problem using type")
        and f"from {kind}" in line.replace("type annotation for argument", "argument")
    ]
    return line


def refusal(function: Callable[..., object]) -> str:
    with pytest.raises(dg.DagsterInvalidDefinitionError) as raised:
        dg.asset(function)
    return f"DagsterInvalidDefinitionError: {raised.value}"


def test_the_quoted_refusal_of_a_return_hint_is_dagsters(shop_orders: type[dy.Schema]) -> None:
    Orders = shop_orders  # noqa: N806  (the name the hint shows)

    def orders() -> dy.DataFrame[Orders]:  # type: ignore[valid-type]
        raise NotImplementedError

    assert refusal(orders) == quoted("return")


def test_the_quoted_refusal_of_an_input_hint_is_dagsters(shop_orders: type[dy.Schema]) -> None:
    Orders = shop_orders  # noqa: N806

    def report(orders: dy.DataFrame[Orders]) -> None:  # type: ignore[valid-type]
        raise NotImplementedError

    assert refusal(report) == quoted("argument")

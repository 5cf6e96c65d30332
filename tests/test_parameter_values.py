"""`--each-value-once` keeps every value of every parameter, and fewer cases than all of them."""

import itertools
from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from .parameter_values import each_value_once


@dataclass
class Callspec:
    params: dict[str, object]


@dataclass
class Case:
    originalname: str
    callspec: Callspec | None
    parent: str = "module"
    name: str = field(default="")


def cases(test: str, **values: list[object]) -> list[Case]:
    names = list(values)
    return [
        Case(test, Callspec(dict(zip(names, combination, strict=True))))
        for combination in itertools.product(*values.values())
    ]


def kept(items: list[Case]) -> list[Case]:
    return cast(list[Case], each_value_once(cast(list[Any], items)))


def test_every_value_of_every_parameter_is_kept_in_fewer_cases() -> None:
    items = cases("t", kind=["parquet", "duckdb"], outcome=list(range(6)), form=list("abcd"))

    chosen = kept(items)

    assert len(chosen) == 6
    for name in ("kind", "outcome", "form"):
        assert {repr(c.callspec.params[name]) for c in chosen if c.callspec} == {
            repr(i.callspec.params[name]) for i in items if i.callspec
        }


@pytest.mark.parametrize(
    "items",
    [
        cases("t", kind=["parquet", "duckdb", "delta"]),
        [Case("plain", None), Case("other", None)],
    ],
)
def test_a_test_with_one_parameter_or_none_keeps_every_case(items: list[Case]) -> None:
    assert kept(items) == items


def test_each_test_is_covered_on_its_own_in_collection_order() -> None:
    first = cases("first", a=[1, 2], b=[1, 2])
    second = cases("second", a=[1, 2], b=[1, 2])
    items = [*first, *second]

    chosen = kept(items)

    assert [c.originalname for c in chosen] == ["first", "first", "second", "second"]
    assert chosen == sorted(chosen, key=items.index)

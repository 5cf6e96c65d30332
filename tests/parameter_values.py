"""Which cases of a parametrized test a version job runs (`--each-value-once`).

A test parametrized over two or more parameters runs, in a version job, the fewest of its cases
(picked greedily, in collection order) in which every value of each parameter still appears at
least once. A dependency or a Python that behaves differently for a value fails there; the
combinations of values, which test the package's own logic the same way on any version, are
`make test`'s, which runs every case.
"""

from collections.abc import Sequence

import pytest


def _values(item: pytest.Item) -> set[tuple[str, str]]:
    # NOTE: a value is named by its repr: frames and types compare badly, or not at all, and
    # one object has one repr for the whole session.
    callspec = getattr(item, "callspec", None)
    params = dict(callspec.params) if callspec is not None else {}
    return {(name, repr(value)) for name, value in params.items()}


def each_value_once(items: Sequence[pytest.Item]) -> list[pytest.Item]:
    """The cases to run: for each test, cases until every value of each of its parameters has
    appeared once; a test with one parameter or none keeps every case."""
    by_test: dict[tuple[object, str], list[pytest.Item]] = {}
    for item in items:
        test = (item.parent, getattr(item, "originalname", item.name))
        by_test.setdefault(test, []).append(item)
    kept: set[int] = set()
    for cases in by_test.values():
        # NOTE: each case's values once: a repr of a frame parameter is not free.
        values = {id(case): _values(case) for case in cases}
        names = {name for shown in values.values() for name, _ in shown}
        if len(names) < 2:
            kept.update(values)
            continue
        unseen = set().union(*values.values())
        while unseen:
            best = max(cases, key=lambda case: len(values[id(case)] & unseen))
            kept.add(id(best))
            unseen -= values[id(best)]
    return [item for item in items if id(item) in kept]

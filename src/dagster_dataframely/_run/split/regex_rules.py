"""Dataframely's regex rules evaluated ahead of the split's plan, on every thread, in row order.

A regex reads every byte of every value. Polars keeps a text value longer than 12 bytes outside
its view, in a buffer, and once a frame's rows were reordered (a join, a sort, a sample) the
views point anywhere in it: each value read is a cache miss. In the split's in-memory plan a
rule is one task on one thread, so over 5M shuffled 24-byte emails the regex alone took 1.3 s
while every other rule ran beside it. Evaluated ahead on the streaming engine, each morsel's
values first copied together (`str.zfill(0)`, which changes no value: it pads to at least no
characters), the same outcomes took 0.36 s on two threads (0.72 s of CPU); over values already
in row order, 0.14 s against 0.21 s (`benchmarks/README.md`, "regex rules ahead").
"""

from __future__ import annotations

import polars as pl

from dagster_dataframely._model.names import COLUMN_RULE_SEPARATOR
from dagster_dataframely._model.schema import SchemaInfo

_KIND = "regex"
"""The kind Dataframely names a `String(regex=...)` column's rule: `<column>|regex`."""


def regex_outcomes(columns: pl.DataFrame, info: SchemaInfo) -> dict[str, pl.Series]:
    """The outcome of each text column's regex rule on `columns`, by rule name (null for null).

    Dataframely's regex rule is `str.contains` of its column: a row's outcome reads that row
    only, so the streaming engine may evaluate it in morsels, in parallel; its rows come back
    in order. Other rules (a primary key, a `.over()`, a custom check) see every row at once
    and stay in the split's plan. Empty when `columns` has no row or no such rule.
    """
    texts = {name for name, dtype in columns.schema.items() if dtype == pl.String}
    ahead = [
        (rule, rule.column)
        for rule in info.rules
        if rule.column in texts and rule.name == f"{rule.column}{COLUMN_RULE_SEPARATOR}{_KIND}"
    ]
    if not ahead or columns.height == 0:
        return {}
    positions = sorted({columns.get_column_index(column) for _, column in ahead})
    # `pl.nth`: a column named `*` or `^a.*$` would select other columns by name.
    laid_out = columns.lazy().select(pl.nth(positions).str.zfill(0))
    outcomes = laid_out.select(**{rule.name: rule.expr() for rule, _ in ahead})
    return {series.name: series for series in outcomes.collect(engine="streaming")}

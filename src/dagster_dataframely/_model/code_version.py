"""A code version derived from the schema, so Dagster marks an asset changed when its schema is.

The version is a digest of what decides which rows are valid: every column's name, type,
dtype and flags, every rule's expression in Polars' JSON serialization (all of a schema's rules
serialized together, as the inputs of one expression), and every Collection filter's query in
Polars' own serialization of the plan. Printed text would not do: `str()` of
an expression and `explain()` of a plan both shorten long literals, such as an `is_in` list,
so two different rules could print alike. Nothing in it comes from `hash()` or from object
identity, so the same schema gives the same version in every process, on every machine and on
every Python version. A Polars or Dataframely release that serializes or builds a rule
differently changes it, which marks the asset changed once.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

import dataframely as dy
import polars as pl

from .schema import RuleInfo, SchemaInfo, read_schema

DIGEST_LENGTH = 16
"""Hex digits kept from the SHA-256: 64 bits, short enough to read in the catalog."""

_FORMAT = 2
"""Bumped when what goes into the digest changes, so no two formats can give the same version."""

_PER_BUILD_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
"""A UUID Polars draws anew each time a plan is built, such as a `.cache()` node's id."""


def schema_version(schema: type[dy.Schema]) -> str:
    """Return a code version for an asset that stores frames of `schema`.

    `dd.asset` uses this as the asset's `code_version` unless one is passed. A hand-wired
    asset uses it the same way, `@dg.asset(code_version=dd.wiring.schema_version(Orders))`,
    and so gets the same version as a `dd.asset` on that schema. The version changes when a
    column is added, removed, renamed or reordered, when a dtype, `nullable`, `primary_key` or
    `unique` changes, and when any rule changes, a `@dy.rule`'s expression included. Docstrings
    and the schema's class name are not part of it.

    Parameters
    ----------
    schema
        A Dataframely schema class.

    Returns
    -------
    Sixteen lowercase hex digits, the same in every process and on every machine.

    Raises
    ------
    dagster_dataframely.errors.DagsterDataframelyError
        For a schema this package cannot use, as `dd.asset` raises it.
    """
    return _version(read_schema(schema))


def info_version(info: SchemaInfo) -> str:
    """`schema_version` of a schema already read; a Collection member's covers its filters too."""
    return _version(info)


# NOTE: cached per schema: a code location declares many assets on one.
@functools.lru_cache(maxsize=1024)
def _version(info: SchemaInfo) -> str:
    expressions, texts = _rule_expressions(info.rules)
    content = {
        "format": _FORMAT,
        "columns": [_column(name, column) for name, column in info.columns.items()],
        "rules": [[rule.name, text] for rule, text in zip(info.rules, texts, strict=True)],
        "expressions": _serialized(expressions),
    }
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:DIGEST_LENGTH]


def _column(name: str, column: dy.Column) -> dict[str, Any]:
    # NOTE: bounds, patterns and checks are rules, digested with them; these are not.
    return {
        "name": name,
        "type": type(column).__name__,
        "dtype": str(column.dtype),
        "nullable": column.nullable,
        "primary_key": column.primary_key,
        "unique": column.unique,
    }


def _rule_expressions(rules: tuple[RuleInfo, ...]) -> tuple[list[pl.Expr], list[str]]:
    # NOTE: a rule's text is "" when its expression is among the serialized ones, in the rules'
    # order. A `@dy.rule` that raises when it builds its expression fails at run time, not at
    # declaration: until it is fixed, its version says so, and fixing it changes the version.
    expressions: list[pl.Expr] = []
    texts: list[str] = []
    for rule in rules:
        try:
            if rule.is_filter:  # a Collection's filter: its query over empty members
                texts.append(
                    _query_text(rule.query) if rule.query is not None else rule.expression()
                )
            else:
                expressions.append(rule.expr())
                texts.append("")
        except Exception as error:  # the rule or filter reports its own error when it runs
            texts.append(f"unbuildable: {type(error).__name__}")
    return expressions, texts


def _serialized(expressions: list[pl.Expr]) -> str | list[str]:
    # NOTE: one call serializes every rule as an input of one expression, in order: each call
    # costs far more than the expression it writes, and a code location declares thousands of
    # rules. A rule Polars cannot write as JSON (a Python UDF) fails the whole call; then each
    # rule is written alone, that one as printed. Digested apart: `json.dumps` would escape
    # every quote of it again.
    if not expressions:
        return []
    try:
        serialized = pl.concat_list(expressions).meta.serialize(format="json")
        return "expressions-sha256:" + hashlib.sha256(serialized.encode("utf-8")).hexdigest()
    except Exception:  # e.g. a Python UDF, which Polars cannot serialize as JSON
        return [_expression_text(expression) for expression in expressions]


def _expression_text(expression: pl.Expr) -> str:
    try:
        return expression.meta.serialize(format="json")
    except Exception:  # e.g. a Python UDF, which Polars cannot serialize as JSON
        return str(expression)


def _query_text(build: Callable[[], pl.LazyFrame]) -> str:
    # NOTE: built twice and digested only when both serialize alike: a plan holding an id drawn per
    # build (a `.cache()` node) would give a new version in every process. Such a plan, or one
    # Polars cannot serialize, is digested as printed, ids blanked; printed, a long literal is
    # shortened, so its change may not show.
    try:
        serialized = build().serialize()
        if serialized == build().serialize():
            return "plan-sha256:" + hashlib.sha256(serialized).hexdigest()
    except Exception:  # Polars or cloudpickle cannot serialize it: its printed plan below
        pass
    return _PER_BUILD_ID.sub("<id>", build().explain(optimized=False))

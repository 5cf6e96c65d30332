"""What this package reads from a `dy.Schema`: its columns and its rules, validated once.

Dataframely has no public way to list a schema's rules before validation, nor to read a rule's
function; those reads go through `_upstream`, where a characterization test pins each, so a
change in Dataframely fails one of our tests instead of a user's assets.
"""

from __future__ import annotations

import functools
import inspect
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import dataframely as dy
import polars as pl

from dagster_dataframely import _upstream
from dagster_dataframely.errors import (
    CheckNameCollisionError,
    CollectionNotSupportedError,
    InvalidColumnNameError,
    InvalidRuleNameError,
    ReservedColumnError,
    SchemaTypeError,
    SensitiveMarkError,
    UnsupportedDtypeError,
)

from . import names, render

PRIMARY_KEY_RULE = "primary_key"
"""Dataframely's name for the one schema-level rule that checks the primary key."""


# NOTE: a named tuple, not a frozen dataclass, whose `__init__` sets each field through
# `object.__setattr__` and costs about four times as much: a code location builds one per rule
# of every schema it declares.
class RuleInfo(NamedTuple):
    """One Dataframely rule, with every name and text this package shows for it."""

    name: str
    """Dataframely's name: `amount|min`, `primary_key`, or a `@dy.rule` function's name."""
    column: str | None
    """The column the rule belongs to; None for a schema-level rule."""
    check_name: str
    """`dy_rule__<name>`: the check at `rule` granularity and the quarantine's rule column."""
    label: str
    """The rule as a short line of text, e.g. `amount >= 0.0`; the rule name when unrenderable."""
    description: str
    """The check description: the rule's docstring, else `label`."""
    schema: type[dy.Schema] | None
    """The schema whose Dataframely rule this is, looked up by `name` in `dataframely_rules` when
    its expression is read (only at run time and for the code version: a `@dy.rule` may raise).

    None for a Collection's filter, which is a query over several members, not an expression.
    """
    plan: Callable[[], str] | None = None
    """A Collection filter's query as text, built when read; None for a schema's own rule."""
    query: Callable[[], pl.LazyFrame] | None = None
    """A `@dy.filter`'s query over empty members, built when read: what its code version
    digests. None for a schema's own rule and for a member's failure propagation."""

    @property
    def is_filter(self) -> bool:
        """Whether this is a Collection's filter (`dy_filter__<name>`), not a schema's rule."""
        return self.schema is None

    def expr(self) -> pl.Expr:
        """The schema rule's Polars expression (True where a row passes); not for a filter.

        Raises what building the rule raises: a broken `@dy.rule` fails where it is read.
        """
        assert self.schema is not None, "a Collection's filter has no expression"
        return dataframely_rules(self.schema)[self.name].expr

    def expression(self) -> str:
        """What the rule checks, as text: its Polars expression, or a filter's query plan.

        Raises what building the rule raises: a broken `@dy.rule` fails where it is read.
        """
        if not self.is_filter:
            return str(self.expr())
        return self.plan() if self.plan is not None else self.label


@dataclass(frozen=True, slots=True, eq=False)
class SchemaInfo:
    """A schema as this package uses it, derived once per schema class."""

    schema: type[dy.Schema]
    name: str
    columns: Mapping[str, dy.Column]
    rules: tuple[RuleInfo, ...]
    primary_key: tuple[str, ...]
    sensitive: frozenset[str] = frozenset()
    """Columns marked `metadata={"pii": True}`: no value of theirs reaches the event log."""

    @property
    def distinct_columns(self) -> frozenset[str]:
        """Columns whose values differ on every valid row: a lone primary key, `unique=True`."""
        lone_key = set(self.primary_key) if len(self.primary_key) == 1 else set()
        return frozenset(lone_key | {name for name, c in self.columns.items() if c.unique})

    @property
    def schema_level_rules(self) -> tuple[RuleInfo, ...]:
        """The `@dy.rule` rules (group rules with `.over()` too): no column's, not the key's.

        A Collection's filters are not among them: they are no rule of the schema.
        """
        return tuple(
            r
            for r in self.rules
            if r.column is None and r.name != PRIMARY_KEY_RULE and not r.is_filter
        )

    @property
    def filters(self) -> tuple[RuleInfo, ...]:
        """The Collection filters that constrain this member; empty for a plain schema."""
        return tuple(r for r in self.rules if r.is_filter)


_CACHE: weakref.WeakKeyDictionary[type, SchemaInfo] = weakref.WeakKeyDictionary()


@functools.lru_cache(maxsize=1)
def dataframely_rules(schema: type[dy.Schema]) -> Mapping[str, _upstream.Rule]:
    """Dataframely's rules of `schema` by name, kept for the last schema read.

    Not kept in every `SchemaInfo`, nor for many schemas: a code location of hundreds of
    schemas would hold a `Rule` and a `pl.Expr` per rule, which Python's cycle collector walks
    on each full collection while the location loads. Declaring reads them twice in a row
    (names, then the code version), a run once; building them again for a schema read before
    another costs under a millisecond.
    """
    return _upstream.validation_rules(schema)


def read_schema(schema: object) -> SchemaInfo:
    """Read and validate `schema`, raising this package's errors for names it cannot use.

    Every public function that takes a schema calls this first, so a bad name fails where the
    user wrote it. The result is cached per class, which keeps declaring hundreds of assets on
    one schema linear in their number.
    """
    if isinstance(schema, type):
        cached = _CACHE.get(schema)
        if cached is not None:
            return cached
    schema_class, columns = _as_schema_class(schema)
    info = _read(schema_class, columns)
    _CACHE[info.schema] = info
    return info


@dataclass(frozen=True, slots=True)
class BaseClass:
    """`dy.Schema` or `dy.Collection` itself, named where a subclass must be: what to say."""

    name: str
    """How a user writes it: `dy.Schema`."""
    declares: str
    """What the base class declares, and what that leaves of a table."""
    subclass: str
    """What to name instead: a subclass that declares what this one lacks."""

    @property
    def problem(self) -> str:
        """Why the base class names no usable schema, as a clause after its name."""
        return f"the base class itself declares {self.declares}"

    def named_in_hint(self, expected: BaseClass) -> str:
        """Why a hint naming this base class is refused where `expected`'s subclass belongs."""
        return f"names {self.name}: {self.problem}; name {expected.subclass}"


SCHEMA_BASE = BaseClass(
    name="dy.Schema",
    declares="no column, so a frame validated against it keeps no column and no row",
    subclass="a subclass of dy.Schema that declares the frame's columns",
)
COLLECTION_BASE = BaseClass(
    name="dy.Collection",
    declares="no member, so there is no table to validate",
    subclass="a subclass of dy.Collection that declares its members",
)


def base_class(value: object) -> BaseClass | None:
    """What to say of `value` when it is `dy.Schema` or `dy.Collection` itself, else None.

    Both pass every `issubclass` check a schema or a Collection passes, and neither declares a
    column: read as a schema, a frame would keep no column and no row. So every reading of a
    schema, from an argument, a hint or the Component's YAML, refuses them with these texts.
    """
    if value is dy.Schema:
        return SCHEMA_BASE
    return COLLECTION_BASE if value is dy.Collection else None


def base_class_refused(given: BaseClass, expected: BaseClass, what: str) -> SchemaTypeError:
    """The refusal of the base class `given` where a subclass of `expected` (`what`) goes."""
    return SchemaTypeError(
        what, given.name, problem=given.problem, fix=f"Pass {expected.subclass}."
    )


SCHEMA_CLASS = "a dataframely Schema class (a subclass of dy.Schema)"
"""What a function taking one schema expects, as its refusals say it."""


def _as_schema_class(schema: object) -> tuple[type[dy.Schema], dict[str, dy.Column]]:
    given = base_class(schema)
    if given is not None:
        raise base_class_refused(given, SCHEMA_BASE, SCHEMA_CLASS)
    given_class = schema if isinstance(schema, type) else type(schema)
    if issubclass(given_class, dy.Collection):  # the class, or an instance of it
        raise CollectionNotSupportedError(given_class.__name__)
    if not (isinstance(schema, type) and issubclass(schema, dy.Schema)):
        raise SchemaTypeError(SCHEMA_CLASS, repr(schema))
    # NOTE: read once and handed on: each `columns()` call binds every column to the schema
    # again, which a wide schema pays for on every call.
    columns = schema.columns()
    if not columns:
        # NOTE: a subclass that declares no column drops every column, so every row, as the
        # base class does: an abstract base of the user's passed by mistake.
        raise SchemaTypeError(
            SCHEMA_CLASS,
            schema.__name__,
            problem=f"{schema.__name__} declares no column, so a frame validated against it "
            "keeps no column and no row",
            fix=f"Declare the frame's columns on {schema.__name__}, or pass the subclass that "
            "declares them.",
        )
    return schema, columns


def _read(schema: type[dy.Schema], columns: dict[str, dy.Column]) -> SchemaInfo:
    name = schema.__name__
    _validate_column_names(name, columns)
    _validate_column_dtypes(name, columns)
    sensitive = sensitive_columns(name, columns)
    primary_key = tuple(schema.primary_key())
    rules = tuple(
        _rule_info(schema, columns, primary_key, rule_name)
        for rule_name in dataframely_rules(schema)
    )
    validate_rule_names(name, rules)
    return SchemaInfo(
        schema=schema,
        name=name,
        columns=dict(columns),
        rules=rules,
        primary_key=primary_key,
        sensitive=sensitive,
    )


def sensitive_columns(schema_name: str, columns: Mapping[str, dy.Column]) -> frozenset[str]:
    """The columns whose `metadata` marks them sensitive: `{"pii": True}`.

    Read here, once per schema, so every sample, statistic and filter of the manager's metadata
    masks the same columns. Only a boolean is a mark: anything else raises rather than guess.
    """
    marked: set[str] = set()
    refused: dict[str, str] = {}
    for column_name, column in columns.items():
        mark = (column.metadata or {}).get(names.SENSITIVE, False)
        if mark is True:
            marked.add(column_name)
        elif mark is not False:
            refused[column_name] = type(mark).__name__
    if refused:
        raise SensitiveMarkError(schema_name, refused)
    return frozenset(marked)


def _validate_column_names(schema_name: str, columns: Mapping[str, dy.Column]) -> None:
    reserved = [c for c in columns if c.startswith(names.RESERVED_PREFIX)]
    if reserved:
        raise ReservedColumnError(schema_name, reserved)
    invalid = [c for c in columns if not names.DAGSTER_NAME.fullmatch(c)]
    if invalid:
        raise InvalidColumnNameError(schema_name, invalid)


def _validate_column_dtypes(schema_name: str, columns: Mapping[str, dy.Column]) -> None:
    # NOTE: Dataframely declares a dtype Polars cannot build (a `Decimal` wider than 38 digits)
    # without complaint, which would fail every run's column check; an empty Series asks Polars
    # itself, for every limit it has. A dtype with no parameter Polars could refuse is not asked:
    # wide schemas would pay a Series per column.
    problems = []
    for column_name, column in columns.items():
        if _always_buildable(column.dtype):
            continue
        try:
            pl.Series(column_name, [], dtype=column.dtype)
        except pl.exceptions.PolarsError as refused:
            problems.append(
                {"column": column_name, "dtype": str(column.dtype), "reason": str(refused)}
            )
    if problems:
        raise UnsupportedDtypeError(schema_name, problems)


_PARAMETERLESS_DTYPES: frozenset[type[pl.DataType]] = frozenset(
    {
        pl.Boolean,
        pl.Int8,
        pl.Int16,
        pl.Int32,
        pl.Int64,
        pl.UInt8,
        pl.UInt16,
        pl.UInt32,
        pl.UInt64,
        pl.Float32,
        pl.Float64,
        pl.String,
        pl.Binary,
        pl.Date,
        pl.Time,
        pl.Null,
    }
)
"""Dtypes Polars builds whatever the schema says: they take no parameter it could refuse."""


def _always_buildable(dtype: pl.DataType) -> bool:
    if type(dtype) in _PARAMETERLESS_DTYPES:
        return True
    # NOTE: a `Datetime` only without a time zone: Polars refuses a zone it does not know.
    return isinstance(dtype, pl.Datetime) and dtype.time_zone is None


def validate_rule_names(schema_name: str, rules: tuple[RuleInfo, ...]) -> None:
    """Refuse a check name Dagster does not allow, or one that two rules would share.

    Run over a schema's rules, and over a Collection's filters, whose check names are built
    from the filters' names.
    """
    invalid = [r.name for r in rules if not names.DAGSTER_NAME.fullmatch(r.check_name)]
    if invalid:
        raise InvalidRuleNameError(schema_name, invalid)
    seen: dict[str, str] = {}
    for rule in rules:
        first = seen.setdefault(rule.check_name, rule.name)
        if first != rule.name:
            raise CheckNameCollisionError(schema_name, first, rule.name, rule.check_name)


def _rule_info(
    schema: type[dy.Schema],
    columns: Mapping[str, dy.Column],
    primary_key: tuple[str, ...],
    name: str,
) -> RuleInfo:
    column_name, separator, kind = name.partition(names.COLUMN_RULE_SEPARATOR)
    column: str | None = None
    if separator and column_name in columns:
        column = column_name
        text = render.render_rule(columns[column_name], kind)
        label = f"{column_name} {text}" if text else name
        docstring = function_docstring(render.check_function(columns[column_name], kind))
    elif name == PRIMARY_KEY_RULE:
        label, docstring = render.primary_key_text(primary_key), None
    else:  # a `@dy.rule`: its factory is a class attribute named like the rule
        label = name
        docstring = function_docstring(_upstream.rule_function(schema, name))
    return RuleInfo(name, column, names.check_name(name), label, docstring or label, schema)


def function_docstring(function: Any) -> str | None:
    """A function's own docstring, cleaned; None when it has none (or `function` is None)."""
    if function is None or getattr(function, "__doc__", None) is None:
        return None
    return inspect.cleandoc(function.__doc__) or None


def own_docstring(cls: type) -> str | None:
    """The class's own docstring, never one inherited from a parent (such as `dy.Schema`'s)."""
    doc = cls.__dict__.get("__doc__")
    return inspect.cleandoc(doc) if isinstance(doc, str) and doc.strip() else None

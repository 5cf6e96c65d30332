"""A `dy.Collection` as this package uses it, and its members split with one `Collection.filter`.

Each member of a Collection becomes one asset. Its rules are its schema's; on top of them, each
`@dy.filter` of the Collection is one more rule of every member it constrains (every member not
declared `ignored_in_filters`), with its own check `dy_filter__<name>` and its own quarantine
column. A member declared with `propagate_row_failures=True` adds one such rule too, named as
Dataframely names it (`<member>|failure_propagation`): the rows removed because a row of that
member with the same common primary key failed a rule. Optional members are validated when
they are returned and skipped when they are not. So every option `dy.CollectionMember` has is
supported, and none is refused; `inline_for_sampling` only concerns `Collection.sample`.

The members are split together at run time by `_run.collection_split`.
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import dataframely as dy
import polars as pl

from dagster_dataframely._upstream import collection_filters, failure_propagation_rule
from dagster_dataframely.errors import (
    CollectionWithoutMembersError,
    DagsterDataframelyError,
    SchemaTypeError,
)

from . import names
from .schema import (
    COLLECTION_BASE,
    RuleInfo,
    SchemaInfo,
    base_class,
    base_class_refused,
    function_docstring,
    read_schema,
    validate_rule_names,
)


@dataclass(frozen=True, slots=True, eq=False)
class Member:
    """One member of a Collection: one asset, validated against `info`."""

    name: str
    info: SchemaInfo
    """The member's schema, its rules followed by the filters that constrain the member."""
    optional: bool
    """Declared `dy.LazyFrame[Schema] | None`: skipped when no frame is returned for it."""
    ignored_in_filters: bool
    """Declared `ignored_in_filters=True`: no filter constrains it, so it has no filter rule."""


@dataclass(frozen=True, slots=True, eq=False)
class CollectionInfo:
    """A Collection as this package uses it, derived once per Collection class."""

    collection: type[dy.Collection]
    name: str
    members: Mapping[str, Member]
    """Every member by name, in the order the Collection declares them."""
    filters: tuple[RuleInfo, ...]
    """The `@dy.filter`s, then one failure-propagation rule per member that propagates."""
    primary_key: tuple[str, ...]
    """The primary key shared by the members the filters constrain: what a filter returns."""


_CACHE: weakref.WeakKeyDictionary[type, CollectionInfo] = weakref.WeakKeyDictionary()

_COLLECTION_CLASS = "a dataframely Collection class (a subclass of dy.Collection)"


def read_collection(collection: object) -> CollectionInfo:
    """Read a `dy.Collection` class: its members, their schemas, its filters, once per class.

    Raises
    ------
    SchemaTypeError
        `collection` is not a `dy.Collection` subclass, or is `dy.Collection` (or `dy.Schema`)
        itself, which declares no member.
    CollectionWithoutMembersError
        The Collection has no member.
    CheckNameCollisionError
        Two filters (a `@dy.filter` and a member's failure propagation) get one check name.
    InvalidRuleNameError
        A filter's or member's name has a letter Dagster does not allow in a check name.
    DagsterDataframelyError
        A member's schema is one this package cannot use (as `dd.asset` raises it), with a
        note naming the member.
    """
    given = base_class(collection)
    if given is not None:
        raise base_class_refused(given, COLLECTION_BASE, _COLLECTION_CLASS)
    if not (isinstance(collection, type) and issubclass(collection, dy.Collection)):
        raise SchemaTypeError(_COLLECTION_CLASS, repr(collection))
    cached = _CACHE.get(collection)
    if cached is None:
        cached = _read(collection)
        _CACHE[collection] = cached
    return cached


def _read(collection: type[dy.Collection]) -> CollectionInfo:
    name = collection.__name__
    declared = collection.members()
    if not declared:
        raise CollectionWithoutMembersError(name)
    key = tuple(collection.common_primary_key())
    filters = _filter_rules(collection, key)
    members = {}
    for member_name, member in declared.items():
        try:
            base = read_schema(member.schema)
        except DagsterDataframelyError as error:
            error.add_note(f"The schema is that of member {member_name!r} of Collection {name!r}.")
            raise
        ignored = member.ignored_in_filters
        members[member_name] = Member(
            name=member_name,
            # Cached with the Collection, so each member's checks are grouped once, too.
            info=base if ignored or not filters else _with_filters(base, filters),
            optional=member.is_optional,
            ignored_in_filters=ignored,
        )
    return CollectionInfo(collection, name, members, filters, key)


def _filter_rules(collection: type[dy.Collection], key: tuple[str, ...]) -> tuple[RuleInfo, ...]:
    name = collection.__name__
    keys = ", ".join(key)
    rules = []
    for filter_name, logic in collection_filters(collection).items():
        query = _query(collection, logic, key)
        description = function_docstring(logic) or (
            f"Keeps the rows whose ({keys}) the filter {filter_name} of {name} returns, "
            f"in every member it constrains."
        )
        label = f"filter {filter_name} of {name}"
        rules.append(_filter_rule(filter_name, label, description, _plan(query), query))
    for member_name, member in collection.members().items():
        if member.propagate_row_failures and not member.ignored_in_filters:
            rule_name = failure_propagation_rule(member_name)
            text = (
                f"Removes the rows whose ({keys}) is that of a row of member {member_name} "
                f"that failed one of its rules (propagate_row_failures=True)."
            )
            label = f"failure propagation from {member_name} in {name}"
            rules.append(_filter_rule(rule_name, label, text, functools.partial(str, text)))
    # A Python identifier may have letters Dagster refuses in a check name.
    validate_rule_names(name, tuple(rules))
    return tuple(rules)


def _filter_rule(
    rule_name: str,
    label: str,
    description: str,
    plan: Callable[[], str],
    query: Callable[[], pl.LazyFrame] | None = None,
) -> RuleInfo:
    return RuleInfo(
        name=rule_name,
        column=None,
        check_name=names.filter_check_name(rule_name),
        label=label,
        description=description,
        schema=None,
        plan=plan,
        query=query,
    )


def _query(
    collection: type[dy.Collection], logic: Callable[[Any], pl.LazyFrame], key: tuple[str, ...]
) -> Callable[[], pl.LazyFrame]:
    # NOTE: built when read (a check's metadata, the code version), not when declared: the filter is
    # the user's code, and may raise.
    return lambda: logic(collection.create_empty()).lazy().select(key)


def _plan(query: Callable[[], pl.LazyFrame]) -> Callable[[], str]:
    return lambda: query().explain(optimized=False)


def _with_filters(base: SchemaInfo, filters: tuple[RuleInfo, ...]) -> SchemaInfo:
    return dataclasses.replace(base, rules=base.rules + filters)


def collection_rules(info: CollectionInfo) -> list[str]:
    """Every rule name a Collection-wide setting may use: each member's rules, then the filters."""
    rules = (rule.name for member in info.members.values() for rule in member.info.rules)
    return list(dict.fromkeys(rules))

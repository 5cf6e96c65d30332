"""A `dy.Collection` as this package uses it, and its members split with one `Collection.filter`.

Each member of a Collection becomes one asset. Its rules are its schema's; on top of them, each
`@dy.filter` of the Collection is one more rule of every member it constrains (every member not
declared `ignored_in_filters`), with its own check `dy_filter__<name>` and its own quarantine
column. A member declared with `propagate_row_failures=True` adds one such rule too, named as
Dataframely names it (`<member>|failure_propagation`): the rows removed because a row of that
member with the same common primary key failed a rule. Optional members are validated when
they are returned and skipped when they are not. So every option `dy.CollectionMember` has is
supported, and none is refused; `inline_for_sampling` only concerns `Collection.sample`.

The split is Dataframely's own `Collection.filter`, over rows collected once, so the member
rules and the filters decide as they do for a user who calls it, and no row of any member is
lost or duplicated: every input row is either valid or in that member's failures, once.
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

from . import _names
from ._failures import Failures
from ._outcome import Frame, column_problems
from ._schema import (
    RuleInfo,
    SchemaInfo,
    function_docstring,
    read_schema,
    validate_rule_names,
)
from ._upstream import collection_filters, failure_propagation_rule
from ._validate import require_frame
from .errors import (
    CollectionFilterDuplicatesError,
    CollectionMemberMissingError,
    CollectionWithoutMembersError,
    DagsterDataframelyError,
    UnknownCollectionMemberError,
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


def read_collection(collection: object) -> CollectionInfo:
    """Read a `dy.Collection` class: its members, their schemas, its filters, once per class.

    Raises
    ------
    TypeError
        `collection` is not a `dy.Collection` subclass.
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
    if not (isinstance(collection, type) and issubclass(collection, dy.Collection)):
        raise TypeError(
            f"Expected a dataframely Collection class (a subclass of dy.Collection), got "
            f"{collection!r}. Pass the class itself, not an instance."
        )
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
    rules = [
        RuleInfo(
            name=filter_name,
            column=None,
            check_name=_names.filter_check_name(filter_name),
            label=f"filter {filter_name} of {name}",
            description=function_docstring(logic)
            or (
                f"Keeps the rows whose ({keys}) the filter {filter_name} of {name} returns, "
                f"in every member it constrains."
            ),
            rule=None,
            plan=_plan(collection, logic, key),
        )
        for filter_name, logic in collection_filters(collection).items()
    ]
    for member_name, member in collection.members().items():
        if member.propagate_row_failures and not member.ignored_in_filters:
            rule_name = failure_propagation_rule(member_name)
            text = (
                f"Removes the rows whose ({keys}) is that of a row of member {member_name} "
                f"that failed one of its rules (propagate_row_failures=True)."
            )
            rules.append(
                RuleInfo(
                    name=rule_name,
                    column=None,
                    check_name=_names.filter_check_name(rule_name),
                    label=f"failure propagation from {member_name} in {name}",
                    description=text,
                    rule=None,
                    plan=functools.partial(str, text),
                )
            )
    # A Python identifier may have letters Dagster refuses in a check name.
    validate_rule_names(name, tuple(rules))
    return tuple(rules)


def _plan(
    collection: type[dy.Collection],
    logic: Callable[[Any], pl.LazyFrame],
    key: tuple[str, ...],
) -> Callable[[], str]:
    """The filter's query over empty members, as Polars explains it: what the filter does.

    Built when read (a check's metadata, the code version), not when declared: the filter is
    the user's code, and may raise.
    """

    def plan() -> str:
        return logic(collection.create_empty()).lazy().select(key).explain(optimized=False)

    return plan


def _with_filters(base: SchemaInfo, filters: tuple[RuleInfo, ...]) -> SchemaInfo:
    return dataclasses.replace(base, rules=base.rules + filters)


@dataclass(frozen=True, eq=False)
class MemberSplit:
    """One member's rows, after the joint split: the valid rows and the failures."""

    valid: pl.DataFrame
    failures: Failures
    """Every invalid row with one outcome per member rule and per filter."""


@dataclass(frozen=True, eq=False)
class CollectionSplit:
    """What one `Collection.filter` over the returned members comes to.

    Exactly one of three: every member skipped (`skipped` is every member), a column mismatch
    (`problems` is not empty, nothing was split), or a split of every returned member.
    """

    splits: Mapping[str, MemberSplit]
    problems: Mapping[str, list[dict[str, str]]]
    """The mismatched columns of each member whose columns do not match its schema."""
    skipped: frozenset[str]
    """The members no frame was returned for: optional ones, or all of them."""


def split_collection(info: CollectionInfo, frames: Mapping[str, object]) -> CollectionSplit:
    """Split the returned members into valid rows and failures, with one `Collection.filter`.

    A member whose value is `None` or absent is skipped; no member at all skips every one.
    Every member's columns are compared with its schema first (without running any plan), and
    a mismatch in any member splits none: the filters need every member. Otherwise the user's
    plans run once (together, on the streaming engine, so a source they share is read once),
    and `Collection.filter` splits the collected rows, eagerly, on Polars' default engine: its
    joins of members with filters ran about a third slower on the streaming one (measured with
    `benchmarks/collection.py`). Valid rows and failures both come from frames Dataframely has
    already collected, so no row lands on both sides or on neither.

    Raises
    ------
    UnknownCollectionMemberError
        A frame is given for a name that is no member.
    DagsterInvariantViolationError
        A value is neither a Polars frame nor None.
    CollectionMemberMissingError
        Some members are returned, but not every required one.
    CollectionFilterDuplicatesError
        A filter returned a primary key twice, so a member came out with more rows.
    """
    unknown = [name for name in frames if name not in info.members]
    if unknown:
        raise UnknownCollectionMemberError(info.name, unknown, list(info.members))
    for value in frames.values():
        require_frame(value, none_skips=True)
    present: dict[str, Frame] = {
        name: value for name, value in frames.items() if isinstance(value, Frame)
    }
    skipped = frozenset(info.members) - present.keys()
    if not present:
        return CollectionSplit({}, {}, skipped)
    missing = [name for name in skipped if not info.members[name].optional]
    if missing:
        raise CollectionMemberMissingError(
            info.name, [name for name in info.members if name in missing]
        )
    problems = {
        name: found
        for name, frame in present.items()
        if (found := column_problems(info.members[name].info, frame))
    }
    if problems:
        return CollectionSplit({}, problems, skipped)
    rows = _collect_once(present)
    result = info.collection.filter(rows, cast=False)
    splits = {}
    for name in rows:
        member = info.members[name]
        valid = getattr(result.result, name).lazy().collect()
        failures = member_failures(member.info, result.failure[name])
        if valid.height + failures.invalid_count != rows[name].height:
            raise CollectionFilterDuplicatesError(
                info.name, name, rows[name].height, valid.height + failures.invalid_count
            )
        splits[name] = MemberSplit(valid, failures)
    return CollectionSplit(splits, {}, skipped)


def _collect_once(frames: Mapping[str, Frame]) -> dict[str, pl.DataFrame]:
    """Every member's rows, each lazy plan run once, all of them in one streaming query set."""
    lazy = {name: frame for name, frame in frames.items() if isinstance(frame, pl.LazyFrame)}
    collected = dict(zip(lazy, pl.collect_all(lazy.values(), engine="streaming"), strict=True))
    return {
        name: frame if isinstance(frame, pl.DataFrame) else collected[name]
        for name, frame in frames.items()
    }


def member_failures(info: SchemaInfo, failure: dy.FailureInfo) -> Failures:
    """A member's failures, where a row a filter removed passed every rule of the member.

    `Collection.filter` stacks two kinds of rows: those a member rule failed, which no filter
    saw (their filter outcomes are unknown), and those a filter removed, which passed every
    member rule (Dataframely leaves those outcomes null). The second kind's rule outcomes are
    set to passed here, so the quarantine says a filter, and only a filter, removed them.
    """
    failures = Failures.from_failure_info(info, failure)
    filters = [rule.name for rule in info.filters]
    rules = [rule.name for rule in info.rules if not rule.is_filter]
    if not filters or not rules or not failures.invalid_count:
        return failures
    removed_by_filter = pl.col(filters[0]).is_not_null()
    outcomes = failures.outcomes.with_columns(
        pl.when(removed_by_filter).then(True).otherwise(pl.col(rule)).alias(rule) for rule in rules
    )
    return Failures(info=info, outcomes=outcomes, counts=failures.counts)

"""A Collection's members split together, with one `Collection.filter`.

This is where a Collection plugs into the one pipeline: instead of one `Schema.filter` per
output, the members are split jointly, so the Collection's `@dy.filter`s apply across them, and
each member's outcome is then classified as any output's is (`outcome.decide_members`). The
members come from one read of what they share: the function's lazy inputs are cached before it
runs (`share_input`), and the members are collected in one query.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import dataframely as dy
import polars as pl

from dagster_dataframely._model.collection import CollectionInfo
from dagster_dataframely._model.schema import SchemaInfo
from dagster_dataframely._run.returned import Frame
from dagster_dataframely._upstream import collection_filters
from dagster_dataframely.errors import CollectionFilterDuplicatesError, CollectionMemberMissingError

from .failures import Failures
from .split import collect_once, column_problems, split_rows


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


def split_collection(info: CollectionInfo, frames: Mapping[str, Frame | None]) -> CollectionSplit:
    """Split the returned members into valid rows and failures, with one `Collection.filter`.

    `frames` are by member name. A member whose value is `None` or absent is skipped; no member
    at all skips every one. Every member's columns are compared with its schema first (without
    running any plan), and a mismatch in any member splits none: the filters need every member.
    Otherwise the user's plans run once (together, on the streaming engine, so what Polars
    shares between them, a cache above all, is read once), and `Collection.filter` splits the
    collected rows, eagerly, on Polars'
    default engine, where its joins of members with filters ran faster than on the streaming
    one (`benchmarks/collection.py`). Valid rows and failures both come from frames Dataframely
    has already collected, so no row lands on both sides or on neither.

    Raises
    ------
    CollectionMemberMissingError
        Some members are returned, but not every required one.
    CollectionFilterDuplicatesError
        A filter returned a common primary key on two rows, so a member came out with more
        rows.
    """
    present: dict[str, Frame] = {name: value for name, value in frames.items() if value is not None}
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
    # NOTE: a member's undeclared columns are never computed nor read, as in `split_rows`.
    rows = collect_once(
        {
            name: frame.select(info.members[name].info.schema.column_names())
            for name, frame in present.items()
        }
    )
    result = info.collection.filter(rows, cast=False)
    splits = {}
    for name in rows:
        member = info.members[name]
        valid = getattr(result.result, name).lazy().collect()
        failures = _member_failures(member.info, result.failure[name])
        if valid.height + failures.invalid_count != rows[name].height:
            raise CollectionFilterDuplicatesError(
                info.name,
                name,
                rows[name].height,
                valid.height + failures.invalid_count,
                info.primary_key,
                repeating_filters(info, rows),
            )
        splits[name] = MemberSplit(valid, failures)
    return CollectionSplit(splits, {}, skipped)


def repeating_filters(info: CollectionInfo, rows: Mapping[str, pl.DataFrame]) -> list[str]:
    """The `@dy.filter`s whose result has a common primary key on more than one row.

    What `Collection.filter` does with each filter, again: the filter runs over the members'
    rows that pass their own schema, and only the common primary key of its result is kept.
    Run only to name the cause of `CollectionFilterDuplicatesError`.
    """
    valid = {
        name: split_rows(info.members[name].info, frame).result for name, frame in rows.items()
    }
    instance = info.collection.cast(valid)
    key = list(info.primary_key)
    repeating = []
    for name, logic in collection_filters(info.collection).items():
        kept = logic(instance).lazy().select(key).collect()
        if kept.height != kept.unique().height:
            repeating.append(name)
    return repeating


def share_input(value: object) -> object:
    """An input as a Collection's function receives it: a `pl.LazyFrame` behind one cache.

    Members built from one input then read it once, in the members' one query, whatever its
    source: Polars evaluates an IO plugin, a pyarrow dataset or a random step once per plan
    that reads it unless a cache stands above it. Polars drops a cache only one plan reads,
    so an input one member uses costs nothing, and projections still reach the source.
    """
    return value.cache() if isinstance(value, pl.LazyFrame) else value


def _member_failures(info: SchemaInfo, failure: dy.FailureInfo) -> Failures:
    # NOTE: `Collection.filter` stacks the rows a member rule failed (their filter outcomes unknown)
    # and those a filter removed, which passed every member rule but have them null: set to passed,
    # so the quarantine says a filter, and only a filter, removed them.
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

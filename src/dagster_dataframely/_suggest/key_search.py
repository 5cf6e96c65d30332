"""The primary key: a complete unique column, else the smallest complete unique combination."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import polars as pl

from dagster_dataframely._suggest.table_profile import (
    ColumnProfile,
    TableProfile,
    distinct_counts,
    is_integer,
    key_candidates,
    may_be_unique,
)

MAX_KEY_COLUMNS = 3


def find_primary_key(frame: pl.LazyFrame, profile: TableProfile) -> tuple[str, ...]:
    """The first unique combination, fewest columns first, then the most distinct values.

    A single column's uniqueness is in the profile; combinations whose estimated distinct
    counts multiply to fewer than the rows cannot be unique and are not tested.
    """
    candidates = key_candidates(profile)
    unique: Sequence[tuple[ColumnProfile, ...]] = [
        (column,) for column in candidates if column.unique
    ]
    for size in range(2, MAX_KEY_COLUMNS + 1):
        if unique:
            break
        # NOTE: one exact count per size, smallest first, stopping at the first size with a
        # unique combination: a table with a unique id never pays for the pairs and triples.
        tested = [
            combination
            for combination in itertools.combinations(candidates, size)
            if may_be_unique(combination, profile.rows)
        ]
        counts = distinct_counts(
            frame, [[column.name for column in combination] for combination in tested], profile.rows
        )
        unique = [
            combination
            for combination, count in zip(tested, counts, strict=True)
            if count == profile.rows
        ]
    if not unique:
        return ()
    # NOTE: among the smallest unique combinations, integer columns (surrogate ids) come first,
    # then the source's column order.
    order = {column.name: index for index, column in enumerate(profile.columns)}
    best = min(
        unique,
        key=lambda combination: (
            not all(is_integer(column.dtype) for column in combination),
            [order[column.name] for column in combination],
        ),
    )
    return tuple(column.name for column in best)

"""The rows a table gets: a `DataFrame` in memory, or a scan of rows the streamed split staged.

The report needs their count and their first rows (and their statistics,
`statistics.staged_statistics`), each cheap on staged rows too, on the streaming engine: the count
reads the one column that says which rows are valid, and a head stops at its last row.
"""

from __future__ import annotations

import polars as pl

ValidRows = pl.DataFrame | pl.LazyFrame
"""A `LazyFrame` here is always a (filtered) scan of staged rows, never a user's plan."""


def row_count(valid: ValidRows) -> int:
    """How many rows the table gets."""
    if isinstance(valid, pl.DataFrame):
        return valid.height
    count: int = valid.select(pl.len()).collect(engine="streaming").item()
    return count


def first_rows(valid: ValidRows, limit: int) -> pl.DataFrame:
    """The table's first `limit` rows, in order."""
    if isinstance(valid, pl.DataFrame):
        return valid.head(limit)
    # The streaming engine stops reading once it has the rows; the in-memory engine would read
    # every staged row to filter them first.
    return valid.head(limit).collect(engine="streaming")

"""The rows a table gets: a `DataFrame` in memory, or a scan of rows the streamed split staged.

The report needs three things of them, their count, their first rows and their statistics, and
each is cheap on staged rows too, on the streaming engine: the count reads the one column that
says which rows are valid, a head stops at its last row, and the statistics read one column at
a time, so no more than one column is ever in memory.
"""

from __future__ import annotations

from collections.abc import Collection

import dagster as dg
import polars as pl

from dagster_dataframely._run.report.statistics import statistics_tables, streams_exactly

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


def staged_statistics(
    valid: pl.LazyFrame, distinct: Collection[str] = (), masked: Collection[str] = ()
) -> dict[str, dg.TableMetadataValue]:
    """`statistics_tables` of staged rows, one column at a time, in the same tables.

    A column's statistics read that column alone, so computing them column by column gives the
    same values as one query over the frame; only the tables' rows are put back together, in
    the frame's column order within each table. A text column is never held at all: its
    statistics stream (`streams_exactly`); any other is read into memory alone.
    """
    # Zero rows give every table of the frame, in the tables' order, with their schemas.
    tables = statistics_tables(valid.clear().collect(), distinct, masked)
    records: dict[str, list[dg.TableRecord]] = {group: [] for group in tables}
    for position, dtype in enumerate(valid.collect_schema().dtypes()):
        # `pl.nth`: a column named `*` or `^a.*$` would select other columns by name.
        column = valid.select(pl.nth(position))
        rows = column if streams_exactly(dtype) else column.collect(engine="streaming")
        for group, table in statistics_tables(rows, distinct, masked).items():
            records[group].extend(table.records)
    return {
        group: dg.MetadataValue.table(records[group], table.schema)
        for group, table in tables.items()
    }

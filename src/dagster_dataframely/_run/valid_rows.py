"""The rows a table gets: a `DataFrame` in memory, or a scan of rows the streamed split staged.

The report needs three things of them, their count, their first rows and their statistics, and
each is cheap on a staged file too: parquet stores the row count, a head reads one row group,
and the statistics read one column at a time, so no more than one column is ever in memory.
"""

from __future__ import annotations

from collections.abc import Collection

import dagster as dg
import polars as pl

from .statistics import statistics_tables

ValidRows = pl.DataFrame | pl.LazyFrame
"""A `LazyFrame` here is always a scan of staged rows, never a user's plan."""


def row_count(valid: ValidRows) -> int:
    """How many rows the table gets."""
    if isinstance(valid, pl.DataFrame):
        return valid.height
    count: int = valid.select(pl.len()).collect().item()
    return count


def first_rows(valid: ValidRows, limit: int) -> pl.DataFrame:
    """The table's first `limit` rows, in order."""
    return valid.head(limit) if isinstance(valid, pl.DataFrame) else valid.head(limit).collect()


def staged_statistics(
    valid: pl.LazyFrame, distinct: Collection[str] = (), masked: Collection[str] = ()
) -> dict[str, dg.TableMetadataValue]:
    """`statistics_tables` of staged rows, read one column at a time, in the same tables.

    A column's statistics read that column alone, so computing them column by column gives the
    same values as one query over the frame; only the tables' rows are put back together, in
    the frame's column order within each table.
    """
    # Zero rows give every table of the frame, in the tables' order, with their schemas.
    tables = statistics_tables(valid.clear().collect(), distinct, masked)
    records: dict[str, list[dg.TableRecord]] = {group: [] for group in tables}
    for position in range(valid.collect_schema().len()):
        # `pl.nth`: a column named `*` or `^a.*$` would select other columns by name.
        column = valid.select(pl.nth(position)).collect(engine="streaming")
        for group, table in statistics_tables(column, distinct, masked).items():
            records[group].extend(table.records)
    return {
        group: dg.MetadataValue.table(records[group], table.schema)
        for group, table in tables.items()
    }

"""What an IO manager records beside a validated output, shown only as the output allows.

An IO manager adds its own metadata to the materialization of what it writes, and some of it
holds the rows themselves: dagster-polars' managers record `table` (the first rows) and `stats`
(`DataFrame.describe()`, every column's min and max) of a `DataFrame`, and every manager of
Polars frames the column types, where an `Enum` prints its categories. Where the package hands
the frame to the manager itself (`QuarantineAwareIOManager`, a quarantine write), that metadata
passes through `shown_manager_metadata`: dropped when the output's samples are off, without its
sensitive columns otherwise, every text cut, a sensitive column's type masked. Any other
output the wrapper stores (a plain asset's, often the raw rows a `dd.asset` reads) has no
schema to say which columns are sensitive, so its previews are dropped unless the wrapper keeps
them. Where a bare manager writes the table, Dagster records the metadata before the package
sees it: the package hands such a manager a `LazyFrame` where it can (`sinks_lazy_table`), and the
step names the rest once (`bare_managers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model.shown_values import MASK, ShownValues, cut_text, dtype_text


def shown_manager_metadata(
    metadata: Mapping[str, Any],
    definition_metadata: Mapping[str, Any],
    dtypes: Mapping[str, pl.DataType],
    *,
    plain_previews: bool = True,
) -> dict[str, Any]:
    """`metadata`, as recorded by a manager for an output, with only the values it may show.

    The value-bearing entries are the table values (dagster-polars' `table` and `stats`) and
    the markdown ones (a frame printed as a preview). With the output's samples off, both are
    dropped; otherwise a table loses the sensitive columns and its texts are cut, and markdown,
    which cannot lose a column, is dropped when the output has one. A table schema (the column
    types, `dagster/column_schema`, DuckDB's `dataframe_columns`) shows a sensitive column's
    type as `dtype_text` does, from `dtypes` (the written frame's schema). An output this
    package did not declare has no `dataframely/event_log_values`: its metadata is returned
    unchanged with `plain_previews`, and without its table and markdown values otherwise.
    """
    shown = ShownValues.from_definition_metadata(definition_metadata)
    if shown is None:
        if plain_previews:
            return dict(metadata)
        shown = _PLAIN_OUTPUT
    kept: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, dg.TableMetadataValue):
            if shown.rows:
                kept[key] = _shown_table(value, shown.masked)
        elif isinstance(value, dg.MarkdownMetadataValue):
            if not shown.hides_values:
                kept[key] = value
        elif isinstance(value, dg.TableSchemaMetadataValue) and shown.masked:
            kept[key] = dg.MetadataValue.table_schema(
                _masked_types(value.schema, shown.masked, dtypes)
            )
        else:
            kept[key] = value
    return kept


# NOTE: an undeclared output without its previews shows no row, and masks no column: nothing
# says which are sensitive, and masking every one would print `[sensitive]` in each `Enum` type.
_PLAIN_OUTPUT = ShownValues(rows=False, masked=frozenset())


def written_dtypes(obj: object) -> Mapping[str, pl.DataType]:
    """The dtypes of what a manager was handed: a frame's schema, empty for anything else."""
    return obj.collect_schema() if isinstance(obj, pl.DataFrame | pl.LazyFrame) else {}


def _shown_table(table: dg.TableMetadataValue, masked: frozenset[str]) -> dg.TableMetadataValue:
    columns = [column for column in table.schema.columns if column.name not in masked]
    records = [
        dg.TableRecord(
            {
                name: cut_text(cell) if isinstance(cell, str) else cell
                for name, cell in record.data.items()
                if name not in masked
            }
        )
        for record in table.records
    ]
    schema = dg.TableSchema(columns=columns, constraints=table.schema.constraints)
    return dg.MetadataValue.table(records=records, schema=schema)


def _masked_types(
    schema: dg.TableSchema, masked: frozenset[str], dtypes: Mapping[str, pl.DataType]
) -> dg.TableSchema:
    columns = [
        dg.TableColumn(
            name=column.name,
            type=dtype_text(dtypes[column.name], sensitive=True) if column.name in dtypes else MASK,
            description=column.description,
            constraints=column.constraints,
            tags=column.tags,
        )
        if column.name in masked
        else column
        for column in schema.columns
    ]
    return dg.TableSchema(columns=columns, constraints=schema.constraints)

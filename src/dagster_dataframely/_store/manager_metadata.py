"""What an IO manager records beside a validated output, shown only as the output allows.

An IO manager adds its own metadata to the materialization of what it writes, and some of it
holds the rows themselves: dagster-polars' managers record `table` (the first rows) and `stats`
(`DataFrame.describe()`, every column's min and max). Where the package hands the frame to the
manager itself (`QuarantineAwareIOManager`, a quarantine write), that metadata passes through
`shown_manager_metadata`: dropped when the output's samples are off, without its sensitive
columns otherwise, every text cut. Where a bare manager writes the table, Dagster records the
metadata before the package sees it, so the step says so once instead (`bare_managers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg

from dagster_dataframely._model.shown_values import ShownValues, cut_text


def shown_manager_metadata(
    metadata: Mapping[str, Any], definition_metadata: Mapping[str, Any]
) -> dict[str, Any]:
    """`metadata`, as recorded by a manager for an output, with only the values it may show.

    The value-bearing entries are the table values (dagster-polars' `table` and `stats`) and
    the markdown ones (a frame printed as a preview). With the output's samples off, both are
    dropped; otherwise a table loses the sensitive columns and its texts are cut, and markdown,
    which cannot lose a column, is dropped when the output has one. An output this package did
    not declare has no `dataframely/event_log_values` and its metadata is returned unchanged.
    """
    shown = ShownValues.from_definition_metadata(definition_metadata)
    if shown is None:
        return dict(metadata)
    kept: dict[str, Any] = {}
    for key, value in metadata.items():
        if isinstance(value, dg.TableMetadataValue):
            if shown.rows:
                kept[key] = _shown_table(value, shown.masked)
        elif isinstance(value, dg.MarkdownMetadataValue):
            if not shown.hides_values:
                kept[key] = value
        else:
            kept[key] = value
    return kept


def _shown_table(table: dg.TableMetadataValue, masked: frozenset[str]) -> dg.TableMetadataValue:
    """The table without the `masked` columns, each text cell cut as the package's own are."""
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

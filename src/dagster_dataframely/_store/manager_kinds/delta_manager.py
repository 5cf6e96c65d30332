"""dagster-polars' `PolarsDeltaIOManager`: a Delta table per asset key, or per partition.

A path manager whose "file" is a Delta table (a directory of parquet files and a log): each
write is one commit, which readers see whole or not at all, so a staged write is the manager's
own write. A partitioned asset is a table per partition, or, with `partition_by` in its
definition metadata, one table whose partition column Delta itself partitions by (a write
replaces the partition's rows, and refuses a row outside it). Delta refuses a frame whose
columns differ from the table's unless told how to evolve the schema: every write the package
makes or wraps merges the new columns in (`schema_mode="merge"`) unless the asset or the
manager says otherwise. The stored keys are read from each partition's table, or from the one
table by its partition columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import dagster as dg
import polars as pl

from .manager_kind import StoredPartition
from .path_manager import PathManager, _holds_by_dimension, _listed_files, _scanned

PARTITION_BY = "partition_by"
"""The definition metadata naming the column(s) Delta partitions one table by."""
_LOG = "/_delta_log/"


class DeltaManager(PathManager):
    """`PolarsDeltaIOManager`: each write one Delta commit."""

    @classmethod
    def claims(cls, manager: dg.IOManager) -> bool:
        return any(
            kind.__name__ == "PolarsDeltaIOManager"
            and kind.__module__.split(".")[0] == "dagster_polars"
            for kind in type(manager).__mro__
        )

    def staged(self, name: str) -> dg.IOManager:
        # NOTE: a Delta commit is atomic: a failed or killed write leaves its data files
        # unreferenced, and readers keep reading the last committed version.
        return _MergingSchema(self.manager)

    def table_writer(self, *, staged: bool, name: str) -> dg.IOManager:
        return _MergingSchema(self.manager)

    def _range_problem(self, name: str, count: int) -> str:
        return (
            f"{name} writes one partition per output (Dagster's UPathIOManager refuses an "
            f"output of several, even into one Delta table), so it would refuse this output of "
            f"{count} partitions"
        )

    def stored_partitions(
        self,
        context: dg.OutputContext,
        partitions_def: dg.PartitionsDefinition,
        instance: dg.DagsterInstance,
    ) -> dict[str, StoredPartition]:
        manager: Any = self.manager
        options = manager.storage_options
        columns = _partition_columns(context.definition_metadata or {}, partitions_def)
        if columns is None:
            tables = _listed_files(self.manager, context, partitions_def, instance, _stored_tables)
            return _scanned(
                {
                    key: pl.scan_delta(str(path), storage_options=options)
                    for key, path in tables.items()
                }
            )
        (path,) = set(self.files(context))
        if not path.exists():
            return {}
        table = pl.scan_delta(str(path), storage_options=options)
        holds = _holds_by_dimension(partitions_def, instance)
        as_text = [pl.col(column).cast(pl.String) for column in columns.values()]
        stored = table.select(as_text).unique().collect()
        scans = {}
        for values in stored.iter_rows():
            key = _held_key(dict(zip(columns, values, strict=True)), holds)
            if key is not None:
                matches = [text == value for text, value in zip(as_text, values, strict=True)]
                scans[key] = table.filter(*matches)
        return _scanned(scans)


def _partition_columns(
    metadata: Mapping[str, Any], partitions_def: dg.PartitionsDefinition
) -> dict[str | None, str] | None:
    partition_by = metadata.get(PARTITION_BY)
    if isinstance(partition_by, str):
        return {None: partition_by}
    if isinstance(partition_by, Mapping) and isinstance(
        partitions_def, dg.MultiPartitionsDefinition
    ):
        return {str(dimension): str(column) for dimension, column in partition_by.items()}
    return None


def _held_key(
    values: Mapping[str | None, str | None], holds: Mapping[str | None, Any]
) -> str | None:
    if any(value is None or not holds[dimension](value) for dimension, value in values.items()):
        return None
    if None in values:
        return values[None]
    return str(dg.MultiPartitionKey({str(d): str(v) for d, v in values.items()}))


def _stored_tables(paths: Iterable[str]) -> set[str]:
    # NOTE: a table is the directory above its `_delta_log`; its data files are not tables.
    return {path.split(_LOG, 1)[0] for path in paths if _LOG in path}


class _MergingSchema(dg.IOManager):
    """Writes as the Delta manager does, merging a frame's new columns into the table.

    Unless the asset's `delta_write_options` or the manager's `schema_mode` chose a mode.
    """

    def __init__(self, manager: Any) -> None:
        from dagster_polars.io_managers.delta import DeltaSchemaMode

        self._manager = manager
        self._merging = manager.model_copy(update={"schema_mode": DeltaSchemaMode.merge})

    def handle_output(self, context: dg.OutputContext, obj: Any) -> Any:
        options = (context.definition_metadata or {}).get("delta_write_options") or {}
        chosen = self._manager.schema_mode is not None or "schema_mode" in options
        return (self._manager if chosen else self._merging).handle_output(context, obj)

    def load_input(self, context: dg.InputContext) -> Any:
        return self._manager.load_input(context)

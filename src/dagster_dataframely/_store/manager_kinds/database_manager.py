"""Database managers: any `DbIOManager` (DuckDB's, Snowflake's, BigQuery's...).

One table per asset key, in which a write replaces a slice: the partition's rows, found by the
column the asset's `partition_expr` names (deleted, then the frame inserted), or the whole
table. So a run of one partition needs `partition_expr`, and refuses a row outside the
partition, which no rerun would replace; a range is one slice, which a multi-partitioned range
is only when its keys differ in one dimension. What it records depends on its type handlers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import dagster as dg
import polars as pl

from dagster_dataframely import _upstream
from dagster_dataframely.errors import PartitionRangeError, QuarantineIOManagerError

from .manager_kind import ManagerKind
from .path_manager import DAGSTER_POLARS_VALUE_KEYS

# The type handlers that record the column types as text, by package, and under which key.
_TYPED_HANDLERS = {
    "dagster_polars": "`dagster/column_schema`",
    "dagster_duckdb_polars": "`dataframe_columns`",
}
# NOTE: DuckDB's Polars handler records the types and the row count, never a row.
_PREVIEWLESS_HANDLERS = frozenset({"dagster_duckdb_polars"})


class DatabaseManager(ManagerKind):
    """A `DbIOManager`: one table per asset key, a partition's rows replaced by `partition_expr`."""

    partitions_by_expr: ClassVar[bool] = True

    @classmethod
    def claims(cls, manager: dg.IOManager) -> bool:
        return _upstream.database_handled_types(manager) is not None

    def check_wrappable(self, name: str) -> None:
        handled = _upstream.database_handled_types(self.manager) or ()
        if not any(issubclass(pl.DataFrame, t) for t in handled):
            raise QuarantineIOManagerError(
                name,
                "its type handlers cannot store a pl.DataFrame, and the package stores Polars "
                "frames",
                "Use a database IO manager with a Polars type handler, such as "
                "DuckDBPolarsIOManager.",
            )

    def check_range(self, asset: str, partitions: str, name: str, context: Any) -> None:
        # NOTE: its write would fail after the function ran (Dagster's bare `CheckError`) for a
        # multi-partitioned range of more than one key in every dimension.
        if _upstream.db_range_slice(self.manager, context) is not None:
            return
        raise PartitionRangeError(
            asset,
            partitions,
            f"{name} stores a range of a multi-partitioned asset in one write only when its "
            "keys differ in one dimension (the rows of one rectangle of partitions are deleted "
            "and inserted), and the keys of this range differ in every dimension",
            "Launch one run per key of one dimension (for an asset by day and region, one "
            "backfill per region over the days, or per day over the regions), or launch the "
            "backfill with one run per partition "
            "(`backfill_policy=dg.BackfillPolicy.multi_run()`).",
        )

    def previews(self) -> Mapping[str, str] | None:
        packages = self._handler_packages()
        if "dagster_polars" in packages:
            return DAGSTER_POLARS_VALUE_KEYS
        return None if packages <= _PREVIEWLESS_HANDLERS else {}

    def types_key(self) -> str | None:
        typed = [
            _TYPED_HANDLERS[p] for p in sorted(self._handler_packages()) if p in _TYPED_HANDLERS
        ]
        return typed[0] if typed else None

    def _handler_packages(self) -> frozenset[str]:
        _, handlers = _upstream.db_io_manager_parts(self.manager)
        return frozenset(type(handler).__module__.split(".")[0] for handler in handlers.values())

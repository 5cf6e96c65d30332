"""The store of an asset's table, whose kind reads the key columns of every stored partition.

The table-wide key check reads these after a run has written its partitions, through the kind
of the manager that stores the table (`manager_kinds`): a lazy scan of each stored partition
(a path manager's files, found by one listing of the asset's folder; a Delta table's
partitions), or one query that groups the keys inside the database and returns only the
repeated ones (DuckDB). Only the partitions the definition holds now count, each named by its
Dagster key, never by a stored value.
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from dagster_dataframely import _upstream

from .manager_kinds.kind_choice import kind_of
from .manager_kinds.manager_kind import Store
from .step_storage import table_output


def stored_table(context: Any, asset_key: dg.AssetKey) -> Store | None:
    """The store of `asset_key`'s table in the running step; None in a direct call. Behind
    `QuarantineAwareIOManager`, its table's manager's."""
    handle = table_output(context, asset_key)
    if handle is None:
        return None
    manager = _upstream.output_io_manager(handle)
    return kind_of(manager).table_store(_upstream.output_context_for(handle, asset_key))

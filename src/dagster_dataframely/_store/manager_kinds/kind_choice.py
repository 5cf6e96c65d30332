"""`kind_of`: the one place that asks what an IO manager is."""

from __future__ import annotations

import dagster as dg

from .database_manager import DatabaseManager
from .delta_manager import DeltaManager
from .duckdb_manager import DuckDBManager
from .manager_kind import ManagerKind, UnknownManager
from .memory_manager import MemoryManager
from .path_manager import PathManager
from .wrapped_manager import WrappedManagers

KINDS: tuple[type[ManagerKind], ...] = (
    WrappedManagers,
    MemoryManager,
    DeltaManager,
    PathManager,
    DuckDBManager,
    DatabaseManager,
)
"""Every kind, the more specific first: the first that claims a manager is its kind."""


def kind_of(manager: dg.IOManager) -> ManagerKind:
    """The kind of `manager`: the first of `KINDS` that claims it, else `UnknownManager`."""
    kind = next((kind for kind in KINDS if kind.claims(manager)), UnknownManager)
    return kind(manager)

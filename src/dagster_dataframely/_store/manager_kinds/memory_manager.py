"""Dagster's in-memory manager (`dg.mem_io_manager`, `dg.InMemoryIOManager`).

It keeps each value under the step's output (run, step and output name), not under the asset
key, so a quarantine written through it would share the table's slot and be replaced by the
table's write: a run refuses it before anything is written. It records no metadata.
"""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg

from dagster_dataframely.errors import QuarantineStorageError

from .manager_kind import ManagerKind


class MemoryManager(ManagerKind):
    """`dg.InMemoryIOManager`: one slot per step output."""

    @classmethod
    def claims(cls, manager: dg.IOManager) -> bool:
        return isinstance(manager, dg.InMemoryIOManager)

    def check_own_slot(self, asset: str, name: str) -> None:
        raise QuarantineStorageError(
            asset,
            name,
            "it stores each value under the step's output (run, step and output name), not "
            "under the asset key, so the quarantine would share the table's slot and the "
            "table's write would replace the invalid rows",
        )

    def previews(self) -> Mapping[str, str] | None:
        return None

"""`QuarantineAwareIOManager` bound as the manager: seen through to the managers it wraps.

Where the package asks where a table or a quarantine is stored, the wrapped manager that
stores it answers, with the context it receives (its own resource config). The router itself
writes a quarantine handed to it (it sends it on), fits and stages its own writes, sinks what
its table manager sinks, and records only what it filtered.
"""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg

from dagster_dataframely.errors import QuarantineIOManagerError

from .manager_kind import ManagerKind, Store
from .router import QuarantineRouter


class WrappedManagers(ManagerKind):
    """The router of a `QuarantineAwareIOManager`: its table's manager and its quarantine's."""

    manager: QuarantineRouter

    @classmethod
    def claims(cls, manager: dg.IOManager) -> bool:
        return isinstance(manager, QuarantineRouter)

    def check_wrappable(self, name: str) -> None:
        raise QuarantineIOManagerError(
            f"another QuarantineAwareIOManager, {name}",
            "wrapping the wrapper would route every quarantine twice",
            "Pass the IO manager that stores your tables, and give the quarantine's own manager "
            "as quarantine_io_manager.",
        )

    def table_store(self, context: dg.OutputContext) -> Store:
        table = self.manager.table
        return Store(table.name, table.kind, table.forward(context))

    def quarantine_store(self, context: dg.OutputContext) -> Store:
        quarantine = self.manager.quarantine
        return Store(quarantine.name, quarantine.kind, quarantine.forward(context))

    def quarantine_writer(self, *, staged: bool, name: str) -> dg.IOManager:
        return self.manager

    @property
    def sinks_lazy(self) -> bool:
        return self.manager.table.kind.sinks_lazy

    def previews(self) -> Mapping[str, str] | None:
        return None

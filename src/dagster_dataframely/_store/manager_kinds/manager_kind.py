"""`ManagerKind`: every question the package asks of an IO manager, in one place.

Before a run writes, and while it writes, the package asks the IO manager bound to an output
what it is able to do: stage a write, hold a quarantine in a place of its own, store a range of
partitions in one write, say whether the quarantine is stored, read the keys it stored, and
which of the values it records may show a row. Each kind of manager answers in a module of its
own (`path_manager`, `delta_manager`, `database_manager`, `duckdb_manager`, `memory_manager`,
`wrapped_manager`), and `kind_choice.kind_of` picks one.

This base class answers as for a manager the package does not know (`UnknownManager`): it is
trusted to store each asset key in a place of its own and a range in one write, as the docs'
"Which IO managers qualify" asks; its writes are never staged (`staged_writes=True` is refused
when the resource starts, naming it); the quarantine of a first clean run is not written, as
the package cannot ask whether one is stored; keys across partitions are reported as
unreadable; and a step whose outputs hide values warns that it may record anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import dagster as dg
import polars as pl
from upath import UPath

from dagster_dataframely.errors import QuarantineIOManagerError

PARTITIONS = "dy_partitions"
"""The column of a grouped frame that lists, sorted, the partitions holding one key."""


@dataclass(frozen=True, slots=True)
class StoredPartition:
    """One stored partition, scanned lazily as its manager scans it."""

    scan: pl.LazyFrame
    columns: frozenset[str]
    """The columns it holds: a partition stored before a column was added lacks it."""


@dataclass(frozen=True)
class Store:
    """One manager as a write goes through it: its name in messages, its kind, its context."""

    name: str
    kind: ManagerKind
    context: dg.OutputContext


class ManagerKind:
    """What the package asks of one IO manager; the answers here are an unknown manager's."""

    label: ClassVar[str] = "a manager the package does not know"

    def __init__(self, manager: dg.IOManager) -> None:
        self.manager = manager

    @classmethod
    def claims(cls, manager: dg.IOManager) -> bool:
        """Whether `manager` is of this kind; `kind_choice.KINDS` asks in order."""
        return True

    # Binding: which manager a write of the table, or of its quarantine, goes through.

    def check_wrappable(self, name: str) -> None:
        """Raise `QuarantineIOManagerError` where `QuarantineAwareIOManager` cannot wrap it."""

    def table_store(self, context: dg.OutputContext) -> Store:
        """The store of the table's write with `context`."""
        return Store(type(self.manager).__name__, self, context)

    def quarantine_store(self, context: dg.OutputContext) -> Store:
        """The store of the quarantine's write with `context`."""
        return self.table_store(context)

    # Writing.

    def staged(self, name: str) -> dg.IOManager:
        """A manager whose every write leaves the last good table if it fails or is killed."""
        raise QuarantineIOManagerError(
            name,
            "staged_writes=True can make writes atomic only for a UPathIOManager (such as "
            "PolarsParquetIOManager) on a local disk or an object store, for a DuckDBIOManager "
            "(such as DuckDBPolarsIOManager), and for PolarsDeltaIOManager, whose commits are "
            "atomic by themselves; this manager writes in its own way, which nothing outside it "
            "can make atomic",
            "Drop staged_writes=True, or store this asset with one of those managers.",
        )

    def table_writer(self, *, staged: bool, name: str) -> dg.IOManager:
        """Who writes a table `QuarantineAwareIOManager` hands on (`name` for its errors)."""
        return self.staged(name) if staged else self.manager

    def quarantine_writer(self, *, staged: bool, name: str) -> dg.IOManager:
        """Who writes the quarantine, bound directly (`staged=False`) or wrapped."""
        return self.table_writer(staged=staged, name=name)

    def table_fit(self, context: dg.OutputContext) -> Callable[[pl.DataFrame], pl.DataFrame] | None:
        """Bound directly, what prepares the stored table for a frame before Dagster writes it."""
        return None

    @property
    def sinks_lazy(self) -> bool:
        """Whether it writes a `LazyFrame` by sinking it, recording no row of it."""
        return False

    # Where it stores.

    def files(self, context: dg.OutputContext) -> list[UPath] | None:
        """The files a write with `context` replaces, one per partition; None if not a path."""
        return None

    def base(self) -> UPath | None:
        """The directory every file of it is meant to be under; None if not a path."""
        return None

    def check_own_slot(self, asset: str, name: str) -> None:
        """Raise `QuarantineStorageError` where a quarantine cannot have a place of its own."""

    def check_range(self, asset: str, partitions: str, name: str, context: Any) -> None:
        """Raise `PartitionRangeError` where it cannot store the range of `context` in one write."""

    partitions_by_expr: ClassVar[bool] = False
    """Whether it replaces a partition by the rows `partition_expr` puts in it, keeping the
    others: a row outside the partition would outlive every rerun."""

    def stored_check(self, context: dg.OutputContext) -> Callable[[], bool] | None:
        """A check of whether something is stored for `context`; None where it cannot be asked."""
        return None

    # Reading what it stored.

    def stored_partitions(
        self,
        context: dg.OutputContext,
        partitions_def: dg.PartitionsDefinition,
        instance: dg.DagsterInstance,
    ) -> dict[str, StoredPartition] | None:
        """Each stored partition the definition holds, by key; None where it cannot be read."""
        return None

    def repeated_keys(
        self, context: dg.OutputContext, key: Sequence[str], instance: dg.DagsterInstance
    ) -> pl.DataFrame | None:
        """The keys stored in more than one partition, grouped where they are stored; None to
        group `stored_partitions` instead."""
        return None

    # What it records beside a write.

    def previews(self) -> Mapping[str, str] | None:
        """Its metadata keys that hold values, and what each holds; empty when it may record
        anything; None when it records no value."""
        return {}

    def types_key(self) -> str | None:
        """The metadata key under which it records the column types as text, if any."""
        return None


class UnknownManager(ManagerKind):
    """A manager no other kind claims: the answers of `ManagerKind` itself."""

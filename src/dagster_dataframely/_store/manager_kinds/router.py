"""The IO manager `QuarantineAwareIOManager` creates: each write and read to the manager it goes to.

Every ordinary output and input goes to the wrapped table manager, with its own resource
config; a quarantine write (from `delegating_writer`) or read (an input declared with
`quarantine_spec`) goes to the quarantine's. What a manager records passes through
`shown_manager_metadata`, and a failed write through `shown_write_failure`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._credentials import without_credentials
from dagster_dataframely._model import names
from dagster_dataframely._model.keys import quarantined_asset_key
from dagster_dataframely._store.manager_metadata import shown_manager_metadata, written_dtypes
from dagster_dataframely._store.write_errors import shown_write_failure
from dagster_dataframely._upstream import context_for_manager
from dagster_dataframely.errors import QuarantineFrameTypeError

from .manager_kind import ManagerKind


class WrappedManager:
    """A wrapped manager, with the resource config every context forwarded to it must carry."""

    def __init__(
        self, kind: ManagerKind, name: str, config: Mapping[str, Any] | None, *, staged_writes: bool
    ) -> None:
        self.name = name
        self.kind = kind
        self.manager = kind.manager
        self.config = config
        self.table_writer = kind.table_writer(staged=staged_writes, name=name)
        self.quarantine_writer = kind.quarantine_writer(staged=staged_writes, name=name)

    def forward(self, context: Any, *, clear_logged_metadata: bool = False) -> Any:
        # The wrapped manager's own config, not the wrapper's; None for a manager passed as a
        # plain instance, which is what Dagster gives such a manager when bound directly.
        return context_for_manager(
            context, self.config, clear_logged_metadata=clear_logged_metadata
        )


class QuarantineRouter(dg.IOManager):
    """Decides, per context, which wrapped manager stores or loads it."""

    def __init__(
        self, *, table: WrappedManager, quarantine: WrappedManager, plain_asset_previews: bool
    ) -> None:
        self.table = table
        self.quarantine = quarantine
        self._plain_asset_previews = plain_asset_previews

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if not _is_quarantine_write(context):
            self._store(self.table, self.table.table_writer, context, obj)
            return
        if not isinstance(obj, pl.DataFrame):
            raise QuarantineFrameTypeError(context.asset_key.to_user_string(), type(obj).__name__)
        logged = self._store(self.quarantine, self.quarantine.quarantine_writer, context, obj)
        context.add_output_metadata({names.QUARANTINE_ADDRESS: _address(logged, context.asset_key)})

    def load_input(self, context: dg.InputContext) -> Any:
        target = self.quarantine if _is_quarantine_read(context) else self.table
        return target.manager.load_input(target.forward(context))

    def _store(
        self, target: WrappedManager, writer: dg.IOManager, context: dg.OutputContext, obj: Any
    ) -> Mapping[str, Any]:
        # NOTE: The metadata of a validated output keeps only the values its settings let it show,
        # and so does the error of a write that failed (`shown_write_failure`); any other output's
        # loses its previews unless the resource keeps them (`plain_asset_previews`).
        forwarded = target.forward(context, clear_logged_metadata=True)
        written = context.asset_key.to_user_string() if context.has_asset_key else context.name
        with shown_write_failure(
            context.definition_metadata,
            asset=written,
            manager=target.name,
            note=f"The write went through {target.name}.",
        ):
            write_through(writer, forwarded, obj)
        logged = shown_manager_metadata(
            forwarded.get_logged_metadata(),
            context.definition_metadata,
            written_dtypes(obj),
            plain_previews=self._plain_asset_previews,
        )
        if logged:
            context.add_output_metadata(logged)
        return logged


def write_through(manager: dg.IOManager, context: dg.OutputContext, obj: Any) -> None:
    """`manager.handle_output`, run to its end even when the manager yields its metadata."""
    result = manager.handle_output(context, obj)
    if isinstance(result, Iterator):
        for _ in result:
            pass


def _is_quarantine_write(context: dg.OutputContext) -> bool:
    # NOTE: `delegating_writer` writes `<name>_quarantine` from the step of `<name>` itself.
    if not context.has_asset_key:
        return False
    source = quarantined_asset_key(context.asset_key)
    try:
        return source is not None and context.asset_spec.key == source
    except dg.DagsterInvariantViolationError:
        return False


def _is_quarantine_read(context: dg.InputContext) -> bool:
    # NOTE: an input is a quarantine when its asset was declared with `quarantine_spec`.
    if not context.has_asset_key:
        return False
    source = quarantined_asset_key(context.asset_key)
    upstream = context.upstream_output
    if source is None or upstream is None:
        return False
    return upstream.definition_metadata.get(names.QUARANTINE_OF) == source.to_user_string()


def _address(logged: Mapping[str, Any], key: dg.AssetKey) -> str:
    # NOTE: a `UPathIOManager` logs the file as `path`; a `DbIOManager` logs
    # `dagster/table_name` (`<database>.<schema>.<table>`, of which the schema and table
    # identify it). A manager that reports neither leaves the quarantine's asset key.
    path = logged.get("path")
    if path is not None:
        return without_credentials(str(getattr(path, "value", path)))
    table = logged.get("dagster/table_name")
    if table is not None:
        return ".".join(str(getattr(table, "value", table)).rsplit(".", 2)[-2:])
    return key.to_user_string()

"""The bare IO managers whose metadata may hold values the package cannot filter, said once.

A manager bound directly as the table's writes it when Dagster handles the step's output, and
records its metadata on the materialization before the package could see it. So when an
output's settings hide values, its step warns once about each such manager, naming what it
records and the remedy: bind it inside `QuarantineAwareIOManager`, which filters it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg

from dagster_dataframely._model.shown_values import ShownValues
from dagster_dataframely._upstream import (
    database_handled_types,
    output_io_manager,
    running_step,
    step_output,
)

from .io_manager import QuarantineRouter

DAGSTER_POLARS_VALUE_KEYS = {"table": "its first rows", "stats": "every column's min and max"}
"""The metadata of dagster-polars' managers that holds values, and what each holds."""


def warn_of_unfiltered(context: Any, outputs: Sequence[tuple[str, str, ShownValues]]) -> None:
    """Say once, in a run's step, which hidden values the bare managers may still record.

    `outputs` are (op output name, asset key as text, what it shows) of the selected outputs.
    An output whose settings hide values, stored by a manager that writes the table itself and
    records metadata that may hold them, gets a line naming the manager, its keys and the
    remedy. Nothing is said in a direct invocation, which has no manager.
    """
    step = running_step(context) if context is not None else None
    if step is None:
        return
    lines = []
    for output_name, asset, shown in outputs:
        if not shown.hides_values:
            continue
        manager = output_io_manager(step_output(step, output_name))
        holding = _value_keys(manager)
        if holding is not None:
            lines.append(_unfiltered_line(asset, shown, type(manager).__name__, holding))
    if lines:
        context.log.warning(
            "dagster-dataframely cannot filter the metadata an IO manager records on the "
            "materialization of a table it writes itself, and these outputs hide values that "
            "metadata may show:"
            + "".join(f"\n  - {line}" for line in lines)
            + "\nTo keep those values out of the event log, bind the manager inside "
            "dd.QuarantineAwareIOManager(io_manager=...): it drops that metadata with the "
            "samples off, and leaves the sensitive columns out of it otherwise."
        )


def _value_keys(manager: dg.IOManager) -> Mapping[str, str] | None:
    """The metadata of `manager` that holds values, by key; empty when unknown; None for none.

    None for the wrapper (which filters), for a database manager, for a path manager that adds
    nothing to Dagster's own `path` and for the in-memory one: they record no value.
    """
    if isinstance(manager, QuarantineRouter | dg.InMemoryIOManager):
        return None
    if any(cls.__module__.split(".")[0] == "dagster_polars" for cls in type(manager).__mro__):
        return DAGSTER_POLARS_VALUE_KEYS
    if database_handled_types(manager) is not None:
        return None
    if isinstance(manager, dg.UPathIOManager) and (
        type(manager).get_metadata is dg.UPathIOManager.get_metadata
    ):
        return None
    return {}


def _unfiltered_line(asset: str, shown: ShownValues, manager: str, keys: Mapping[str, str]) -> str:
    """One output's line of the warning: what it hides, who records what."""
    hidden = [] if shown.rows else ["row_sample=0"]
    if shown.masked:
        hidden.append("sensitive columns " + ", ".join(repr(c) for c in sorted(shown.masked)))
    recorded = (
        ", ".join(f"`{key}` ({holds})" for key, holds in keys.items())
        if keys
        else "whatever it records (the package cannot see it; a preview or statistics hold values)"
    )
    return f"{asset!r} ({'; '.join(hidden)}): {manager} records {recorded}"

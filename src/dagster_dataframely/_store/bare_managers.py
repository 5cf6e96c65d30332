"""The bare IO managers that may record values an output hides, said once per step.

A manager bound directly as the table's writes it when Dagster handles the step's output, and
records its metadata before the package could see it. Where the manager sinks a `LazyFrame`
(dagster-polars' path managers), the package hands it the valid rows as one, and it records
only the path and the column types (`sinks_lazy_table`). So a step warns only where a manager may
still record a value the output's settings hide:

- previews of the rows: a manager handed a `DataFrame` that records them (a database manager
  with dagster-polars' type handler), or one the package does not know;
- the column types, as text, where a sensitive column's dtype can print its values (an `Enum`'s
  categories): dagster-polars' managers and DuckDB's Polars handler record them.

Each line names the output, the manager and what it records; the remedy is to bind the manager
inside `QuarantineAwareIOManager`, which filters what its managers record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg

from dagster_dataframely._model.shown_values import ShownValues
from dagster_dataframely._upstream import output_io_manager, running_step, step_output

from .manager_kinds.kind_choice import kind_of


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
        recorded = _recorded(manager, shown)
        if recorded:
            lines.append(_unfiltered_line(asset, shown, type(manager).__name__, recorded))
    if lines:
        context.log.warning(
            "dagster-dataframely cannot filter the metadata an IO manager records on the "
            "materialization of a table it writes itself, and these outputs hide values that "
            "metadata may show:"
            + "".join(f"\n  - {line}" for line in lines)
            + "\nTo keep those values out of the event log, bind the manager inside "
            "dd.QuarantineAwareIOManager(io_manager=...): it drops the rows that metadata "
            "holds with the samples off, and leaves the sensitive columns out of them and "
            "masks their types otherwise."
        )


def _recorded(manager: dg.IOManager, shown: ShownValues) -> list[str]:
    kind = kind_of(manager)
    previews = kind.previews()
    if previews is not None and not previews:
        return [
            "whatever it records (the package cannot see it; a preview or statistics hold values)"
        ]
    recorded = [f"`{key}` ({holds})" for key, holds in (previews or {}).items()]
    types = kind.types_key()
    if shown.typed and types is not None:
        columns = ", ".join(repr(column) for column in sorted(shown.typed))
        recorded.append(f"{types} (the column types, whose text shows the categories of {columns})")
    return recorded


def _unfiltered_line(asset: str, shown: ShownValues, manager: str, recorded: list[str]) -> str:
    hidden = [] if shown.rows else ["row_sample=0"]
    if shown.masked:
        hidden.append("sensitive columns " + ", ".join(repr(c) for c in sorted(shown.masked)))
    return f"{asset!r} ({'; '.join(hidden)}): {manager} records {', '.join(recorded)}"

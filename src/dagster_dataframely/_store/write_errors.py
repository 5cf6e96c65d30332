"""The failures of the package's own writes, with no value an output hides in their message.

A storage error quotes what it could not write: DuckDB names the value it could not convert
(`Could not convert string 'ann@example.com' to INT64`), Polars the cell it could not
encode. A step's error reaches the event log whole, its chain included. So where the package
writes through a manager itself (a quarantine, any write through `QuarantineAwareIOManager`)
for an output whose settings hide values (a sensitive column, or `row_sample=0`), a failure
that is not one of the package's own errors (whose messages hold no value) is raised as
`StorageWriteError`: the write, the manager and the error's type, without its message or chain.
Any other output's failure is raised as it was, with the package's note.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from dagster_dataframely._model.shown_values import ShownValues
from dagster_dataframely.errors import DagsterDataframelyError, StorageWriteError


@contextlib.contextmanager
def shown_write_failure(
    definition_metadata: Mapping[str, Any], *, asset: str, manager: str, note: str
) -> Iterator[None]:
    """Raise a failed write's error as the output lets the event log show it, with `note`.

    `definition_metadata` is the written output's (its `dataframely/event_log_values` says
    what it hides); `asset` and `manager` name the write in a withheld error.
    """
    try:
        yield
    except Exception as error:
        withheld = _withheld(error, definition_metadata, asset, manager)
        if withheld is None:
            error.add_note(note)
            raise
        withheld.add_note(note)
        raise withheld from None


def _withheld(
    error: Exception, definition_metadata: Mapping[str, Any], asset: str, manager: str
) -> StorageWriteError | None:
    if isinstance(error, DagsterDataframelyError):
        return None
    shown = ShownValues.from_definition_metadata(definition_metadata)
    if shown is None or not shown.hides_values:
        return None
    if shown.masked:
        columns = ", ".join(repr(column) for column in sorted(shown.masked))
        reason = f"the asset marks {columns} sensitive"
    else:
        reason = "the asset's samples are off (row_sample=0)"
    kind = type(error)
    return StorageWriteError(asset, manager, f"{kind.__module__}.{kind.__qualname__}", reason)

"""Keep a direct invocation's quarantine in memory instead of writing it to a file.

A direct invocation has no IO manager, so `dd.asset` writes its invalid rows to a parquet file
under `DAGSTER_DATAFRAMELY_QUARANTINE_DIR`. A unit test wants the rows themselves, with no
directory to set up and nothing left on disk. Inside `capturing_quarantine()` the writer keeps
the frame instead. The sink is a context variable, so it is seen only by the code that set it
(its thread, its asyncio task) and is gone when the block ends: two tests running side by side
never see each other's rows, and nothing leaks into the next test.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import dagster as dg
import polars as pl

from dagster_dataframely._model.keys import quarantine_key

from .quarantine_writer import QuarantineWriter

MEMORY_SCHEME = "memory://"
"""The scheme of the address a captured quarantine reports: nothing outside the test reads it."""


@dataclass(slots=True)
class CapturedQuarantine:
    """What the writer received inside one `capturing_quarantine()` block."""

    frames: list[pl.DataFrame] = field(default_factory=list)
    """Every frame written, in order; `dd.asset` writes at most one per call."""
    by_key: dict[dg.AssetKey, list[pl.DataFrame]] = field(default_factory=dict)
    """The same frames by the asset whose invalid rows they are: a multi-asset writes one per
    output."""


_SINK: ContextVar[CapturedQuarantine | None] = ContextVar(
    "dagster_dataframely_captured_quarantine", default=None
)


@contextmanager
def capturing_quarantine() -> Iterator[CapturedQuarantine]:
    """Within the block, a direct invocation's quarantine is kept in memory, not written."""
    captured = CapturedQuarantine()
    token = _SINK.set(captured)
    try:
        yield captured
    finally:
        _SINK.reset(token)


def is_capturing() -> bool:
    """Whether a direct invocation here would keep its quarantine in memory."""
    return _SINK.get() is not None


def capturing_writer(key: dg.AssetKey, partition_key: str | None) -> QuarantineWriter | None:
    """A writer into the active capture, or None outside `capturing_quarantine()`.

    Read when the writer is made, at the start of the call, so a capture that ends while a
    call's generator is still open does not redirect it half way.
    """
    captured = _SINK.get()
    if captured is None:
        return None
    address = MEMORY_SCHEME + quarantine_key(key).to_user_string()
    if partition_key is not None:
        address += f"/{partition_key}"

    def keep(frame: pl.DataFrame) -> str:
        captured.frames.append(frame)
        captured.by_key.setdefault(key, []).append(frame)
        return address

    return keep

"""Writing through an IO manager whose `handle_output` is a generator."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._store.manager_kinds.router import write_through


class YieldingIOManager(dg.IOManager):
    """Stores only as its generator runs, as a manager yielding its metadata does."""

    def __init__(self) -> None:
        self.stored: list[Any] = []

    def handle_output(self, context: dg.OutputContext, obj: Any) -> Iterator[Any]:  # type: ignore[override]
        self.stored.append(obj)
        yield dg.MetadataValue.int(len(self.stored))

    def load_input(self, context: dg.InputContext) -> Any:
        return self.stored[-1]


def test_a_yielding_manager_is_run_to_its_end() -> None:
    manager = YieldingIOManager()
    frame = pl.DataFrame({"a": [1]})
    write_through(manager, dg.build_output_context(), frame)
    assert manager.stored == [frame]

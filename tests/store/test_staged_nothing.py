"""A staged write of nothing places nothing: the table's place stays as it was.

dagster-polars writes no file for an `Optional` output that returned `None`; the staged copy
of such a manager then has no staging file to rename or upload, and must not fail on it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from upath import UPath

from dagster_dataframely._store.staged_writes import STAGING_PREFIX, staged


class SkipsNone(dg.UPathIOManager):
    """Writes parquet, and nothing at all for `None`, as dagster-polars does."""

    extension = ".parquet"

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        if obj is not None:
            obj.write_parquet(path.path)

    def load_from_path(self, context: dg.InputContext, path: UPath) -> pl.DataFrame:
        return pl.read_parquet(path.path)


@pytest.mark.parametrize("base", ["local", "memory"])
def test_a_none_output_leaves_the_stored_table_and_no_staging_file(
    tmp_path: Path, base: str
) -> None:
    root = UPath(tmp_path) if base == "local" else UPath(f"memory://{tmp_path.name}")
    manager = staged(SkipsNone(base_path=root), "SkipsNone (the io_manager argument)")
    context = dg.build_output_context(asset_key="table")
    frame = pl.DataFrame({"a": [1, 2]})
    manager.handle_output(context, frame)

    manager.handle_output(context, None)

    stored = root / "table.parquet"
    with stored.open("rb") as file:
        assert pl.read_parquet(file)["a"].to_list() == [1, 2]
    assert not any(path.name.startswith(STAGING_PREFIX) for path in root.iterdir())

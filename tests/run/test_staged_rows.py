"""The rows a streamed split stages: on local disk once, and reported as rows in memory are.

A table larger than memory is staged to one local file; writing its valid rows to a second one
would double the local disk the run needs and add a full write. The report of staged rows (the
count, the first rows, the statistics) is computed without holding them, a text column's
distinct values in hash parts, one pass each, and must equal the report of the same rows held
in memory, value for value.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from polars.testing.parametric import column, dataframes

from dagster_dataframely._model.schema import read_schema
from dagster_dataframely._run.report import distinct
from dagster_dataframely._run.report.statistics import staged_statistics, statistics_tables
from dagster_dataframely._run.split.staging import Staging, scan_staged
from dagster_dataframely._run.split.streaming import streamed_split
from dagster_dataframely._run.split.valid_rows import first_rows, row_count
from dagster_dataframely.errors import StreamingStagingError


class Lines(dy.Schema):
    """A row-by-row rule and a whole-frame one, so both kinds of invalid row are staged."""

    sku = dy.String(nullable=False, regex=r"^S-[0-9]+$")
    amount = dy.Float64(nullable=True, min=0)

    @dy.rule()
    def sku_is_unique(cls) -> pl.Expr:
        return pl.col("sku").is_unique()


def _tables(tables: dict[str, dg.TableMetadataValue]) -> dict[str, Any]:
    return {
        group: (table.schema, [dict(record.data) for record in table.records])
        for group, table in tables.items()
    }


def test_the_returned_rows_are_staged_to_one_file_and_the_valid_rows_read_from_it() -> None:
    frame = pl.LazyFrame(
        {"sku": ["S-3", "S-1", "bad", "S-1", "S-2"], "amount": [1.0, 2.0, 3.0, 4.0, -5.0]}
    )
    staging = Staging()
    try:
        valid, failures = streamed_split(read_schema(Lines), frame, staging, asset="lines")
        assert staging.directory is not None
        staged = sorted(p.name for p in staging.directory.iterdir())
        (staged_file,) = staging.directory.iterdir()
        staged_columns = list(pl.read_parquet_schema(staged_file))
        assert_frame_equal(valid.collect(), pl.DataFrame({"sku": ["S-3"], "amount": [1.0]}))
    finally:
        staging.remove()
    assert len(staged) == 1, f"the rows were staged more than once: {staged}"
    # The five column rules were evaluated while staging, each into a column of its own; the
    # whole-frame rule `sku_is_unique` was not.
    assert [c for c in staged_columns if c.startswith("dy_rule_")] == [
        f"dy_rule_{i}" for i in range(5)
    ]
    assert failures.outcomes["sku"].to_list() == ["S-1", "bad", "S-1", "S-2"]


FRAMES = dataframes(
    [
        column("text", dtype=pl.String, strategy=st.sampled_from(["a", "b", "", "cc", "ddd"])),
        column("id", dtype=pl.String),
        column("blob", dtype=pl.Binary),
    ],
    max_size=30,
) | dataframes(
    max_cols=6,
    max_size=30,
    allowed_dtypes=[pl.String, pl.Int32, pl.Float64, pl.Date, pl.Boolean, pl.Datetime("us")],
    allow_time_zones=False,
)


@settings(max_examples=60, deadline=None)
@given(frame=FRAMES, per_pass=st.sampled_from([1, 3, distinct.DISTINCT_PER_PASS]))
def test_staged_rows_are_reported_as_the_same_rows_in_memory(
    tmp_path_factory: Any, frame: pl.DataFrame, per_pass: int
) -> None:
    path = Path(tmp_path_factory.mktemp("staged")) / "rows.parquet"
    # The valid rows are a filter of the staged ones, as `streamed_split` returns them.
    frame.with_columns(dy_passed=pl.int_range(pl.len()) % 3 != 1).write_parquet(path)
    staged = scan_staged(path).filter("dy_passed").drop("dy_passed")
    in_memory = staged.collect()

    # A distinct count cut into as many passes as values, or three values a pass, or one pass.
    with mock.patch.object(distinct, "DISTINCT_PER_PASS", per_pass):
        statistics = staged_statistics(staged)
    assert _tables(statistics) == _tables(statistics_tables(in_memory))
    assert row_count(staged) == in_memory.height
    assert_frame_equal(first_rows(staged, 4), in_memory.head(4))


def test_a_staging_directory_that_cannot_be_made_is_a_package_error(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """Not Python's bare `FileNotFoundError`: the error names the directory and how to move it."""
    missing = tmp_path / "no-such-directory"
    monkeypatch.setattr(tempfile, "tempdir", str(missing))  # as TMPDIR=<missing> does
    staging = Staging()
    frame = pl.LazyFrame({"sku": ["S-1"], "amount": [1.0]})
    with pytest.raises(StreamingStagingError) as raised:
        streamed_split(read_schema(Lines), frame, staging, asset="lines")
    assert raised.value.asset == "lines"
    assert raised.value.path == str(missing)
    assert "TMPDIR" in str(raised.value)
    assert staging.directory is None
    assert not missing.exists()

"""How often a suggestion reads its source, and that bounded memory changes no result."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.io.plugins import register_io_source

import dagster_dataframely as dd
from dagster_dataframely._suggest import table_profile

from .suggested_code import load_schema


def _counting_source(data: pl.DataFrame, reads: list[list[str] | None]) -> pl.LazyFrame:
    """A LazyFrame that records each scan of its rows, as a table larger than memory is read."""

    def scan(
        with_columns: list[str] | None, predicate: Any, n_rows: int | None, batch_size: int | None
    ) -> Iterator[pl.DataFrame]:
        reads.append(with_columns)
        selected = data if with_columns is None else data.select(with_columns)
        for start in range(0, selected.height, 100):
            yield selected.slice(start, 100)

    return register_io_source(scan, schema=data.schema)


@pytest.mark.parametrize("ordered", [True, False], ids=["id in order", "id shuffled"])
def test_a_key_above_the_budget_is_proved_by_its_order_or_counted_in_parts(
    ordered: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # NOTE: 1,000 values against a budget of 500: too many for one exact count.
    monkeypatch.setattr(table_profile, "MAX_VALUES_PER_PASS", 500)
    ids = pl.Series("order_id", range(1_000))
    data = pl.DataFrame(
        {
            "order_id": ids if ordered else ids.shuffle(seed=3),
            "channel": ["web", "shop", "phone", "app"] * 250,
            "customer": [f"C{index % 300:04d}" for index in range(1_000)],
        }
    )
    reads: list[list[str] | None] = []
    code = dd.suggest_schema(_counting_source(data, reads), name="Orders")
    assert load_schema(code, "Orders").primary_key() == ["order_id"]
    key_reads = [columns for columns in reads if columns is None or "order_id" in columns]
    # NOTE: the profile, the order check, then (shuffled) two parts of 500 values each.
    assert key_reads == [None, ["order_id"]] + ([] if ordered else [["order_id"]] * 2)


def _tables() -> st.SearchStrategy[pl.DataFrame]:
    # NOTE: few distinct values per column, so that keys of one, two or three columns and
    # tables without any key all come up.
    return st.integers(20, 120).flatmap(
        lambda rows: st.fixed_dictionaries(
            {
                name: st.lists(st.integers(0, size), min_size=rows, max_size=rows)
                for name, size in [("a", 200), ("b", 6), ("c", 4), ("d", 3)]
            }
        ).map(lambda columns: pl.DataFrame(columns).with_columns(pl.col("d").cast(pl.String)))
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=_tables())
def test_exact_counts_in_parts_give_the_same_suggestion(data: pl.DataFrame) -> None:
    in_one = dd.suggest_schema(data, name="Table")
    with pytest.MonkeyPatch.context() as patch:
        # NOTE: a budget of a few values splits every exact count into many parts.
        patch.setattr(table_profile, "MAX_VALUES_PER_PASS", 7)
        in_parts = dd.suggest_schema(data, name="Table")
    assert in_parts == in_one
    key = load_schema(in_one, "Table").primary_key()
    if key:
        assert data.select(key).is_unique().all()


def test_a_repeat_across_row_groups_is_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(table_profile, "MAX_VALUES_PER_PASS", 50)
    # NOTE: the id increases but for one value repeated on both sides of a row group's edge,
    # where a check of each value against the previous one must still see it.
    ids = [*range(100), 99, *range(100, 199)]
    table = tmp_path / "lines.parquet"
    pl.DataFrame({"order_id": ids, "line": [0] * 100 + [1] + [0] * 99}).write_parquet(
        table, row_group_size=100
    )
    code = dd.suggest_schema(table, name="Lines")
    assert load_schema(code, "Lines").primary_key() == ["order_id", "line"]

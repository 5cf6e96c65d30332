"""The table-wide key check's result stays bounded whatever the table holds."""

from __future__ import annotations

import dagster as dg
import polars as pl

from dagster_dataframely._model.shown_values import ShownValues
from dagster_dataframely._run.checks.keys_across_partitions import (
    LISTED_PARTITIONS,
    _result,
    repeated_in_frames,
)


def test_the_partitions_listed_are_bounded_and_all_are_counted() -> None:
    # One key stored in 150 hourly partitions: 150 partitions hold a repeated key.
    hours = [f"2026-01-01-{hour:04d}" for hour in range(150)]
    scans = {hour: pl.LazyFrame({"order_id": ["A-1"]}) for hour in hours}
    shown = ShownValues(rows=True, masked=frozenset(), typed=frozenset())
    report = repeated_in_frames(scans, ("order_id",), shown, max_samples=0)

    result = _result(dg.AssetKey("orders"), [report])

    assert result.metadata["dy_repeated_keys"].value == 1
    assert result.metadata["dy_repeated_key_partitions"].value == sorted(hours)[:LISTED_PARTITIONS]
    assert result.metadata["dy_repeated_key_partition_count"].value == 150
    assert not result.passed

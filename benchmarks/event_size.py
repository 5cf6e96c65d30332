"""How large a run's events get when the rows hold huge values, per IO manager.

Not a test: it prints the figures the Guarantees page quotes. One `dd.asset(quarantine=True)`
returns two rows whose text, binary and nested cells each hold `--cell-mb` MB, one of them
invalid, and is materialized through `PolarsParquetIOManager` (bare and inside
`QuarantineAwareIOManager`) and `DuckDBPolarsIOManager`. For each run it prints, from the
instance's stored event log, the serialized size of the largest event, of the largest event
once a bare manager's own `table` and `stats` are left out (what the package controls), and of
the whole log.

    python -m benchmarks.event_size --cell-mb 20
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
from dagster._serdes import serialize_value
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

MANAGER_VALUE_KEYS = ("table", "stats")


class Blobs(dy.Schema):
    id = dy.String(primary_key=True)
    note = dy.String()
    payload = dy.Binary()
    parts = dy.List(dy.String())
    amount = dy.Float64(min=0.0)


def _frame(cell_bytes: int) -> pl.DataFrame:
    huge = "x" * cell_bytes
    return pl.DataFrame(
        {
            "id": ["b-1", "b-2"],
            "note": [huge, huge],
            "payload": [huge.encode(), huge.encode()],
            "parts": [[huge], [huge]],
            "amount": [1.0, -1.0],
        },
        schema={
            "id": pl.String,
            "note": pl.String,
            "payload": pl.Binary,
            "parts": pl.List(pl.String),
            "amount": pl.Float64,
        },
    )


def _managers(root: Path) -> dict[str, Any]:
    return {
        "parquet": PolarsParquetIOManager(base_dir=str(root / "p")),
        "wrapped parquet": dd.QuarantineAwareIOManager(
            io_manager=PolarsParquetIOManager(base_dir=str(root / "w"))
        ),
        "duckdb": DuckDBPolarsIOManager(database=str(root / "d.duckdb")),
    }


def _package_part(entry: dg.EventLogEntry) -> int:
    """The entry's serialized size without a bare manager's `table` and `stats`."""
    event = entry.dagster_event
    data = event.event_specific_data if event is not None else None
    metadata = getattr(getattr(data, "materialization", data), "metadata", None)
    if not metadata or not any(key in metadata for key in MANAGER_VALUE_KEYS):
        return len(serialize_value(entry))
    return sum(
        len(serialize_value(value))
        for key, value in metadata.items()
        if key not in MANAGER_VALUE_KEYS
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell-mb", type=float, default=20.0, help="MB in each huge cell")
    arguments = parser.parse_args()
    frame = _frame(int(arguments.cell_mb * 1_000_000))

    @dd.asset(Blobs, quarantine=True)
    def blobs() -> pl.DataFrame:
        return frame

    print(f"two rows, {arguments.cell_mb:g} MB in each text, binary and nested cell")
    print(f"{'manager':<16} {'largest event':>14} {'package part':>13} {'whole log':>12}")
    with tempfile.TemporaryDirectory(prefix="dy-event-size-") as directory:
        for name, manager in _managers(Path(directory)).items():
            instance = dg.DagsterInstance.ephemeral()
            result = dg.materialize([blobs], resources={"io_manager": manager}, instance=instance)
            assert result.success
            entries = list(instance.all_logs(result.run_id))
            sizes = [len(serialize_value(entry)) for entry in entries]
            own = max(_package_part(entry) for entry in entries)
            print(f"{name:<16} {max(sizes):>14,} {own:>13,} {sum(sizes):>12,}")
            instance.dispose()
    print("(serialized bytes, as the instance stores each event)")


if __name__ == "__main__":
    main()

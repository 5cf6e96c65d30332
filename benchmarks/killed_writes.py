"""Kill a real table write at a random moment with SIGKILL, and count what the table is afterwards.

Not a test: it prints the figures the Guarantees page quotes. For each manager
(`PolarsParquetIOManager`, `DuckDBPolarsIOManager`), with and without
`QuarantineAwareIOManager(staged_writes=True)`, and for each of `--kills` rounds:

1. this process writes a small first version of `orders` (2 valid rows, 1 invalid);
2. a child process (`integration_tests.interrupted_write`, `"then": "continue"`) writes a
   second version of `--rows` rows; a hook touches a marker file when the table's write starts
   (the parquet serialisation, or DuckDB's delete of the slice) and lets it run on;
3. this process sleeps a random time, uniform between 0 and 1.2 times the write's duration
   (from the marker to the rows handed over, measured in a first, unkilled round, so the
   window also covers the rename or commit after it), then sends SIGKILL;
4. the table is read with Polars or DuckDB directly and counted as the old version, the new
   version, empty, unreadable, or anything else ("partial").

The last good table survives when every round ends "old" or "new".

    python -m benchmarks.killed_writes --kills 10 --rows 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import duckdb
import polars as pl
from integration_tests.interrupted_write import DUCKDB, PARQUET, TABLE, version, write_version

ROOT = Path(__file__).resolve().parent.parent
OUTCOMES = ("old", "new", "empty", "unreadable", "partial")


def _round(kind: str, staged: bool, rows: int, delay: float | None) -> tuple[str, float]:
    """One write of the second version, killed `delay` seconds after it starts (None: never).

    Returns the outcome and, for a round not killed, the seconds from the marker to the rows
    handed over.
    """
    with tempfile.TemporaryDirectory(prefix="dy-killed-") as directory:
        root = Path(directory)
        warehouse, restricted = root / "warehouse", root / "restricted"
        warehouse.mkdir()
        restricted.mkdir()
        first = version("first")
        assert write_version(kind, warehouse, restricted, first, staged=staged).success
        marker = root / "started"
        arguments = {
            "kind": kind,
            "stop_in": TABLE,
            "then": "continue",
            "rows": rows,
            "warehouse": str(warehouse),
            "restricted": str(restricted),
            "marker": str(marker),
            "staged": staged,
        }
        child = subprocess.Popen(
            [sys.executable, "-m", "integration_tests.interrupted_write", json.dumps(arguments)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 180
            while not marker.exists():
                if child.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the child never started its write ({child.returncode})")
                time.sleep(0.002)
            if delay is None:
                child.wait(timeout=300)
                done = marker.with_name(marker.name + ".done")
                elapsed = done.stat().st_mtime - marker.stat().st_mtime
            else:
                time.sleep(delay)
                if child.poll() is None:
                    os.kill(child.pid, signal.SIGKILL)
                child.wait(timeout=60)
                elapsed = delay
        finally:
            if child.poll() is None:
                os.kill(child.pid, signal.SIGKILL)
                child.wait(timeout=60)
        return _outcome(kind, warehouse, first, rows), elapsed


def _outcome(kind: str, warehouse: Path, first: pl.DataFrame, rows: int) -> str:
    try:
        if kind == PARQUET:
            table = pl.read_parquet(warehouse / "orders.parquet")
        else:
            with duckdb.connect(str(warehouse / "w.duckdb"), read_only=True) as connection:
                table = connection.execute("select * from public.orders").pl()
    except Exception:
        return "unreadable"
    ids = set(table["order_id"])
    if ids == set(first.filter(pl.col("amount") >= 0)["order_id"]):
        return "old"
    if table.height == 0:
        return "empty"
    return "new" if table.height == rows else "partial"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=12, help="rounds per manager and mode")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the second version")
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    chance = random.Random(options.seed)
    print(f"{options.kills} kills per line, second version of {options.rows} rows")
    print(f"{'manager':<10} {'staged':<7} {'write s':>7}  " + "  ".join(OUTCOMES))
    for kind in (PARQUET, DUCKDB):
        for staged in (False, True):
            outcome, duration = _round(kind, staged, options.rows, None)
            assert outcome == "new", f"the unkilled write ended {outcome}"
            counts = Counter(
                _round(kind, staged, options.rows, chance.uniform(0, 1.2 * duration))[0]
                for _ in range(options.kills)
            )
            figures = "  ".join(f"{counts[name]:>{len(name)}}" for name in OUTCOMES)
            print(f"{kind:<10} {staged!s:<7} {duration:>7.2f}  {figures}")


if __name__ == "__main__":
    main()

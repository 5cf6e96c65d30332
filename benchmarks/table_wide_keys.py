"""Peak memory and time of the table-wide key check against reading the whole table.

`keys_across_partitions=True` reads only the key column of each stored partition, lazily
(`pl.scan_parquet(...).select(key)`), takes each partition's distinct keys and groups them on
the streaming engine: its memory follows the number of keys, not the table's width. This
writes `--partitions` parquet files of `--rows` rows each (dagster-polars' layout, one file per
partition), an `Int64` key shuffled over the whole table plus eight payload columns, with 10
keys repeated across two partitions, and measures, each in a fresh interpreter (`--worker`)
that resets the kernel's high-water mark (`/proc/self/clear_refs`) and reports `VmHWM` minus
the RSS before it:

- `check`: the check's own computation (`repeated_in_frames` over the scans
  `stored_partition_scans` builds);
- `whole table`: `pl.read_parquet` of every file, then the same grouping in memory.

Both must find the same 10 repeated keys, or the script stops. The whole-table read is stopped
when its resident memory passes `--whole-table-limit-gib` (16 by default, polled every 50 ms),
and reported as such: where the table does not fit (100 partitions of 1M rows need about
32 GiB), that beats drawing the kernel's out-of-memory killer onto a shared machine.

    .venv/bin/python -m benchmarks.table_wide_keys [--partitions 100] [--rows 1000000] [--quick]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from benchmarks.streaming import _status

ROOT = Path(__file__).resolve().parent.parent
REPEATED = 10
"""Keys of the first partition written into the second one too."""


def write_table(partitions: int, rows: int, folder: Path) -> None:
    """One parquet file per partition; the keys a permutation of the whole table's rows."""
    generator = np.random.default_rng(39)
    keys = generator.permutation(partitions * rows)
    for index in range(partitions):
        part = keys[index * rows : (index + 1) * rows].copy()
        if index == 1:
            part[:REPEATED] = keys[:REPEATED]
        payload = {f"amount_{n}": generator.random(rows) for n in range(4)} | {
            f"note_{n}": generator.integers(0, 10**12, rows).astype(str) for n in range(4)
        }
        frame = pl.DataFrame({"order_id": part, **payload})
        frame.write_parquet(folder / f"p{index:04d}.parquet")


def worker(variant: str, folder: Path) -> dict[str, Any]:
    """One measure in this interpreter: its peak rise, time and the repeated keys found."""
    from dagster_dataframely._model.shown_values import ShownValues
    from dagster_dataframely._run.checks.keys_across_partitions import repeated_in_frames

    shown = ShownValues(rows=True, masked=frozenset())
    files = sorted(folder.glob("*.parquet"))
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    before = _status("VmRSS")
    started = time.perf_counter()
    if variant == "check":
        scans = {path.stem: pl.scan_parquet(path).select("order_id") for path in files}
        found = repeated_in_frames(scans, ("order_id",), shown, 5).count
    else:
        whole = pl.concat(
            [pl.read_parquet(path).with_columns(part=pl.lit(path.stem)) for path in files]
        )
        spread = whole.group_by("order_id").agg(pl.col("part").n_unique())
        found = spread.filter(pl.col("part") > 1).height
    seconds = time.perf_counter() - started
    return {"rise": _status("VmHWM") - before, "seconds": seconds, "found": found}


def _run_worker(variant: str, folder: Path, limit_gib: float) -> dict[str, Any] | None:
    """The worker's result, or None when the whole-table read outgrew its memory limit."""
    command = [sys.executable, "-m", "benchmarks.table_wide_keys", "--worker", variant]
    with subprocess.Popen(
        [*command, str(folder)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        while process.poll() is None:
            if variant == "whole table" and _resident(process.pid) > limit_gib * 2**30:
                process.kill()
                process.wait()
                return None
            time.sleep(0.05)
        stdout, stderr = process.communicate()
    if process.returncode:
        raise RuntimeError(f"worker {variant} failed:\n{stderr[-4000:]}")
    result: dict[str, Any] = json.loads(stdout.splitlines()[-1])
    return result


def _resident(pid: int) -> int:
    """A live process's resident memory in bytes (0 once it has ended)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def main(partitions: int, rows: int, limit_gib: float) -> None:
    with tempfile.TemporaryDirectory(prefix="table-wide-keys-bench-") as name:
        folder = Path(name)
        started = time.perf_counter()
        write_table(partitions, rows, folder)
        written = time.perf_counter() - started
        size = sum(path.stat().st_size for path in folder.glob("*.parquet"))
        measured = {
            variant: _run_worker(variant, folder, limit_gib) for variant in ("check", "whole table")
        }
    print(
        f"{partitions} partitions of {rows:,} rows (9 columns, {size / 2**20:,.0f} MiB of "
        f"parquet, written in {written:.0f} s)"
    )
    print("| Reading | Peak above start | Time | Repeated keys |")
    print("|---|---:|---:|---:|")
    for variant, result in measured.items():
        if result is None:
            print(f"| {variant} | stopped above {limit_gib:g} GiB | - | - |")
            continue
        assert result["found"] == REPEATED, f"{variant} found {result['found']} keys"
        rise, seconds = result["rise"] / 2**20, result["seconds"]
        print(f"| {variant} | {rise:,.0f} MiB | {seconds:.1f} s | {result['found']} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="10 partitions of 100,000 rows")
    parser.add_argument("--whole-table-limit-gib", type=float, default=16.0)
    parser.add_argument("--worker", nargs=2, metavar=("VARIANT", "FOLDER"))
    arguments = parser.parse_args()
    if arguments.worker:
        print(json.dumps(worker(arguments.worker[0], Path(arguments.worker[1]))))
    elif arguments.quick:
        main(10, 100_000, arguments.whole_table_limit_gib)
    else:
        main(arguments.partitions, arguments.rows, arguments.whole_table_limit_gib)

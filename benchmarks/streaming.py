"""Peak memory and time of `dd.asset(streaming=True)` against today's in-memory path.

The asset returns `pl.scan_parquet` over a folder of parquet files and dagster-polars'
`PolarsParquetIOManager` stores it; `dg.materialize` runs it in process. Four variants:

- `today`: `streaming=False`, the frame collected once and split with `Schema.filter`;
- `streaming`: `streaming=True`, the frame staged once to a local file and split in
  streaming passes, the valid rows sunk by the IO manager;

each with the demo's `Orders` schema (13 columns, composite primary key, one `.over()` rule) and
with `OrdersNoKey`, the same schema without its primary key. The frame is the demo's
`order_lines(rows, invalid_share=0.014)` written in files of `--file-rows` rows, each file's rows
shuffled (unsorted keys), ids unique across files.

Each run is a fresh interpreter (`--worker`) that imports everything, resets the kernel's
high-water mark (`/proc/self/clear_refs`), materializes once and reports `VmHWM` minus the RSS
before the run, and the run's wall time. Runs are interleaved (today, streaming, today, ...)
and the table shows the median of `--repeat` runs of each. Targets at 30M rows: streaming peaks
at most 1/2 of today's with the primary key, 1/4 without it, in at most 1.3x today's time.

    .venv/bin/python -m benchmarks.streaming [--rows 30000000] [--repeat 3] [--file-rows 1000000]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "examples") not in sys.path:  # the demo package is not installed, only tested
    sys.path.insert(0, str(ROOT / "examples"))

import dagster as dg  # noqa: E402
import dataframely as dy  # noqa: E402
import polars as pl  # noqa: E402
from dagster_polars import PolarsParquetIOManager  # noqa: E402

import dagster_dataframely as dd  # noqa: E402
from dagster_dataframely_demo._data import order_lines  # noqa: E402
from dagster_dataframely_demo.schema import Orders  # noqa: E402

INVALID_SHARE = 0.014
VARIANTS = [
    ("Orders", False),
    ("Orders", True),
    ("OrdersNoKey", False),
    ("OrdersNoKey", True),
]


class OrdersNoKey(Orders):
    """The demo's `Orders` without its primary key: every other rule is the same."""

    order_id = dy.String(regex=r"^ORD-[0-9]{6,8}$")
    line_no = dy.Int16(min=1)


SCHEMAS: dict[str, type[dy.Schema]] = {"Orders": Orders, "OrdersNoKey": OrdersNoKey}


def write_source(rows: int, file_rows: int, folder: Path) -> None:
    """`rows` order lines in files of `file_rows`, shuffled within each file, ids unique.

    `file_rows` is even, so each order's two lines are in one file.
    """
    start = 0
    while start < rows:
        size = min(file_rows, rows - start)
        index = pl.int_range(pl.len(), dtype=pl.Int64) + start
        chunk = order_lines(size, seed=start // file_rows, invalid_share=INVALID_SHARE)
        chunk = chunk.with_columns(
            order_id=pl.format("ORD-{}", (index // 2).cast(pl.String).str.zfill(6))
        )
        chunk.sample(fraction=1.0, shuffle=True, seed=start).write_parquet(
            folder / f"part-{start // file_rows:04d}.parquet"
        )
        start += size


def _status(field: str) -> int:
    """A `/proc/self/status` field in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def worker(schema_name: str, streaming: bool, source: Path, out: Path) -> dict[str, float]:
    """One materialization in this interpreter: its peak above the RSS before it, its time."""

    @dd.asset(SCHEMAS[schema_name], quarantine=True, streaming=streaming, name="orders")
    def orders() -> pl.LazyFrame:
        return pl.scan_parquet(source / "*.parquet")

    manager = PolarsParquetIOManager(base_dir=str(out))
    instance = dg.DagsterInstance.ephemeral()
    quiet = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    before = _status("VmRSS")
    started = time.perf_counter()
    result = dg.materialize(
        [orders], resources={"io_manager": manager}, instance=instance, run_config=quiet
    )
    seconds = time.perf_counter() - started
    peak = _status("VmHWM")
    assert result.success
    table = pl.scan_parquet(out / "orders.parquet").select(pl.len()).collect().item()
    quarantine = pl.scan_parquet(out / "orders_quarantine.parquet").select(pl.len()).collect()
    return {
        "rise": peak - before,
        "seconds": seconds,
        "table": table,
        "quarantine": quarantine.item(),
    }


def _run_worker(schema_name: str, streaming: bool, source: Path) -> dict[str, float]:
    out = Path(tempfile.mkdtemp(prefix="streaming-bench-out-"))
    command = [
        sys.executable,
        "-m",
        "benchmarks.streaming",
        "--worker",
        schema_name,
        str(streaming),
        str(source),
        str(out),
    ]
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if done.returncode:
        raise RuntimeError(f"worker {schema_name}/{streaming} failed:\n{done.stderr[-4000:]}")
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def _mib(value: float) -> str:
    return f"{value / 2**20:,.0f} MiB"


def main(rows: int, repeat: int, file_rows: int) -> None:
    with tempfile.TemporaryDirectory(prefix="streaming-bench-") as folder:
        source = Path(folder)
        write_source(rows, file_rows, source)
        runs: dict[tuple[str, bool], list[dict[str, float]]] = {v: [] for v in VARIANTS}
        for _ in range(repeat):
            for schema_name, streaming in VARIANTS:
                runs[schema_name, streaming].append(_run_worker(schema_name, streaming, source))
    print(f"{rows:,} rows in files of {file_rows:,}; median of {repeat}, interleaved")
    print("| Schema | Path | Peak above start | Time | Peak vs today | Time vs today |")
    print("|---|---|---:|---:|---:|---:|")
    for schema_name, streaming in VARIANTS:
        measured = runs[schema_name, streaming]
        today = runs[schema_name, False]
        rise = statistics.median(r["rise"] for r in measured)
        seconds = statistics.median(r["seconds"] for r in measured)
        today_rise = statistics.median(r["rise"] for r in today)
        today_seconds = statistics.median(r["seconds"] for r in today)
        counts = {(r["table"], r["quarantine"]) for r in measured + today}
        assert len(counts) == 1, f"the paths stored different row counts: {counts}"
        print(
            f"| {schema_name} | {'streaming' if streaming else 'today'} | {_mib(rise)} "
            f"| {seconds:.1f} s | {rise / today_rise:.2f}x | {seconds / today_seconds:.2f}x |"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=30_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--file-rows", type=int, default=1_000_000)
    parser.add_argument("--worker", nargs=4, metavar=("SCHEMA", "STREAMING", "SOURCE", "OUT"))
    arguments = parser.parse_args()
    if arguments.worker:
        name, flag, source_dir, out_dir = arguments.worker
        print(json.dumps(worker(name, flag == "True", Path(source_dir), Path(out_dir))))
    else:
        main(arguments.rows, arguments.repeat, arguments.file_rows)

"""What handing a bare dagster-polars manager a `LazyFrame` costs, against a `DataFrame`.

An output whose values stay out of the event log (a column marked `pii`, or `row_sample=0`)
hands `PolarsParquetIOManager` its valid rows as a `LazyFrame` over the rows in memory: the
manager sinks it to the same file and records only the path and the column types, where a
`DataFrame` also gets its first rows and `DataFrame.describe()` recorded. Two measurements,
each at every `--rows`, the two hand-offs interleaved and the median of `--repeat` shown; the
script stops if the two files of a measurement differ in a byte:

- `hand-off`: the manager's `handle_output` alone, on the demo's order lines (valid rows,
  shuffled: unsorted keys), given the `DataFrame` under an eager output type and the same
  rows as `.lazy()` under the lazy one;
- `run`: `dg.materialize` of a `dd.asset` with the demo's 13-column `Orders` schema (its
  `customer_email` not marked sensitive, so nothing is hidden) through the bare manager, with
  `row_sample=0` (the `LazyFrame` hand-off) and without (the `DataFrame` one): everything a
  run does around the hand-off, which differs only in the five rows of the valid sample.

    .venv/bin/python -m benchmarks.lazy_handoff [--rows 1000000 5000000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
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

EAGER = dg.DagsterType(lambda _, v: True, name="Eager", typing_type=pl.DataFrame)
LAZY = dg.DagsterType(lambda _, v: True, name="Lazy", typing_type=pl.LazyFrame)


class OrdersUnmarked(Orders):
    """The demo's `Orders` with `customer_email` not marked sensitive: nothing is hidden."""

    customer_email = dy.String(regex=r"^[^@\s]+@[^@\s]+\.[a-z]+$")


def _rows(rows: int) -> pl.DataFrame:
    """The demo's order lines, every one valid, in random order."""
    return order_lines(rows).sample(fraction=1.0, shuffle=True, seed=7)


def _handoff(frame: pl.DataFrame, lazy: bool, directory: Path) -> Callable[[], float]:
    """One `handle_output` of the bare manager: the frame, or the same rows as a `LazyFrame`."""

    def run() -> float:
        with dg.build_resources(
            {"io_manager": PolarsParquetIOManager(base_dir=str(directory))}
        ) as resources:
            manager = resources.io_manager
            context = dg.build_output_context(
                asset_key=dg.AssetKey("orders"), dagster_type=LAZY if lazy else EAGER
            )
            started = time.perf_counter()
            manager.handle_output(context, frame.lazy() if lazy else frame)
            return time.perf_counter() - started

    return run


def _materialize(frame: pl.DataFrame, lazy: bool, directory: Path) -> Callable[[], float]:
    """One run of a `dd.asset` through the bare manager: samples off (lazy) or on."""

    @dd.asset(OrdersUnmarked, name="orders", quarantine=True, row_sample=0 if lazy else None)
    def orders() -> pl.DataFrame:
        return frame

    resources = {"io_manager": PolarsParquetIOManager(base_dir=str(directory))}

    def run() -> float:
        started = time.perf_counter()
        dg.materialize(
            [orders],
            resources=resources,
            instance=dg.DagsterInstance.ephemeral(),
            run_config={"loggers": {"console": {"config": {"log_level": "ERROR"}}}},
        )
        return time.perf_counter() - started

    return run


def _measure(name: str, frame: pl.DataFrame, repeat: int, root: Path) -> tuple[float, float]:
    """The median seconds of the `DataFrame` and the `LazyFrame` hand-off, interleaved."""
    make = _handoff if name == "hand-off" else _materialize
    eager_dir, lazy_dir = root / f"{name}-eager", root / f"{name}-lazy"
    runs = {False: make(frame, False, eager_dir), True: make(frame, True, lazy_dir)}
    times: dict[bool, list[float]] = {False: [], True: []}
    for lazy in (False, True):  # one untimed round: imports, caches, the first file
        runs[lazy]()
    for _ in range(repeat):
        for lazy in (False, True):
            times[lazy].append(runs[lazy]())
    eager_file, lazy_file = eager_dir / "orders.parquet", lazy_dir / "orders.parquet"
    if eager_file.read_bytes() != lazy_file.read_bytes():
        raise SystemExit(f"{name}: the two hand-offs wrote different files")
    return statistics.median(times[False]), statistics.median(times[True])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=["hand-off", "run"], help="one of the two measurements")
    args = parser.parse_args()
    logging.disable(logging.DEBUG)  # the manager's "Writing file at" on every hand-off
    names = [args.only] if args.only else ["hand-off", "run"]
    print(f"Polars {pl.__version__}, Dagster {dg.__version__}, median of {args.repeat}")
    print("| measured | rows | DataFrame | LazyFrame | ratio |")
    print("|---|---:|---:|---:|---:|")
    for rows in args.rows:
        frame = _rows(rows)
        for name in names:
            with tempfile.TemporaryDirectory(prefix="dy-lazy-handoff-") as root:
                eager, lazy = _measure(name, frame, args.repeat, Path(root))
            print(f"| {name} | {rows:,} | {eager:.2f} s | {lazy:.2f} s | {lazy / eager:.2f}x |")


if __name__ == "__main__":
    main()

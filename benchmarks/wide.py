"""Wide schemas: what `validation_results` costs against `Schema.filter` as the columns grow.

A wide table with every row failing some rule is the case where the package's work per rule
(a check result with failure samples, the rule sets of the quarantine, the statistics of each
column) meets the most invalid rows, so its cost must grow with the columns as the floor's does.

The schema has `columns` columns, cycling through four kinds (an `Int64` with `min`/`max`, a
`Float64` with `min`, a `String` with `max_length`, a nullable `String` with a `regex`): one
rule per column, plus a composite primary key on the first two columns. Row `r` breaks the rule
of column `r % columns` (and only that one), so every row is invalid and every rule fails on
about `rows / columns` rows; the rows are shuffled. With `--half-valid`, only every other row
breaks a rule (row `2k + 1` breaks column `k % columns`'s) and the others are valid, so the run
also reports the materialization's invalid-row sample, rule sets and statistics. Variants,
interleaved in one process:

- floor: `Schema.filter(frame, cast=False).collect_all(engine="streaming")`, then `len(failure)`;
- default: `list(wiring.validation_results(Schema, frame, ...))` with the default settings
  (statistics, 5-row samples, 5 failure samples per rule: samples on), up to the
  `NoValidRowsError` it raises once every check result is out when no row is valid;
- lean: the same with `statistics=False, row_sample=0, max_failure_samples=0`.

The table shows, per column count, the cells the default's failure samples hold, the median
wall time of each variant, the ratios to the floor, and each variant's time per column (flat
when the cost is linear in the columns). Each rule shows up to 5 of the rows that failed it,
with every column, so with a failing rule per column the samples hold about 5 x columns**2
cells, each made a Python value: the default's time per column grows with the columns where
the floor's and lean's stay flat.
Target: default within 2x of the floor at 100 and 500 columns.

    .venv/bin/python -m benchmarks.wide [--columns 10 100 500] [--rows 100000] [--repeat 3]
        [--half-valid]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl

from dagster_dataframely import wiring
from dagster_dataframely.errors import NoValidRowsError

KEY = dg.AssetKey("wide")
VARIANTS = ("floor", "default", "lean")
LEAN = {"statistics": False, "row_sample": 0, "max_failure_samples": 0}
TARGET = 2.0


def _column(index: int) -> tuple[Any, pl.Expr, pl.Expr]:
    """Column `index`'s Dataframely column, a valid value and a value that breaks its rule."""
    row = pl.int_range(pl.len(), dtype=pl.Int64)
    kind = index % 4
    if kind == 0:
        return dy.Int64(primary_key=index < 2, min=0, max=1_000_000), row % 1_000_000, pl.lit(-1)
    if kind == 1:
        return dy.Float64(primary_key=index < 2, min=0.0), row.cast(pl.Float64) / 7, pl.lit(-1.0)
    if kind == 2:
        return (
            dy.String(primary_key=index < 2, max_length=16),
            pl.lit("v") + row.cast(pl.String),
            pl.lit("x" * 17),
        )
    return (
        dy.String(nullable=True, regex=r"^[a-z]+-[0-9]+$"),
        pl.lit("code-") + (row % 997).cast(pl.String),
        pl.lit("CODE"),
    )


def wide_schema(columns: int) -> type[dy.Schema]:
    """A schema of `columns` columns, one rule each, the first two the primary key."""
    fields = {f"c{index:03d}": _column(index)[0] for index in range(columns)}
    return type(f"Wide{columns}", (dy.Schema,), fields)


def wide_frame(columns: int, rows: int, half_valid: bool = False) -> pl.DataFrame:
    """`rows` rows, row `r` breaking only column `r % columns`'s rule, shuffled.

    With `half_valid`, the even rows are valid and row `2k + 1` breaks column `k % columns`'s.
    """
    row = pl.int_range(pl.len(), dtype=pl.Int64)
    broken = (
        pl.when(row % 2 == 1).then((row // 2) % columns).otherwise(-1)
        if half_valid
        else row % columns
    )
    values = []
    for index in range(columns):
        _, good, bad = _column(index)
        values.append(pl.when(broken == index).then(bad).otherwise(good).alias(f"c{index:03d}"))
    frame = pl.select(pl.repeat(0, rows)).select(values)
    return frame.sample(fraction=1.0, shuffle=True, seed=7)


def _writer(frame: pl.DataFrame) -> str:
    return "mem"


def _validated(schema: type[dy.Schema], frame: pl.DataFrame, **settings: Any) -> list[object]:
    """Every event `validation_results` yields, up to the error it raises once all are out."""
    events: list[object] = []
    with contextlib.suppress(NoValidRowsError):  # every row failed: only the quarantine written
        events.extend(
            wiring.validation_results(
                schema, frame, valid_key=KEY, quarantine_writer=_writer, **settings
            )
        )
    return events


def _sample_cells(schema: type[dy.Schema], frame: pl.DataFrame) -> int:
    """How many cells the default's failure samples hold: rows shown times columns, every check."""
    cells = 0
    for event in _validated(schema, frame):
        sample = (
            event.metadata.get("dy_failed_sample")
            if isinstance(event, dg.AssetCheckResult)
            else None
        )
        if isinstance(sample, dg.TableMetadataValue):
            cells += len(sample.records) * len(sample.schema.columns)
    return cells


def _variants(schema: type[dy.Schema]) -> dict[str, Callable[[pl.DataFrame], object]]:
    def floor(frame: pl.DataFrame) -> int:
        return len(schema.filter(frame.lazy(), cast=False).collect_all(engine="streaming").failure)

    def default(frame: pl.DataFrame) -> None:
        _validated(schema, frame)

    def lean(frame: pl.DataFrame) -> None:
        _validated(schema, frame, **LEAN)

    return {"floor": floor, "default": default, "lean": lean}


def _timed(function: Callable[[], Any]) -> float:
    gc.collect()
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def _median_times(
    run: dict[str, Callable[[pl.DataFrame], object]], frame: pl.DataFrame, repeat: int
) -> dict[str, float]:
    """Each variant's median wall time, interleaved: floor, default, lean, floor, ..."""
    times: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
    for _ in range(repeat):
        for variant in VARIANTS:
            times[variant].append(_timed(lambda v=variant: run[v](frame)))
    return {variant: statistics.median(times[variant]) for variant in VARIANTS}


def _table_line(cells: list[str]) -> str:
    """One line of the results table, each cell right-aligned in its column."""
    widths = [7, 8, 12, 9, 9, 9, 13, 13, 14, 14, 14]
    return " ".join(f"{cell:>{width}}" for cell, width in zip(cells, widths, strict=True))


def main(column_counts: list[int], rows: int, repeat: int, half_valid: bool = False) -> None:
    started = time.perf_counter()
    failing = "every other row" if half_valid else "every row"
    print(
        f"Wide schemas, {rows:,} rows, {failing} failing one rule, rows shuffled, "
        f"median of {repeat} interleaved runs, Polars {pl.__version__} with "
        f"{pl.thread_pool_size()} threads.\n"
    )
    results: list[tuple[int, int, int, dict[str, float]]] = []
    for columns in column_counts:
        schema = wide_schema(columns)
        frame = wide_frame(columns, rows, half_valid)
        run = _variants(schema)
        for variant in VARIANTS:  # warm up: first-call costs are not per-run costs
            run[variant](frame.head(1_000))
        invalid = run["floor"](frame)
        expected = rows // 2 if half_valid else rows
        if invalid != expected:
            raise RuntimeError(f"{invalid:,} of {rows:,} rows fail a rule, not {expected:,}")
        sampled = _sample_cells(schema, frame)
        medians = _median_times(run, frame, repeat)
        results.append((columns, invalid, sampled, medians))
        print(
            f"  measured {columns} columns: "
            + ", ".join(f"{v} {medians[v]:.2f}s" for v in VARIANTS),
            flush=True,
        )
        del frame
        gc.collect()

    print("\nWall time, median seconds; ms per column")
    header = _table_line(
        [
            "columns",
            "invalid",
            "sample cells",
            *(f"{v} s" for v in VARIANTS),
            *(f"{v}/floor" for v in VARIANTS[1:]),
            *(f"{v} ms/col" for v in VARIANTS),
        ]
    )
    print(header)
    print("-" * len(header))
    for columns, invalid, sampled, medians in results:
        cells = [
            str(columns),
            f"{invalid:,}",
            f"{sampled:,}",
            *(f"{medians[v]:.3f}" for v in VARIANTS),
            *(f"{medians[v] / medians['floor']:.2f}x" for v in VARIANTS[1:]),
            *(f"{medians[v] * 1000 / columns:.2f}" for v in VARIANTS),
        ]
        print(_table_line(cells))
    print(f"target: default <= {TARGET}x floor at 100 and 500 columns")
    print(f"\nTotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, nargs="+", default=[10, 100, 500])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs per variant")
    parser.add_argument(
        "--half-valid", action="store_true", help="every other row valid, the others failing"
    )
    args = parser.parse_args()
    main(args.columns, args.rows, args.repeat, args.half_valid)

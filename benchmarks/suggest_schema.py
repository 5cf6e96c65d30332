"""What `dd.suggest_schema` costs on a parquet file, against `pl.scan_parquet(...).describe()`.

Writes an orders table of `--rows` rows (a unique id, a date, a 4-value channel, an amount with
nulls, a high-cardinality customer code, a small quantity) to one parquet file, then runs each
of the two in a fresh child process (`--repeat` times, median shown) and prints its wall time
and the child's peak RSS (`resource.getrusage(RUSAGE_CHILDREN)`), so neither sees the other's
memory or the generated frame.

With `--shuffled-key` the order id is written in random order, so its uniqueness cannot be
proved from its order and is counted exactly (in parts above 5M values, to bound memory).

With `--evaluate`, `dd.evaluate_suggestion` is measured too, on the same file, split by `day`
(the newest `--held-out` share of the days held out, a fifth by default) and at random (that
share of the rows, seeded): the suggestion from the training rows, its validation on the
held-out rows (as suggested, then relaxed) and the suggestion from every row, each in a fresh
child, wall time and peak RSS.

    .venv/bin/python -m benchmarks.suggest_schema [--rows 5000000 20000000] [--repeat 3]
        [--shuffled-key] [--evaluate [--held-out 0.2]]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

# NOTE: each child times its own call, after its imports: importing Dagster (which the package
# does) takes seconds that `describe()`'s child, importing Polars alone, does not pay.
_DESCRIBE = (
    "import polars as pl, sys, time; started = time.perf_counter(); "
    "pl.scan_parquet(sys.argv[1]).describe(); print(time.perf_counter() - started)"
)
_SUGGEST = (
    "import dagster_dataframely as dd, sys, time; started = time.perf_counter(); "
    "dd.suggest_schema(sys.argv[1], name='Orders'); print(time.perf_counter() - started)"
)
_EVALUATE = (
    "import dagster_dataframely as dd, sys, time; started = time.perf_counter(); "
    "dd.evaluate_suggestion(sys.argv[1], name='Orders', split_by={split_by!r}, "
    "held_out={held_out!r}); "
    "print(time.perf_counter() - started)"
)
_SPLITS = {"by day": "day", "random": None}


def _write(path: Path, rows: int, *, shuffled_key: bool = False) -> None:
    generator = np.random.default_rng(0)
    amount = generator.gamma(2.0, 30.0, rows).round(2)
    frame = pl.DataFrame(
        {
            "order_id": generator.permutation(rows) if shuffled_key else np.arange(rows),
            "day": pl.date_range(pl.date(2024, 1, 1), pl.date(2026, 12, 31), eager=True).sample(
                rows, with_replacement=True, seed=0
            ),
            "channel": pl.Series(["web", "shop", "phone", "app"]).sample(
                rows, with_replacement=True, seed=1
            ),
            "amount": pl.Series(amount).set(pl.Series(generator.random(rows) < 0.01), None),
            "customer": pl.Series(generator.integers(0, rows // 3, rows)).cast(pl.String),
            "quantity": generator.integers(1, 6, rows),
        }
    )
    frame.write_parquet(path, row_group_size=500_000)


def _measure(code: str, path: Path, repeat: int) -> tuple[float, float]:
    times, peaks = [], []
    for _ in range(repeat):
        result = subprocess.run(
            [sys.executable, "-c", _MEASURE, code, str(path)],
            check=True,
            capture_output=True,
            text=True,
        )
        elapsed, peak = result.stdout.split()
        times.append(float(elapsed))
        peaks.append(float(peak))
    return statistics.median(times), max(peaks)


# NOTE: an intermediate process runs the measured one, so RUSAGE_CHILDREN holds it alone.
_MEASURE = """
import resource, subprocess, sys
child = subprocess.run(
    [sys.executable, "-c", sys.argv[1], sys.argv[2]], check=True, capture_output=True, text=True
)
elapsed = float(child.stdout.split()[-1])
print(elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, nargs="+", default=[5_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shuffled-key", action="store_true")
    parser.add_argument("--evaluate", action="store_true")
    parser.add_argument("--held-out", type=float, default=0.2)
    options = parser.parse_args()
    # NOTE: the machine's load is printed with the figures: on a shared machine it moves them.
    print(f"load average before: {' '.join(f'{load:.1f}' for load in os.getloadavg())}")
    print("| rows | file | `describe()` | `suggest_schema` | ratio | peak RSS describe | suggest |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    evaluated: list[str] = []
    for rows in options.rows:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "orders.parquet"
            _write(path, rows, shuffled_key=options.shuffled_key)
            size = path.stat().st_size / 2**20
            describe, describe_peak = _measure(_DESCRIBE, path, options.repeat)
            suggest, suggest_peak = _measure(_SUGGEST, path, options.repeat)
            print(
                f"| {rows:,} | {size:.0f} MiB | {describe:.2f} s | {suggest:.2f} s | "
                f"{suggest / describe:.2f}x | {describe_peak:.0f} MiB | {suggest_peak:.0f} MiB |"
            )
            for split, split_by in _SPLITS.items() if options.evaluate else ():
                code = _EVALUATE.format(split_by=split_by, held_out=options.held_out)
                evaluate, evaluate_peak = _measure(code, path, options.repeat)
                evaluated.append(
                    f"| {rows:,} | {split} | {evaluate:.2f} s | {evaluate / describe:.2f}x | "
                    f"{evaluate_peak:.0f} MiB |"
                )
    if evaluated:
        print("\n| rows | split | `evaluate_suggestion` | ratio to `describe()` | peak RSS |")
        print("|---:|---|---:|---:|---:|")
        print("\n".join(evaluated))
    print(f"load average after: {' '.join(f'{load:.1f}' for load in os.getloadavg())}")


if __name__ == "__main__":
    main()

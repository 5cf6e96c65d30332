"""Run time: what `validation_results` adds to Dataframely's `Schema.filter`, in time and memory.

Validation cannot be cheaper than Dataframely separating the valid rows from the invalid rows,
so that is the floor every variant is measured against:

- floor: `Orders.filter(lf, cast=False).collect_all(engine="streaming")`, then `len(failure)`;
- default: `list(wiring.validation_results(Orders, frame, ...))` with the default settings
  (statistics, a 5-row sample of valid and invalid rows, 5 failure samples per rule);
- lean: the same with `statistics=False, row_sample=0, max_failure_samples=0`;
- eager (with `--eager`): Dataframely's eager filter, `Orders.filter(rows, cast=False)` on a
  `DataFrame` (a scan is read first, `collect()`), then `len(failure)`: what the lean settings
  are held to (issue 51).

The schema is the demo's `Orders` with `customer_email` not marked sensitive (13 columns, 29
rules including a composite primary key and a `.over()` rule) and the frame the demo's
`order_lines(rows, seed=0, invalid_share=0.014)`, about 1.4% of rows invalid; the quarantine
writer only returns an address. Each size is given as a `DataFrame` in memory and as a
`pl.scan_parquet` of a file written first to a temporary directory. The three variants run
interleaved in one process (floor, default, lean, floor, ...), so machine noise hits all of them
alike; the table shows the median wall time of each and the ratios to the floor. Targets:
default <= 1.15x floor, lean <= 1.0x floor.

Peak memory (at the largest size only, unless `--memory-all`): each variant then runs again in
`--memory-repeat` (3) fresh interpreters, interleaved, and the median is shown. Each interpreter
loads the input, resets the kernel's high-water mark (`/proc/self/clear_refs`) and reports
`VmHWM` afterwards, so the figure is the variant's own peak on top of the loaded input.
Target: default and lean peak no higher than the floor.

Two workloads, both reported (`--order` picks one): `generator`, the rows in the order the demo's
generator writes them (an order's lines together, the order ids ascending), and `random`, the
same rows shuffled, so no key arrives sorted or grouped, as real tables do after a join or a
merge: the layout in which exact distinct counts and medians cost the most.

`--warning-share 0.01` makes about 1% more rows fail only `product_name|max_length` (a name
longer than 64 characters) and adds two variants on the same frame, `default_warn` and
`lean_warn`, which declare that rule a warning rule: those rows are then written, not
quarantined. Compare them with `default` and `lean`, where the same rows are quarantined.

`--policy` adds two variants on the same frame, `default_policy` and `lean_policy`: `default`
and `lean` with a quality policy that puts a threshold on every rule (and a stricter one on
`amount|min`), chooses a severity and makes every check blocking, none of them crossed by the
data, so the run writes what `default` and `lean` write. Compare each with its plain twin: the
metrics (the two fractions every materialization has) are in all four.

`--undeclared` gives every input a copy of each column under a name the schema does not declare
(`undeclared_<column>`), as a wide source table validated against a narrower schema is: a run
neither computes nor reads them, as `Schema.filter`'s own projection skips them.

`--breakdown` times, for the default variant, each step the package adds after the floor's
collect (reading the failures, the quarantine frame, statistics, samples, check results), using
the package's internal functions, so it shows where the time beyond the floor goes.

    .venv/bin/python -m benchmarks.validation [--rows 1000000 5000000] [--repeat 3]
        [--quick] [--no-memory | --memory-all] [--memory-repeat 3] [--breakdown]
        [--order generator random] [--warning-share 0.01] [--policy] [--eager] [--undeclared]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "examples") not in sys.path:  # the demo package is not installed, only tested
    sys.path.insert(0, str(ROOT / "examples"))

import dagster as dg  # noqa: E402
import dataframely as dy  # noqa: E402
import polars as pl  # noqa: E402

import dagster_dataframely as dd  # noqa: E402
from dagster_dataframely import wiring  # noqa: E402
from dagster_dataframely_demo._data import order_lines  # noqa: E402
from dagster_dataframely_demo.schema import Orders as DemoOrders  # noqa: E402


class Orders(DemoOrders):
    """The demo's schema with `customer_email` not marked sensitive (`pii`).

    A sensitive column's statistics are never computed, so the demo's schema would leave its
    costliest text count out of the default; the workload this measures has no such column.
    Redefined here, the column comes last in the schema's order; every variant shares it.
    """

    customer_email = dy.String(max_length=254, regex=r"^[^@\s]+@[^@\s]+\.[a-z]+$")


KEY = dg.AssetKey("orders")
INVALID_SHARE = 0.014
VARIANTS: tuple[str, ...] = ("floor", "default", "lean")
WARNING_VARIANTS = ("default_warn", "lean_warn")
POLICY_VARIANTS = ("default_policy", "lean_policy")
WARNING_RULES = ["product_name|max_length"]
KINDS = ("DataFrame", "scan_parquet")
ORDERS = ("generator", "random")
TARGETS = {"default": 1.15, "lean": 1.0}
LEAN = {"statistics": False, "row_sample": 0, "max_failure_samples": 0}


def _writer(frame: pl.DataFrame) -> str:
    return "mem"


def floor(frame: pl.DataFrame | pl.LazyFrame) -> int:
    collected = Orders.filter(frame.lazy(), cast=False).collect_all(engine="streaming")
    return len(collected.failure)


def eager(frame: pl.DataFrame | pl.LazyFrame) -> int:
    rows = frame.collect() if isinstance(frame, pl.LazyFrame) else frame
    return len(Orders.filter(rows, cast=False).failure)


def default(frame: pl.DataFrame | pl.LazyFrame) -> None:
    list(wiring.validation_results(Orders, frame, valid_key=KEY, quarantine_writer=_writer))


def lean(frame: pl.DataFrame | pl.LazyFrame) -> None:
    list(wiring.validation_results(Orders, frame, valid_key=KEY, quarantine_writer=_writer, **LEAN))


def default_warn(frame: pl.DataFrame | pl.LazyFrame) -> None:
    list(
        wiring.validation_results(
            Orders, frame, valid_key=KEY, quarantine_writer=_writer, warning_rules=WARNING_RULES
        )
    )


def lean_warn(frame: pl.DataFrame | pl.LazyFrame) -> None:
    list(
        wiring.validation_results(
            Orders,
            frame,
            valid_key=KEY,
            quarantine_writer=_writer,
            warning_rules=WARNING_RULES,
            **LEAN,
        )
    )


def quality_policy() -> Any:
    """A threshold on every rule, none crossed by the data (about 1.4% of rows invalid).

    Built when a policy variant runs, so the script also runs against sources from before
    quality policies (`PYTHONPATH=<an older src>`) for before/after figures.
    """
    return dd.QualityPolicy(
        threshold=dd.Threshold(warn_above=0.05, fail_above=0.5),
        rules={"amount|min": dd.Threshold(warn_above=100, fail_above=0.25)},
        severity={"primary_key": dg.AssetCheckSeverity.ERROR},
        blocking=True,
    )


def _with_policy(frame: pl.DataFrame | pl.LazyFrame, **settings: Any) -> None:
    """`validation_results` under `quality_policy()`, with `settings`; every result consumed."""
    results = wiring.validation_results(
        Orders,
        frame,
        valid_key=KEY,
        quarantine_writer=_writer,
        quality_policy=quality_policy(),
        **settings,
    )
    list(results)


def default_policy(frame: pl.DataFrame | pl.LazyFrame) -> None:
    _with_policy(frame)


def lean_policy(frame: pl.DataFrame | pl.LazyFrame) -> None:
    _with_policy(frame, **LEAN)


RUN: dict[str, Callable[[pl.DataFrame | pl.LazyFrame], object]] = {
    "floor": floor,
    "eager": eager,
    "default": default,
    "lean": lean,
    "default_warn": default_warn,
    "lean_warn": lean_warn,
    "default_policy": default_policy,
    "lean_policy": lean_policy,
}


def with_warning_rows(frame: pl.DataFrame, share: float) -> pl.DataFrame:
    """About `share` of the rows get a product name too long for `product_name|max_length`."""
    if share <= 0:
        return frame
    picked = pl.int_range(pl.len(), dtype=pl.UInt64).hash(11) % 1_000_000 < int(share * 1_000_000)
    too_long = pl.col("product_name") + pl.lit("x" * 64)
    return frame.with_columns(product_name=pl.when(picked).then(too_long).otherwise("product_name"))


def warning_only_rows(frame: pl.DataFrame) -> int:
    """How many rows fail `WARNING_RULES` and no other rule: the rows the warn variants write."""
    details = Orders.filter(frame, cast=False).failure.details()
    others = [c for c in details.columns[len(Orders.columns()) :] if c not in WARNING_RULES]
    return details.filter(pl.all_horizontal(pl.col(c) == "valid" for c in others)).height


def _input(kind: str, frame: pl.DataFrame, path: Path) -> Callable[[], pl.DataFrame | pl.LazyFrame]:
    if kind == "DataFrame":
        return lambda: frame
    return lambda: pl.scan_parquet(path)


def _timed(function: Callable[[], Any]) -> float:
    gc.collect()
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


INVALID: dict[tuple[int, str], int] = {}
"""The invalid row count the floor found, per (rows, input kind): a check on the input."""


def workload(rows: int, order: str, warning_share: float, undeclared: bool = False) -> pl.DataFrame:
    """The demo's order lines in generator order, or shuffled: no key sorted or grouped."""
    frame = with_warning_rows(order_lines(rows, seed=0, invalid_share=INVALID_SHARE), warning_share)
    if undeclared:
        frame = frame.with_columns(pl.all().name.prefix("undeclared_"))
    return frame.sample(fraction=1.0, shuffle=True, seed=7) if order == "random" else frame


def measure_times(
    frame: pl.DataFrame, path: Path, rows: int, kind: str, repeat: int
) -> dict[str, list[float]]:
    """Wall times of each variant, interleaved: floor, default, lean, floor, default, lean..."""
    source = _input(kind, frame, path)
    times: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
    for _ in range(repeat):
        for variant in VARIANTS:
            times[variant].append(_timed(lambda v=variant: _record(v, rows, kind, source())))
    return times


def _record(variant: str, rows: int, kind: str, frame: pl.DataFrame | pl.LazyFrame) -> None:
    result = RUN[variant](frame)
    if variant == "floor" and isinstance(result, int):  # the floor's invalid row count
        INVALID[rows, kind] = result


# ------------------------------------------------------------------------------------------
# Peak memory, one fresh interpreter per variant.


def _status(field: str) -> int:
    """A `/proc/self/status` field in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def memory_worker(variant: str, kind: str, path: Path) -> dict[str, int]:
    frame = pl.read_parquet(path) if kind == "DataFrame" else None
    source = (lambda: frame) if frame is not None else (lambda: pl.scan_parquet(path))
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    before = _status("VmRSS")
    RUN[variant](source())  # type: ignore[arg-type]
    return {"before": before, "peak": _status("VmHWM")}


def measure_memory(variant: str, kind: str, path: Path) -> dict[str, int]:
    command = [
        sys.executable,
        "-m",
        "benchmarks.validation",
        "--memory-worker",
        variant,
        kind,
        str(path),
    ]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"memory worker {variant}/{kind} failed:\n{done.stderr}")
    result: dict[str, int] = json.loads(done.stdout.splitlines()[-1])
    return result


# ------------------------------------------------------------------------------------------
# Where the default variant's time beyond the floor goes (internal API: may need updating).


def breakdown(frame: pl.DataFrame, repeat: int) -> list[tuple[str, float]]:
    """Median time of each step `validation_results` takes after the floor's collect."""
    from dagster_dataframely._model.check_groups import check_groups
    from dagster_dataframely._model.quality_policy import resolve_policy
    from dagster_dataframely._model.schema import read_schema
    from dagster_dataframely._run.checks.rule_checks import check_results_for
    from dagster_dataframely._run.checks.tables import table_value
    from dagster_dataframely._run.checks.thresholds import rule_verdicts
    from dagster_dataframely._run.report.report import fractions, invalid_rows_metadata
    from dagster_dataframely._run.report.statistics import statistics_tables
    from dagster_dataframely._run.split.failures import Failures, rule_outcomes
    from dagster_dataframely._run.split.split import column_problems, keep_warning_only_rows

    info = read_schema(Orders)
    groups = check_groups(info, "rule", "collapsed")
    collected = Orders.filter(frame.lazy(), cast=False).collect_all(engine="streaming")
    valid, failure = collected.result, collected.failure
    failures = Failures.from_failure_info(info, failure)
    policy = resolve_policy(info, quality_policy(), quarantine=True)

    steps: dict[str, Callable[[], Any]] = {
        "filter + collect_all (the floor)": lambda: Orders.filter(
            frame.lazy(), cast=False
        ).collect_all(engine="streaming"),
        "column_problems (the gate)": lambda: column_problems(info, frame),
        "rule_outcomes (Dataframely's booleans)": lambda: rule_outcomes(info, failure),
        "failure.details() (not used; for scale)": failure.details,
        "failure.counts()": failure.counts,
        "Failures.from_failure_info": lambda: Failures.from_failure_info(info, failure),
        "from_failure_info + quarantine_frame": lambda: (
            Failures.from_failure_info(info, failure).quarantine_frame
        ),
        "keep_warning_only_rows (warning rows to valid)": lambda: keep_warning_only_rows(
            valid, failures, frozenset(WARNING_RULES)
        ),
        "statistics_tables(valid)": lambda: statistics_tables(valid, info.distinct_columns),
        "table_value(valid.head(5))": lambda: table_value(valid.head(5)),
        "invalid_rows_metadata (sample + by_rules)": lambda: invalid_rows_metadata(
            failures, 5, "mem"
        ),
        "  of which rule_sets()": failures.rule_sets,
        "  of which quarantine_frame.head(5) table": lambda: table_value(
            failures.quarantine_frame.head(5)
        ),
        "check results, 5 samples per rule": lambda: list(
            check_results_for(
                groups,
                failures,
                asset_key=KEY,
                severity=dg.AssetCheckSeverity.WARN,
                max_failure_samples=5,
            )
        ),
        "  of which failures.samples(5)": lambda: failures.samples(5),
        "check results, no samples": lambda: list(
            check_results_for(
                groups,
                failures,
                asset_key=KEY,
                severity=dg.AssetCheckSeverity.WARN,
                max_failure_samples=0,
            )
        ),
        "fractions (the metrics on every materialization)": lambda: fractions(
            valid.height, failures.invalid_count, 0
        ),
        "rule_verdicts (a threshold on every rule)": lambda: rule_verdicts(
            policy, failures.counts, frame.height
        ),
        "validation_results, default (whole)": lambda: default(frame),
        "validation_results, lean (whole)": lambda: lean(frame),
        "validation_results, default_warn (whole)": lambda: default_warn(frame),
        "validation_results, lean_warn (whole)": lambda: lean_warn(frame),
        "validation_results, default_policy (whole)": lambda: default_policy(frame),
        "validation_results, lean_policy (whole)": lambda: lean_policy(frame),
    }
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(repeat):
        for name, step in steps.items():
            times[name].append(_timed(step))
    return [(name, statistics.median(values)) for name, values in times.items()]


# ------------------------------------------------------------------------------------------


def _mib(value: float) -> str:
    return f"{value / 2**20:,.0f}"


def median_peaks(kind: str, path: Path, repeat: int) -> dict[str, dict[str, int]]:
    """Each variant's run with the median rise above the loaded RSS, over interleaved runs."""
    runs: dict[str, list[dict[str, int]]] = {variant: [] for variant in VARIANTS}
    for _ in range(repeat):
        for variant in VARIANTS:
            runs[variant].append(measure_memory(variant, kind, path))
    return {
        variant: sorted(measured, key=lambda run: run["peak"] - run["before"])[len(measured) // 2]
        for variant, measured in runs.items()
    }


def main(
    sizes: list[int],
    repeat: int,
    *,
    memory: bool,
    memory_repeat: int,
    memory_all: bool,
    show_breakdown: bool,
    breakdown_repeat: int,
    orders: list[str],
    warning_share: float,
    policy: bool,
    eager_filter: bool = False,
    undeclared: bool = False,
) -> None:
    global VARIANTS
    if eager_filter:
        VARIANTS = (*VARIANTS, "eager")
    if warning_share > 0:
        VARIANTS = (*VARIANTS, *WARNING_VARIANTS)
    if policy:
        VARIANTS = (*VARIANTS, *POLICY_VARIANTS)
    started = time.perf_counter()
    print(
        f"Orders ({len(Orders.columns())} columns, "
        f"{len(wiring.check_specs(Orders, asset='x')) - 1} rules), "
        f"invalid_share={INVALID_SHARE}, key order {' and '.join(orders)}, "
        f"warning_share={warning_share} ({', '.join(WARNING_RULES)}), undeclared={undeclared}, "
        f"median of {repeat} interleaved runs, "
        f"Polars {pl.__version__} with {pl.thread_pool_size()} threads.\n"
    )
    # Warm every variant up on a small frame: first-call costs are not per-run costs.
    small = with_warning_rows(order_lines(10_000, seed=0, invalid_share=INVALID_SHARE), 0.01)
    for variant in VARIANTS:
        RUN[variant](small)

    rows_out: list[dict[str, Any]] = []
    memory_out: list[tuple[int, str, str, dict[str, dict[str, int]]]] = []
    breakdown_out: list[tuple[int, str, list[tuple[str, float]]]] = []
    with tempfile.TemporaryDirectory(prefix="dd-bench-") as directory:
        for rows in sizes:
            for order in orders:
                frame = workload(rows, order, warning_share, undeclared)
                if warning_share > 0 and order == orders[0]:
                    print(f"  {rows:,} rows: {warning_only_rows(frame):,} fail only a warning rule")
                path = Path(directory) / f"orders_{rows}_{order}.parquet"
                frame.write_parquet(path)
                for kind in KINDS:
                    times = measure_times(frame, path, rows, kind, repeat)
                    medians = {variant: statistics.median(times[variant]) for variant in VARIANTS}
                    invalid = INVALID[rows, kind]
                    rows_out.append(
                        {"rows": rows, "invalid": invalid, "order": order, "kind": kind, **medians}
                    )
                    print(
                        f"  measured {rows:,} rows, {order} order, as {kind}: "
                        + ", ".join(f"{v} {medians[v]:.2f}s" for v in VARIANTS),
                        flush=True,
                    )
                if show_breakdown:
                    breakdown_out.append((rows, order, breakdown(frame, breakdown_repeat)))
                del frame
                gc.collect()
                if memory and (memory_all or rows == max(sizes)):
                    for kind in KINDS:
                        peaks = median_peaks(kind, path, memory_repeat)
                        memory_out.append((rows, order, kind, peaks))

    print("\nWall time, median seconds")
    others = VARIANTS[1:]
    header = (
        f"{'rows':>10} {'invalid':>8} {'order':<9} {'input':<13} "
        + " ".join(f"{v + ' s':>{max(len(v) + 2, 8)}}" for v in VARIANTS)
        + " "
        + " ".join(f"{v + '/floor':>{len(v) + 6}}" for v in others)
    )
    print(header)
    print("-" * len(header))
    for row in rows_out:
        print(
            f"{row['rows']:>10,} {row['invalid']:>8,} {row['order']:<9} {row['kind']:<13} "
            + " ".join(f"{row[v]:>{max(len(v) + 2, 8)}.3f}" for v in VARIANTS)
            + " "
            + " ".join(f"{row[v] / row['floor']:>{len(v) + 5}.2f}x" for v in others)
        )
    print(f"targets: default <= {TARGETS['default']}x floor, lean <= {TARGETS['lean']}x floor")
    if "eager" in VARIANTS:
        for row in rows_out:
            print(
                f"  {row['rows']:>10,} {row['order']:<9} {row['kind']:<13} "
                f"lean/eager {row['lean'] / row['eager']:.2f}x (target <= 1.0x)"
            )

    if memory_out:
        print(
            f"\nPeak memory, MiB (median of {memory_repeat} fresh interpreters per variant, "
            "interleaved; input loaded before the reset)"
        )
        header = (
            f"{'rows':>10} {'order':<9} {'input':<13} {'loaded':>7} "
            + " ".join(f"{v + ' peak':>13}" for v in VARIANTS)
            + " "
            + " ".join(f"{v + ' +':>10}" for v in VARIANTS)
        )
        print(header)
        print("-" * len(header))
        for rows, order, kind, peaks in memory_out:
            print(
                f"{rows:>10,} {order:<9} {kind:<13} {_mib(peaks['floor']['before']):>7} "
                + " ".join(f"{_mib(peaks[v]['peak']):>13}" for v in VARIANTS)
                + " "
                + " ".join(f"{_mib(peaks[v]['peak'] - peaks[v]['before']):>10}" for v in VARIANTS)
            )
        print("'+' is the peak above the RSS right before the variant ran (input loaded).")
        print("target: default and lean peak no higher than the floor's")

    for rows, order, steps in breakdown_out:
        print(
            f"\nBreakdown at {rows:,} rows, {order} order, DataFrame input "
            f"(median of {breakdown_repeat})"
        )
        for name, seconds in steps:
            print(f"  {name:<46} {seconds:8.4f} s")
    print(f"\nTotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs per variant")
    parser.add_argument("--quick", action="store_true", help="200k rows only: a smoke run")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory runs")
    parser.add_argument(
        "--memory-all", action="store_true", help="peak memory at every size, not the largest"
    )
    parser.add_argument(
        "--memory-repeat", type=int, default=3, help="fresh interpreters per variant and input"
    )
    parser.add_argument("--breakdown", action="store_true", help="time each added step")
    parser.add_argument(
        "--order",
        nargs="+",
        choices=ORDERS,
        default=list(ORDERS),
        help="the workloads: rows in generator order, rows shuffled (no key in order); both",
    )
    parser.add_argument(
        "--warning-share",
        type=float,
        default=0.0,
        help="this share of rows fails only a warning rule; adds the *_warn variants",
    )
    parser.add_argument(
        "--policy", action="store_true", help="adds the *_policy variants (a quality policy)"
    )
    parser.add_argument(
        "--eager", action="store_true", help="adds Dataframely's eager filter on a DataFrame"
    )
    parser.add_argument(
        "--undeclared", action="store_true", help="every column twice, once undeclared"
    )
    parser.add_argument("--memory-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_worker:
        variant, kind, path = args.memory_worker
        print(json.dumps(memory_worker(variant, kind, Path(path))))
    else:
        main(
            [200_000] if args.quick else args.rows,
            args.repeat,
            memory=not args.no_memory,
            memory_repeat=args.memory_repeat,
            memory_all=args.memory_all,
            show_breakdown=args.breakdown,
            breakdown_repeat=max(args.repeat, 3),
            orders=args.order,
            warning_share=args.warning_share,
            policy=args.policy,
            eager_filter=args.eager,
            undeclared=args.undeclared,
        )

"""Peak memory and time of `wiring.check_results` over a parquet scan, at three commits.

The read-only checks of a stored table hold only its invalid rows: the rules run over a scan
whose valid rows are counted and streamed past, never collected. This measures it against
the code of other commits, each imported from `git archive <commit> src` (`--commits`, the
working tree's `src` as `HEAD`): by default 3750485 (before the checks used the run's split),
ca6393e (the run's split, which collected the whole scan first) and the working tree.

The table is `benchmarks.streaming`'s: the demo's `order_lines(rows, invalid_share=0.014)` in
parquet files of `--file-rows` rows, each file's rows shuffled (unsorted keys). Three schemas
(`--schemas`): the demo's `Orders` (composite primary key, one `.over()` rule), `OrdersNoKey`,
without the key, and `OrdersRowRules`, without the `.over()` rule either. Each measure is a
fresh interpreter (`--worker`) that imports everything, resets the kernel's high-water mark
(`/proc/self/clear_refs`), lists `check_results` once and reports `VmHWM` minus the RSS before
it, its wall time and the failed counts it reported (the same at every commit, or the script
stops). Runs are interleaved; the median of `--repeat` is shown.

    .venv/bin/python -m benchmarks.stored_checks [--rows 5000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "examples") not in sys.path:  # the demo package is not installed, only tested
    sys.path.insert(0, str(ROOT / "examples"))

import dagster as dg  # noqa: E402
import dataframely as dy  # noqa: E402
import polars as pl  # noqa: E402

from benchmarks.streaming import SCHEMAS as KEYED  # noqa: E402
from benchmarks.streaming import _status, write_source  # noqa: E402

COMMITS = ["3750485", "ca6393e", "HEAD"]


class OrdersRowRules(KEYED["OrdersNoKey"]):  # type: ignore[misc,valid-type]
    """`OrdersNoKey` without its `.over()` rule: every rule reads one row only."""

    @dy.rule()
    def one_currency_per_order(cls) -> pl.Expr:
        return pl.lit(True)


SCHEMAS = {**KEYED, "OrdersRowRules": OrdersRowRules}


def worker(schema_name: str, source: Path) -> dict[str, Any]:
    """One `check_results` over the scan in this interpreter: its peak rise, time and counts."""
    from dagster_dataframely import wiring

    scan = pl.scan_parquet(source / "*.parquet")
    Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
    before = _status("VmRSS")
    started = time.perf_counter()
    results = list(
        wiring.check_results(
            SCHEMAS[schema_name], scan, asset_key="orders", severity=dg.AssetCheckSeverity.WARN
        )
    )
    seconds = time.perf_counter() - started
    peak = _status("VmHWM")
    failed = {
        r.check_name: r.metadata["dy_failed_count"].value
        for r in results
        if "dy_failed_count" in r.metadata
    }
    return {"rise": peak - before, "seconds": seconds, "failed": failed}


def _sources(commits: list[str], into: Path) -> dict[str, Path]:
    """Each commit's `src`, extracted from git, and the working tree's as `HEAD`."""
    paths = {}
    for commit in commits:
        if commit == "HEAD":
            paths[commit] = ROOT / "src"
            continue
        archive = subprocess.run(
            ["git", "archive", commit, "src"], cwd=ROOT, capture_output=True, check=True
        ).stdout
        (into / commit).mkdir()
        subprocess.run(["tar", "-x", "-C", str(into / commit)], input=archive, check=True)
        paths[commit] = into / commit / "src"
    return paths


def _run_worker(schema_name: str, source: Path, code: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.stored_checks", "--worker", schema_name]
    command.append(str(source))
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    if done.returncode:
        raise RuntimeError(f"worker {schema_name} at {code} failed:\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def main(rows: int, repeat: int, file_rows: int, commits: list[str], schemas: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="stored-checks-bench-") as folder:
        source, code = Path(folder) / "table", Path(folder) / "code"
        source.mkdir()
        code.mkdir()
        write_source(rows, file_rows, source)
        paths = _sources(commits, code)
        variants = [(schema, commit) for schema in schemas for commit in commits]
        runs: dict[tuple[str, str], list[dict[str, Any]]] = {v: [] for v in variants}
        for _ in range(repeat):
            for schema_name, commit in variants:
                runs[schema_name, commit].append(_run_worker(schema_name, source, paths[commit]))
        shutil.rmtree(code, ignore_errors=True)
    print(f"{rows:,} rows in files of {file_rows:,}; median of {repeat}, interleaved")
    print("| Schema | Commit | Peak above start | Time |")
    print("|---|---|---:|---:|")
    for schema_name, commit in variants:
        measured = runs[schema_name, commit]
        counts = {json.dumps(r["failed"], sort_keys=True) for r in measured}
        counts |= {json.dumps(r["failed"], sort_keys=True) for r in runs[schema_name, commits[0]]}
        assert len(counts) == 1, f"the commits reported different failed counts: {counts}"
        rise = statistics.median(r["rise"] for r in measured)
        seconds = statistics.median(r["seconds"] for r in measured)
        print(f"| {schema_name} | {commit} | {rise / 2**20:,.0f} MiB | {seconds:.1f} s |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--file-rows", type=int, default=1_000_000)
    parser.add_argument("--commits", nargs="+", default=COMMITS)
    parser.add_argument("--schemas", nargs="+", default=list(SCHEMAS), choices=list(SCHEMAS))
    parser.add_argument("--worker", nargs=2, metavar=("SCHEMA", "SOURCE"))
    arguments = parser.parse_args()
    if arguments.worker:
        name, source_dir = arguments.worker
        print(json.dumps(worker(name, Path(source_dir))))
    else:
        main(
            arguments.rows,
            arguments.repeat,
            arguments.file_rows,
            arguments.commits,
            arguments.schemas,
        )

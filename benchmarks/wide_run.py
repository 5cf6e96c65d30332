"""Wide schemas through a whole run: what Dagster's storing of the check events adds.

`benchmarks/wide.py` times the package's own work (`validation_results`) against the filter.
A user's run also stores every event: each check result is serialized into the event log and
again into the check's execution history. This script materializes `benchmarks.wide`'s schema
and frame with `dg.materialize` on one ephemeral instance (in-memory SQLite storage, an IO
manager that keeps nothing), every other row failing one rule so the run succeeds, and times:

- dagster: a plain `@dg.asset` with the same check specs (`wiring.check_specs`) that returns
  `Schema.filter`'s valid rows and yields a passing result, without metadata, for each check:
  what Dagster charges for the checks alone;
- default: `dd.asset(Schema, quarantine=True)`;
- one sample: the same with `max_failure_samples=1`;
- schema granularity: the same with `check_granularity="schema"` (two checks);
- lean: the same with `statistics=False, row_sample=0, max_failure_samples=0`.

For each it prints the median wall time, the ratio to `dagster`, the checks declared, and the
serialized size of the run's stored events (from one run, untimed). Dagster's console logger
is set to `WARNING`; the events are stored as at any level. A failing rule's sample
carries a table schema of every column, which Dagster stores field by field: at 500 columns
that schema costs more to store than the five rows it describes.

    .venv/bin/python -m benchmarks.wide_run [--columns 100 500] [--rows 20000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl

import dagster_dataframely as dd
from benchmarks.wide import LEAN, wide_frame, wide_schema
from dagster_dataframely import wiring

# Dagster's console logger at WARNING: a run's DEBUG lines (thousands here) stay off the screen.
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
VARIANTS: dict[str, dict[str, Any] | None] = {
    "dagster": None,
    "default": {},
    "one sample": {"max_failure_samples": 1},
    "schema granularity": {"check_granularity": "schema"},
    "lean": LEAN,
}


class _Discard(dg.IOManager):
    """Stores nothing, so the figures are the validation's and the event log's.

    The package cannot know it records no value, so each lean run logs its warning about that.
    """

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        return None

    def load_input(self, context: dg.InputContext) -> None:
        return None


def _plain(schema: type[dy.Schema], frame: pl.DataFrame) -> dg.AssetsDefinition:
    """A hand-wired asset with the package's check specs, each check passing, no metadata."""
    specs = wiring.check_specs(schema, asset="dagster")

    @dg.asset(name="dagster", check_specs=specs)
    def plain() -> Iterator[dg.Output[pl.DataFrame] | dg.AssetCheckResult]:
        valid = schema.filter(frame.lazy(), cast=False).collect_all(engine="streaming").result
        yield dg.Output(valid)
        for spec in specs:
            yield dg.AssetCheckResult(check_name=spec.name, passed=True)

    return plain


def _packaged(
    schema: type[dy.Schema], frame: pl.DataFrame, name: str, settings: dict[str, Any]
) -> dg.AssetsDefinition:
    @dd.asset(schema, name=name.replace(" ", "_"), quarantine=True, **settings)
    def packaged() -> pl.DataFrame:
        return frame

    return packaged


def _assets(schema: type[dy.Schema], frame: pl.DataFrame) -> dict[str, dg.AssetsDefinition]:
    return {
        name: (
            _plain(schema, frame) if settings is None else _packaged(schema, frame, name, settings)
        )
        for name, settings in VARIANTS.items()
    }


def _run(asset: dg.AssetsDefinition, instance: dg.DagsterInstance) -> tuple[float, str]:
    """One run's wall time and its id."""
    started = time.perf_counter()
    result = dg.materialize(
        [asset], resources={"io_manager": _Discard()}, instance=instance, run_config=QUIET
    )
    return time.perf_counter() - started, result.run_id


def _stored_bytes(instance: dg.DagsterInstance, run_id: str) -> int:
    """The serialized size of every event the run stored."""
    return sum(len(dg.serialize_value(entry)) for entry in instance.all_logs(run_id))


def main(column_counts: list[int], rows: int, repeat: int) -> None:
    started = time.perf_counter()
    print(
        f"Wide schemas through dg.materialize, {rows:,} rows, every other row failing one rule, "
        f"median of {repeat} interleaved runs, Dagster {dg.__version__}, "
        f"Polars {pl.__version__}.\n"
    )
    header = (
        f"{'columns':>7} {'variant':>18} {'checks':>6} {'run s':>8} {'/dagster':>8} "
        f"{'stored MB':>10}"
    )
    lines = [header, "-" * len(header)]
    for columns in column_counts:
        schema, frame = wide_schema(columns), wide_frame(columns, rows, half_valid=True)
        assets = _assets(schema, frame)
        instance = dg.DagsterInstance.ephemeral()
        stored = {}
        for name, asset in assets.items():  # warm up, and the sizes of one run each
            stored[name] = _stored_bytes(instance, _run(asset, instance)[1])
        times: dict[str, list[float]] = {name: [] for name in assets}
        for _ in range(repeat):
            for name, asset in assets.items():
                times[name].append(_run(asset, instance)[0])
        medians = {name: statistics.median(times[name]) for name in assets}
        for name, asset in assets.items():
            lines.append(
                f"{columns:>7} {name:>18} {len(asset.check_specs_by_output_name):>6} "
                f"{medians[name]:>8.2f} {medians[name] / medians['dagster']:>7.2f}x "
                f"{stored[name] / 1e6:>10.1f}"
            )
        print(f"  measured {columns} columns", flush=True)
    print("\n" + "\n".join(lines))
    print(f"\nTotal {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, nargs="+", default=[100, 500])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=1, help="interleaved runs per variant")
    args = parser.parse_args()
    main(args.columns, args.rows, args.repeat)

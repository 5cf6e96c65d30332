"""Run time: what `dd.AnomalyCheck` adds to a run of 1M rows, with a history already present.

Two assets of the demo's `Orders` schema return the same frame (`order_lines(rows, seed=0,
invalid_share=0.014)`, built once) through `dg.materialize` on one ephemeral instance, both
stored by a parquet IO manager under a temporary directory:

- plain: `dd.asset(Orders, quarantine=True)`;
- watched: the same with `dd.QualityPolicy(anomaly=dd.AnomalyCheck(metrics=WATCHED))`: the row
  count and three column metrics (a number's mean, a text's null fraction and mean length).

Before timing, the watched asset gets a history of `--history` (28, the default training
window) materializations, reported without a run (`report_runless_asset_event`) with the
metrics a run records, so every timed run of it reads a full window and judges every metric.
The two run interleaved, in alternating order (watched, plain, plain, watched, ...),
`--repeat` times each, so machine noise hits both alike; the script prints each one's median
wall time, the ratio of the medians and the median of the paired ratios.
Target (issue 49): watched <= 1.1x plain.

    .venv/bin/python -m benchmarks.anomaly_cost [--rows 1000000] [--repeat 5] [--history 28]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "examples") not in sys.path:  # the demo package is not installed, only tested
    sys.path.insert(0, str(ROOT / "examples"))

import dagster as dg  # noqa: E402
import polars as pl  # noqa: E402
from dagster_polars import PolarsParquetIOManager  # noqa: E402

import dagster_dataframely as dd  # noqa: E402
from dagster_dataframely_demo._data import order_lines  # noqa: E402
from dagster_dataframely_demo.schema import Orders  # noqa: E402

WATCHED = ["row_count", "amount/mean", "channel/null_fraction", "product_name/mean_length"]
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
TARGET = 1.1


def _assets(frame: pl.DataFrame) -> tuple[dg.AssetsDefinition, dg.AssetsDefinition]:
    @dd.asset(Orders, quarantine=True)
    def plain() -> pl.DataFrame:
        return frame

    check = dd.AnomalyCheck(metrics=WATCHED, seasonality=None)

    @dd.asset(Orders, quarantine=True, quality_policy=dd.QualityPolicy(anomaly=check))
    def watched() -> pl.DataFrame:
        return frame

    return plain, watched


def _seed_history(instance: dg.DagsterInstance, key: dg.AssetKey, rows: int, count: int) -> None:
    # NOTE: the metrics a run of the frame records, slightly varied, so each band has a spread.
    for i in range(count):
        wobble = 1 + (i % 5 - 2) / 100
        instance.report_runless_asset_event(
            dg.AssetMaterialization(
                key,
                metadata={
                    "dagster/row_count": int(rows * wobble),
                    "dataframely/metric/amount/mean": 300.0 * wobble,
                    "dataframely/metric/channel/null_fraction": 0.1 * wobble,
                    "dataframely/metric/product_name/mean_length": 7.5 * wobble,
                },
            )
        )


def _timed(run: dg.AssetsDefinition, instance: dg.DagsterInstance, base_dir: str) -> float:
    gc.collect()
    started = time.perf_counter()
    result = dg.materialize(
        [run],
        resources={"io_manager": PolarsParquetIOManager(base_dir=base_dir)},
        instance=instance,
        run_config=QUIET,
    )
    elapsed = time.perf_counter() - started
    if not result.success:
        raise SystemExit(f"anomaly_cost: the run of {run.key.to_user_string()} failed")
    return elapsed


def _require_judged(instance: dg.DagsterInstance, key: dg.AssetKey) -> None:
    # NOTE: a check that passed unjudged (too little history) would cost less than one judging.
    for name in (f"dy_anomaly__{m.replace('/', '__')}" for m in WATCHED):
        record = instance.event_log_storage.get_latest_asset_check_execution_by_key(
            [dg.AssetCheckKey(key, name)]
        )[dg.AssetCheckKey(key, name)]
        evaluation = record.event.dagster_event.event_specific_data if record.event else None
        if evaluation is None or "dy_training_points" not in evaluation.metadata:
            raise SystemExit(f"anomaly_cost: {name} did not judge its value against a history")


def main(rows: int, repeat: int, history: int) -> None:
    frame = order_lines(rows, seed=0, invalid_share=0.014)
    plain, watched = _assets(frame)
    times: dict[str, list[float]] = {"plain": [], "watched": []}
    with tempfile.TemporaryDirectory() as base_dir, dg.DagsterInstance.ephemeral() as instance:
        _seed_history(instance, watched.key, rows, history)
        _timed(plain, instance, base_dir)  # warm-up: imports, first writes
        _timed(watched, instance, base_dir)
        _require_judged(instance, watched.key)
        for i in range(repeat):
            # NOTE: the order alternates (plain first, then watched first), so neither always
            # runs right after the other's garbage and writes.
            for name, asset in [("plain", plain), ("watched", watched)][:: 1 if i % 2 else -1]:
                times[name].append(_timed(asset, instance, base_dir))
    medians = {name: statistics.median(values) for name, values in times.items()}
    paired = statistics.median(w / p for p, w in zip(times["plain"], times["watched"], strict=True))
    print(f"{rows:,} rows, {repeat} interleaved runs each, history of {history} points")
    print(f"watched metrics: {', '.join(WATCHED)}")
    for name, median in medians.items():
        print(f"  {name:<8} median {median:6.2f} s   runs {[round(t, 2) for t in times[name]]}")
    ratio = medians["watched"] / medians["plain"]
    print(f"  ratio of medians {ratio:.3f}x, median paired ratio {paired:.3f}x (target {TARGET}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5, help="interleaved runs of each")
    parser.add_argument("--history", type=int, default=28, help="earlier points of the watched")
    arguments = parser.parse_args()
    main(arguments.rows, arguments.repeat, arguments.history)

"""Run time: what a two-output `dd.multi_asset` costs next to two `dd.asset`s and the bare filter.

A multi-asset decides every output before it writes any (the atomicity rule), so it holds both
outputs' split rows at once where two assets hold one at a time; in time it should cost what
two `validation_results` cost. Three variants, interleaved in one process (floor, two_assets,
multi_asset, floor, ...) so machine noise hits all alike:

- floor: `Orders.filter(frame, cast=False).collect_all(engine="streaming")` for each frame;
- two_assets: `list(wiring.validation_results(...))` for each frame, default settings;
- two_dd_assets: a direct call of each of two `dd.asset`s (quarantines kept in memory), so
  Dagster's direct invocation is in the figure, as it is in the next one;
- multi_asset: a direct call of a `dd.multi_asset` with both frames as outputs (default
  settings, quarantines kept in memory), through Dagster's direct invocation.

The schema is the demo's `Orders`, the frames the demo's `order_lines(rows, seed, 0.014)` with
seeds 0 and 1 (about 1.4% invalid rows). The table shows the median wall time of each variant
and its ratio to the floor.

    .venv/bin/python -m benchmarks.multi_asset [--rows 1000000 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "examples") not in sys.path:  # the demo package is not installed, only tested
    sys.path.insert(0, str(ROOT / "examples"))

import dagster as dg  # noqa: E402
import polars as pl  # noqa: E402

import dagster_dataframely as dd  # noqa: E402
from dagster_dataframely import wiring  # noqa: E402
from dagster_dataframely._store.capture import capturing_quarantine  # noqa: E402
from dagster_dataframely_demo._data import order_lines  # noqa: E402
from dagster_dataframely_demo.schema import Orders  # noqa: E402

INVALID_SHARE = 0.014


def _writer(frame: pl.DataFrame) -> str:
    return "mem"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs=2, default=[1_000_000, 1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    first = order_lines(args.rows[0], seed=0, invalid_share=INVALID_SHARE)
    second = order_lines(args.rows[1], seed=1, invalid_share=INVALID_SHARE)

    @dd.multi_asset(
        outs={
            "first": dd.AssetOut(Orders, quarantine=True),
            "second": dd.AssetOut(Orders, quarantine=True),
        }
    )
    def both() -> dict[str, pl.DataFrame]:
        return {"first": first, "second": second}

    @dd.asset(Orders, quarantine=True)
    def first_asset() -> pl.DataFrame:
        return first

    @dd.asset(Orders, quarantine=True)
    def second_asset() -> pl.DataFrame:
        return second

    instance = dg.DagsterInstance.ephemeral()

    def floor() -> None:
        for frame in (first, second):
            Orders.filter(frame.lazy(), cast=False).collect_all(engine="streaming")

    def two_assets() -> None:
        for name, frame in (("first", first), ("second", second)):
            list(
                wiring.validation_results(
                    Orders, frame, valid_key=dg.AssetKey(name), quarantine_writer=_writer
                )
            )

    def two_dd_assets() -> None:
        for asset in (first_asset, second_asset):
            with capturing_quarantine(), dg.build_asset_context(instance=instance) as context:
                list(asset(context))

    def multi_asset() -> None:
        with capturing_quarantine(), dg.build_asset_context(instance=instance) as context:
            list(both(context))

    variants: dict[str, Callable[[], None]] = {
        "floor": floor,
        "two_assets": two_assets,
        "two_dd_assets": two_dd_assets,
        "multi_asset": multi_asset,
    }
    two_dd_assets()  # warm up: Dagster's first invocation imports and caches
    multi_asset()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.repeat):
        for name, run in variants.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    base = statistics.median(times["floor"])
    print(f"rows: {args.rows[0]:,} + {args.rows[1]:,}, repeat {args.repeat}")
    print(f"{'variant':<14} {'median s':>9} {'x floor':>8}")
    for name, measured in times.items():
        median = statistics.median(measured)
        print(f"{name:<14} {median:>9.3f} {median / base:>8.2f}")


if __name__ == "__main__":
    main()

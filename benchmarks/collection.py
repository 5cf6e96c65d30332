"""Run time: what `dd.collection_asset` adds to Dataframely's own `Collection.filter`.

The floor is Dataframely splitting a two-member Collection, collected once:
`OrderBook.filter({"orders": ..., "lines": ...}, cast=False)` (eager, so every member is
collected inside it), then `len(failure)` for each member. The variants time what a
`dd.collection_asset` step does after its user's function returns, without Dagster around it:

- default: the joint split (`_run.collection_split`: the same `Collection.filter` over
  rows collected once, plus the failures with one outcome per rule and filter), then each
  member's outcome classified and emitted (`_run.emit`) with the default settings:
  statistics, 5-row samples of valid and invalid rows, 5 failure samples per rule and filter,
  every check result; the quarantine writer only returns an address;
- lean: the same with `statistics=False, row_sample=0, max_failure_samples=0`.

`orders` has `--rows` rows (5 columns, about 1% failing `amount|min`), `lines` four times as
many (5 columns; about 1% failing `quantity|min`, and about 1% whose order does not exist,
which the filter `line_has_order` removes). Variants run interleaved (floor, default, lean,
floor, ...) so machine noise hits all alike; the table shows the median wall time of each and
the ratio to the floor. Target: default <= 1.3x the floor.

    .venv/bin/python -m benchmarks.collection [--rows 1000000] [--repeat 3] [--quick]
"""

# No `from __future__ import annotations`: a `dy.Collection` reads its annotations at runtime.
import argparse
import gc
import statistics
import time
from collections.abc import Callable

import dagster as dg
import dataframely as dy
import polars as pl

from dagster_dataframely._model.collection import read_collection
from dagster_dataframely._model.settings import resolve_settings
from dagster_dataframely._run.decide.outcome import decide_members
from dagster_dataframely._run.decide.output_run import OutputRun
from dagster_dataframely._run.emit.emit import emit
from dagster_dataframely._run.validated_output import ValidatedOutput

VARIANTS = ("floor", "default", "lean")
TARGET = 1.3
LEAN = {"statistics": False, "row_sample": 0, "max_failure_samples": 0}


class Orders(dy.Schema):
    """An order."""

    order_id = dy.Int64(primary_key=True)
    customer = dy.String(min_length=3)
    region = dy.Enum(["eu", "us", "apac"])
    placed_at = dy.Datetime(time_zone="UTC")
    amount = dy.Float64(min=0.0)


class Lines(dy.Schema):
    """A line of an order."""

    order_id = dy.Int64(primary_key=True)
    line_no = dy.Int64(primary_key=True, min=1, max=99)
    sku = dy.String(regex=r"^SKU-[0-9]+$")
    quantity = dy.Int64(min=1)
    price = dy.Float64(min=0.0)


class OrderBook(dy.Collection):
    """Orders and their lines: every line has an order."""

    orders: dy.LazyFrame[Orders]
    lines: dy.LazyFrame[Lines]

    @dy.filter()
    def line_has_order(self) -> pl.LazyFrame:
        """Every line has an order."""
        return self.orders.select("order_id")


def frames(rows: int) -> dict[str, pl.DataFrame]:
    """`rows` orders and `4 * rows` lines, about 1% of each failing a rule, 1% orphan lines."""
    index = pl.int_range(rows, dtype=pl.Int64)
    orders = pl.select(
        order_id=index,
        customer=pl.format("customer-{}", index % 5000),
        region=pl.lit("eu").cast(pl.Enum(["eu", "us", "apac"])),
        placed_at=pl.datetime(2026, 1, 1, time_zone="UTC") + pl.duration(seconds=index),
        amount=pl.when(index.hash(1) % 100 == 0).then(-1.0).otherwise(index % 997 * 1.5),
    )
    line = pl.int_range(4 * rows, dtype=pl.Int64)
    orphan = line.hash(2) % 100 == 0
    lines = pl.select(
        order_id=pl.when(orphan).then(line // 4 + 10 * rows).otherwise(line // 4),
        line_no=line % 4 + 1,
        sku=pl.format("SKU-{}", line % 10_000),
        quantity=pl.when(line.hash(3) % 100 == 0).then(0).otherwise(line % 7 + 1),
        price=line % 101 * 0.5,
    )
    return {"orders": orders, "lines": lines}


def floor(members: dict[str, pl.DataFrame]) -> None:
    _, failure = OrderBook.filter(members, cast=False)
    for info in failure.values():
        len(info)


def _ours(members: dict[str, pl.DataFrame], **settings: object) -> None:
    info = read_collection(OrderBook)
    resolved = resolve_settings(**settings)  # type: ignore[arg-type]
    runs = {
        name: OutputRun(
            ValidatedOutput(name, dg.AssetKey(name), member.info, resolved, True, False),
            partition_key=None,
            writer=lambda frame: "mem",
            clear_quarantine=False,
        )
        for name, member in info.members.items()
    }
    outcomes = decide_members(info, members, runs)
    list(emit([outcomes[name] for name in runs]))


RUN: dict[str, Callable[[dict[str, pl.DataFrame]], None]] = {
    "floor": floor,
    "default": _ours,
    "lean": lambda members: _ours(members, **LEAN),
}


def _timed(function: Callable[[], object]) -> float:
    gc.collect()
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="100k orders, 1 repeat")
    arguments = parser.parse_args()
    sizes, repeat = ([100_000], 1) if arguments.quick else (arguments.rows, arguments.repeat)
    print(f"polars {pl.__version__}, dataframely {dy.__version__}, dagster {dg.__version__}")
    print("| Orders + lines | floor | default | lean |")
    print("|---:|---:|---:|---:|")
    worst = 0.0
    for rows in sizes:
        members = frames(rows)
        RUN["default"](members)  # warm up: read the Collection, compile the regexes
        times: dict[str, list[float]] = {variant: [] for variant in VARIANTS}
        for _ in range(repeat):
            for variant in VARIANTS:
                times[variant].append(_timed(lambda v=variant, m=members: RUN[v](m)))
        median = {variant: statistics.median(values) for variant, values in times.items()}
        cells = [f"{median['floor']:.2f} s"] + [
            f"{median[v]:.2f} s ({median[v] / median['floor']:.2f}x)" for v in ("default", "lean")
        ]
        worst = max(worst, median["default"] / median["floor"])
        print(f"| {rows:,} + {4 * rows:,} | " + " | ".join(cells) + " |")
    print(f"default, worst ratio to the floor: {worst:.2f}x (target <= {TARGET}x)")


if __name__ == "__main__":
    main()

"""Two runs of one partition at once: never one run's table beside the other's quarantine.

Run A is held between its quarantine write and its table write (the one window where
interleaving pairs the wrong files), while run B of the same partition starts. Without any
configuration B now fails before writing; with a concurrency pool of limit 1, as
docs/guarantees.md recommends, B waits for A and both succeed, one after the other.
"""

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager
from upath import UPath

import dagster_dataframely as dd

from .conftest import DAY_1, QUIET, Orders, assert_quarantine, assert_table, orders_frame

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

PARTITIONS = dg.StaticPartitionsDefinition([DAY_1])
HOLD_SECONDS = 6.0
"""The longest run A's table write waits for run B: B ends sooner unless a pool queues it."""


class Gate:
    """Events the two runs and the test synchronize on."""

    def __init__(self) -> None:
        self.a_holding = threading.Event()
        self.b_finished = threading.Event()
        self.b_entered_after_a_wrote = threading.Event()
        self.a_table_written = threading.Event()


GATE: list[Gate] = []


class HoldingParquetIOManager(PolarsParquetIOManager):
    """Parquet, except that run A's table write first waits until run B has finished."""

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        gate = GATE[0]
        # Every id of run A's frames starts with `A-`.
        run_a = obj.height > 0 and obj["order_id"][0].startswith("A-")
        if run_a and context.asset_key == dg.AssetKey("orders"):
            gate.a_holding.set()
            gate.b_finished.wait(HOLD_SECONDS)
        super().dump_to_path(context, obj, path)
        if run_a and context.asset_key == dg.AssetKey("orders"):
            gate.a_table_written.set()


def orders_in(pool: str | None, frames: dict[str, pl.DataFrame]) -> dg.AssetsDefinition:
    @dd.asset(Orders, quarantine=True, partitions_def=PARTITIONS, pool=pool)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        if context.run.tags["run"] == "B" and GATE[0].a_table_written.is_set():
            GATE[0].b_entered_after_a_wrote.set()
        return frames[context.run.tags["run"]]

    return orders


@pytest.fixture
def gate() -> Iterator[Gate]:
    GATE.append(Gate())
    yield GATE[0]
    GATE.clear()


def instance_with(pools: dict[str, Any] | None) -> Any:
    overrides: dict[str, Any] = {
        "compute_logs": {
            "module": "dagster._core.storage.noop_compute_log_manager",
            "class": "NoOpComputeLogManager",
        }
    }
    if pools is not None:
        overrides["concurrency"] = {"pools": pools}
    return dg.instance_for_test(overrides=overrides)


def race(
    orders: dg.AssetsDefinition, warehouse: Path, instance: dg.DagsterInstance, gate: Gate
) -> dict[str, dg.ExecuteInProcessResult]:
    """Start run A, and once A holds its table write, run B of the same partition."""
    results: dict[str, dg.ExecuteInProcessResult] = {}

    def run(name: str) -> None:
        results[name] = dg.materialize(
            [orders],
            resources={"io_manager": HoldingParquetIOManager(base_dir=str(warehouse))},
            run_config=QUIET,
            partition_key=DAY_1,
            instance=instance,
            tags={"run": name},
            raise_on_error=False,
        )
        if name == "B":
            gate.b_finished.set()

    first = threading.Thread(target=run, args=("A",))
    first.start()
    assert gate.a_holding.wait(60)
    second = threading.Thread(target=run, args=("B",))
    # With a pool, B is queued behind A and cannot release A: A's hold runs out.
    second.start()
    first.join(90)
    second.join(90)
    assert not first.is_alive()
    assert not second.is_alive()
    return results


def error_of(result: dg.ExecuteInProcessResult) -> str:
    failure = result.failure_data_for_node("orders")
    assert failure is not None
    assert failure.error is not None
    cause = failure.error.cause or failure.error
    return cause.cls_name or ""


def test_a_second_run_of_a_partition_being_written_fails_before_writing(
    tmp_path: Path, gate: Gate
) -> None:
    warehouse = tmp_path / "warehouse"
    frames = {
        "A": orders_frame(DAY_1, tag="A", valid=2, invalid=1),
        "B": orders_frame(DAY_1, tag="B", valid=3, invalid=2),
    }
    with instance_with(None) as instance:
        results = race(orders_in(None, frames), warehouse, instance, gate)

    assert results["A"].success
    assert not results["B"].success
    assert error_of(results["B"]) == "ConcurrentRunError"
    # The stored pair is run A's, whole: B wrote neither its quarantine nor its table.
    assert_table(pl.read_parquet(warehouse / "orders" / f"{DAY_1}.parquet"), frames["A"])
    assert_quarantine(
        pl.read_parquet(warehouse / "orders_quarantine" / f"{DAY_1}.parquet"), frames["A"]
    )


def test_a_pool_with_limit_one_runs_them_one_after_the_other(tmp_path: Path, gate: Gate) -> None:
    warehouse = tmp_path / "warehouse"
    frames = {
        "A": orders_frame(DAY_1, tag="A", valid=2, invalid=1),
        "B": orders_frame(DAY_1, tag="B", valid=3, invalid=2),
    }
    # The configuration docs/guarantees.md gives: a pool per asset, and pools of limit 1.
    with instance_with({"default_limit": 1}) as instance:
        results = race(orders_in("orders", frames), warehouse, instance, gate)

    assert results["A"].success
    assert results["B"].success
    # B reached its step while A held its table write, and waited for the pool's one slot.
    waits = [e.message or "" for e in results["B"].all_events if e.is_engine_event]
    assert any("blocked" in message and "orders" in message for message in waits), waits
    assert gate.b_entered_after_a_wrote.is_set()
    assert_table(pl.read_parquet(warehouse / "orders" / f"{DAY_1}.parquet"), frames["B"])
    assert_quarantine(
        pl.read_parquet(warehouse / "orders_quarantine" / f"{DAY_1}.parquet"), frames["B"]
    )

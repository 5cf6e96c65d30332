"""Two runs of one partition at once: never one run's table beside the other's quarantine.

Run A is held between its quarantine write and its table write (the one window where
interleaving pairs the wrong files), while run B of the same partition starts. Without any
configuration B now fails before writing; with a concurrency pool of limit 1, as
docs/guarantees.md recommends, B waits for A and both succeed, one after the other.

Two run processes released into the step together, round after round, on an instance stored
in SQLite (`released_runs`): in every round exactly one writes, and the other stops with
`ConcurrentRunError` before writing; when both announced before either read, the one created
first writes. The same rounds on PostgreSQL, with each step in a process of its own, are in
`test_postgres_instance.py`.
"""

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager
from upath import UPath

import dagster_dataframely as dd

from . import released_runs
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


# Two runs entering the step together.


class Arrivals:
    """Both runs' `gate` input waits for the other run; the test starts B once A waits."""

    def __init__(self) -> None:
        self.barrier = threading.Barrier(2, timeout=60)


ARRIVALS: list[Arrivals] = []


class GateLoader(dg.IOManager):
    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        raise NotImplementedError("gate is an external asset")

    def load_input(self, context: dg.InputContext) -> int:
        ARRIVALS[0].barrier.wait()
        return 0


def gated_orders(frames: dict[str, pl.DataFrame]) -> dg.AssetsDefinition:
    @dd.asset(
        Orders,
        quarantine=True,
        partitions_def=PARTITIONS,
        name="orders",
        ins={"gate": dg.AssetIn("gate", input_manager_key="gate")},
    )
    def orders(context: dg.AssetExecutionContext, gate: int) -> pl.DataFrame:
        return frames[context.run.tags["run"]]

    return orders


def test_of_two_runs_checking_together_one_writes_even_if_step_failures_are_stored_late(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both runs leave their input loading together and reach the check; a run's step failure is
    stored only once the other run's step has ended (or after 3 s), as when both runs check
    before either failure reaches the instance. Exactly one writes; none stops for a run that
    stops too."""
    warehouse = tmp_path / "warehouse"
    frames = {
        "A": orders_frame(DAY_1, tag="A", valid=2, invalid=1),
        "B": orders_frame(DAY_1, tag="B", valid=3, invalid=2),
    }
    orders = gated_orders(frames)
    ARRIVALS.append(Arrivals())
    results: dict[str, dg.ExecuteInProcessResult] = {}
    with instance_with(None) as instance:
        store = instance.handle_new_event
        step_ended = threading.Event()

        def store_failures_late(event: Any, **kwargs: Any) -> None:
            kind = event.dagster_event.event_type if event.dagster_event is not None else None
            if kind == dg.DagsterEventType.STEP_FAILURE:
                step_ended.wait(3.0)
            store(event, **kwargs)
            if kind in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE):
                step_ended.set()

        monkeypatch.setattr(instance, "handle_new_event", store_failures_late)

        def run(name: str) -> None:
            results[name] = dg.materialize(
                [dg.AssetSpec("gate"), orders],
                selection=[orders],
                resources={
                    "io_manager": PolarsParquetIOManager(base_dir=str(warehouse)),
                    "gate": GateLoader(),
                },
                run_config=QUIET,
                partition_key=DAY_1,
                instance=instance,
                tags={"run": name},
                raise_on_error=False,
            )

        try:
            first = threading.Thread(target=run, args=("A",))
            first.start()
            while ARRIVALS[0].barrier.n_waiting < 1:  # A is in its step, at the gate
                assert first.is_alive()
                time.sleep(0.01)
            second = threading.Thread(target=run, args=("B",))
            second.start()
            first.join(90)
            second.join(90)
        finally:
            ARRIVALS.clear()

    assert sorted(result.success for result in results.values()) == [False, True]
    (writer,) = [name for name, result in results.items() if result.success]
    (stopped,) = [result for result in results.values() if not result.success]
    assert error_of(stopped) == "ConcurrentRunError"
    assert_table(pl.read_parquet(warehouse / "orders" / f"{DAY_1}.parquet"), frames[writer])
    assert_quarantine(
        pl.read_parquet(warehouse / "orders_quarantine" / f"{DAY_1}.parquet"), frames[writer]
    )


RELEASED_ROUNDS = [
    ("round-1", released_runs.RELEASED, released_runs.IN_PROCESS),
    ("round-2", released_runs.RELEASED, released_runs.IN_PROCESS),
    ("round-3", released_runs.ANNOUNCED, released_runs.IN_PROCESS),
    ("round-4", released_runs.ANNOUNCED, released_runs.IN_PROCESS),
    ("round-5", released_runs.ANNOUNCED, released_runs.MULTIPROCESS),
]


def test_of_two_runs_released_into_the_step_together_exactly_one_writes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with dg.instance_for_test(temp_dir=str(home)) as instance:
        released_runs.race(instance, RELEASED_ROUNDS, tmp_path)

        for partition, mode, _ in RELEASED_ROUNDS:
            released_runs.assert_one_writer(instance, tmp_path, partition, mode)

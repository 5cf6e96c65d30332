"""A quarantine users can see and trust: observations, its asset's group, and an opt-in clear.

- Each quarantine write in a run is an observation of the quarantine's key (row count, address,
  partition, run), when the quarantine is in the graph (`quarantine_spec`); never a
  materialization.
- `quarantine_spec` puts the quarantine in its asset's group, with its owners and tags.
- `clear_quarantine=True`: a clean run writes an empty quarantine through the same writer.

Storage is an in-memory IO manager here; the parquet and DuckDB managers are in
`integration_tests/test_quarantine_visibility.py`.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely import wiring
from dagster_dataframely.errors import ClearQuarantineError
from tests.asset_support import CLEAN, MIXED, QUIET, AssetContext, SmallOrders, collect

pytestmark = [
    pytest.mark.filterwarnings("ignore::dagster.PreviewWarning"),
]

DAYS = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-03")
QUARANTINE = dg.AssetKey("orders_quarantine")


class MemoryIOManager(dg.IOManager):
    """Stores each output by asset key and partition, as a real manager would lay them out."""

    def __init__(self) -> None:
        self.stored: dict[tuple[str, str | None], pl.DataFrame] = {}

    def _slot(self, context: dg.OutputContext | dg.InputContext) -> tuple[str, str | None]:
        partition = context.partition_key if context.has_partition_key else None
        return context.asset_key.to_user_string(), partition

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if isinstance(obj, pl.DataFrame):
            self.stored[self._slot(context)] = obj

    def load_input(self, context: dg.InputContext) -> Any:
        return self.stored[self._slot(context)]


@pytest.fixture
def own_instance() -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.ephemeral() as instance:
        yield instance


def _run(
    assets: list[dg.AssetsDefinition | dg.AssetSpec],
    manager: MemoryIOManager,
    instance: dg.DagsterInstance,
    **kwargs: Any,
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        assets, resources={"io_manager": manager}, instance=instance, run_config=QUIET, **kwargs
    )


def _observations(instance: dg.DagsterInstance, key: dg.AssetKey) -> list[dg.AssetObservation]:
    """Every observation of `key` in the instance's event log, oldest first."""
    records = instance.fetch_observations(key, limit=100, ascending=True).records
    observations = [record.asset_observation for record in records]
    assert all(o is not None for o in observations)
    return [o for o in observations if o is not None]


def _values(observation: dg.AssetObservation) -> dict[str, Any]:
    return {name: getattr(v, "value", v) for name, v in observation.metadata.items()}


# --- observations ----------------------------------------------------------------------------


def test_each_write_is_an_observation_of_the_declared_quarantine(
    own_instance: dg.DagsterInstance,
) -> None:
    source = {"2026-01-01": MIXED, "2026-01-02": MIXED.head(2)}

    @dd.asset(SmallOrders, quarantine=True, partitions_def=DAYS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return source[context.partition_key]

    assets = [orders, dd.quarantine_spec(SmallOrders, orders)]
    manager = MemoryIOManager()
    first = _run(assets, manager, own_instance, partition_key="2026-01-01")
    second = _run(assets, manager, own_instance, partition_key="2026-01-02")

    observed = _observations(own_instance, QUARANTINE)
    assert [o.partition for o in observed] == ["2026-01-01", "2026-01-02"]
    assert [_values(o) for o in observed] == [
        {
            "dagster/row_count": 2,
            "dataframely/quarantine_address": "orders_quarantine",
            "dataframely/quarantine_of": "orders",
            "dataframely/run": first.run_id,
        },
        {
            "dagster/row_count": 1,
            "dataframely/quarantine_address": "orders_quarantine",
            "dataframely/quarantine_of": "orders",
            "dataframely/run": second.run_id,
        },
    ]
    # The row count matches what was stored.
    assert manager.stored[("orders_quarantine", "2026-01-01")].height == 2
    # The spec's promise holds: the quarantine itself is never materialized.
    assert own_instance.get_latest_materialization_event(QUARANTINE) is None


def test_an_undeclared_quarantine_is_not_observed(own_instance: dg.DagsterInstance) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return MIXED

    manager = MemoryIOManager()
    _run([orders], manager, own_instance)

    assert manager.stored[("orders_quarantine", None)].height == 2
    assert _observations(own_instance, QUARANTINE) == []


def test_a_clean_run_writes_no_observation_by_default(own_instance: dg.DagsterInstance) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return CLEAN

    _run([orders, dd.quarantine_spec(SmallOrders, orders)], MemoryIOManager(), own_instance)

    assert _observations(own_instance, QUARANTINE) == []


def test_every_row_invalid_is_observed_though_the_run_fails(
    own_instance: dg.DagsterInstance,
) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return MIXED.filter(pl.col("order_id").is_in(["b", "d"]))

    result = _run(
        [orders, dd.quarantine_spec(SmallOrders, orders)],
        MemoryIOManager(),
        own_instance,
        raise_on_error=False,
    )

    assert not result.success
    (observed,) = _observations(own_instance, QUARANTINE)
    assert _values(observed)["dagster/row_count"] == 2


# --- the spec's group, owners and tags -------------------------------------------------------


def test_the_spec_takes_the_assets_group_owners_and_tags() -> None:
    @dd.asset(
        SmallOrders,
        quarantine=True,
        group_name="sales",
        owners=["team:sales"],
        tags={"domain": "orders"},
    )
    def orders() -> pl.DataFrame:
        return MIXED

    spec = dd.quarantine_spec(SmallOrders, orders)

    assert spec.group_name == "sales"
    assert list(spec.owners) == ["team:sales"]
    assert spec.tags["domain"] == "orders"
    defs = dg.Definitions(assets=[orders, spec])
    graph = defs.resolve_asset_graph()
    assert graph.get(QUARANTINE).group_name == "sales"


def test_arguments_replace_the_definitions_group_and_owners() -> None:
    @dd.asset(SmallOrders, quarantine=True, group_name="sales", owners=["team:sales"])
    def orders() -> pl.DataFrame:
        return MIXED

    spec = dd.quarantine_spec(
        SmallOrders, orders, group_name="triage", owners=["alice@example.com"], tags={"t": "1"}
    )

    assert spec.group_name == "triage"
    assert list(spec.owners) == ["alice@example.com"]
    assert spec.tags["t"] == "1"


def test_a_key_takes_group_owners_and_tags_as_arguments() -> None:
    spec = dd.quarantine_spec(
        SmallOrders, "orders", group_name="sales", owners=["team:sales"], tags={"d": "o"}
    )
    assert (spec.group_name, list(spec.owners), dict(spec.tags)) == (
        "sales",
        ["team:sales"],
        {"d": "o"},
    )
    bare = dd.quarantine_spec(SmallOrders, "orders")
    assert (bare.group_name, list(bare.owners), dict(bare.tags)) == (None, [], {})


# --- clear_quarantine ------------------------------------------------------------------------


def _orders(source: dict[str, pl.DataFrame], **kwargs: Any) -> dg.AssetsDefinition:
    @dd.asset(SmallOrders, quarantine=True, partitions_def=DAYS, **kwargs)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return source[context.partition_key]

    return orders


def test_a_clean_run_replaces_that_partitions_quarantine(own_instance: dg.DagsterInstance) -> None:
    source = {"2026-01-01": MIXED, "2026-01-02": MIXED}
    orders = _orders(source, clear_quarantine=True)
    assets = [orders, dd.quarantine_spec(SmallOrders, orders)]
    manager = MemoryIOManager()
    _run(assets, manager, own_instance, partition_key="2026-01-01")
    _run(assets, manager, own_instance, partition_key="2026-01-02")

    source["2026-01-01"] = CLEAN
    clean = _run(assets, manager, own_instance, partition_key="2026-01-01")

    cleared = manager.stored[("orders_quarantine", "2026-01-01")]
    assert cleared.height == 0
    assert cleared.columns == manager.stored[("orders_quarantine", "2026-01-02")].columns
    assert manager.stored[("orders_quarantine", "2026-01-02")].height == 2  # untouched
    latest = _observations(own_instance, QUARANTINE)[-1]
    assert latest.partition == "2026-01-01"
    assert _values(latest)["dagster/row_count"] == 0
    assert _values(latest)["dataframely/run"] == clean.run_id
    # The clean run's materialization still reports no failure keys, as the spec says.
    (table,) = clean.get_asset_materialization_events()
    assert table.materialization is not None
    assert "dataframely/quarantine_address" not in table.materialization.metadata


def test_by_default_a_clean_run_leaves_the_old_quarantine(own_instance: dg.DagsterInstance) -> None:
    source = {"2026-01-01": MIXED}
    orders = _orders(source)
    manager = MemoryIOManager()
    _run([orders], manager, own_instance, partition_key="2026-01-01")

    source["2026-01-01"] = CLEAN
    _run([orders], manager, own_instance, partition_key="2026-01-01")

    assert manager.stored[("orders_quarantine", "2026-01-01")].height == 2


def test_a_skipped_partition_does_not_clear(own_instance: dg.DagsterInstance) -> None:
    source: dict[str, Any] = {"2026-01-01": MIXED}
    orders = _orders(source, clear_quarantine=True)
    manager = MemoryIOManager()
    _run([orders], manager, own_instance, partition_key="2026-01-01")

    source["2026-01-01"] = None
    _run([orders], manager, own_instance, partition_key="2026-01-01")

    assert manager.stored[("orders_quarantine", "2026-01-01")].height == 2


def test_clear_quarantine_needs_a_quarantine() -> None:
    with pytest.raises(ClearQuarantineError, match="'sales/orders'"):

        @dd.asset(SmallOrders, key_prefix="sales", clear_quarantine=True)
        def orders() -> pl.DataFrame:
            return CLEAN

    with pytest.raises(ClearQuarantineError, match="quarantine_writer"):
        wiring.validation_results(
            SmallOrders, CLEAN, valid_key=dg.AssetKey("orders"), clear_quarantine=True
        )


def test_a_call_clears_the_quarantine_file(
    asset_context: AssetContext, quarantine_dir: Path
) -> None:
    source = {"2026-01-01": MIXED}
    orders = _orders(source, clear_quarantine=True)
    path = quarantine_dir / "orders_quarantine" / "2026-01-01.parquet"
    list(orders(asset_context(partition_key="2026-01-01")))
    assert pl.read_parquet(path).height == 2

    source["2026-01-01"] = CLEAN
    list(orders(asset_context(partition_key="2026-01-01")))

    assert pl.read_parquet(path).height == 0


def test_a_clean_call_without_a_quarantine_dir_still_succeeds(
    asset_context: AssetContext,
) -> None:
    orders = _orders({"2026-01-01": CLEAN}, clear_quarantine=True)

    events = list(orders(asset_context(partition_key="2026-01-01")))

    assert any(isinstance(e, dg.MaterializeResult) for e in events)


def test_hand_wired_clear_hands_the_writer_an_empty_quarantine_frame() -> None:
    written: list[pl.DataFrame] = []

    def writer(frame: pl.DataFrame) -> str:
        written.append(frame)
        return "memory://orders_quarantine"

    collect(
        wiring.validation_results(
            SmallOrders,
            CLEAN,
            valid_key=dg.AssetKey("orders"),
            quarantine_writer=writer,
            clear_quarantine=True,
        )
    )
    (frame,) = written
    assert frame.height == 0
    assert frame.columns[:2] == ["order_id", "amount"]
    assert all(c.startswith("dy_rule__") for c in frame.columns[2:])

    written.clear()
    collect(
        wiring.validation_results(
            SmallOrders, CLEAN, valid_key=dg.AssetKey("orders"), quarantine_writer=writer
        )
    )
    assert written == []

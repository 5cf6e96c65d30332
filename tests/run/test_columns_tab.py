"""The Columns tab after a run: the catalog keeps showing the schema, whatever the IO manager logs.

Dagster's catalog shows the latest materialization's `dagster/column_schema` over the asset
definition's, and an IO manager may log its own, read from the frame. `FrameSchemaIOManager`
logs one as dagster-polars' `PolarsParquetIOManager` does (every column nullable, no constraint),
so these tests need no third-party manager; `integration_tests/test_columns_tab_after_run.py`
runs the real ones.
"""

from typing import Any
from uuid import uuid4

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely import wiring
from tests.asset_support import (
    CLEAN,
    MIXED,
    QUIET,
    AssetContext,
    SmallOrders,
    call_tables,
    catalog_column_schema,
    run_tables,
)
from tests.schemas import OrderLines

COLUMN_SCHEMA = "dagster/column_schema"


def frame_schema(frame: pl.DataFrame) -> dg.TableSchema:
    """What a frame alone tells about its columns: their names and dtypes, nothing else."""
    return dg.TableSchema(
        columns=[dg.TableColumn(name=name, type=str(dtype)) for name, dtype in frame.schema.items()]
    )


class FrameSchemaIOManager(dg.IOManager):
    """Keeps every frame in memory and logs the frame's own column schema on every write."""

    def __init__(self) -> None:
        self.stored: dict[dg.AssetKey, pl.DataFrame] = {}

    def handle_output(self, context: dg.OutputContext, obj: pl.DataFrame) -> None:
        self.stored[context.asset_key] = obj
        context.add_output_metadata({COLUMN_SCHEMA: frame_schema(obj)})

    def load_input(self, context: dg.InputContext) -> pl.DataFrame:
        return self.stored[context.asset_key]


@pytest.fixture
def prefix() -> str:
    """A key prefix of the test's own, so the shared instance's event log has no other runs."""
    return f"t_{uuid4().hex[:12]}"


@pytest.fixture
def run(instance: dg.DagsterInstance) -> Any:
    """`dg.materialize` on the shared instance, every asset stored by a `FrameSchemaIOManager`."""

    def materialize(
        assets: list[dg.AssetsDefinition], *, raise_on_error: bool = True
    ) -> dg.ExecuteInProcessResult:
        return dg.materialize(
            assets,
            resources={"io_manager": FrameSchemaIOManager()},
            instance=instance,
            run_config=QUIET,
            raise_on_error=raise_on_error,
        )

    return materialize


def test_the_tab_shows_the_schema_before_and_after_every_run(
    run: Any, instance: dg.DagsterInstance, prefix: str
) -> None:
    frames = [CLEAN, MIXED]

    @dd.asset(SmallOrders, quarantine=True, key_prefix=prefix)
    def orders() -> pl.DataFrame:
        return frames.pop(0)

    expected = wiring.table_schema(SmallOrders)
    assert catalog_column_schema(instance, orders) == expected
    for _ in range(2):  # a clean run, then one that writes a quarantine too
        (table,) = run_tables(run([orders]), orders.key)
        assert table.metadata[COLUMN_SCHEMA].value == expected
        assert catalog_column_schema(instance, orders) == expected
    assert frames == []


def test_the_schema_rules_stay_in_the_tab_after_a_run(
    run: Any, instance: dg.DagsterInstance, prefix: str
) -> None:
    @dd.asset(OrderLines, key_prefix=prefix)
    def order_lines() -> pl.DataFrame:
        return OrderLines.create_empty()

    run([order_lines])

    shown = catalog_column_schema(instance, order_lines)
    assert shown.constraints.other == [
        "primary key (order_id, line_no)",
        "paid_has_price",
        "plausible_quantity",
    ]
    assert shown == wiring.table_schema(OrderLines)


def test_the_users_own_add_asset_metadata_still_wins(
    run: Any, instance: dg.DagsterInstance, prefix: str
) -> None:
    mine = dg.TableSchema(columns=[dg.TableColumn(name="order_id", type="text")])

    @dd.asset(SmallOrders, key_prefix=prefix)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        context.add_asset_metadata({COLUMN_SCHEMA: mine, "source": "stripe"})
        return CLEAN

    (table,) = run_tables(run([orders]), orders.key)

    assert table.metadata["source"].value == "stripe"
    assert catalog_column_schema(instance, orders) == mine


def test_a_returned_column_schema_reaches_the_materialization_unchanged(
    run: Any, instance: dg.DagsterInstance, prefix: str
) -> None:
    mine = dg.TableSchema(columns=[dg.TableColumn(name="order_id", type="text")])

    @dd.asset(SmallOrders, key_prefix=prefix)
    def orders() -> dg.MaterializeResult[pl.DataFrame]:
        return dg.MaterializeResult(value=CLEAN, metadata={COLUMN_SCHEMA: mine})

    run([orders])

    assert catalog_column_schema(instance, orders) == mine


def test_a_run_that_writes_no_table_keeps_the_tab_it_had(
    run: Any, instance: dg.DagsterInstance, prefix: str
) -> None:
    frames: list[pl.DataFrame | None] = [None, MIXED, CLEAN, MIXED]

    @dd.asset(SmallOrders, key_prefix=prefix)  # no quarantine: invalid rows fail the run
    def orders() -> pl.DataFrame | None:
        return frames.pop(0)

    expected = wiring.table_schema(SmallOrders)
    assert run_tables(run([orders]), orders.key) == []  # the skip
    assert instance.get_latest_materialization_event(orders.key) is None
    assert catalog_column_schema(instance, orders) == expected  # the definition's
    assert not run([orders], raise_on_error=False).success  # ValidationAbortError
    assert instance.get_latest_materialization_event(orders.key) is None
    run([orders])
    assert not run([orders], raise_on_error=False).success
    assert catalog_column_schema(instance, orders) == expected  # the clean run's


def test_a_direct_invocation_yields_the_spec_metadata_keys_only(
    asset_context: AssetContext,
) -> None:
    @dd.asset(SmallOrders)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return CLEAN

    (table,) = call_tables(orders(asset_context()))

    assert COLUMN_SCHEMA not in (table.metadata or {})


def test_a_direct_invocation_inside_another_assets_step_leaves_that_step_alone(
    run: Any, prefix: str
) -> None:
    @dd.asset(SmallOrders, key_prefix=prefix)
    def orders() -> pl.DataFrame:
        return CLEAN

    @dg.asset(key_prefix=prefix)
    def summary() -> pl.DataFrame:
        (table,) = call_tables(orders())
        frame: pl.DataFrame = table.value
        return frame.select(pl.len())

    (table,) = run_tables(run([summary]), summary.key)

    assert table.metadata[COLUMN_SCHEMA].value == frame_schema(pl.select(pl.len()))

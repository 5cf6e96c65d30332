"""The catalog's Columns tab before and after runs, with every IO manager the docs name.

The catalog shows the latest materialization's `dagster/column_schema`, else the definition's.
`PolarsParquetIOManager` logs one read from the frame (every column nullable, no constraint), so
without the package's own entry on the materialization the tab would lose the schema after the
first run; `DuckDBPolarsIOManager` logs none. Each test reads the tab from the instance's event
log with `catalog_column_schema`, as the UI does.
"""

from collections.abc import Callable, Iterator
from pathlib import Path
from uuid import uuid4

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager
from tests.asset_support import catalog_column_schema

import dagster_dataframely as dd

from .conftest import (
    DAILY,
    DAY_1,
    DAY_2,
    Orders,
    materialization_metadata,
    materialize,
    orders_frame,
    shared_instance,
)

pytestmark = pytest.mark.integration


class RuledOrders(Orders):
    """The suite's orders with a rule across groups of rows, which the tab lists by its name."""

    @dy.rule()
    def one_region_per_day(cls) -> pl.Expr:
        """All orders of one day come from one region."""
        return pl.col("region").n_unique().over("day") == 1


SCHEMA_RULES = ["primary key (order_id)", "one_region_per_day"]
"""The table-level constraints the tab shows for `RuledOrders`."""


def assert_the_tab_shows_the_schema(asset: dg.AssetsDefinition) -> None:
    """The catalog shows `RuledOrders`: its rules at table level, each column's constraints."""
    shown = catalog_column_schema(shared_instance(), asset)
    assert shown.constraints.other == SCHEMA_RULES
    amount = {column.name: column for column in shown.columns}["amount"]
    assert (amount.type, amount.constraints.nullable, amount.constraints.other) == (
        "Float64",
        False,
        [">= 0.0"],
    )
    assert shown == dd.wiring.table_schema(RuledOrders)


def parquet(directory: Path) -> PolarsParquetIOManager:
    return PolarsParquetIOManager(base_dir=str(directory / "parquet"))


def duck(directory: Path) -> DuckDBPolarsIOManager:
    return DuckDBPolarsIOManager(database=str(directory / "warehouse.duckdb"))


MANAGERS: dict[str, tuple[Callable[[Path, Path], object], str]] = {
    # name: (the io_manager resource, from the tables' and the quarantine's directories;
    #        a key the table's manager logs itself, which must still reach the materialization)
    "parquet": (lambda tables, _: parquet(tables), "path"),
    "duckdb": (lambda tables, _: duck(tables), "dagster/table_name"),
    "aware-parquet": (
        lambda tables, _: dd.QuarantineAwareIOManager(io_manager=parquet(tables)),
        "path",
    ),
    "aware-duckdb": (
        lambda tables, _: dd.QuarantineAwareIOManager(io_manager=duck(tables)),
        "dagster/table_name",
    ),
    "aware-parquet-quarantine-to-duckdb": (
        lambda tables, quarantine: dd.QuarantineAwareIOManager(
            io_manager=parquet(tables), quarantine_io_manager=duck(quarantine)
        ),
        "path",
    ),
}


@pytest.fixture
def prefix() -> str:
    """A key prefix of the test's own: every run shares one instance and its event log."""
    return f"t_{uuid4().hex[:12]}"


@pytest.mark.parametrize("manager", list(MANAGERS))
def test_the_catalog_shows_the_schema_and_its_rules_before_and_after_every_run(
    manager: str, warehouse: Path, restricted: Path, prefix: str
) -> None:
    frames = [orders_frame(DAY_1), orders_frame(DAY_1, tag="second", invalid=0)]

    @dd.asset(RuledOrders, quarantine=True, key_prefix=prefix)
    def orders() -> pl.DataFrame:
        return frames.pop(0)

    make_io_manager, own_key = MANAGERS[manager]
    io_manager = make_io_manager(warehouse, restricted)
    assert_the_tab_shows_the_schema(orders)  # before the first run: the definition's

    for _ in range(2):  # one run that writes a quarantine, then a clean one
        result = materialize([orders], io_manager)
        assert_the_tab_shows_the_schema(orders)
        # Only the column schema is the package's: the manager's own keys are still there.
        assert own_key in materialization_metadata(result, orders.key)
    assert frames == []


def test_a_partition_run_keeps_the_tab_of_a_parquet_stored_asset(
    warehouse: Path, prefix: str
) -> None:
    @dd.asset(RuledOrders, quarantine=True, key_prefix=prefix, partitions_def=DAILY)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return orders_frame(context.partition_key)

    for day in (DAY_1, DAY_2):
        materialize([orders], parquet(warehouse), partition_key=day)
        assert_the_tab_shows_the_schema(orders)


def _hand_wired(prefix: str, *, keeps_the_tab: bool) -> dg.AssetsDefinition:
    """The guide's hand-wired asset; with `keeps_the_tab`, plus the one line the docs add."""

    @dg.asset(
        key_prefix=prefix,
        name="orders",
        metadata=dd.wiring.schema_metadata(RuledOrders),
        check_specs=dd.wiring.check_specs(RuledOrders, asset=[prefix, "orders"]),
        output_required=False,
    )
    def orders(context: dg.AssetExecutionContext) -> dd.wiring.AssetYield:
        if keeps_the_tab:
            context.add_asset_metadata(dd.wiring.schema_metadata(RuledOrders))
        dd.wiring.validate_quarantine_key(context)
        yield from dd.wiring.validation_results(
            RuledOrders,
            orders_frame(DAY_1),
            valid_key=context.asset_key,
            quarantine_writer=dd.wiring.delegating_writer(context),
        )

    return orders


def test_a_hand_wired_asset_keeps_the_tab_with_add_asset_metadata(
    warehouse: Path, prefix: str
) -> None:
    orders = _hand_wired(prefix, keeps_the_tab=True)

    materialize([orders], parquet(warehouse))

    assert_the_tab_shows_the_schema(orders)


def test_without_that_line_parquet_replaces_the_tab_with_the_frames_columns(
    warehouse: Path, prefix: str
) -> None:
    """Why the docs add the line: dagster-polars logs its own column schema, read from the frame."""
    orders = _hand_wired(prefix, keeps_the_tab=False)

    materialize([orders], parquet(warehouse))

    shown = catalog_column_schema(shared_instance(), orders)
    assert [column.name for column in shown.columns] == list(RuledOrders.columns())
    assert all(column.constraints.nullable for column in shown.columns)
    assert shown.constraints.other == []


def test_a_split_check_asset_keeps_the_tab_with_add_asset_metadata(
    warehouse: Path, prefix: str
) -> None:
    @dg.asset(key_prefix=prefix, metadata=dd.wiring.schema_metadata(RuledOrders))
    def orders(context: dg.AssetExecutionContext) -> pl.LazyFrame:
        context.add_asset_metadata(dd.wiring.schema_metadata(RuledOrders))
        return orders_frame(DAY_1, invalid=0).lazy()

    key = dg.AssetKey([prefix, "orders"])

    @dg.multi_asset_check(
        specs=dd.wiring.check_specs(RuledOrders, asset=key), ins={"orders": dg.AssetIn(key)}
    )
    def orders_checks(orders: pl.LazyFrame) -> Iterator[dg.AssetCheckResult]:
        yield from dd.wiring.check_results(
            RuledOrders, orders, asset_key=key, severity=dg.AssetCheckSeverity.WARN
        )

    materialize([orders, orders_checks], parquet(warehouse))

    assert_the_tab_shows_the_schema(orders)

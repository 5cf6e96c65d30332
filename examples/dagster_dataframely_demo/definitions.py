"""The demo code location: open it with `make ui`, or run it once with `make demo`.

Four validated assets show the outcomes worth seeing: a clean table (its schema read from its
return hint, as the multi-asset of `features.py` reads its outputs'), a table whose bad lines go
to a quarantine, a daily-partitioned table (Sundays have no data and skip), and a table stored in
DuckDB. A Collection, `OrderBook`, validates orders and their lines together in one step, so a
line without a valid order goes to the lines' quarantine. `features.py` adds one asset per other
feature: warning rules, `dd.table_checks` on a plain asset, a `dd.multi_asset`, and staged writes
through `QuarantineAwareIOManager`. `anomaly.py` adds a check that learns (`dd.AnomalyCheck`),
which `make demo` shows firing on a replayed incident. Everything is written under `.demo/`
in the project.
"""

import datetime as dt
import os
from pathlib import Path
from typing import Annotated

import dagster as dg
import polars as pl
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

from . import features
from ._data import marketplace_orders, orders_for_day, storefront_orders
from .anomaly import app_orders
from .order_book import OrderBook, order_headers, order_line_rows
from .quality_policy import marketplace_lines_with_policy
from .schema import Orders

DEMO_DIR = Path(os.environ.get("DAGSTER_DATAFRAMELY_DEMO_DIR", ".demo")).absolute()
WAREHOUSE = DEMO_DIR / "warehouse"
DUCKDB_FILE = DEMO_DIR / "warehouse.duckdb"

daily = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-08")


# The raw assets hand their rows to the IO manager as a `LazyFrame`: dagster-polars then
# records their path and column types, and no preview of the rows (`table`, `stats`), whose
# customer_email the validated assets mark sensitive. A plain asset has no schema saying so.
@dg.asset(group_name="raw")
def raw_storefront_orders() -> pl.LazyFrame:
    """The web shop's export: clean."""
    return storefront_orders().lazy()


@dg.asset(group_name="raw")
def raw_marketplace_orders() -> pl.LazyFrame:
    """A marketplace feed with a few bad lines in it."""
    return marketplace_orders().lazy()


# No schema argument: the return hint names it, for the type checker and the package alike.
@dd.asset(group_name="sales")
def storefront_lines(raw_storefront_orders: pl.DataFrame) -> Annotated[pl.DataFrame, Orders]:
    return raw_storefront_orders


@dd.asset(Orders, quarantine=True, group_name="sales")
def marketplace_lines(raw_marketplace_orders: pl.LazyFrame) -> pl.LazyFrame:
    # Extra columns would be dropped; the schema's thirteen columns are what materializes.
    return raw_marketplace_orders.with_columns(net=pl.col("amount") * 0.8)


@dd.asset(Orders, quarantine=True, partitions_def=daily, group_name="sales")
def daily_orders(context: dg.AssetExecutionContext) -> pl.DataFrame | None:
    """Return None on days without a source file: the partition skips instead of failing."""
    day = dt.date.fromisoformat(context.partition_key)
    return orders_for_day(day)


@dd.asset(
    Orders,
    quarantine=True,
    key_prefix="analytics",
    io_manager_key="warehouse",
    group_name="analytics",
)
def all_orders(storefront_lines: pl.DataFrame, marketplace_lines: pl.DataFrame) -> pl.DataFrame:
    """Both channels in one table, stored in DuckDB as `analytics.all_orders`."""
    return pl.concat([storefront_lines, marketplace_lines])


@dg.asset(group_name="raw")
def raw_order_headers() -> pl.LazyFrame:
    """The order service's export of orders, without their lines."""
    return order_headers().lazy()


@dg.asset(group_name="raw")
def raw_order_lines() -> pl.LazyFrame:
    """The order service's export of order lines."""
    return order_line_rows().lazy()


@dd.collection_asset(OrderBook, quarantine=True, key_prefix="order_book", group_name="order_book")
def order_book(
    raw_order_headers: pl.DataFrame, raw_order_lines: pl.DataFrame
) -> dict[str, pl.DataFrame]:
    """Orders and their lines as one Collection: `order_book/orders` and `order_book/lines`."""
    return {"orders": raw_order_headers, "lines": raw_order_lines}


# The quarantine has no step of its own, so the dependency on `marketplace_lines` is what makes
# this asset run after the step that writes the quarantine.
@dg.asset(group_name="sales", deps=["marketplace_lines"])
def quarantine_triage(marketplace_lines_quarantine: pl.DataFrame) -> dg.MaterializeResult[None]:
    """Reads the quarantined lines back through the IO manager and counts them by failed rule."""
    rule_columns = [c for c in marketplace_lines_quarantine.columns if c.startswith("dy_rule__")]
    failed = marketplace_lines_quarantine.select((pl.col(rule_columns) == "invalid").sum()).row(
        0, named=True
    )
    return dg.MaterializeResult(metadata={rule: n for rule, n in failed.items() if n})


defs = dg.Definitions(
    assets=[
        raw_storefront_orders,
        raw_marketplace_orders,
        storefront_lines,
        marketplace_lines,
        dd.quarantine_spec(Orders, marketplace_lines),
        quarantine_triage,
        daily_orders,
        all_orders,
        raw_order_headers,
        raw_order_lines,
        order_book,
        *features.ASSETS,
        marketplace_lines_with_policy,
        app_orders,
    ],
    asset_checks=[*features.ASSET_CHECKS],
    resources={
        "io_manager": PolarsParquetIOManager(base_dir=str(WAREHOUSE)),
        "warehouse": DuckDBPolarsIOManager(database=str(DUCKDB_FILE)),
        **features.resources(str(WAREHOUSE)),
    },
)

HINTED = {
    storefront_lines.key: "-> Annotated[pl.DataFrame, Orders]",
    **features.HINTED,
}
"""The assets declared by their return hints, not a schema argument, and the hint `make demo`
prints for each."""

"""The demo's other features, one asset each: warning rules, checks on a plain asset's table, a
multi-asset, and staged writes through `QuarantineAwareIOManager`.

`definitions.py` adds `ASSETS`, `ASSET_CHECKS` and `RESOURCES` to the code location, so a feature
added later (another module like this one) is one more line there.
"""

from typing import Annotated, TypedDict

import dagster as dg
import polars as pl
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

from ._data import marketplace_orders, storefront_orders
from .schema import Orders

STAGED = "staged_io_manager"
"""The resource key of the parquet manager wrapped with staged writes."""


def resources(warehouse: str) -> dict[str, object]:
    """The resource these assets add: the demo's parquet manager, every write staged."""
    return {
        STAGED: dd.QuarantineAwareIOManager(
            io_manager=PolarsParquetIOManager(base_dir=warehouse), staged_writes=True
        )
    }


@dd.asset(
    Orders,
    quarantine=True,
    # A channel outside the known list is worth a look, not a reason to hold the line back.
    warning_rules=["channel|check__known_channel"],
    group_name="features",
)
def reviewed_lines(raw_marketplace_orders: pl.DataFrame) -> pl.DataFrame:
    """Marketplace lines with a warning rule: a line whose only fault is its channel is written."""
    return raw_marketplace_orders


@dg.asset(group_name="features")
def legacy_orders() -> pl.LazyFrame:
    """A plain asset the package did not build, as a team has before adopting it.

    A `LazyFrame`, as the raw assets are: no preview of its customer emails is recorded.
    """
    return marketplace_orders().head(16).lazy()


legacy_orders_checks = dd.table_checks(Orders, legacy_orders, severity=dg.AssetCheckSeverity.WARN)
"""The schema's checks on `legacy_orders`' stored table: it reads the table, writes nothing."""


class ChannelSplit(TypedDict):
    """The outputs of `split_by_channel` by name, each with its schema: the return hint."""

    web_lines: Annotated[pl.DataFrame, Orders]
    marketplace_review: Annotated[pl.DataFrame, Orders]


@dd.multi_asset(
    outs={
        # No schema: each output's is its field's in the return hint, `ChannelSplit`.
        "web_lines": dd.AssetOut(group_name="features"),
        "marketplace_review": dd.AssetOut(quarantine=True, group_name="features"),
    },
)
def split_by_channel(
    raw_storefront_orders: pl.DataFrame, raw_marketplace_orders: pl.DataFrame
) -> ChannelSplit:
    """One step, two validated outputs, each with its own quarantine setting."""
    return {"web_lines": raw_storefront_orders, "marketplace_review": raw_marketplace_orders}


@dd.asset(Orders, quarantine=True, io_manager_key=STAGED, group_name="features")
def staged_lines() -> pl.DataFrame:
    """Written to a staging file, then renamed into place: a failed write keeps the last table."""
    return pl.concat([storefront_orders(), marketplace_orders()])


ASSETS = [reviewed_lines, legacy_orders, split_by_channel, staged_lines]
ASSET_CHECKS = [legacy_orders_checks]

SHOWS = {
    reviewed_lines.key: "warning rules: a line whose only fault is its channel is written",
    legacy_orders.key: "dd.table_checks: the schema's checks on a plain asset's stored table",
    dg.AssetKey("web_lines"): "dd.multi_asset: one output of the step split_by_channel",
    dg.AssetKey("marketplace_review"): "dd.multi_asset: the other output, with a quarantine",
    staged_lines.key: "QuarantineAwareIOManager(staged_writes=True): staged, then renamed",
}
"""What `make demo` says each of these assets shows."""

HINTED = {
    dg.AssetKey(name): f"-> ChannelSplit, whose field {name} is Annotated[pl.DataFrame, Orders]"
    for name in ChannelSplit.__annotations__
}
"""The outputs whose schema the return hint names, and the hint `make demo` prints for each."""

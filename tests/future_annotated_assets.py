"""Assets declared under PEP 563, where Dagster receives every annotation as a string."""

from __future__ import annotations

import dagster as dg
import dataframely as dy
import polars as pl
from dagster import AssetExecutionContext

import dagster_dataframely as dd

from .schemas import Orders, Shop

seen: dict[str, type] = {}
"""The type of the input each asset received, by asset name."""


@dg.asset
def raw_orders() -> pl.DataFrame:
    return pl.DataFrame({"order_id": ["a", "b", "c"], "amount": [1.0, -1.0, 3.0]})


@dd.asset(Orders)
def lazy_orders(raw_orders: pl.LazyFrame) -> pl.LazyFrame:
    seen["lazy_orders"] = type(raw_orders)
    return raw_orders.filter(pl.col("amount") >= 0)


@dd.asset(Orders, quarantine=True)
def unannotated_context_orders(context, raw_orders: pl.DataFrame) -> pl.DataFrame:  # type: ignore[no-untyped-def]
    seen["unannotated_context_orders"] = type(raw_orders)
    context.log.info("%d rows arrived", raw_orders.height)
    return raw_orders


@dd.asset(Orders, quarantine=True)
def annotated_context_orders(
    context: dg.AssetExecutionContext, raw_orders: pl.LazyFrame
) -> pl.LazyFrame:
    seen["annotated_context_orders"] = type(raw_orders)
    seen["annotated_context_orders context"] = type(context)
    return raw_orders


@dd.asset(quarantine=True)
def imported_context_orders(
    context: AssetExecutionContext, raw_orders: pl.DataFrame
) -> dy.DataFrame[Orders]:
    seen["imported_context_orders context"] = type(context)
    return Orders.cast(raw_orders)


@dd.multi_asset(outs={"web_orders": dd.AssetOut(Orders), "shop_orders": dd.AssetOut(Orders)})
def channel_orders(
    context: dg.AssetExecutionContext, raw_orders: pl.DataFrame
) -> dict[str, pl.DataFrame]:
    seen["channel_orders context"] = type(context)
    return {"web_orders": raw_orders.head(1), "shop_orders": raw_orders.tail(1)}


@dd.collection_asset(Shop)
def shop(context: dg.AssetExecutionContext, raw_orders: pl.DataFrame) -> Shop:
    seen["shop context"] = type(context)
    return Shop.cast({"orders": raw_orders.lazy().filter(pl.col("amount") >= 0)})


def declare_with_annotated_context(decorator: object) -> None:
    """Decorate a function whose `context` annotation is, under PEP 563, the string below."""

    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return pl.DataFrame({"order_id": ["a"], "amount": [1.0]})

    decorator(orders)  # type: ignore[operator]

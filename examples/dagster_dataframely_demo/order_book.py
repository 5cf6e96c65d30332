"""The demo's Collection: orders and their lines, validated together in one step.

`OrderBook` ties two schemas with a filter: a line whose order is missing (or was itself
invalid) is removed from the lines and quarantined beside them, with a `dy_filter__` column
saying so. The orders member is `ignored_in_filters`, so an order with no lines yet is kept.
"""

import datetime as dt
import decimal
from typing import Annotated

import dataframely as dy
import polars as pl

ORDER_ID = r"^ORD-[0-9]{6,8}$"


class OrderHeader(dy.Schema):
    """One order: who placed it, when, and in which currency."""

    order_id = dy.String(primary_key=True, regex=ORDER_ID, description="The order's public id.")
    customer_email = dy.String(regex=r"^[^@\s]+@[^@\s]+\.[a-z]+$", metadata={"pii": True})
    currency = dy.Enum(["EUR", "USD", "GBP"])
    ordered_at = dy.Datetime(time_zone="UTC", time_unit="us")


class OrderLine(dy.Schema):
    """One product on one order."""

    order_id = dy.String(primary_key=True, regex=ORDER_ID)
    line_no = dy.Int16(primary_key=True, min=1)
    sku = dy.String(min_length=3, max_length=32)
    quantity = dy.Int64(min=1, max=1_000)
    unit_price = dy.Decimal(10, 2, min=decimal.Decimal("0.00"))


class OrderBook(dy.Collection):
    """Orders and their lines: every line belongs to a valid order."""

    orders: Annotated[dy.LazyFrame[OrderHeader], dy.CollectionMember(ignored_in_filters=True)]
    lines: dy.LazyFrame[OrderLine]

    @dy.filter()
    def every_line_has_an_order(self) -> pl.LazyFrame:
        """Keep the lines whose order is in the (valid) orders."""
        return self.lines.join(self.orders, on="order_id", how="semi")


_AT = dt.datetime(2026, 1, 5, 9, 0, tzinfo=dt.UTC)


def order_headers() -> pl.DataFrame:
    """Five orders from the order service; one has a broken e-mail address."""
    return pl.DataFrame(
        {
            "order_id": [f"ORD-00010{i}" for i in range(1, 6)],
            "customer_email": [
                "ana@example.com",
                "ben@example.com",
                "chloe(at)example.com",
                "dev@example.com",
                "eli@example.com",
            ],
            "currency": ["EUR", "EUR", "USD", "GBP", "EUR"],
            "ordered_at": [_AT + dt.timedelta(minutes=17 * i) for i in range(5)],
        },
        schema_overrides={"currency": pl.Enum(["EUR", "USD", "GBP"])},
    ).with_columns(pl.col("ordered_at").dt.cast_time_unit("us"))


def order_line_rows() -> pl.DataFrame:
    """Ten lines: one with quantity 0, one of the order with the broken e-mail, one of an
    order the order service never sent."""
    order_ids = [1, 1, 2, 2, 2, 3, 4, 4, 5, 9]
    return pl.DataFrame(
        {
            "order_id": [f"ORD-00010{i}" for i in order_ids],
            "line_no": pl.Series([1, 2, 1, 2, 3, 1, 1, 2, 1, 1], dtype=pl.Int16),
            "sku": [f"SKU-{100 + i}" for i in range(10)],
            "quantity": [1, 2, 1, 0, 3, 1, 2, 1, 4, 1],
            "unit_price": pl.Series(["9.90", "4.50", "12.00", "3.25", "7.00"] * 2).cast(
                pl.Decimal(10, 2)
            ),
        }
    )

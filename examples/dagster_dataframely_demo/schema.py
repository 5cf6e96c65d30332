"""The demo's schemas: one order line, the shape most examples in the docs use; an order header;
and the Collection of the two.

No `from __future__ import annotations`: a `dy.Collection` reads its annotations at runtime.
"""

import decimal

import dataframely as dy
import polars as pl


class Orders(dy.Schema):
    """A customer order line: one row per product on one order."""

    order_id = dy.String(
        primary_key=True, regex=r"^ORD-[0-9]{6,8}$", description="The order's public id."
    )
    line_no = dy.Int16(primary_key=True, min=1, description="Position of the line on the order.")
    customer_email = dy.String(
        max_length=254,
        regex=r"^[^@\s]+@[^@\s]+\.[a-z]+$",
        description="Where the receipt goes.",
        metadata={"pii": True, "owner": "crm"},
    )
    sku = dy.String(min_length=3, max_length=32, description="Stock keeping unit.")
    product_name = dy.String(max_length=64)
    quantity = dy.Int64(min=1, max=1_000)
    unit_price = dy.Decimal(10, 2, min=decimal.Decimal("0.00"))
    amount = dy.Float64(min=0.0, description="quantity times unit_price, in `currency`.")
    currency = dy.Enum(["EUR", "USD", "GBP"])
    status = dy.Enum(["new", "paid", "shipped", "cancelled"])
    channel = dy.String(
        nullable=True,
        check={"known_channel": lambda c: c.is_in(["web", "app", "store", "marketplace"])},
    )
    ordered_at = dy.Datetime(time_zone="UTC", time_unit="us")
    ship_by = dy.Date(nullable=True)

    @dy.rule()
    def paid_orders_have_amount(cls) -> pl.Expr:
        """Require a positive amount on a paid line."""
        return (pl.col("status") != "paid") | (pl.col("amount") > 0)

    @dy.rule()
    def amount_is_quantity_times_price(cls) -> pl.Expr:
        """The line amount equals quantity times unit price, to the cent."""
        expected = pl.col("quantity").cast(pl.Float64) * pl.col("unit_price").cast(pl.Float64)
        return (pl.col("amount") - expected).abs() < 0.005

    @dy.rule()
    def one_currency_per_order(cls) -> pl.Expr:
        """Every line of an order is in the order's currency."""
        return pl.col("currency").n_unique().over("order_id") == 1

"""Order lines of the unit tests' own: a schema of many dtypes and rules, and two feeds.

The unit suite owns its data, so a change to the demo never moves a unit test. `storefront`
lines pass every rule; `marketplace` lines are twelve clean ones and eight that each break at
least one rule (one of them three at once).
"""

import datetime as dt
import decimal

import dataframely as dy
import polars as pl

STATUSES = ["new", "paid", "shipped"]


class Orders(dy.Schema):
    """A customer order line: one row per product on one order."""

    order_id = dy.String(primary_key=True, regex=r"^ORD-[0-9]{4}$", description="The order's id.")
    line_no = dy.Int16(primary_key=True, min=1)
    customer_email = dy.String(regex=r"^[^@\s]+@[^@\s]+$", metadata={"pii": True})
    sku = dy.String(min_length=3, max_length=16)
    quantity = dy.Int64(min=1, max=100)
    unit_price = dy.Decimal(8, 2, min=decimal.Decimal("0.00"))
    amount = dy.Float64(min=0.0)
    status = dy.Enum(STATUSES)
    ordered_at = dy.Datetime(time_zone="UTC", time_unit="us")
    ship_by = dy.Date(nullable=True)

    @dy.rule()
    def amount_is_quantity_times_price(cls) -> pl.Expr:
        """The amount is quantity times unit price, to the cent."""
        expected = pl.col("quantity").cast(pl.Float64) * pl.col("unit_price").cast(pl.Float64)
        return (pl.col("amount") - expected).abs() < 0.005


def _lines(count: int, first_order: int) -> dict[str, list[object]]:
    """`count` clean lines, two per order, numbered from `first_order`."""
    quantities = [(i % 4) + 1 for i in range(count)]
    prices = [decimal.Decimal(f"{(i % 7) + 2}.50") for i in range(count)]
    return {
        "order_id": [f"ORD-{first_order + i // 2:04d}" for i in range(count)],
        "line_no": [i % 2 + 1 for i in range(count)],
        "customer_email": [f"buyer{i // 2}@example.com" for i in range(count)],
        "sku": [f"SKU-{100 + i}" for i in range(count)],
        "quantity": quantities,
        "unit_price": prices,
        "amount": [q * float(p) for q, p in zip(quantities, prices, strict=True)],
        "status": [STATUSES[i % 3] for i in range(count)],
        "ordered_at": [
            dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(hours=i) for i in range(count)
        ],
        "ship_by": [None if i % 3 else dt.date(2026, 1, 5) for i in range(count)],
    }


def _frame(columns: dict[str, list[object]]) -> pl.DataFrame:
    return pl.DataFrame(
        columns,
        schema={
            "order_id": pl.String,
            "line_no": pl.Int16,
            "customer_email": pl.String,
            "sku": pl.String,
            "quantity": pl.Int64,
            "unit_price": pl.Decimal(8, 2),
            "amount": pl.Float64,
            "status": pl.Enum(STATUSES),
            "ordered_at": pl.Datetime("us", "UTC"),
            "ship_by": pl.Date,
        },
    )


def storefront_orders() -> pl.DataFrame:
    """Twelve clean order lines from the web shop: every row passes every rule."""
    return _frame(_lines(12, first_order=1))


def marketplace_orders() -> pl.DataFrame:
    """Twenty lines from a marketplace feed: twelve clean, then eight that break rules.

    The fourth bad line has a negative amount, so it also breaks the amount rule: one line,
    two failed rules.
    """
    bad = _lines(8, first_order=500)
    bad["quantity"] = [0, 1, 2, 1, 1, 1, 1, 1]
    bad["unit_price"] = [decimal.Decimal("10.00")] * 8
    bad["amount"] = [0.0, 10.0, 20.0, -10.0, 10.0, 10.0, 10.0, 10.0]
    bad["customer_email"] = ["ok@example.com", "no-at-sign", *["ok@example.com"] * 6]
    bad["sku"] = ["SKU-201", "SKU-202", "S", "SKU-204", "SKU-205", "SKU-206", "SKU-207", "S"]
    bad["order_id"] = [*bad["order_id"][:6], "ORD-0600", "ORD-0600"]
    bad["line_no"] = [1, 2, 1, 2, 1, 2, 1, 1]  # the last two share a primary key
    bad["amount"][4] = 12.0  # quantity 1 at 10.00
    bad["amount"][5] = 100.0
    return pl.concat([_frame(_lines(12, first_order=100)), _frame(bad)])

"""Schemas shared by the unit tests, one per shape a test needs.

No `from __future__ import annotations` here: a `dy.Collection` reads its annotations at runtime.
"""

import datetime as dt
import decimal

import dataframely as dy
import polars as pl


class Orders(dy.Schema):
    """A customer order line: one row per product on one order."""

    order_id = dy.String(primary_key=True, description="The order's id.")
    amount = dy.Float64(nullable=False, min=0.0)


class OrderLines(dy.Schema):
    """Order lines with a composite key and a cross-column rule."""

    order_id = dy.String(primary_key=True, regex=r"^o-[0-9]+$")
    line_no = dy.Int32(primary_key=True, min=1, max_exclusive=1000)
    sku = dy.String(min_length=3, max_length=64, metadata={"pii": False, "owner": "catalog"})
    quantity = dy.Int64(min_exclusive=0)
    price = dy.Decimal(10, 2, min=decimal.Decimal("0.00"))
    status = dy.Enum(["new", "paid", "shipped"])
    channel = dy.Int8(is_in=[1, 2], nullable=True)
    ordered_at = dy.Datetime(time_zone="UTC", resolution="1h")

    @dy.rule()
    def paid_has_price(cls) -> pl.Expr:
        """Require a positive price on a paid line."""
        return (pl.col("status") != "paid") | (pl.col("price") > 0)

    @dy.rule()
    def plausible_quantity(cls) -> pl.Expr:
        return pl.col("quantity") < 10_000


class NoRules(dy.Schema):
    note = dy.String(nullable=True)
    score = dy.Float64(nullable=True, allow_inf=True, allow_nan=True)


class EveryDtype(dy.Schema):
    """One column of every dtype Dataframely has."""

    s = dy.String(nullable=True)
    i8 = dy.Int8(nullable=True)
    i16 = dy.Int16(nullable=True)
    i32 = dy.Int32(nullable=True)
    i64 = dy.Int64(nullable=True)
    u8 = dy.UInt8(nullable=True)
    u16 = dy.UInt16(nullable=True)
    u32 = dy.UInt32(nullable=True)
    u64 = dy.UInt64(nullable=True)
    f32 = dy.Float32(nullable=True)
    f64 = dy.Float64(nullable=True)
    dec = dy.Decimal(12, 4, nullable=True)
    flag = dy.Bool(nullable=True)
    day = dy.Date(nullable=True, min=dt.date(2026, 1, 1))
    at = dy.Datetime(nullable=True, time_zone="Europe/Berlin", time_unit="ns")
    clock = dy.Time(nullable=True, max=dt.time(18, 0))
    took = dy.Duration(nullable=True, max=dt.timedelta(hours=1, minutes=30))
    kind = dy.Enum(["a", "b"], nullable=True)
    cat = dy.Categorical(nullable=True)
    tags = dy.List(dy.String(min_length=1), nullable=True, max_length=3)
    vec = dy.Array(dy.Float64(min=0.0), 3, nullable=True)
    address = dy.Struct(
        {"city": dy.String(max_length=10), "zip": dy.Int64(nullable=True, min=1)},
        nullable=True,
    )
    blob = dy.Binary(nullable=True)


def wide_schema(columns: int = 40) -> type[dy.Schema]:
    """A schema of `columns` float columns with a few rules each, for scale tests."""
    attributes = {
        f"c{i:02d}": dy.Float64(nullable=i % 2 == 0, min=0.0, max=float(i + 100))
        for i in range(columns)
    }
    return type("Wide", (dy.Schema,), attributes)


class Shop(dy.Collection):
    """A collection, which `dd.asset` refuses: one asset per member instead."""

    orders: dy.LazyFrame[Orders]


class BookOrders(dy.Schema):
    """An order of an `OrderBook`."""

    order_id = dy.String(primary_key=True)
    amount = dy.Float64(min=0.0)


class BookLines(dy.Schema):
    """A line of an order of an `OrderBook`."""

    order_id = dy.String(primary_key=True)
    line_no = dy.Int64(primary_key=True, min=1)
    quantity = dy.Int64(min=1)


class OrderBook(dy.Collection):
    """Orders and their lines: every line has an order, every order a line with a quantity."""

    orders: dy.LazyFrame[BookOrders]
    lines: dy.LazyFrame[BookLines]

    @dy.filter()
    def has_order(self) -> pl.LazyFrame:
        """Every line has an order."""
        return self.lines.join(self.orders, on="order_id", how="semi").select("order_id").unique()

    @dy.filter()
    def positive_total(self) -> pl.LazyFrame:
        return (
            self.lines.group_by("order_id")
            .agg(pl.col("quantity").sum())
            .filter(pl.col("quantity") > 0)
            .select("order_id")
        )

"""Deterministic order lines for the demo, the tests and the benchmarks; no files, no randomness.

Every value is derived from the row number with Polars expressions, so a million rows take well
under a second and the same call always returns the same frame.
"""

import datetime as dt

import polars as pl

_PRODUCTS = ["Desk lamp", "Notebook", "Fountain pen", "Ink, blue", "Backpack", "Mug", "Stapler"]
_CHANNELS = ["web", "app", "store", "marketplace"]
_STATUSES = ["new", "paid", "shipped", "cancelled"]
_CURRENCIES = ["EUR", "USD", "GBP"]
_START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

_DEFECTS = 6
"""How many kinds of bad line `order_lines` can produce, each breaking different rules."""


def _mix(seed: int, salt: int) -> pl.Expr:
    """A cheap deterministic hash of the row number: pseudo-random but reproducible."""
    return (
        pl.int_range(pl.len(), dtype=pl.UInt64) * 2_654_435_761 + seed * 97 + salt * 7_919
    ).hash(seed)


def order_lines(rows: int, *, seed: int = 0, invalid_share: float = 0.0) -> pl.DataFrame:
    """`rows` order lines, two per order; about `invalid_share` of them break some rules."""
    base = pl.DataFrame({"_": pl.zeros(rows, dtype=pl.Int8, eager=True)})
    index = pl.int_range(pl.len(), dtype=pl.Int64)
    cents = (_mix(seed, 1) % 20_000 + 100).cast(pl.Int64)
    quantity = (_mix(seed, 2) % 5 + 1).cast(pl.Int64)
    frame = base.select(
        order_id=pl.format("ORD-{}", (index // 2 + seed * 1_000).cast(pl.String).str.zfill(6)),
        line_no=(index % 2 + 1).cast(pl.Int16),
        customer_email=pl.format("customer{}@example.com", index // 2 % 5_000),
        sku=pl.format("SKU-{}", (_mix(seed, 3) % 900 + 100).cast(pl.String)),
        product_name=pl.lit(pl.Series(_PRODUCTS)).get(
            (_mix(seed, 4) % len(_PRODUCTS)).cast(pl.Int64)
        ),
        quantity=quantity,
        unit_price=(cents.cast(pl.Float64) / 100).cast(pl.Decimal(10, 2)),
        amount=(quantity * cents).cast(pl.Float64) / 100,
        currency=pl.lit(pl.Series(_CURRENCIES)).get((index // 2 + seed) % len(_CURRENCIES)),
        status=pl.lit(pl.Series(_STATUSES)).get((_mix(seed, 5) % len(_STATUSES)).cast(pl.Int64)),
        channel=pl.when(_mix(seed, 6) % 10 == 0)
        .then(None)
        .otherwise(pl.lit(pl.Series(_CHANNELS)).get((_mix(seed, 7) % 4).cast(pl.Int64))),
        ordered_at=pl.lit(_START) + pl.duration(minutes=index * 7 + seed * 1_440),
        ship_by=pl.when(_mix(seed, 8) % 4 == 0)
        .then(None)
        .otherwise((pl.lit(_START) + pl.duration(days=index // 200 + 3)).dt.date()),
    ).with_columns(
        pl.col("currency").cast(pl.Enum(_CURRENCIES)),
        pl.col("status").cast(pl.Enum(_STATUSES)),
        pl.col("ordered_at").dt.cast_time_unit("us"),
    )
    if invalid_share <= 0:
        return frame
    threshold = int(invalid_share * 1_000_000)
    bad = _mix(seed, 9) % 1_000_000 < threshold
    defect = _mix(seed, 10) % _DEFECTS
    return frame.with_columns(
        quantity=pl.when(bad & (defect == 0)).then(0).otherwise("quantity"),
        customer_email=pl.when(bad & (defect == 1))
        .then(pl.lit("not-an-email"))
        .otherwise("customer_email"),
        amount=pl.when(bad & (defect == 2)).then(-pl.col("amount")).otherwise("amount"),
        sku=pl.when(bad & (defect == 3)).then(None).otherwise("sku"),
        product_name=pl.when(bad & (defect == 4)).then(pl.lit("x" * 80)).otherwise("product_name"),
        line_no=pl.when(bad & (defect == 5)).then(pl.lit(0, pl.Int16)).otherwise("line_no"),
    )


def storefront_orders() -> pl.DataFrame:
    """Twelve clean order lines from the web shop: every row passes every rule."""
    return order_lines(12, seed=1)


def marketplace_orders() -> pl.DataFrame:
    """Twenty lines from a marketplace feed: twelve clean, eight that break rules.

    One line breaks three rules at once (a negative amount on a paid line, so the amount is
    also not quantity times price), which shows up as one group in `invalid_by_rules`.
    """
    clean = order_lines(12, seed=2)
    bad = order_lines(8, seed=3).with_columns(
        customer_email=pl.Series(["ok@example.com", "no-at-sign", *["ok@example.com"] * 6]),
        quantity=pl.Series([0, 1, 2, 1, 1, 1, 1, 1], dtype=pl.Int64),
        unit_price=pl.Series(["10.00"] * 8).cast(pl.Decimal(10, 2)),
        amount=pl.Series([0.0, 10.0, 20.0, -10.0, 10.0, 10.0, 10.0, 10.0]),
        status=pl.Series(["new", "new", "new", "paid", "new", "new", "new", "new"]).cast(
            pl.Enum(_STATUSES)
        ),
        sku=pl.Series(
            ["SKU-101", "SKU-102", "S", "SKU-104", None, "SKU-106", "SKU-107", "SKU-108"]
        ),
        channel=pl.Series(["web", "web", "web", "web", "web", "fax", "web", "web"]),
        # The last two lines are one order's lines under the same line number: both copies
        # fail the primary key.
        line_no=pl.Series([1, 2, 1, 2, 1, 2, 1, 1], dtype=pl.Int16),
    )
    return pl.concat([clean, bad])


def orders_for_day(day: dt.date) -> pl.DataFrame | None:
    """One day's order lines for the partitioned example; Sundays have no file at all."""
    if day.weekday() == 6:
        return None
    seed = day.toordinal() % 1_000
    return order_lines(40, seed=seed, invalid_share=0.1)

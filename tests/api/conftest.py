"""The scratch `dg` project the Component's unit tests load, one per test module."""

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dg_project import ROOT_MODULE, write_project

EXTRA_DEFS = {
    "daily.py": """
        import dagster as dg
        import polars as pl

        days = dg.DailyPartitionsDefinition(start_date="2026-01-01")


        @dg.asset(partitions_def=days, key_prefix="sales")
        def daily_orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
            return pl.DataFrame({"order_id": ["a"], "amount": [1.0]})
        """,
    "books.py": """
        import dagster as dg

        book_orders = dg.AssetSpec(["book", "orders"])
        book_lines = dg.AssetSpec(["book", "lines"])
        """,
    "../broken_schemas.py": """
        raise RuntimeError("the schema registry is unreachable")
        """,
    "../collections.py": """
        import dataframely as dy
        import polars as pl


        class Header(dy.Schema):
            order_id = dy.String(primary_key=True)


        class Line(dy.Schema):
            order_id = dy.String(primary_key=True)
            line = dy.Int64(primary_key=True)


        class Book(dy.Collection):
            orders: dy.LazyFrame[Header]
            lines: dy.LazyFrame[Line]

            @dy.filter()
            def every_line_has_an_order(cls) -> pl.Expr:
                return dy.functional.require_relationship_one_to_at_least_one(
                    cls.orders, cls.lines, on="order_id"
                )
        """,
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A project with a plain asset, a partitioned one, two specs and a Collection, importable."""
    root = write_project(tmp_path_factory.mktemp("component") / "scratch", storage=False)
    defs = root / "src" / ROOT_MODULE / "defs"
    for name, text in EXTRA_DEFS.items():
        (defs / name).write_text(textwrap.dedent(text).lstrip())
    sys.path.insert(0, str(root / "src"))
    yield root
    sys.path.remove(str(root / "src"))
    for name in [module for module in sys.modules if module.split(".")[0] == ROOT_MODULE]:
        del sys.modules[name]

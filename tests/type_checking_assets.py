"""Functions whose annotations name what is imported only under `if TYPE_CHECKING:`.

Under PEP 563 each annotation is a string, and these strings name `dg` and `pl`, which exist
for a type checker and not when the module runs: as ruff's flake8-type-checking rules leave a
module whose imports are used only in annotations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import dataframely as dy

from .schemas import Orders

if TYPE_CHECKING:
    import dagster as dg
    import polars as pl


def context_orders(context: dg.AssetExecutionContext) -> dy.DataFrame[Orders]:
    raise NotImplementedError


def lazy_orders(raw_orders: pl.LazyFrame) -> dy.DataFrame[Orders]:
    raise NotImplementedError

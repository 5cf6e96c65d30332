"""A Collection of orders and their refunds, for the tests of hinted Collection assets.

A module of its own: Dataframely reads a Collection's annotations when the class is created,
so it cannot be defined under `from __future__ import annotations`, which those tests use.
"""

import dataframely as dy

from .conftest import Orders


class Refunds(dy.Schema):
    """A refund of an order."""

    order_id = dy.String(primary_key=True)
    amount = dy.Float64(nullable=False, min=0.0)


class Book(dy.Collection):
    """An order book: the orders and their refunds."""

    orders: dy.LazyFrame[Orders]
    refunds: dy.LazyFrame[Refunds]

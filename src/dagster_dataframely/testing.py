"""Helpers for unit tests of assets built with `dd.asset`."""

from ._api.call_asset import AssetCall, call_asset

__all__ = ["AssetCall", "call_asset"]

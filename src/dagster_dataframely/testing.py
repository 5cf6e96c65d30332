"""Helpers for unit tests of assets built with `dd.asset`."""

from ._asset_call import AssetCall, call_asset

__all__ = ["AssetCall", "call_asset"]

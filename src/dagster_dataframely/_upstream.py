"""Every access to an upstream API that Dagster or Dataframely does not mark public.

Each access is one small function whose docstring says what it relies on and since which
version, and `tests/test_upstream.py` pins that shape, so an upstream release that changes it
fails one of this package's tests instead of a user's run.
"""

from __future__ import annotations

import dagster as dg


def current_asset_context() -> dg.AssetExecutionContext | None:
    """The context of the asset step running now, or None outside a step (a direct invocation).

    Relies on `dg.AssetExecutionContext.get()` (not marked `@public`; in Dagster since 1.6),
    which reads the context variable Dagster sets around a step's compute function, and raises
    `DagsterInvariantViolationError` when no step is running. An op step that is no asset gets a
    context too, whose `has_assets_def` is False.
    """
    try:
        return dg.AssetExecutionContext.get()
    except dg.DagsterInvariantViolationError:
        return None

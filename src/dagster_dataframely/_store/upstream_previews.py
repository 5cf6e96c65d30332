"""The previews of sensitive columns an upstream asset's IO manager recorded, said once per step.

A plain `@dg.asset` has no schema, so nothing tells its IO manager which of its columns are
sensitive: a bare dagster-polars manager handed a `DataFrame` records `table` (its first rows)
and `stats` (every column's min and max) on the materialization, before the `dd.asset` that
reads it, and marks those columns, runs. The package cannot take them back. So the reading
step looks at the last materialization of each asset it reads and names, once, every table
value there that shows a column its outputs mark sensitive, with the two remedies: the plain
asset returns a `LazyFrame` (of which dagster-polars records no preview), or its manager is
bound inside `dd.QuarantineAwareIOManager` (which drops a plain asset's previews).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import dagster as dg

from dagster_dataframely._model.shown_values import MASK
from dagster_dataframely._upstream import running_step


def warn_of_upstream_previews(
    context: Any, own: Collection[dg.AssetKey], sensitive: frozenset[str]
) -> None:
    """Say once, in a run's step, which assets it reads show values of `sensitive` columns.

    The step reads the assets of its inputs but `own`, the keys it writes (a self-dependent
    partitioned asset reads its own); each one's last materialization is read from the
    instance, and a table value in its metadata with a cell of a `sensitive` column that shows
    a value (not masked, not empty) gets a line.
    Nothing is said in a direct invocation, whose inputs are the caller's, nor where nothing
    is sensitive.
    """
    if not sensitive or context is None or running_step(context) is None:
        return
    lines = []
    for key in context.assets_def.keys_by_input_name.values():
        if key in own:
            continue
        shown = _shown_columns(context.instance, key, sensitive)
        if shown:
            entries = ", ".join(f"`{name}`" for name in shown)
            columns = ", ".join(repr(c) for c in sorted(set().union(*shown.values())))
            verb = "shows" if len(shown) == 1 else "show"
            lines.append(f"{key.to_user_string()!r}: {entries} {verb} {columns}")
    if lines:
        context.log.warning(
            "dagster-dataframely: assets this step reads show values of columns its schema "
            "marks sensitive, in the previews their IO managers recorded on their last "
            "materialization (a plain asset has no schema saying which of its columns are "
            "sensitive):"
            + "".join(f"\n  - {line}" for line in lines)
            + "\nThose values are in the event log. To keep them out of the next "
            "materializations, return a pl.LazyFrame from such an asset (dagster-polars' managers "
            "record no preview of one), or bind its IO manager inside "
            "dd.QuarantineAwareIOManager(io_manager=...), which drops the previews of a plain "
            "asset."
        )


def _shown_columns(
    instance: dg.DagsterInstance, key: dg.AssetKey, sensitive: frozenset[str]
) -> dict[str, frozenset[str]]:
    records = instance.fetch_materializations(key, limit=1).records
    materialization = records[0].asset_materialization if records else None
    if materialization is None:
        return {}
    shown = {}
    for name, value in materialization.metadata.items():
        if isinstance(value, dg.TableMetadataValue):
            # NOTE: a cell masked by the package (a `dd.asset`'s own samples) or empty shows
            # no value; dagster-polars writes a null as "".
            found = {
                column
                for record in value.records
                for column, cell in record.data.items()
                if column in sensitive and cell not in (None, "", MASK)
            }
            if found:
                shown[name] = frozenset(found)
    return shown

"""One output declaration for every decorator: key, settings, Columns tab, code version, checks.

`dd.asset` declares one output, `dd.multi_asset` one per `dd.AssetOut`, `dd.collection_asset`
one per member; each is a `dg.AssetOut` (the user's, or one built from the decorator's own
parameters) completed from the schema here, the same way for all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import dagster as dg
import polars as pl

from dagster_dataframely._model import names
from dagster_dataframely._model.asset_settings import OutputSettings
from dagster_dataframely._model.code_version import info_version
from dagster_dataframely._model.columns_tab import columns_tab
from dagster_dataframely._model.keys import output_key
from dagster_dataframely._model.schema import SchemaInfo, own_docstring
from dagster_dataframely._model.settings import Settings
from dagster_dataframely._model.shown_values import ShownValues
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely.errors import ClearQuarantineError

from .check_specs import declared_check_specs

VALID_ROWS = dg.DagsterType(
    lambda _, value: isinstance(value, pl.DataFrame | pl.LazyFrame),
    name="ValidRows",
    description="The valid rows: a LazyFrame for a manager that sinks one, else a DataFrame.",
    typing_type=pl.LazyFrame,
)
"""The type of an output whose manager may receive a `LazyFrame` (`hands_lazy_table`).

dagster-polars picks sinking a `LazyFrame` over writing a `DataFrame` by the output's type, so
the type says `LazyFrame`; its check also takes a `DataFrame`, what the output gets from a
manager that cannot sink (and in a direct call).
"""


ASSET_OUT_KEYWORDS = (
    "key_prefix",
    "io_manager_key",
    "metadata",
    "description",
    "group_name",
    "tags",
    "owners",
    "code_version",
    "automation_condition",
    "freshness_policy",
    "backfill_policy",
)
"""The `dg.AssetOut` keywords `dd.asset` and `dd.AssetOut` both take and pass on as they are;
`build_asset` gives `@dg.asset` the completed `dg.AssetOut`'s values of them."""


@dataclass(frozen=True, slots=True, eq=False)
class Declaration:
    """One validated output, everything resolved: what Dagster declares and what the run needs."""

    output: ValidatedOutput
    out: dg.AssetOut
    """What Dagster gets: the key set, the Columns tab, the description and the code version."""
    check_specs: tuple[dg.AssetCheckSpec, ...]


def declare_output(
    name: str,
    info: SchemaInfo,
    given: OutputSettings,
    settings: Settings,
    out: dg.AssetOut,
    *,
    partitions_def: dg.PartitionsDefinition[str] | None,
    default_prefix: str | Sequence[str] | None = None,
    code_version: str | None = None,
    description: str | None = None,
    is_required: bool | None = None,
    output_name: str | None = None,
) -> Declaration:
    """Complete `out` from the schema: its key, Columns tab, description, code version, checks.

    `settings` are `given` resolved against `info` (a Collection member's `info` carries the
    Collection's filters). `out`'s own values win; after them `default_prefix` (a Collection's
    `key_prefix`), `code_version` (the op's) and `description` (the function's docstring, for
    `dd.asset`) stand in for what `out` leaves unset, before the schema's. `is_required`
    replaces `out`'s (a Collection member is never required). `output_name` is the op output's
    name when it is not the asset's (`dd.asset`'s is Dagster's `result`).

    Raises
    ------
    ClearQuarantineError
        `clear_quarantine=True` without `quarantine=True`.
    InvalidArgumentsError
        `keys_across_partitions=True` on an unpartitioned asset or a schema without a key.
    """
    key = output_key(name, key=out.key, key_prefix=out.key_prefix, default_prefix=default_prefix)
    clear_quarantine = bool(given.keywords.get("clear_quarantine"))
    keys_across_partitions = bool(given.keywords.get("keys_across_partitions"))
    if clear_quarantine and not given.quarantine:
        raise ClearQuarantineError(key.to_user_string())
    version = out.code_version if out.code_version is not None else code_version
    spec = out.to_spec(key, deps=[]).replace_attributes(
        metadata={
            **(out.metadata or {}),
            names.COLUMN_SCHEMA: columns_tab(info, settings.warning_rules),
            # What `QuarantineAwareIOManager` may pass on of what the manager records.
            **ShownValues.of(info, settings).definition_metadata(),
        },
        description=out.description or own_docstring(info.schema) or description,
        code_version=version if version is not None else info_version(info),
    )
    validated = ValidatedOutput(
        name=output_name or name,
        key=key,
        info=info,
        settings=settings,
        quarantine=given.quarantine,
        clear_quarantine=clear_quarantine,
        keys_across_partitions=keys_across_partitions,
    )
    resolved = dg.AssetOut.from_spec(
        spec,
        dagster_type=VALID_ROWS if validated.hands_lazy_table else out.dagster_type,
        is_required=out.is_required if is_required is None else is_required,
        io_manager_key=out.io_manager_key,
        backfill_policy=out.backfill_policy,
    )
    specs = declared_check_specs(
        info,
        asset=key,
        settings=settings,
        partitions_def=partitions_def,
        keys_across_partitions=validated.keys_across_partitions,
    )
    return Declaration(validated, resolved, tuple(specs))

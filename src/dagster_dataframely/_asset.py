"""`dd.asset`: a `@dg.asset` whose body is the user's function, then `validation_results`.

Everything the schema gives is derived at declaration (settings, names, check specs, the Columns
tab), so a bad schema or setting fails where the asset is written, not on its first run.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl

from ._asset_context import can_clear, partition_key, quarantine_writer
from ._checks import asset_check_specs
from ._code_version import schema_version
from ._columns import call_keeping_columns_tab, schema_metadata
from ._compute import ComputeSignature
from ._quarantine import validate_quarantine_key
from ._schema import SchemaInfo, own_docstring, read_schema
from ._settings import Granularity, SchemaRules, Settings, read_quarantine_dir, resolve_settings
from ._validate import AssetYield, run_validation, type_name
from ._warnings import with_warning_rules
from .errors import (
    ClearQuarantineError,
    MaterializeResultFieldError,
    MaterializeResultValueError,
)

AssetFunction = Callable[
    ...,
    pl.DataFrame
    | pl.LazyFrame
    | dg.MaterializeResult[pl.DataFrame]
    | dg.MaterializeResult[pl.LazyFrame]
    | None,
]

EXCLUDED_ASSET_PARAMETERS = frozenset(
    {"check_specs", "key", "output_required", "dagster_type", "is_virtual", "io_manager_def"}
)
"""`@dg.asset` parameters `dd.asset` does not take: the schema, `name`/`key_prefix` or
`resource_defs` set them, or the failure policy needs them fixed."""


def asset(
    schema: type[dy.Schema],
    /,
    *,
    quarantine: bool = False,
    clear_quarantine: bool | None = None,
    warning_rules: Iterable[str] | None = None,
    check_granularity: Granularity | None = None,
    schema_rules: SchemaRules | None = None,
    max_failure_samples: int | None = None,
    statistics: bool | None = None,
    row_sample: int | None = None,
    name: str | None = None,
    key_prefix: str | Sequence[str] | None = None,
    ins: Mapping[str, dg.AssetIn] | None = None,
    deps: Iterable[
        dg.AssetKey
        | str
        | Sequence[str]
        | dg.AssetSpec
        | dg.AssetsDefinition
        | dg.SourceAsset
        | dg.AssetDep
    ]
    | None = None,
    metadata: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | None = None,
    description: str | None = None,
    config_schema: Mapping[str, Any] | None = None,
    required_resource_keys: Set[str] | None = None,
    resource_defs: Mapping[str, object] | None = None,
    hooks: Set[dg.HookDefinition] | None = None,
    io_manager_key: str | None = None,
    partitions_def: dg.PartitionsDefinition[str] | None = None,
    op_tags: Mapping[str, Any] | None = None,
    group_name: str | None = None,
    automation_condition: dg.AutomationCondition[Any] | None = None,
    freshness_policy: dg.FreshnessPolicy | None = None,
    backfill_policy: dg.BackfillPolicy | None = None,
    retry_policy: dg.RetryPolicy | None = None,
    code_version: str | None = None,
    owners: Sequence[str] | None = None,
    kinds: Set[str] | None = None,
    pool: str | None = None,
) -> Callable[[AssetFunction], dg.AssetsDefinition]:
    """Turn the decorated function into an asset that validates the frame it returns.

    The decorated function returns a `pl.DataFrame` or `pl.LazyFrame`, a `dg.MaterializeResult`
    whose `value` is one of those, or `None` to skip. A run checks the frame's columns and dtypes
    against `schema`, filters it with `Schema.filter`, writes the valid rows through the asset's
    IO manager and, with `quarantine=True`, the invalid rows to `<name>_quarantine` through the
    same manager, then reports one asset check per rule. The schema's Columns tab and check
    specs exist as soon as the module is imported.

    `clear_quarantine=True` (with `quarantine=True`) makes a run whose rows are all valid write
    an empty quarantine through the same writer, replacing what an earlier run of the same
    partition (or of the asset) left there; None or False, the default, leaves the quarantine
    of a clean run as it was.

    Every keyword parameter from `name` on is `@dg.asset`'s, passed to it unchanged unless its
    description below says otherwise. Six `@dg.asset` parameters are not accepted:
    `check_specs` (they come from the schema), `key` (use `key_prefix` and `name`),
    `output_required`, `dagster_type`, `is_virtual` and `io_manager_def` (use `resource_defs`).

    Parameters
    ----------
    schema
        The Dataframely schema the returned frame must match: a `dy.Schema` subclass, never a
        `dy.Collection`. Positional only.
    quarantine
        Whether a run writes the valid rows when some rows fail. With `True`, the run writes
        the invalid rows to the quarantine, under the asset key `<name>_quarantine`, and fails
        with `QuarantineKeyCollisionError` if another asset already materializes that key. With
        `False`, any invalid row fails the run with `ValidationAbortError`, and the asset writes
        nothing. `True` also adds a `context` parameter to the asset, whether or not the
        decorated function declares one.
    clear_quarantine
        With `True` (and `quarantine=True`), a run whose rows are all valid writes an empty
        quarantine, so that no stale invalid rows of an earlier run stay beside a clean table.
        `None` or `False` leaves the quarantine of a clean run as it was.
    check_granularity
        How many asset checks report the schema's rules: one per rule at `rule`, one per column
        with rules at `column`, and one for the schema at `schema`. Changing it on an asset that
        has already run starts a new check history. `None` uses
        `DAGSTER_DATAFRAMELY_CHECK_GRANULARITY` if set, else `rule`.
    schema_rules
        Which checks report the schema-level rules at `column` granularity: `collapsed` into one
        check, `dy_schema__rules`, or `per_rule`, one check each. `None` uses
        `DAGSTER_DATAFRAMELY_SCHEMA_RULES` if set, else `collapsed`.
    max_failure_samples
        A rule's check metadata has at most this many rows that failed it, under
        `dy_failed_sample`; `0` turns the samples off. **A run writes the rows to the Dagster
        event log unredacted.** `dy.Config.set_max_failure_examples` does not change this
        number. `None` uses `DAGSTER_DATAFRAMELY_MAX_FAILURE_SAMPLES` if set, else `5`.
    statistics
        Whether the materialization metadata has statistics of the written rows, one table per
        dtype group. They are the main cost a run adds to the filter. `None` uses
        `DAGSTER_DATAFRAMELY_STATISTICS` if set, else `True`.
    row_sample
        The materialization metadata has at most this many valid rows, and this many invalid
        rows; `0` turns both samples off. **A run writes the rows to the Dagster event log
        unredacted.** `None` uses `DAGSTER_DATAFRAMELY_ROW_SAMPLE` if set, else `5`.
    name
        The asset's name, the last part of its key. `None` uses the function's name.
    key_prefix
        Passed to `@dg.asset` unchanged. The quarantine's asset key has the same prefix.
    ins
        Passed to `@dg.asset` unchanged: how upstream assets map to the function's parameters.
    deps
        Passed to `@dg.asset` unchanged: upstream assets the function does not read as inputs.
    metadata
        Definition metadata, passed to `@dg.asset`. The schema's `dagster/column_schema` entry
        replaces a key of the same name.
    tags
        Passed to `@dg.asset` unchanged.
    description
        The asset's description. `None` uses the schema's own docstring (not an inherited one),
        or the decorated function's docstring if the schema has none.
    config_schema
        Passed to `@dg.asset` unchanged. Only a mapping is accepted.
    required_resource_keys
        Passed to `@dg.asset` unchanged.
    resource_defs
        Passed to `@dg.asset` unchanged; bind an IO manager here instead of `io_manager_def`.
    hooks
        Passed to `@dg.asset` unchanged.
    io_manager_key
        Passed to `@dg.asset` unchanged. In a run, the invalid rows go to the same IO manager.
    partitions_def
        Passed to `@dg.asset` unchanged. The quarantine is written under the same partition
        key, and each partition's frame is validated on its own.
    op_tags
        Passed to `@dg.asset` unchanged.
    group_name
        Passed to `@dg.asset` unchanged.
    automation_condition
        Passed to `@dg.asset` unchanged. It applies to the asset, not to its quarantine, which
        has no materialization.
    freshness_policy
        Passed to `@dg.asset` unchanged.
    backfill_policy
        Passed to `@dg.asset` unchanged.
    retry_policy
        Passed to `@dg.asset` unchanged.
    code_version
        Passed to `@dg.asset`. `None` uses `dd.wiring.schema_version(schema)`, so a change of
        the schema marks the asset changed.
    owners
        Passed to `@dg.asset` unchanged.
    kinds
        Passed to `@dg.asset` unchanged.
    pool
        Passed to `@dg.asset` unchanged.

    warning_rules
        Rules whose failures only warn, named as Dataframely names them (`amount|max`, a
        `@dy.rule` method's name, `primary_key`); a single string names one rule. A row that
        fails only these is valid, and their checks fail at `WARN`. See docs/warning-rules.md.

    Returns
    -------
    Callable[[AssetFunction], dg.AssetsDefinition]
        A decorator that returns a `dg.AssetsDefinition` with the schema's check specs and a
        Columns tab filled from the schema.

    Raises
    ------
    UnknownWarningRuleError
        A name in `warning_rules` is not one of the schema's rules.
    CollectionNotSupportedError
        `schema` is a `dy.Collection`.
    ClearQuarantineError
        `clear_quarantine=True` without `quarantine=True`: there is nothing to clear.
    ReservedColumnError
        A column name is in the reserved `dy_` namespace.
    InvalidColumnNameError
        A column name has a character Dagster does not allow in an asset check name.
    InvalidRuleNameError
        A `check=` key has a character Dagster does not allow in an asset check name.
    CheckNameCollisionError
        Two rules produce the same asset check name.
    InvalidSettingError
        A setting's argument or environment variable has a value the setting does not allow,
        or `DAGSTER_DATAFRAMELY_QUARANTINE_DIR` is set but empty.

    Examples
    --------
    At the default `rule` granularity, the asset has one check per rule, plus the
    column-schema check:

    ```python
    import dataframely as dy
    import polars as pl

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        order_id = dy.String(primary_key=True)
        amount = dy.Float64(nullable=False, min=0.0)


    @dd.asset(Orders, quarantine=True)
    def orders(raw_orders: pl.DataFrame) -> pl.DataFrame:
        return raw_orders.select("order_id", "amount")


    print([spec.name for spec in orders.check_specs])
    ```

    The check specs exist before the asset first runs, so the catalog lists every check before
    its first result.
    """
    settings = resolve_settings(
        check_granularity=check_granularity,
        schema_rules=schema_rules,
        max_failure_samples=max_failure_samples,
        statistics=statistics,
        row_sample=row_sample,
    )
    info = read_schema(schema)
    settings = with_warning_rules(settings, info, warning_rules)
    read_quarantine_dir()  # an empty value is a mistake worth failing on at declaration
    passed_on = {
        "ins": ins,
        "deps": deps,
        "tags": tags,
        "config_schema": config_schema,
        "required_resource_keys": required_resource_keys,
        "resource_defs": resource_defs,
        "hooks": hooks,
        "io_manager_key": io_manager_key,
        "partitions_def": partitions_def,
        "op_tags": op_tags,
        "group_name": group_name,
        "automation_condition": automation_condition,
        "freshness_policy": freshness_policy,
        "backfill_policy": backfill_policy,
        "retry_policy": retry_policy,
        "code_version": code_version if code_version is not None else schema_version(schema),
        "owners": owners,
        "kinds": kinds,
        "pool": pool,
    }

    def decorate(function: AssetFunction) -> dg.AssetsDefinition:
        asset_name = name or function.__name__
        prefix = [key_prefix] if isinstance(key_prefix, str) else list(key_prefix or [])
        key = dg.AssetKey([*prefix, asset_name])
        if clear_quarantine and not quarantine:
            raise ClearQuarantineError(key.to_user_string())
        compute = _compute_function(
            function,
            info,
            settings,
            key,
            quarantine=quarantine,
            partitions_def=partitions_def,
            clear_quarantine=bool(clear_quarantine),
        )
        return dg.asset(
            compute,
            name=asset_name,
            key_prefix=prefix or None,
            metadata={
                **(metadata or {}),
                **schema_metadata(schema, warning_rules=settings.warning_rules),
            },
            description=description or own_docstring(schema) or inspect.getdoc(function),
            check_specs=asset_check_specs(
                schema,
                asset=key,
                check_granularity=settings.check_granularity,
                schema_rules=settings.schema_rules,
                partitions_def=partitions_def,
                warning_rules=settings.warning_rules,
            ),
            output_required=False,
            **{k: v for k, v in passed_on.items() if v is not None},
        )

    return decorate


def _compute_function(
    function: AssetFunction,
    info: SchemaInfo,
    settings: Settings,
    key: dg.AssetKey,
    *,
    quarantine: bool,
    partitions_def: dg.PartitionsDefinition[str] | None,
    clear_quarantine: bool = False,
) -> Callable[..., AssetYield]:
    """Wrap `function` in a generator Dagster can run: same inputs, `context` when needed."""
    signature = ComputeSignature.of(function, needs_context=quarantine)

    @functools.wraps(function)
    def compute(*args: Any, **kwargs: Any) -> AssetYield:
        context, call = signature.bind(function, args, kwargs)
        writer = None
        if quarantine:
            validate_quarantine_key(context)
            writer = quarantine_writer(context, key, partitions_def)
        returned = call_keeping_columns_tab(key, info, call, settings.warning_rules)
        frame, result = unwrap(returned, key)
        yield from run_validation(
            info,
            settings,
            frame,
            valid_key=key,
            writer=writer,
            returned=result,
            partition_key=partition_key(context) if partitions_def is not None else None,
            clear_quarantine=clear_quarantine and can_clear(context),
        )

    signature.apply(compute)
    return compute


def unwrap(
    returned: object, key: dg.AssetKey
) -> tuple[pl.DataFrame | pl.LazyFrame | None, dg.MaterializeResult[Any] | None]:
    """The frame to validate, and the user's own `MaterializeResult` if they returned one."""
    if returned is None or isinstance(returned, pl.DataFrame | pl.LazyFrame):
        return returned, None
    asset_name = key.to_user_string()
    if isinstance(returned, dg.MaterializeResult):
        if returned.asset_key is not None:
            raise MaterializeResultFieldError(asset_name, "asset_key")
        if returned.check_results:
            raise MaterializeResultFieldError(asset_name, "check_results")
        if returned.value is None:
            raise MaterializeResultValueError(asset_name)
        if not isinstance(returned.value, pl.DataFrame | pl.LazyFrame):
            raise MaterializeResultValueError(asset_name, value_type=type_name(returned.value))
        return returned.value, returned
    raise dg.DagsterInvariantViolationError(
        f"Asset '{asset_name}' returned a {type_name(returned)}. A dd.asset function returns "
        "a pl.DataFrame, a pl.LazyFrame, a dg.MaterializeResult with one of those as `value`, "
        "or None to skip."
    )

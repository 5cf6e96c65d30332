"""`dd.asset`: one validated asset, the one-output case of the package's one builder.

Its settings and asset attributes are a `dd.AssetOut`'s, so it declares its one output as a
multi-asset declares each of its own.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence, Set
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
from typing_extensions import Unpack

from dagster_dataframely._api.asset_out import AssetOut
from dagster_dataframely._api.dagster_keywords import OP_KEYWORDS, AssetDeps, passed_on
from dagster_dataframely._api.refusals import refusing_mistakes, usable_bare
from dagster_dataframely._declare.builder import build_asset
from dagster_dataframely._declare.output_declaration import ASSET_OUT_KEYWORDS, declare_output
from dagster_dataframely._model.return_hints import mismatch, schema_from_return_hint
from dagster_dataframely._model.schema import SchemaInfo, read_schema
from dagster_dataframely._model.setting_keywords import checked_settings, with_setting_keywords
from dagster_dataframely._model.setting_model import EntryPoint, OutputKeywords
from dagster_dataframely._model.settings import Settings, read_quarantine_dir
from dagster_dataframely.errors import UnexpectedArgumentError, UnreadableReturnHintError

AssetFunction = Callable[
    ...,
    pl.DataFrame
    | pl.LazyFrame
    | dg.MaterializeResult[pl.DataFrame]
    | dg.MaterializeResult[pl.LazyFrame]
    | dg.MaterializeResult[dy.DataFrame[Any]]
    | dg.MaterializeResult[dy.LazyFrame[Any]]
    | None,
]
"""What a type checker lets `dd.asset` decorate: `MaterializeResult` is invariant in its value,
so the hinted frames (`-> dg.MaterializeResult[dy.DataFrame[Orders]]`) are named beside the
plain ones."""

HINTED_USAGE = "-> dy.DataFrame[Orders]"
"""The return hint that gives a bare `@dd.asset` its schema, shown when there is none."""

SINGLE_OUTPUT = "result"
"""The name Dagster gives a `@dg.asset`'s output, whatever the asset's key."""


@usable_bare
@refusing_mistakes(EntryPoint.ASSET, "@dd.asset(Orders)", hinted_usage=HINTED_USAGE)
@with_setting_keywords(
    EntryPoint.ASSET,
    raises=("names", "warning_rules", "quality_policy"),
    notes={"quarantine": "`True` also adds a `context` parameter to the asset."},
)
def asset(
    schema: type[dy.Schema] | None = None,
    /,
    *,
    name: str | None = None,
    key_prefix: str | Sequence[str] | None = None,
    ins: Mapping[str, dg.AssetIn] | None = None,
    deps: AssetDeps | None = None,
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
    **settings: Unpack[OutputKeywords],
) -> Callable[[AssetFunction], dg.AssetsDefinition]:
    """Turn the decorated function into an asset that validates the frame it returns.

    The decorated function returns a `pl.DataFrame` or `pl.LazyFrame`, a `dg.MaterializeResult`
    whose `value` is one of those, or `None` to skip. A run checks the frame's columns and dtypes
    against `schema`, filters it with `Schema.filter`, writes the valid rows through the asset's
    IO manager and, with `quarantine=True`, the invalid rows to `<name>_quarantine` through the
    same manager, then reports one asset check per rule. The schema's Columns tab and check
    specs exist as soon as the module is imported.

    Every keyword parameter not described below is `@dg.asset`'s, passed to it unchanged:
    `ins`, `deps`, `tags`, `required_resource_keys`, `resource_defs`, `hooks`, `op_tags`,
    `group_name`, `freshness_policy`, `backfill_policy`, `retry_policy`, `owners`, `kinds` and
    `pool`. Six `@dg.asset` parameters are not accepted: `check_specs` (they come from the
    schema), `key` (use `key_prefix` and `name`), `output_required`, `dagster_type`,
    `is_virtual` and `io_manager_def` (bind an IO manager with `resource_defs`).

    Parameters
    ----------
    schema
        The Dataframely schema the returned frame must match: a `dy.Schema` subclass (never
        `dy.Schema` itself, which declares no column), never a `dy.Collection`. Positional
        only. `None` (or a bare `@dd.asset`) reads it from the function's return hint:
        `-> dy.DataFrame[Orders]`, `-> dy.LazyFrame[Orders]`,
        `-> Annotated[pl.DataFrame, Orders]`, `-> Annotated[pl.LazyFrame, Orders]`,
        `-> dg.MaterializeResult[dy.DataFrame[Orders]]` (or of `dy.LazyFrame[Orders]`), each
        optionally `| None`, and any of them named through a type alias or a `NewType`. The
        hint only names the schema: what the function returns decides how the frame is
        validated.
    name
        The asset's name, the last part of its key. `None` uses the function's name.
    key_prefix
        Passed to `@dg.asset` unchanged. The quarantine's asset key has the same prefix.
    metadata
        Definition metadata, passed to `@dg.asset`. The schema's `dagster/column_schema` entry
        replaces a key of the same name, as does `dataframely/event_log_values`, which says
        what the event log may show of the asset's values.
    description
        The asset's description. `None` uses the schema's own docstring (not an inherited one),
        or the decorated function's docstring if the schema has none.
    config_schema
        Passed to `@dg.asset` unchanged. Only a mapping is accepted.
    io_manager_key
        Passed to `@dg.asset` unchanged. In a run, the invalid rows go to the same IO manager.
    partitions_def
        Passed to `@dg.asset` unchanged. The quarantine is written under the same partition
        key, and each partition's frame is validated on its own.
    automation_condition
        Passed to `@dg.asset` unchanged. It applies to the asset, not to its quarantine, which
        has no materialization.
    code_version
        Passed to `@dg.asset`. `None` uses `dd.wiring.schema_version(schema)`, so a change of
        the schema marks the asset changed.

    Returns
    -------
    Callable[[AssetFunction], dg.AssetsDefinition]
        A decorator that returns a `dg.AssetsDefinition` with the schema's check specs and a
        Columns tab filled from the schema.

    Raises
    ------
    CollectionNotSupportedError
        `schema` is a `dy.Collection`.
    SchemaHintMismatchError
        `schema` is given and the return hint names a different schema.
    UnreadableReturnHintError
        No `schema` is given and the return hint names a schema in a form not listed under
        `schema` (given its schema, the decorator leaves such a hint unread).
    UnreadableInputHintError
        An input's hint names a schema in a form that stands for no one Polars type (two
        schemas, a `list[...]`, a `dy.Collection`); each accepted form loads as its Polars type.
    UnexpectedArgumentError
        No `schema` is given and the return hint names none.
    InvalidSettingError
        A setting's argument or environment variable has a value the setting does not allow,
        or `DAGSTER_DATAFRAMELY_QUARANTINE_DIR` is set but empty.
    SensitiveMarkError
        A column's `metadata={"pii": ...}` is neither `True` nor `False`.
    UnknownPolicyRuleError
        A rule name in `quality_policy` is not one of the schema's rules.
    ThresholdNotApplicableError
        `quality_policy` has a threshold for rules whose failing rows fail the run anyway
        (without `quarantine=True`, any rule but a warning rule).
    ClearQuarantineError
        `clear_quarantine=True` without `quarantine=True`: there is nothing to clear.

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
    arguments = dict(locals())  # the parameters only, before any other name is bound
    checked = checked_settings(EntryPoint.ASSET, settings)
    op = passed_on(arguments, OP_KEYWORDS)

    def declare(schema: type[dy.Schema]) -> tuple[AssetOut, SchemaInfo, Settings]:
        # NOTE: read first, so a wrong schema is refused with `dd.asset`'s words, not with
        # those of `dd.AssetOut`, which also takes a frame hint.
        info = read_schema(schema)
        declared = AssetOut(
            schema, **checked, **passed_on(arguments, ASSET_OUT_KEYWORDS), kinds=kinds
        )
        return declared, info, declared.settings.resolve(info)

    given = declare(schema) if schema is not None else None
    read_quarantine_dir()  # an empty value is a mistake worth failing on at declaration

    def decorate(function: AssetFunction) -> dg.AssetsDefinition:
        hinted = _schema_of(function, schema)  # a hint naming another schema is refused
        declared, info, resolved = given or declare(hinted)
        declaration = declare_output(
            name or function.__name__,
            info,
            declared.settings,
            resolved,
            declared.out,
            partitions_def=partitions_def,
            description=inspect.getdoc(function),
            output_name=SINGLE_OUTPUT,
        )
        return build_asset(declaration, function, op)

    return decorate


def _schema_of(function: AssetFunction, schema: type[dy.Schema] | None) -> type[dy.Schema]:
    """The asset's schema: the argument, the return hint's, or the error when they differ.

    Given its schema, the decorator compares only a hint it can read: one it cannot read
    (`list[...]`, two schemas) is left unread, as before hints were read and as `dd.multi_asset`
    and `dd.collection_asset` leave theirs, since the returned frame decides what happens.
    """
    if schema is not None:
        try:
            hinted = schema_from_return_hint(function, must_resolve=False)
        except UnreadableReturnHintError:
            return schema
        if hinted is not None and hinted is not schema:
            raise mismatch(function.__name__, schema, hinted)
        return schema
    hinted = schema_from_return_hint(function)
    if hinted is None:
        raise UnexpectedArgumentError(
            EntryPoint.ASSET.value,
            f"it was called without its schema, and the return hint of {function.__name__!r} "
            "names none",
            f"Write @dd.asset(Orders), or annotate `def {function.__name__}(...) {HINTED_USAGE}`.",
        )
    return hinted

"""`dd.multi_asset`: one step, several validated outputs, each with its own schema and quarantine.

Every output gets what `dd.asset` gives one asset. What a multi-asset adds is the atomicity
rule: every selected output's outcome is decided (`_outcome.decide`) before anything is
written, and if one of them fails the step, no table of the step is written, while every
output's checks still report and every quarantine that has rows is still written.

`build_multi_asset` is the private builder `dd.multi_asset` and `dd.collection_asset` share;
its `decide_all` hook is where a Collection splits its members jointly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl

from . import _names
from ._asset import unwrap
from ._asset_context import can_clear, partition_key, quarantine_writer, selected_outputs
from ._checks import asset_check_specs
from ._code_version import info_version
from ._columns import call_keeping_columns_tabs, info_metadata
from ._compute import ComputeSignature
from ._outcome import OUTCOME_ERRORS, AssetYield, Frame, Outcome, decide, emit
from ._quarantine import validate_quarantine_key
from ._quarantine_files import QuarantineWriter
from ._schema import SchemaInfo, own_docstring, read_schema
from ._settings import Granularity, SchemaRules, Settings, read_quarantine_dir, resolve_settings
from ._validate import type_name
from ._warnings import with_warning_rules
from .errors import ClearQuarantineError, DagsterDataframelyError, MultiAssetReturnError

EXCLUDED_MULTI_ASSET_PARAMETERS = frozenset(
    {"specs", "check_specs", "io_manager_def", "internal_asset_deps"}
)
"""`@dg.multi_asset` parameters `dd.multi_asset` does not take: `outs` declares the outputs
(`dd.AssetOut.from_spec` takes a spec), the schemas give the checks, and `resource_defs`
binds an IO manager."""


@dataclass(frozen=True, slots=True)
class OutputSettings:
    """The `dd.asset` settings of one output, as given (resolved by `declare_output`)."""

    quarantine: bool = False
    clear_quarantine: bool | None = None
    warning_rules: tuple[str, ...] | None = None
    check_granularity: Granularity | None = None
    schema_rules: SchemaRules | None = None
    max_failure_samples: int | None = None
    statistics: bool | None = None
    row_sample: int | None = None

    @classmethod
    def of(cls, *, warning_rules: Iterable[str] | None = None, **settings: Any) -> OutputSettings:
        """The settings, `warning_rules` kept as a tuple (a single string names one rule)."""
        rules = None
        if warning_rules is not None:
            rules = (warning_rules,) if isinstance(warning_rules, str) else tuple(warning_rules)
        return cls(warning_rules=rules, **settings)


@dataclass(frozen=True, init=False, eq=False)
class AssetOut:
    """One validated output of a `dd.multi_asset`: a schema, `dd.asset`'s settings, a `dg.AssetOut`.

    Each output has everything `dd.asset` gives one asset, with its own settings: a Columns
    tab from its schema, one check per rule set at its own granularity, statistics and
    samples, and with `quarantine=True` its own quarantine `<output asset name>_quarantine`,
    written through the output's own IO manager.

    Every keyword parameter from `key_prefix` on is `dg.AssetOut`'s, passed to it unchanged
    unless its description below says otherwise.

    Parameters
    ----------
    schema
        The Dataframely schema the output's frame must match: a `dy.Schema` subclass, never a
        `dy.Collection`. Positional only.
    quarantine
        As `dd.asset`'s, for this output: with `True` its invalid rows go to
        `<output asset name>_quarantine` and its valid rows are written; with `False` any
        invalid row fails the step.
    clear_quarantine
        As `dd.asset`'s, for this output: with `True` (and `quarantine=True`) a run whose rows
        of this output are all valid writes an empty quarantine for it.
    warning_rules
        Rules of this output's schema whose failures only warn, as `dd.asset` takes them.
    check_granularity
        As `dd.asset`'s, for this output's checks. `None` uses
        `DAGSTER_DATAFRAMELY_CHECK_GRANULARITY` if set, else `rule`.
    schema_rules
        As `dd.asset`'s, for this output's checks. `None` uses
        `DAGSTER_DATAFRAMELY_SCHEMA_RULES` if set, else `collapsed`.
    max_failure_samples
        As `dd.asset`'s, for this output's checks. `None` uses
        `DAGSTER_DATAFRAMELY_MAX_FAILURE_SAMPLES` if set, else `5`.
    statistics
        As `dd.asset`'s, for this output's materialization. `None` uses
        `DAGSTER_DATAFRAMELY_STATISTICS` if set, else `True`.
    row_sample
        As `dd.asset`'s, for this output's materialization. `None` uses
        `DAGSTER_DATAFRAMELY_ROW_SAMPLE` if set, else `5`.
    key_prefix
        Passed to `dg.AssetOut` unchanged. The output's key is `key_prefix` plus the output's
        name, and its quarantine has the same prefix.
    key
        Passed to `dg.AssetOut` unchanged: the output's whole asset key, instead of the
        output's name under `key_prefix`.
    io_manager_key
        Passed to `dg.AssetOut` unchanged. The output's quarantine goes through the same IO
        manager.
    metadata
        Definition metadata, passed to `dg.AssetOut`. The schema's `dagster/column_schema`
        entry replaces a key of the same name.
    description
        The output asset's description. `None` uses the schema's own docstring (not an
        inherited one).
    group_name
        Passed to `dg.AssetOut` unchanged.
    tags
        Passed to `dg.AssetOut` unchanged.
    owners
        Passed to `dg.AssetOut` unchanged.
    code_version
        Passed to `dg.AssetOut`. `None` uses the multi-asset's `code_version` if it has one,
        else `dd.wiring.schema_version(schema)`, so a change of the schema marks the output
        changed.
    kinds
        Passed to `dg.AssetOut` unchanged.
    automation_condition
        Passed to `dg.AssetOut` unchanged.
    freshness_policy
        Passed to `dg.AssetOut` unchanged.
    backfill_policy
        Passed to `dg.AssetOut` unchanged.
    is_required
        Passed to `dg.AssetOut`, but `False` by default (`dg.AssetOut`'s is `True`), because
        returning None for an output skips it. With `True`, a skipped output fails the step
        with Dagster's own error.

    Raises
    ------
    CollectionNotSupportedError
        `schema` is a `dy.Collection`.
    ReservedColumnError
        A column name is in the reserved `dy_` namespace.
    InvalidColumnNameError
        A column name has a character Dagster does not allow in an asset check name.
    InvalidRuleNameError
        A `check=` key has a character Dagster does not allow in an asset check name.
    CheckNameCollisionError
        Two rules produce the same asset check name.

    Examples
    --------
    ```python
    import dataframely as dy

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        order_id = dy.String(primary_key=True)


    out = dd.AssetOut(Orders, quarantine=True, io_manager_key="warehouse")
    print(out.schema.__name__, out.settings.quarantine, out.out.io_manager_key)
    ```
    """

    schema: type[dy.Schema]
    settings: OutputSettings
    """The `dd.asset` settings the parameters before `key_prefix` give."""
    out: dg.AssetOut
    """The `dg.AssetOut` the parameters from `key_prefix` on build (its key not yet resolved)."""

    def __init__(
        self,
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
        key_prefix: str | Sequence[str] | None = None,
        key: dg.AssetKey | str | Sequence[str] | None = None,
        io_manager_key: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        description: str | None = None,
        group_name: str | None = None,
        tags: Mapping[str, str] | None = None,
        owners: Sequence[str] | None = None,
        code_version: str | None = None,
        kinds: Set[str] | None = None,
        automation_condition: dg.AutomationCondition[Any] | None = None,
        freshness_policy: dg.FreshnessPolicy | None = None,
        backfill_policy: dg.BackfillPolicy | None = None,
        is_required: bool = False,
    ) -> None:
        out = dg.AssetOut(
            key_prefix=key_prefix,
            key=key,
            io_manager_key=io_manager_key,
            metadata=metadata,
            description=description,
            group_name=group_name,
            tags=tags,
            owners=owners,
            code_version=code_version,
            kinds=set(kinds) if kinds is not None else None,
            automation_condition=automation_condition,
            freshness_policy=freshness_policy,
            backfill_policy=backfill_policy,
            is_required=is_required,
        )
        _set_fields(
            self,
            schema,
            out,
            OutputSettings.of(
                quarantine=quarantine,
                clear_quarantine=clear_quarantine,
                warning_rules=warning_rules,
                check_granularity=check_granularity,
                schema_rules=schema_rules,
                max_failure_samples=max_failure_samples,
                statistics=statistics,
                row_sample=row_sample,
            ),
        )

    @classmethod
    def from_spec(
        cls,
        schema: type[dy.Schema],
        spec: dg.AssetSpec,
        *,
        quarantine: bool = False,
        clear_quarantine: bool | None = None,
        warning_rules: Iterable[str] | None = None,
        check_granularity: Granularity | None = None,
        schema_rules: SchemaRules | None = None,
        max_failure_samples: int | None = None,
        statistics: bool | None = None,
        row_sample: int | None = None,
        io_manager_key: str | None = None,
        backfill_policy: dg.BackfillPolicy | None = None,
        is_required: bool = False,
    ) -> AssetOut:
        """Return an output declared by a `dg.AssetSpec`, as `dg.AssetOut.from_spec` does.

        The spec gives the output's key, description, metadata, group, tags, owners, code
        version, kinds and policies; the schema's Columns tab, description and code version
        fill in what the spec leaves unset, as for `dd.AssetOut`.

        Parameters
        ----------
        schema
            The Dataframely schema the output's frame must match.
        spec
            The output asset's spec. `dg.AssetOut.from_spec` refuses a spec with `deps`:
            declare them on `dd.multi_asset(deps=...)` instead.
        quarantine
            As for `dd.AssetOut`.
        clear_quarantine
            As for `dd.AssetOut`.
        warning_rules
            As for `dd.AssetOut`.
        check_granularity
            As for `dd.AssetOut`.
        schema_rules
            As for `dd.AssetOut`.
        max_failure_samples
            As for `dd.AssetOut`.
        statistics
            As for `dd.AssetOut`.
        row_sample
            As for `dd.AssetOut`.
        io_manager_key
            The output's IO manager key, as for `dg.AssetOut.from_spec`.
        backfill_policy
            As for `dg.AssetOut.from_spec`.
        is_required
            As for `dd.AssetOut`: `False` by default.

        Returns
        -------
        AssetOut
            The output, ready for `dd.multi_asset(outs=...)`.
        """
        made = cls.__new__(cls)
        out = dg.AssetOut.from_spec(
            spec,
            is_required=is_required,
            io_manager_key=io_manager_key,
            backfill_policy=backfill_policy,
        )
        _set_fields(
            made,
            schema,
            out,
            OutputSettings.of(
                quarantine=quarantine,
                clear_quarantine=clear_quarantine,
                warning_rules=warning_rules,
                check_granularity=check_granularity,
                schema_rules=schema_rules,
                max_failure_samples=max_failure_samples,
                statistics=statistics,
                row_sample=row_sample,
            ),
        )
        return made


def _set_fields(
    target: AssetOut, schema: type[dy.Schema], out: dg.AssetOut, settings: OutputSettings
) -> None:
    """Fill a frozen `AssetOut`; the schema is read now, so a bad one fails where it is named."""
    read_schema(schema)
    object.__setattr__(target, "schema", schema)
    object.__setattr__(target, "settings", settings)
    object.__setattr__(target, "out", out)


MultiAssetFunction = Callable[..., Mapping[str, Any] | None]


def multi_asset(
    *,
    outs: Mapping[str, AssetOut],
    name: str | None = None,
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
    description: str | None = None,
    config_schema: Mapping[str, Any] | None = None,
    required_resource_keys: Set[str] | None = None,
    resource_defs: Mapping[str, object] | None = None,
    hooks: Set[dg.HookDefinition] | None = None,
    partitions_def: dg.PartitionsDefinition[str] | None = None,
    op_tags: Mapping[str, Any] | None = None,
    can_subset: bool = False,
    group_name: str | None = None,
    backfill_policy: dg.BackfillPolicy | None = None,
    retry_policy: dg.RetryPolicy | None = None,
    code_version: str | None = None,
    pool: str | None = None,
) -> Callable[[MultiAssetFunction], dg.AssetsDefinition]:
    """Turn the decorated function into a multi-asset that validates each output it returns.

    The decorated function returns a mapping from output name (a key of `outs`) to that
    output's value: a `pl.DataFrame`, a `pl.LazyFrame`, a `dg.MaterializeResult` whose
    `value` is one of those, or `None` to skip the output. An output missing from the mapping
    is skipped too. Each output is validated against its own schema with its own settings, as
    `dd.asset` validates one asset: Columns tab, one check per rule set, statistics, samples,
    and its own quarantine `<output asset name>_quarantine` through its own IO manager.

    **Atomicity**: every selected output's outcome is decided before anything is written. If
    one output fails the step (a column mismatch, invalid rows without a quarantine, no valid
    rows), no table of the step is written, every output's checks still report, the
    quarantines of outputs with invalid rows are still written, and the step raises the first
    failing output's own error (`ColumnSchemaError`, `ValidationAbortError` or
    `NoValidRowsError`) with a note naming every failing output. Otherwise every output is
    written as `dd.asset` would write it. See docs/multi-assets.md.

    With `can_subset=True`, a run that selects some outputs validates and writes only those;
    the values the function returns for the others are ignored. The function always receives
    a `context` if it declares one; `context.op_execution_context.selected_output_names` says
    which outputs run.

    Every keyword parameter but `outs` is `@dg.multi_asset`'s, passed to it unchanged unless
    its description below says otherwise. Four `@dg.multi_asset` parameters are not accepted:
    `specs` (use `dd.AssetOut.from_spec`), `check_specs` (they come from the schemas),
    `internal_asset_deps` (every output depends on every input) and `io_manager_def` (use
    `resource_defs`).

    Parameters
    ----------
    outs
        The outputs by name, each a `dd.AssetOut` with its schema and settings. The name is
        the output's asset name (under its `key_prefix`) unless its `key` says otherwise.
    name
        The multi-asset's op name. `None` uses the function's name.
    ins
        Passed to `@dg.multi_asset` unchanged.
    deps
        Passed to `@dg.multi_asset` unchanged.
    description
        Passed to `@dg.multi_asset` unchanged: the op's description. Each output's own
        description comes from its `dd.AssetOut` or its schema's docstring.
    config_schema
        Passed to `@dg.multi_asset` unchanged. Only a mapping is accepted.
    required_resource_keys
        Passed to `@dg.multi_asset` unchanged.
    resource_defs
        Passed to `@dg.multi_asset` unchanged; bind an IO manager here.
    hooks
        Passed to `@dg.multi_asset` unchanged.
    partitions_def
        Passed to `@dg.multi_asset` unchanged. Every output's checks and quarantine are
        partitioned the same way, and each partition is validated on its own.
    op_tags
        Passed to `@dg.multi_asset` unchanged.
    can_subset
        Passed to `@dg.multi_asset` unchanged. A subset run validates and writes only the
        selected outputs, and the atomicity rule covers only those.
    group_name
        Passed to `@dg.multi_asset` unchanged.
    backfill_policy
        Passed to `@dg.multi_asset` unchanged.
    retry_policy
        Passed to `@dg.multi_asset` unchanged.
    code_version
        The op's code version. An output without a `code_version` of its own takes this one
        if it is set, else `dd.wiring.schema_version` of its schema.
    pool
        Passed to `@dg.multi_asset` unchanged.

    Returns
    -------
    Callable[[MultiAssetFunction], dg.AssetsDefinition]
        A decorator that returns a `dg.AssetsDefinition` with one asset per output, each with
        its schema's check specs and Columns tab.

    Raises
    ------
    ClearQuarantineError
        An output sets `clear_quarantine=True` without `quarantine=True`.
    UnknownWarningRuleError
        A name in an output's `warning_rules` is not one of its schema's rules.
    InvalidSettingError
        A setting's argument or environment variable has a value the setting does not allow,
        or `DAGSTER_DATAFRAMELY_QUARANTINE_DIR` is set but empty.

    Examples
    --------
    ```python
    import dagster as dg
    import dataframely as dy
    import polars as pl

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        order_id = dy.String(primary_key=True)


    class Lines(dy.Schema):
        order_id = dy.String(nullable=False)
        amount = dy.Float64(min=0.0)


    @dd.multi_asset(
        outs={"orders": dd.AssetOut(Orders), "lines": dd.AssetOut(Lines, quarantine=True)}
    )
    def orders_and_lines() -> dict[str, pl.DataFrame]:
        return {
            "orders": pl.DataFrame({"order_id": ["A-1"]}),
            "lines": pl.DataFrame({"order_id": ["A-1", "A-1"], "amount": [2.0, -1.0]}),
        }


    print(sorted(key.to_user_string() for key in orders_and_lines.keys))
    print(sorted(check.name for check in orders_and_lines.check_specs))
    ```
    """
    read_quarantine_dir()  # an empty value is a mistake worth failing on at declaration
    declarations = {
        output: declare_output(output, out.schema, out.out, out.settings, code_version=code_version)
        for output, out in outs.items()
    }

    def decorate(function: MultiAssetFunction) -> dg.AssetsDefinition:
        return build_multi_asset(
            declarations,
            function,
            name=name,
            ins=ins,
            deps=deps,
            description=description,
            config_schema=config_schema,
            required_resource_keys=required_resource_keys,
            resource_defs=resource_defs,
            hooks=hooks,
            partitions_def=partitions_def,
            op_tags=op_tags,
            can_subset=can_subset,
            group_name=group_name,
            backfill_policy=backfill_policy,
            retry_policy=retry_policy,
            code_version=code_version,
            pool=pool,
        )

    return decorate


@dataclass(frozen=True, eq=False)
class OutputDeclaration:
    """One output of a validating multi-asset, everything resolved at declaration."""

    name: str
    """The output's name: the key of `outs`, and of the mapping the function returns."""
    key: dg.AssetKey
    info: SchemaInfo
    settings: Settings
    quarantine: bool
    clear_quarantine: bool
    out: dg.AssetOut
    """What `@dg.multi_asset` gets: the key set, the Columns tab, description, code version."""


def declare_output(
    name: str,
    schema: type[dy.Schema],
    out: dg.AssetOut,
    given: OutputSettings,
    *,
    code_version: str | None = None,
    info: SchemaInfo | None = None,
) -> OutputDeclaration:
    """Resolve one output: its key, its settings, and the `dg.AssetOut` Dagster gets.

    `out` is the user's `dg.AssetOut` (a Collection member's, or the one `dd.AssetOut`
    built) and `given` the output's `dd.asset` settings; `code_version` is the
    multi-asset's, used when `out` has none, before the schema's version. Settings and
    environment variables are read now, as `dd.asset` does. `info` is `schema` already read,
    with a Collection's filters for a member's (its Columns tab, checks and quarantine then
    have them too); None reads `schema`.

    Raises
    ------
    ClearQuarantineError
        `clear_quarantine=True` without `quarantine=True`.
    """
    settings = resolve_settings(
        check_granularity=given.check_granularity,
        schema_rules=given.schema_rules,
        max_failure_samples=given.max_failure_samples,
        statistics=given.statistics,
        row_sample=given.row_sample,
    )
    info = info or read_schema(schema)
    settings = with_warning_rules(settings, info, given.warning_rules)
    key = out.key or dg.AssetKey([*(out.key_prefix or []), name])
    if given.clear_quarantine and not given.quarantine:
        raise ClearQuarantineError(key.to_user_string())
    spec = out.to_spec(key, deps=[]).replace_attributes(
        metadata={
            **(out.metadata or {}),
            **info_metadata(info, settings.warning_rules),
        },
        description=out.description or own_docstring(schema),
        code_version=out.code_version or code_version or info_version(info),
    )
    resolved = dg.AssetOut.from_spec(
        spec,
        dagster_type=out.dagster_type,
        is_required=out.is_required,
        io_manager_key=out.io_manager_key,
        backfill_policy=out.backfill_policy,
    )
    return OutputDeclaration(
        name=name,
        key=key,
        info=info,
        settings=settings,
        quarantine=given.quarantine,
        clear_quarantine=bool(given.clear_quarantine),
        out=resolved,
    )


@dataclass(frozen=True, slots=True)
class OutputRun:
    """One selected output in one run or call: its declaration and what the context gives it."""

    declaration: OutputDeclaration
    partition_key: str | None
    has_writer: bool


DecideAll = Callable[[Mapping[str, Frame | None], Mapping[str, OutputRun]], Mapping[str, Outcome]]
"""Decide every selected output's outcome from the frames the function returned.

Both mappings are keyed by the selected outputs' names (a frame is None for a skipped
output); the result must have an `Outcome` for each of them, built with `_outcome.decide` or
`_outcome.decided` and the output's `OutputRun` (key, partition key, whether it has a
writer). Nothing may be written here. The default, `decide_each`, decides each output on its
own; a Collection splits its members jointly with one `Collection.filter`.
"""

UnpackReturn = Callable[[object], Mapping[str, object]]
"""Turn what the function returned into a mapping of output name to value.

The default accepts only a mapping. It must raise a `DagsterDataframelyError` for anything
it cannot read. A Collection's also accepts an instance of the collection.
"""


def decide_each(
    frames: Mapping[str, Frame | None], runs: Mapping[str, OutputRun]
) -> dict[str, Outcome]:
    """The default `DecideAll`: each output against its own schema, as `dd.asset` does."""
    return {
        name: decide(
            run.declaration.info,
            run.declaration.settings,
            frames[name],
            key=run.declaration.key,
            has_writer=run.has_writer,
            partition_key=run.partition_key,
        )
        for name, run in runs.items()
    }


def build_multi_asset(
    outputs: Mapping[str, OutputDeclaration],
    function: Callable[..., object],
    *,
    decide_all: DecideAll | None = None,
    unpack_return: UnpackReturn | None = None,
    **multi_asset_kwargs: Any,
) -> dg.AssetsDefinition:
    """Build the `dg.AssetsDefinition` of a validating multi-asset.

    `outputs` in the order their results are yielded; `multi_asset_kwargs` go to
    `@dg.multi_asset` (never `outs`, `specs` or `check_specs`); `partitions_def` among them
    also partitions every output's checks and quarantine. Each output gets the check specs of
    its `info` (a Collection member's include its filters). The step always has a context
    (`selected_output_names`, the writers), injected when the function takes none.
    """
    partitions_def: dg.PartitionsDefinition[str] | None = multi_asset_kwargs.get("partitions_def")
    name = str(multi_asset_kwargs.get("name") or getattr(function, "__name__", "multi_asset"))
    check_specs = [
        spec
        for declaration in outputs.values()
        for spec in asset_check_specs(
            declaration.info,
            asset=declaration.key,
            check_granularity=declaration.settings.check_granularity,
            schema_rules=declaration.settings.schema_rules,
            partitions_def=partitions_def,
            warning_rules=declaration.settings.warning_rules,
        )
    ]
    compute = _compute_function(
        function,
        outputs,
        name,
        decide_all=decide_all or decide_each,
        unpack_return=unpack_return or functools.partial(_as_mapping, name, tuple(outputs)),
        partitions_def=partitions_def,
    )
    return dg.multi_asset(
        outs={output: declaration.out for output, declaration in outputs.items()},
        check_specs=check_specs,
        **{k: v for k, v in multi_asset_kwargs.items() if v is not None},
    )(compute)


def _compute_function(
    function: Callable[..., object],
    outputs: Mapping[str, OutputDeclaration],
    asset_name: str,
    *,
    decide_all: DecideAll,
    unpack_return: UnpackReturn,
    partitions_def: dg.PartitionsDefinition[str] | None,
) -> Callable[..., AssetYield]:
    signature = ComputeSignature.of(function, needs_context=True)

    @functools.wraps(function)
    def compute(*args: Any, **kwargs: Any) -> AssetYield:
        context, call = signature.bind(function, args, kwargs)
        selected = [outputs[n] for n in selected_outputs(context, list(outputs))]
        writers: dict[str, QuarantineWriter | None] = {}
        runs: dict[str, OutputRun] = {}
        for declaration in selected:
            writer = None
            if declaration.quarantine:
                validate_quarantine_key(context, declaration.key)
                writer = quarantine_writer(context, declaration.key, partitions_def)
            writers[declaration.name] = writer
            runs[declaration.name] = OutputRun(
                declaration,
                partition_key(context) if partitions_def is not None else None,
                has_writer=writer is not None,
            )
        returned = call_keeping_columns_tabs(
            {d.key: (d.info, d.settings.warning_rules) for d in selected},
            call,
            functools.partial(_returned_schemas, outputs),
        )
        values = unpack_return(returned)
        frames: dict[str, Frame | None] = {}
        results: dict[str, dg.MaterializeResult[Any] | None] = {}
        for declaration in selected:
            frames[declaration.name], results[declaration.name] = _unwrap_output(
                asset_name, declaration, values.get(declaration.name)
            )
        outcomes = decide_all(frames, runs)
        yield from emit_all(
            [(outcomes[d.name], writers[d.name], results[d.name], d) for d in selected], context
        )

    signature.apply(compute)
    return compute


def emit_all(
    emitted: Sequence[
        tuple[Outcome, QuarantineWriter | None, dg.MaterializeResult[Any] | None, OutputDeclaration]
    ],
    context: Any,
) -> AssetYield:
    """Emit every output's outcome under the atomicity rule, then raise the first failure.

    If any outcome fails the step, no output yields its materialization (so no IO manager
    writes a table), each output still reports its checks and writes its quarantine rows,
    and the first failing output's own error is raised, with a note naming them all.
    Otherwise every quarantine is written before the first table (Dagster writes an output
    when it is yielded), so a quarantine that cannot be written leaves every table as it was.
    """
    write_table = not any(outcome.fails_step for outcome, *_ in emitted)
    prepared = []
    for outcome, writer, returned, declaration in emitted:
        clear = declaration.clear_quarantine and can_clear(context)
        if write_table:
            writer = _written_first(outcome, writer, clear_quarantine=clear)
        prepared.append((outcome, writer, returned, clear))
    raised: list[tuple[Outcome, DagsterDataframelyError]] = []
    for outcome, writer, returned, clear in prepared:
        try:
            yield from emit(
                outcome,
                writer=writer,
                returned=returned,
                clear_quarantine=clear,
                write_table=write_table,
            )
        except OUTCOME_ERRORS as error:
            raised.append((outcome, error))
    if not raised:
        return
    first = raised[0][1]
    names = ", ".join(repr(outcome.key.to_user_string()) for outcome, _ in raised)
    first.add_note(
        f"dagster-dataframely: the outputs that failed this step: {names}. No table of the "
        "step was written (every output keeps its previous contents); every output's checks "
        "were reported, and the quarantines of outputs with invalid rows were written."
    )
    raise first


def _written_first(
    outcome: Outcome, writer: QuarantineWriter | None, *, clear_quarantine: bool
) -> QuarantineWriter | None:
    """Write the outcome's quarantine now; return a writer that only reports where it went."""
    frame = outcome.quarantine_to_write(clear_quarantine=clear_quarantine, write_table=True)
    if writer is None or frame is None:
        return writer
    address = writer(frame)
    return lambda _: address


def _as_mapping(
    asset_name: str, outputs: tuple[str, ...], returned: object
) -> Mapping[str, object]:
    """The default `UnpackReturn`: a mapping whose keys are all output names."""
    if not isinstance(returned, Mapping):
        raise MultiAssetReturnError(
            asset_name, f"returned a {type_name(returned)}, not a mapping", list(outputs)
        )
    unknown = [repr(k) for k in returned if k not in outputs]
    if unknown:
        raise MultiAssetReturnError(
            asset_name,
            f"returned values for {', '.join(unknown)}, but it has no output of that name",
            list(outputs),
        )
    return returned


def _unwrap_output(
    asset_name: str, declaration: OutputDeclaration, value: object
) -> tuple[Frame | None, dg.MaterializeResult[Any] | None]:
    """The frame to validate for one output, and the user's `MaterializeResult`, if any."""
    if value is not None and not isinstance(
        value, pl.DataFrame | pl.LazyFrame | dg.MaterializeResult
    ):
        raise MultiAssetReturnError(
            asset_name,
            f"returned a {type_name(value)} for output {declaration.name!r}",
            [declaration.name],
        )
    return unwrap(value, declaration.key)


def _returned_schemas(
    outputs: Mapping[str, OutputDeclaration], returned: object
) -> dict[dg.AssetKey, object]:
    """The `dagster/column_schema` entries of the `MaterializeResult`s the function returned."""
    found: dict[dg.AssetKey, object] = {}
    if not isinstance(returned, Mapping):
        return found
    for name, value in returned.items():
        declaration = outputs.get(name)
        if declaration is not None and isinstance(value, dg.MaterializeResult) and value.metadata:
            schema = value.metadata.get(_names.COLUMN_SCHEMA)
            if schema is not None:
                found[declaration.key] = schema
    return found

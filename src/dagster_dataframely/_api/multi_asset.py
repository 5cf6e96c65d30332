"""`dd.multi_asset`: one step, several validated outputs, each with its own schema and quarantine.

Every output gets what `dd.asset` gives one asset; what a multi-asset adds is the atomicity
rule of the one pipeline (`_run.emit`): if one output fails the step, no table of the step is
written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import dagster as dg
import dataframely as dy
from typing_extensions import Unpack

from dagster_dataframely._api.dagster_keywords import MultiAssetKeywords, with_op_keywords
from dagster_dataframely._api.refusals import refusing_mistakes
from dagster_dataframely._declare.builder import build_multi_asset
from dagster_dataframely._declare.output_declaration import Declaration, declare_output
from dagster_dataframely._model.return_hints import (
    MULTI_ASSET_FORMS,
    mismatch,
    schemas_by_output,
    shown_return_hint,
)
from dagster_dataframely._model.schema import read_schema
from dagster_dataframely._model.setting_model import EntryPoint
from dagster_dataframely._model.settings import read_quarantine_dir
from dagster_dataframely.errors import OutputHintError

from .asset_out import AssetOut

MultiAssetFunction = Callable[..., Mapping[str, Any] | tuple[Any, ...] | None]
"""What a type checker lets `dd.multi_asset` decorate: a dict of frames by output, or, under a
`tuple[...]` return hint, a tuple in the order of `outs`."""


@refusing_mistakes(EntryPoint.MULTI_ASSET, '@dd.multi_asset(outs={"orders": dd.AssetOut(Orders)})')
@with_op_keywords(MultiAssetKeywords, item="output", after={"can_subset": "op_tags"})
def multi_asset(
    *, outs: Mapping[str, AssetOut], **keywords: Unpack[MultiAssetKeywords]
) -> Callable[[MultiAssetFunction], dg.AssetsDefinition]:
    """Turn the decorated function into a multi-asset that validates each output it returns.

    The decorated function returns a mapping from output name (a key of `outs`) to that
    output's value, or a tuple of every output's value in the order of `outs` (as a
    `@dg.multi_asset` does): a `pl.DataFrame`, a `pl.LazyFrame`, a `dg.MaterializeResult`
    whose `value` is one of those, or `None` to skip the output. An output missing from the
    mapping is skipped too. Each output is validated against its own schema with its own
    settings, as `dd.asset` validates one asset: Columns tab, one check per rule set,
    statistics, samples, and its own quarantine `<output asset name>_quarantine` through its
    own IO manager.

    **Atomicity**: every selected output's outcome is decided before anything is written. If
    one output fails the step (a column mismatch, invalid rows without a quarantine, no valid
    rows), no table of the step is written, every output's checks still report, the
    quarantines of outputs with invalid rows are still written, and the step raises the first
    failing output's own error (`ColumnSchemaError`, `ValidationAbortError` or
    `NoValidRowsError`) with a note naming every failing output. Otherwise every output is
    written as `dd.asset` would write it. See the documentation's "Multi-assets" page.

    With `can_subset=True`, a run that selects some outputs validates and writes only those;
    the values the function returns for the others are ignored. The function always receives
    a `context` if it declares one; `context.op_execution_context.selected_output_names` says
    which outputs run.

    Every keyword parameter not described below is `@dg.multi_asset`'s, passed to it
    unchanged: `ins`, `deps`, `required_resource_keys`, `resource_defs`, `hooks`, `op_tags`,
    `group_name`, `backfill_policy`, `retry_policy` and `pool`. Four `@dg.multi_asset`
    parameters are not accepted:
    `specs` (use `dd.AssetOut.from_spec`), `check_specs` (they come from the schemas),
    `internal_asset_deps` (every output depends on every input) and `io_manager_def` (use
    `resource_defs`).

    Parameters
    ----------
    outs
        The outputs by name, each a `dd.AssetOut` with its schema and settings. The name is
        the output's asset name (under its `key_prefix`) unless its `key` says otherwise. A
        `dd.AssetOut` without a schema takes the one the function's return hint names for
        it: `-> tuple[dy.DataFrame[A], dy.DataFrame[B]]` in the order of `outs`, or a
        `TypedDict` whose fields are the output names, each entry a hint `dd.asset` reads.
    can_subset
        Passed to `@dg.multi_asset` unchanged. A subset run validates and writes only the
        selected outputs, and the atomicity rule covers only those.
    code_version
        The op's code version. An output without a `code_version` of its own takes this one
        if it is set, else `dd.wiring.schema_version` of its schema.

    Returns
    -------
    Callable[[MultiAssetFunction], dg.AssetsDefinition]
        A decorator that returns a `dg.AssetsDefinition` with one asset per output, each with
        its schema's check specs and Columns tab.

    Raises
    ------
    SchemaHintMismatchError
        An output's `dd.AssetOut` and the return hint name different schemas for it.
    OutputHintError
        An output has no schema and the return hint does not give it one: a tuple of another
        length, a `TypedDict` whose fields are not the outputs, an entry naming none.
    ClearQuarantineError
        An output sets `clear_quarantine=True` without `quarantine=True`.
    UnreadableInputHintError
        An input's hint names a schema in a form that stands for no one Polars type (two
        schemas, a `list[...]`, a `dy.Collection`); each accepted form loads as its Polars type.
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
    given = {
        output: None if out.schema is None else _declared(output, out, out.schema, keywords)
        for output, out in outs.items()
    }

    def decorate(function: MultiAssetFunction) -> dg.AssetsDefinition:
        hinted = schemas_by_output(function, list(outs), needed=None in given.values())
        declarations = []
        for output, out in outs.items():
            schema = _schema_of(function, output, out, hinted.get(output))
            declarations.append(given[output] or _declared(output, out, schema, keywords))
        return build_multi_asset(declarations, function, keywords)

    return decorate


def _declared(
    output: str, out: AssetOut, schema: type[dy.Schema], keywords: MultiAssetKeywords
) -> Declaration:
    """The declaration of `output`, whose schema is its `dd.AssetOut`'s or the hint's."""
    info = read_schema(schema)
    return declare_output(
        output,
        info,
        out.settings,
        out.settings.resolve(info),
        out.out,
        partitions_def=keywords.get("partitions_def"),
        code_version=keywords.get("code_version"),
    )


def _schema_of(
    function: MultiAssetFunction, output: str, out: AssetOut, hinted: type[dy.Schema] | None
) -> type[dy.Schema]:
    """The output's schema: its `dd.AssetOut`'s, the hint's, or the error when they differ.

    Raises
    ------
    SchemaHintMismatchError
        The `dd.AssetOut` and the hint name different schemas.
    OutputHintError
        Neither names one.
    """
    name = getattr(function, "__name__", repr(function))
    if out.schema is not None:
        if hinted is not None and hinted is not out.schema:
            raise mismatch(name, out.schema, hinted, output=output)
        return out.schema
    if hinted is None:
        raise OutputHintError(
            name,
            shown_return_hint(function),
            f"names no schema for the output {output!r}, whose dd.AssetOut has none",
            MULTI_ASSET_FORMS,
        )
    return hinted

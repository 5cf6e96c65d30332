"""`dd.AssetOut`: one validated output of a `dd.multi_asset`, a schema beside a `dg.AssetOut`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import dagster as dg
import dataframely as dy
from typing_extensions import Unpack

from dagster_dataframely._api.dagster_keywords import passed_on
from dagster_dataframely._declare.output_declaration import ASSET_OUT_KEYWORDS
from dagster_dataframely._model.asset_settings import OutputSettings
from dagster_dataframely._model.return_hints import schema_named_by, shown
from dagster_dataframely._model.schema import read_schema
from dagster_dataframely._model.setting_keywords import checked_settings, with_setting_keywords
from dagster_dataframely._model.setting_model import EntryPoint, OutputKeywords
from dagster_dataframely.errors import SchemaTypeError

SchemaOrHint = type[dy.Schema] | type[dy.DataFrame[Any]] | type[dy.LazyFrame[Any]]
"""What names an output's schema: the class, or the frame hint a type checker reads."""


@with_setting_keywords(EntryPoint.ASSET_OUT, raises=("names", "quality_policy"))
@dataclass(frozen=True, init=False, eq=False)
class AssetOut:
    """One validated output of a `dd.multi_asset`: a schema, `dd.asset`'s settings, a `dg.AssetOut`.

    Each output has everything `dd.asset` gives one asset, with its own settings: a Columns
    tab from its schema, one check per rule set at its own granularity, statistics and
    samples, and with `quarantine=True` its own quarantine `<output asset name>_quarantine`,
    written through the output's own IO manager.

    Every keyword parameter not described below is `dg.AssetOut`'s, passed to it unchanged:
    `key`, `group_name`, `tags`, `owners`, `kinds`, `automation_condition`,
    `freshness_policy` and `backfill_policy`.

    Parameters
    ----------
    schema
        The Dataframely schema the output's frame must match: a `dy.Schema` subclass (never
        `dy.Schema` itself, which declares no column), never a `dy.Collection`, or its frame
        hint in place of it (`dy.DataFrame[Orders]`,
        `dy.LazyFrame[Orders]`; every return hint `dd.asset` reads is read the same way, though
        a type checker accepts these two only). Without it, `dd.multi_asset` reads the output's
        schema from the function's return hint: `-> tuple[dy.DataFrame[Orders], ...]` in the
        order of `outs`, or a `TypedDict` with a field per output. Positional only.
    key_prefix
        Passed to `dg.AssetOut` unchanged. The output's key is `key_prefix` plus the output's
        name, and its quarantine has the same prefix.
    io_manager_key
        Passed to `dg.AssetOut` unchanged. The output's quarantine goes through the same IO
        manager.
    metadata
        Definition metadata, passed to `dg.AssetOut`. The schema's `dagster/column_schema`
        entry replaces a key of the same name.
    description
        The output asset's description. `None` uses the schema's own docstring (not an
        inherited one).
    code_version
        Passed to `dg.AssetOut`. `None` uses the multi-asset's `code_version` if it has one,
        else `dd.wiring.schema_version(schema)`, so a change of the schema marks the output
        changed.
    is_required
        Passed to `dg.AssetOut`, but `False` by default (`dg.AssetOut`'s is `True`), because
        returning None for an output skips it. With `True`, a skipped output fails the step
        with Dagster's own error.

    Raises
    ------
    CollectionNotSupportedError
        `schema` is a `dy.Collection`.
    SchemaTypeError
        `schema` is neither a schema nor a hint naming one.

    Examples
    --------
    ```python
    import dataframely as dy

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        order_id = dy.String(primary_key=True)


    out = dd.AssetOut(Orders, quarantine=True, io_manager_key="warehouse")
    hinted = dd.AssetOut(dy.DataFrame[Orders], quarantine=True)
    assert out.schema is hinted.schema is Orders
    print(out.schema.__name__, out.settings.quarantine, out.out.io_manager_key)
    ```
    """

    schema: type[dy.Schema] | None
    """The output's schema; None until the multi-asset reads it from the return hint."""
    settings: OutputSettings
    """The `dd.asset` settings the parameters before `key_prefix` give."""
    out: dg.AssetOut
    """The `dg.AssetOut` the parameters from `key_prefix` on build (its key not yet resolved)."""

    def __init__(
        self,
        schema: SchemaOrHint | None = None,
        /,
        *,
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
        **settings: Unpack[OutputKeywords],
    ) -> None:
        out = dg.AssetOut(
            **passed_on(dict(locals()), ASSET_OUT_KEYWORDS),
            key=key,
            kinds=set(kinds) if kinds is not None else None,
            is_required=is_required,
        )
        _set_fields(self, schema, out, EntryPoint.ASSET_OUT, settings)

    @classmethod
    @with_setting_keywords(EntryPoint.ASSET_OUT_FROM_SPEC)
    def from_spec(
        cls,
        schema: SchemaOrHint | None,
        spec: dg.AssetSpec,
        *,
        io_manager_key: str | None = None,
        backfill_policy: dg.BackfillPolicy | None = None,
        is_required: bool = False,
        **settings: Unpack[OutputKeywords],
    ) -> AssetOut:
        """Return an output declared by a `dg.AssetSpec`, as `dg.AssetOut.from_spec` does.

        The spec gives the output's key, description, metadata, group, tags, owners, code
        version, kinds and policies; the schema's Columns tab, description and code version
        fill in what the spec leaves unset, as for `dd.AssetOut`.

        Parameters
        ----------
        schema
            The Dataframely schema the output's frame must match, or its frame hint
            (`dy.DataFrame[Orders]`); None reads it from the multi-asset's return hint.
        spec
            The output asset's spec. `dg.AssetOut.from_spec` refuses a spec with `deps`:
            declare them on `dd.multi_asset(deps=...)` instead.
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
        _set_fields(made, schema, out, EntryPoint.ASSET_OUT_FROM_SPEC, settings)
        return made


def _set_fields(
    target: AssetOut,
    schema: SchemaOrHint | None,
    out: dg.AssetOut,
    entry_point: EntryPoint,
    settings: OutputKeywords,
) -> None:
    """Fill a frozen `AssetOut`; the schema and the settings given to `entry_point` are read
    now (`checked_settings`), so a bad one fails where it is named."""
    # NOTE: the settings are checked before the schema is read: of two mistakes, a setting's
    # is the one refused.
    checked = OutputSettings.of(**checked_settings(entry_point, settings))
    object.__setattr__(target, "schema", None if schema is None else _schema(schema))
    object.__setattr__(target, "settings", checked)
    object.__setattr__(target, "out", out)


def _schema(given: SchemaOrHint) -> type[dy.Schema]:
    """The schema `given` is or names (`dy.DataFrame[Orders]`), read and validated.

    A Collection gets `read_schema`'s error; anything else but a schema is refused naming both
    forms an output accepts, as the user may have meant either, with `read_schema`'s reason
    and fix where it has one (`dy.Schema` itself, or a hint naming it).
    """
    # NOTE: a class names itself; only a hint (`dy.DataFrame[Orders]`) is read for its schema.
    named = None if isinstance(given, type) else schema_named_by(given)
    try:
        return read_schema(given if named is None else named).schema
    except SchemaTypeError as refused:
        raise SchemaTypeError(
            "a dataframely Schema class (`dd.AssetOut(Orders)`) or its frame hint "
            "(`dd.AssetOut(dy.DataFrame[Orders])`, or `dy.LazyFrame[Orders]`)",
            f"`{shown(given)}`",
            problem=refused.problem,
            fix=refused.fix,
        ) from None

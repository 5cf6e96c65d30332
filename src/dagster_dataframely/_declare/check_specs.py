"""The check specs a schema declares on an asset: the column-schema check, then one per group."""

from __future__ import annotations

import warnings

import dagster as dg
import dataframely as dy
from typing_extensions import Unpack

from dagster_dataframely._model import names
from dagster_dataframely._model.check_groups import (
    CheckGroup,
    check_groups,
    column_schema_description,
)
from dagster_dataframely._model.keys import coerce_asset_key
from dagster_dataframely._model.quality_policy import (
    ResolvedPolicy,
    resolve_policy,
)
from dagster_dataframely._model.rule_outcome import rule_outcomes
from dagster_dataframely._model.schema import SchemaInfo, read_schema
from dagster_dataframely._model.setting_keywords import (
    WIRING_RAISES,
    CheckSpecKeywords,
    checked_settings,
    with_setting_keywords,
)
from dagster_dataframely._model.setting_model import EntryPoint
from dagster_dataframely._model.settings import (
    Granularity,
    SchemaRules,
    Settings,
    resolve_check_naming,
)
from dagster_dataframely._model.warning_rules import resolve_warning_rules
from dagster_dataframely._run.checks.keys_across_partitions import key_sets
from dagster_dataframely._upstream import sibling_check_spec
from dagster_dataframely.errors import InvalidArgumentsError

PARTITIONED_CHECKS_WARNING = "Specifying a partitions_def on an AssetCheckSpec"
"""The start of the preview warning Dagster gives for a check spec with partitions."""


@with_setting_keywords(
    EntryPoint.WIRING_CHECK_SPECS,
    raises=WIRING_RAISES,
    order=(
        "asset",
        "check_granularity",
        "schema_rules",
        "partitions_def",
        "warning_rules",
        "quality_policy",
    ),
    notes={
        "check_granularity": "Pass the same value to the function that yields the results.",
        "schema_rules": "Pass the same value to the function that yields the results.",
        "quality_policy": "Its blocking rules' specs block and its volume and "
        "undeclared-columns checks have specs. Pass the same policy to the function that "
        "yields the results.",
    },
)
def check_specs(
    schema: type[dy.Schema],
    *,
    asset: str | dg.AssetKey,
    partitions_def: dg.PartitionsDefinition[str] | None = None,
    **settings: Unpack[CheckSpecKeywords],
) -> list[dg.AssetCheckSpec]:
    """Return the asset check specs for the schema's rules, plus the column-schema check.

    The column-schema check comes first and blocks: a frame with the wrong columns fails before
    any rule runs. Then one spec per check the granularity groups the rules into. A rule's bound
    never appears in a check name, so changing a bound keeps the check's history. The
    description of a check says which of its rules are in `warning_rules`.

    Parameters
    ----------
    schema
        The schema whose rules the checks report.
    asset
        The key of the asset the checks belong to, or its string as Dagster prints it
        (`"sales/orders"` is the key `["sales", "orders"]`).
    partitions_def
        The asset's partitions. Every spec gets them, so the catalog shows each check's status
        per partition and each evaluation records its partition (a preview feature of Dagster,
        which warns about it).

    Returns
    -------
    list[dg.AssetCheckSpec]
        The column-schema check's spec first, then one spec per check.

    Raises
    ------
    UnknownPolicyRuleError
        A rule name in `quality_policy` is not one of the schema's rules.

    Examples
    --------
    ```python
    import dataframely as dy

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        order_id = dy.String(primary_key=True)
        amount = dy.Float64(min=0.0)


    specs = dd.wiring.check_specs(Orders, asset="orders", check_granularity="column")
    print([spec.name for spec in specs])
    ```
    """
    checked = checked_settings(EntryPoint.WIRING_CHECK_SPECS, settings)
    granularity, schema_rule_checks = resolve_check_naming(
        checked.get("check_granularity"), checked.get("schema_rules")
    )
    info = read_schema(schema)
    warnings_ = resolve_warning_rules(info, checked.get("warning_rules"))
    return _specs(
        info,
        asset=coerce_asset_key(asset),
        granularity=granularity,
        schema_rules=schema_rule_checks,
        partitions_def=partitions_def,
        warning_rules=warnings_,
        # Whether a quarantine takes the rows is the run's to say; the specs are the same.
        policy=resolve_policy(
            info,
            checked.get("quality_policy"),
            quarantine=None,
            warning_rules=warnings_,
        ),
    )


def declared_check_specs(
    info: SchemaInfo,
    *,
    asset: dg.AssetKey,
    settings: Settings,
    partitions_def: dg.PartitionsDefinition[str] | None,
) -> list[dg.AssetCheckSpec]:
    """`check_specs` as the package's own declarations make them, without Dagster's preview warning.

    The user of `dd.asset` never asked for partitioned checks (a preview feature), so a suite
    that turns warnings into errors must still declare a partitioned asset; a hand-wired
    `check_specs(partitions_def=...)` keeps Dagster's warning.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=PARTITIONED_CHECKS_WARNING, category=dg.PreviewWarning
        )
        return _specs(
            info,
            asset=asset,
            granularity=settings.check_granularity,
            schema_rules=settings.schema_rules,
            partitions_def=partitions_def,
            warning_rules=settings.warning_rules,
            policy=settings.policy,
        )


def _specs(
    info: SchemaInfo,
    *,
    asset: str | dg.AssetKey,
    granularity: Granularity,
    schema_rules: SchemaRules,
    partitions_def: dg.PartitionsDefinition[str] | None,
    warning_rules: frozenset[str],
    policy: ResolvedPolicy | None = None,
) -> list[dg.AssetCheckSpec]:
    """The column-schema check's spec, then one per check group, each on `partitions_def`.

    A Collection member's `info` ends with its filters, so its specs end with them too; the
    quality policy's own checks, when it has them, come last.
    """
    column_schema = dg.AssetCheckSpec(
        names.COLUMN_SCHEMA_CHECK,
        asset=asset,
        description=column_schema_description(info.name),
        blocking=True,
        partitions_def=partitions_def,
    )
    # Every other spec differs from the column-schema check's only in these three fields.
    specs = [column_schema]
    outcomes = rule_outcomes(info, warning_rules, policy)
    specs += [
        sibling_check_spec(
            column_schema,
            name=group.name,
            description=_described(group, policy),
            blocking=any(outcomes[r.name].blocking for r in group.rules),
        )
        for group in check_groups(info, granularity, schema_rules, warning_rules)
    ]
    if policy is not None:
        specs += [
            sibling_check_spec(
                column_schema,
                name=name,
                description=description,
                blocking=policy.blocks_own_checks,
            )
            for name, description in policy_checks(policy)
        ]
    return specs


def policy_checks(policy: ResolvedPolicy) -> list[tuple[str, str]]:
    """The quality policy's own checks, by name and description, in the order they report."""
    checks = []
    if policy.volume is not None:
        checks.append((names.VOLUME_CHECK, policy.volume.describe()))
    if policy.undeclared_columns == "check":
        checks.append(
            (
                names.UNDECLARED_COLUMNS_CHECK,
                "The columns the frame has that the schema does not declare (dropped before "
                "the write) are those of the latest materialization; a change warns.",
            )
        )
    return checks


def _described(group: CheckGroup, policy: ResolvedPolicy | None) -> str:
    """The group's description, with the thresholds of its rules, so the catalog shows them."""
    if policy is None:
        return group.description
    bounded = [r for r in group.rules if r.name in policy.thresholds]
    if not bounded:
        return group.description
    fails_run = policy.writes
    if not group.collapsed:
        listed = policy.thresholds[bounded[0].name].describe(fails_run=fails_run)
        return f"{group.description.rstrip('.')}. Threshold: {listed}."
    listed = "; ".join(
        f"{r.name} {policy.thresholds[r.name].describe(fails_run=fails_run)}" for r in bounded
    )
    return f"{group.description.rstrip('.')}. Thresholds: {listed}."


def keys_across_partitions_spec(
    info: SchemaInfo, asset: dg.AssetKey, partitions_def: dg.PartitionsDefinition[str] | None
) -> dg.AssetCheckSpec:
    """The one table-wide check of `keys_across_partitions=True`, not per partition.

    Raises
    ------
    InvalidArgumentsError
        The asset is not partitioned, or its schema has no primary key and no `unique=` column.
    """
    shown = asset.to_user_string()
    if partitions_def is None:
        raise InvalidArgumentsError(
            shown,
            "`keys_across_partitions=True` checks keys across partitions, and the asset has none",
            "Give the asset a partitions_def, or leave keys_across_partitions out.",
        )
    keys = key_sets(info)
    if not keys:
        raise InvalidArgumentsError(
            shown,
            f"`keys_across_partitions=True` needs a key, and schema {info.name} has no primary "
            "key and no `unique=True` column",
            "Mark the key columns primary_key=True (or unique=True), or leave "
            "keys_across_partitions out.",
        )
    listed = "; ".join(", ".join(key) for key in keys)
    return dg.AssetCheckSpec(
        names.KEYS_ACROSS_PARTITIONS_CHECK,
        asset=asset,
        description=f"No key ({listed}) is stored in more than one partition.",
    )

"""The check specs a schema declares on an asset: every check kind's checks, in the kinds' order."""

from __future__ import annotations

import warnings

import dagster as dg
import dataframely as dy
from typing_extensions import Unpack

from dagster_dataframely._model.keys import coerce_asset_key
from dagster_dataframely._model.quality_policy import resolve_policy
from dagster_dataframely._model.schema import SchemaInfo, read_schema
from dagster_dataframely._model.setting_keywords import (
    WIRING_RAISES,
    checked_settings,
    with_setting_keywords,
)
from dagster_dataframely._model.setting_model import CheckSpecKeywords, EntryPoint
from dagster_dataframely._model.settings import Settings, resolve_check_naming
from dagster_dataframely._model.warning_rules import resolve_warning_rules
from dagster_dataframely._run.checks.kind import Target
from dagster_dataframely._run.checks.registry import kinds
from dagster_dataframely._upstream import sibling_check_spec

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
    # NOTE: whether a quarantine takes the rows is the run's to say; the specs are the same.
    policy = resolve_policy(
        info, checked.get("quality_policy"), quarantine=None, warning_rules=warnings_
    )
    key = coerce_asset_key(asset)
    return _specs(
        Target(info, key, granularity, schema_rule_checks, warnings_, policy, partitions_def)
    )


def declared_check_specs(
    info: SchemaInfo,
    *,
    asset: dg.AssetKey,
    settings: Settings,
    partitions_def: dg.PartitionsDefinition[str] | None,
    keys_across_partitions: bool = False,
) -> list[dg.AssetCheckSpec]:
    """`check_specs` as the package's own declarations make them, without Dagster's preview warning.

    The user of `dd.asset` never asked for partitioned checks (a preview feature), so a suite
    that turns warnings into errors must still declare a partitioned asset; a hand-wired
    `check_specs(partitions_def=...)` keeps Dagster's warning.

    Raises
    ------
    InvalidArgumentsError
        `keys_across_partitions=True` on an unpartitioned asset or a schema without a key.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=PARTITIONED_CHECKS_WARNING, category=dg.PreviewWarning
        )
        return _specs(
            Target(
                info,
                asset,
                settings.check_granularity,
                settings.schema_rules,
                settings.warning_rules,
                settings.policy,
                partitions_def,
                keys_across_partitions,
            )
        )


def _specs(target: Target) -> list[dg.AssetCheckSpec]:
    first, *others = [check for kind in kinds() for check in kind.declare(target)]
    template = dg.AssetCheckSpec(
        first.name,
        asset=target.key,
        description=first.description,
        blocking=first.blocking,
        partitions_def=target.partitions_def,
    )
    # NOTE: a sibling of the first spec differs from it only in these three fields, and is made
    # without Dagster's checks, which cost most of a wide schema's declaration.
    return [template] + [
        sibling_check_spec(
            template, name=check.name, description=check.description, blocking=check.blocking
        )
        if check.per_partition
        else dg.AssetCheckSpec(
            check.name, asset=target.key, description=check.description, blocking=check.blocking
        )
        for check in others
    ]

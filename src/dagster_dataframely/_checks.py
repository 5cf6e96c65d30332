"""Which asset checks a schema's rules become, at each granularity.

The grouping is computed once per (schema, granularity, schema_rules) and shared by the specs
declared at definition time and the results yielded at run time, so the two always agree on
names and order.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl

from . import _names
from ._failures import Failures
from ._schema import RuleInfo, SchemaInfo, read_schema
from ._settings import Granularity, SchemaRules, resolve_check_naming
from ._tables import records_value, table_value
from ._warnings import WARNING_PREFIX, WARNING_SUFFIX, resolve_warning_rules

PARTITIONED_CHECKS_WARNING = "Specifying a partitions_def on an AssetCheckSpec"
"""The start of the preview warning Dagster gives for a check spec with partitions."""

PARTITIONED_CHECKS = "partitions_def" in inspect.signature(dg.AssetCheckSpec).parameters
"""Whether the installed Dagster lets a check spec have partitions (Dagster 1.13.0 and later).

With it, a partitioned asset's checks are partitioned too, so each evaluation records the
partition it ran over; without it, the specs stay unpartitioned, as before.
"""


@dataclass(frozen=True, slots=True, eq=False)
class CheckGroup:
    """One asset check and the rules it reports for."""

    name: str
    rules: tuple[RuleInfo, ...]
    collapsed: bool
    """True for `dy_col__<column>` and `dy_schema__rules`, which report several rules at once."""
    description: str
    warning_rules: frozenset[str] = frozenset()
    """The names of the group's rules that are warning rules."""

    def severity(
        self, counts: Mapping[str, int], outcome: dg.AssetCheckSeverity
    ) -> dg.AssetCheckSeverity:
        """`WARN` when every rule that failed (or, none failing, every rule) is a warning rule.

        Otherwise the severity the run's outcome gives every check, so a group with no warning
        rule always reports at `outcome`.
        """
        names = [r.name for r in self.rules if r.name in counts] or [r.name for r in self.rules]
        if self.warning_rules.issuperset(names):
            return dg.AssetCheckSeverity.WARN
        return outcome


def column_schema_description(schema_name: str) -> str:
    return (
        f"The frame has every column {schema_name} declares, each with its declared dtype. "
        "Blocking: on a mismatch nothing is written and no rule runs."
    )


def check_groups(
    info: SchemaInfo,
    granularity: Granularity,
    schema_rules: SchemaRules,
    warning_rules: frozenset[str] = frozenset(),
) -> tuple[CheckGroup, ...]:
    """The checks that report `info`'s rules, in the order Dataframely lists the rules.

    `warning_rules` are the warning rules' names: their checks say so in their descriptions.
    Not cached: building them takes about 0.1 ms per 100 rules, while a cache would keep one
    `CheckGroup` per rule alive for every schema, which Python's cycle collector then walks on
    every full collection while a code location with hundreds of schemas loads.
    """
    if warning_rules:
        return tuple(
            _with_warnings(group, warning_rules)
            for group in check_groups(info, granularity, schema_rules)
        )
    # A Collection's filter has a check of its own at every granularity, after the rules': it
    # constrains several members at once, so no check of one member's columns can stand for it.
    rules = tuple(rule for rule in info.rules if not rule.is_filter)
    filters = tuple(_single(rule) for rule in info.filters)
    return _rule_groups(rules, granularity, schema_rules) + filters


def _rule_groups(
    rules: tuple[RuleInfo, ...], granularity: Granularity, schema_rules: SchemaRules
) -> tuple[CheckGroup, ...]:
    if granularity == "rule":
        return tuple(_single(rule) for rule in rules)
    if granularity == "schema":
        return (_collapsed(_names.SCHEMA_RULES_CHECK, rules),) if rules else ()
    groups: dict[str, list[RuleInfo]] = {}
    singles: dict[str, CheckGroup] = {}
    for rule in rules:
        if rule.column is not None:
            groups.setdefault(_names.column_check_name(rule.column), []).append(rule)
        elif schema_rules == "collapsed":
            groups.setdefault(_names.SCHEMA_RULES_CHECK, []).append(rule)
        else:
            singles[rule.check_name] = _single(rule)
            groups[rule.check_name] = []
    return tuple(
        singles[name] if name in singles else _collapsed(name, tuple(rules))
        for name, rules in groups.items()
    )


def _single(rule: RuleInfo) -> CheckGroup:
    return CheckGroup(rule.check_name, (rule,), collapsed=False, description=rule.description)


def _collapsed(name: str, rules: tuple[RuleInfo, ...]) -> CheckGroup:
    # A collapsed check lists what each rule checks; a docstring would be too long for that.
    return CheckGroup(name, rules, collapsed=True, description="; ".join(r.label for r in rules))


def _with_warnings(group: CheckGroup, warning_rules: frozenset[str]) -> CheckGroup:
    """The same check, its warning rules marked in its description."""
    own = warning_rules.intersection(r.name for r in group.rules)
    if not own:
        return group
    if group.collapsed:
        description = "; ".join(
            r.label + (WARNING_SUFFIX if r.name in own else "") for r in group.rules
        )
    else:
        description = WARNING_PREFIX + group.description
    return dataclasses.replace(group, description=description, warning_rules=own)


def check_specs(
    schema: type[dy.Schema],
    *,
    asset: str | dg.AssetKey,
    check_granularity: Granularity | None = None,
    schema_rules: SchemaRules | None = None,
    partitions_def: dg.PartitionsDefinition[str] | None = None,
    warning_rules: Iterable[str] | None = None,
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
        The key of the asset the checks belong to.
    check_granularity
        How many checks report the schema's rules: `rule`, `column` or `schema`. Changing it on
        an asset that has already run starts a new check history. `None` uses
        `DAGSTER_DATAFRAMELY_CHECK_GRANULARITY` if set, else `rule`.
    schema_rules
        Which checks report the schema-level rules at `column` granularity: `collapsed` or
        `per_rule`. `None` uses `DAGSTER_DATAFRAMELY_SCHEMA_RULES` if set, else `collapsed`.
    partitions_def
        The asset's partitions. Every spec gets them, so the catalog shows each check's status
        per partition and each evaluation records its partition. Dagster accepts partitions on
        a check spec from 1.13.0 (as a preview feature); on a Dagster without it, the specs are
        unpartitioned whatever this is.

    warning_rules
        Rules whose failures only warn, named as Dataframely names them (`amount|max`, a
        `@dy.rule` method's name, `primary_key`); a single string names one rule. A row that
        fails only these is valid, and their checks fail at `WARN`. See docs/warning-rules.md.

    Returns
    -------
    list[dg.AssetCheckSpec]
        The column-schema check's spec first, then one spec per check.

    Raises
    ------
    UnknownWarningRuleError
        A name in `warning_rules` is not one of the schema's rules.
    InvalidSettingError
        A setting's argument or environment variable has a value the setting does not allow.
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
        amount = dy.Float64(min=0.0)


    specs = dd.wiring.check_specs(Orders, asset="orders", check_granularity="column")
    print([spec.name for spec in specs])
    ```
    """
    granularity, schema_rule_checks = resolve_check_naming(check_granularity, schema_rules)
    info = read_schema(schema)
    return info_check_specs(
        info,
        asset=asset,
        granularity=granularity,
        schema_rules=schema_rule_checks,
        partitions_def=partitions_def,
        warning_rules=resolve_warning_rules(info, warning_rules),
    )


def info_check_specs(
    info: SchemaInfo,
    *,
    asset: str | dg.AssetKey,
    granularity: Granularity,
    schema_rules: SchemaRules,
    partitions_def: dg.PartitionsDefinition[str] | None,
    warning_rules: frozenset[str] = frozenset(),
) -> list[dg.AssetCheckSpec]:
    """`check_specs` for a schema already read and settings already resolved.

    A Collection member's `info` carries the Collection's filters too, so its specs end with
    one `dy_filter__<name>` check per filter that constrains it.
    """
    partitioned: dict[str, Any] = (
        {"partitions_def": partitions_def}
        if PARTITIONED_CHECKS and partitions_def is not None
        else {}
    )
    specs = [
        dg.AssetCheckSpec(
            _names.COLUMN_SCHEMA_CHECK,
            asset=asset,
            description=column_schema_description(info.name),
            blocking=True,
            **partitioned,
        )
    ]
    specs += [
        dg.AssetCheckSpec(group.name, asset=asset, description=group.description, **partitioned)
        for group in check_groups(info, granularity, schema_rules, warning_rules)
    ]
    return specs


def asset_check_specs(
    schema: type[dy.Schema] | SchemaInfo,
    *,
    asset: dg.AssetKey,
    check_granularity: Granularity,
    schema_rules: SchemaRules,
    partitions_def: dg.PartitionsDefinition[str] | None,
    warning_rules: frozenset[str] = frozenset(),
) -> list[dg.AssetCheckSpec]:
    """`check_specs` as `dd.asset` declares them, without Dagster's preview warning.

    `dd.asset` partitions a partitioned asset's checks on its own, so the user never asked for
    the preview feature, and a test suite that turns warnings into errors must still be able
    to declare a partitioned asset. A hand-wired call that passes `partitions_def` itself
    still gets the warning from Dagster. The settings are resolved already, and `schema` may be
    read already too (a Collection member's, with its filters).
    """
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=PARTITIONED_CHECKS_WARNING, category=dg.PreviewWarning
        )
        return info_check_specs(
            schema if isinstance(schema, SchemaInfo) else read_schema(schema),
            asset=asset,
            granularity=check_granularity,
            schema_rules=schema_rules,
            partitions_def=partitions_def,
            warning_rules=warning_rules,
        )


def check_results_for(
    groups: tuple[CheckGroup, ...],
    failures: Failures,
    *,
    asset_key: dg.AssetKey,
    severity: dg.AssetCheckSeverity,
    max_failure_samples: int,
    extra_metadata: Mapping[str, Any] | None = None,
) -> Iterator[dg.AssetCheckResult]:
    """One result per check, passing the column-schema check, then one per rule group.

    `max_failure_samples` applies per rule, even in a collapsed check, so a rule that a
    thousand rows failed cannot crowd a rule that one row failed out of the sample. A check
    whose failing rules are all warning rules reports at `WARN`, whatever `severity` is.
    """
    extra = dict(extra_metadata or {})
    yield column_schema_passed(asset_key, extra)
    samples = failures.samples(max_failure_samples)
    for group in groups:
        metadata = _group_metadata(group, failures.counts, samples)
        yield dg.AssetCheckResult(
            check_name=group.name,
            asset_key=asset_key,
            passed=not any(rule.name in failures.counts for rule in group.rules),
            severity=group.severity(failures.counts, severity),
            metadata={**metadata, **extra},
        )


def _group_metadata(
    group: CheckGroup, counts: Mapping[str, int], samples: Mapping[str, pl.DataFrame]
) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if group.collapsed:
        metadata[_names.RULES] = records_value(
            (
                {"rule": r.name, "failed_count": counts.get(r.name, 0), "expr": r.expression()}
                for r in group.rules
            ),
            {"rule": "string", "failed_count": "int", "expr": "string"},
        )
        sampled = [
            samples[r.name].select(pl.lit(r.name).alias(_names.RULE), pl.all())
            for r in group.rules
            if r.name in samples
        ]
        if sampled:
            metadata[_names.FAILED_SAMPLE] = table_value(pl.concat(sampled))
        return metadata
    (rule,) = group.rules
    metadata[_names.RULE] = rule.name
    metadata[_names.RULE_EXPR] = rule.expression()
    if rule.name in counts:
        metadata[_names.FAILED_COUNT] = counts[rule.name]
    if rule.name in samples:
        metadata[_names.FAILED_SAMPLE] = table_value(samples[rule.name])
    return metadata


def column_schema_passed(
    asset_key: dg.AssetKey, extra_metadata: Mapping[str, Any] | None = None
) -> dg.AssetCheckResult:
    """The passing column-schema result: every declared column is there, with its dtype."""
    return dg.AssetCheckResult(
        check_name=_names.COLUMN_SCHEMA_CHECK,
        asset_key=asset_key,
        passed=True,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata=dict(extra_metadata or {}),
    )


def column_schema_failure(
    asset_key: dg.AssetKey,
    problems: list[dict[str, str]],
    extra_metadata: Mapping[str, Any] | None = None,
) -> dg.AssetCheckResult:
    """The failing column-schema result: blocking, always `ERROR`, one row per bad column."""
    return dg.AssetCheckResult(
        check_name=_names.COLUMN_SCHEMA_CHECK,
        asset_key=asset_key,
        passed=False,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            _names.SCHEMA_ERRORS: records_value(
                problems, {"column": "string", "expected": "string", "actual": "string"}
            ),
            **(extra_metadata or {}),
        },
    )


def partition_metadata(partition_key: str | None) -> dict[str, str]:
    """The check metadata naming the partition the rules ran over; empty when unpartitioned.

    Dagster records the partition on a partitioned check's evaluation in a run; this names it
    on the result itself, so a direct invocation's results (and a run on a Dagster without
    partitioned checks) say which partition they are about too.
    """
    return {} if partition_key is None else {_names.PARTITION: str(partition_key)}

"""Which asset checks a schema's rules become, at each granularity.

The grouping is computed from the schema and the two naming settings alone, so the specs
declared at definition time and the results yielded at run time always agree on names and
order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import dagster as dg

from . import names
from .schema import RuleInfo, SchemaInfo
from .setting_model import Granularity, SchemaRules
from .warning_rules import WARNING_PREFIX, WARNING_SUFFIX


# NOTE: a named tuple, as `RuleInfo` is: each declaration builds one per check.
class CheckGroup(NamedTuple):
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
        failing = [r.name for r in self.rules if r.name in counts] or [r.name for r in self.rules]
        return dg.AssetCheckSeverity.WARN if self.warning_rules.issuperset(failing) else outcome


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
    Not cached: a cache would keep one `CheckGroup` per rule alive for every schema, which
    Python's cycle collector then walks on every full collection while a code location with
    hundreds of schemas loads, and building them again is cheap.
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
        return (_collapsed(names.SCHEMA_RULES_CHECK, rules),) if rules else ()
    groups: dict[str, list[RuleInfo]] = {}
    singles: dict[str, CheckGroup] = {}
    for rule in rules:
        if rule.column is not None:
            groups.setdefault(names.column_check_name(rule.column), []).append(rule)
        elif schema_rules == "collapsed":
            groups.setdefault(names.SCHEMA_RULES_CHECK, []).append(rule)
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
    return CheckGroup(name, rules, collapsed=True, description="; ".join(r.label for r in rules))


def _with_warnings(group: CheckGroup, warning_rules: frozenset[str]) -> CheckGroup:
    own = warning_rules.intersection(r.name for r in group.rules)
    if not own:
        return group
    if group.collapsed:
        description = "; ".join(
            r.label + (WARNING_SUFFIX if r.name in own else "") for r in group.rules
        )
    else:
        description = WARNING_PREFIX + group.description
    return group._replace(description=description, warning_rules=own)

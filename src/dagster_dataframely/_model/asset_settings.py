"""The settings of one validated asset, as given and as resolved against its schema.

Every entry point (the three decorators, `dd.table_checks`, the hand-wiring functions) takes
the same settings and resolves them here, in the same order: each setting from its default,
environment variable and argument, then the warning rules and the quality policy checked
against the schema.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, cast

from .quality_policy import resolve_policy
from .schema import SchemaInfo
from .setting_model import OutputKeywords, setting
from .settings import Settings, resolve_settings
from .warning_rules import resolve_warning_rules


@dataclass(frozen=True, slots=True)
class OutputSettings:
    """The `dd.asset` settings of one output as given: one left out reads the environment."""

    keywords: OutputKeywords = field(default_factory=lambda: OutputKeywords())
    """The settings given a value other than their keyword's default."""

    @classmethod
    def of(cls, **settings: Any) -> OutputSettings:
        """The settings, `warning_rules` kept as a tuple (a single string names one rule)."""
        rules = settings.get("warning_rules")
        if rules is not None:
            settings["warning_rules"] = (rules,) if isinstance(rules, str) else tuple(rules)
        given = {name: v for name, v in settings.items() if v != setting(name).keyword_default}
        return cls(cast(OutputKeywords, given))

    @property
    def quarantine(self) -> bool:
        """Whether the output's invalid rows go to a quarantine."""
        return self.keywords.get("quarantine", False)

    def resolve(
        self, info: SchemaInfo, *, known_rules: Collection[str] | None = None, writes: bool = True
    ) -> Settings:
        """Every setting's value; the warning rules and the policy checked against `info`'s rules.

        `known_rules` are the rule names the policy may use (a Collection's members'
        together), `info`'s by default; `writes` is False where the checks only read a stored
        table, so the policy's thresholds apply without a quarantine.

        Raises
        ------
        InvalidSettingError
            A default, environment variable or argument is not allowed.
        UnknownWarningRuleError
            A warning rule is not one of the schema's rules.
        UnknownPolicyRuleError, ThresholdNotApplicableError
            The quality policy names a rule the schema lacks, or sets what cannot apply here.
        """
        settings = resolve_settings(**self.keywords)
        warning_rules = resolve_warning_rules(info, self.keywords.get("warning_rules"))
        settings = dataclasses.replace(settings, warning_rules=warning_rules)
        policy = self.keywords.get("quality_policy")
        if policy is None:
            return settings
        resolved = resolve_policy(
            info,
            policy,
            quarantine=self.quarantine,
            warning_rules=settings.warning_rules,
            known_rules=known_rules,
            writes=writes,
        )
        return dataclasses.replace(settings, policy=resolved)

"""The settings of one validated asset, as given and as resolved against its schema.

Every entry point (the three decorators, `dd.table_checks`, the hand-wiring functions) takes
the same settings and resolves them here, in the same order: each setting from its default,
environment variable and argument, then the warning rules and the quality policy checked
against the schema.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from .quality_policy import QualityPolicy, resolve_policy
from .schema import SchemaInfo
from .settings import Granularity, SchemaRules, Settings, resolve_settings
from .warning_rules import with_warning_rules


@dataclass(frozen=True, slots=True)
class OutputSettings:
    """The `dd.asset` settings of one output, as given (None: the environment, then the default)."""

    quarantine: bool = False
    clear_quarantine: bool | None = None
    warning_rules: tuple[str, ...] | None = None
    check_granularity: Granularity | None = None
    schema_rules: SchemaRules | None = None
    max_failure_samples: int | None = None
    statistics: bool | None = None
    row_sample: int | None = None
    quality_policy: QualityPolicy | None = None
    streaming: bool | None = None
    keys_across_partitions: bool | None = None

    @classmethod
    def of(cls, *, warning_rules: Iterable[str] | None = None, **settings: Any) -> OutputSettings:
        """The settings, `warning_rules` kept as a tuple (a single string names one rule)."""
        rules = None
        if warning_rules is not None:
            rules = (warning_rules,) if isinstance(warning_rules, str) else tuple(warning_rules)
        return cls(warning_rules=rules, **settings)

    def resolve(
        self,
        info: SchemaInfo,
        *,
        known_rules: Collection[str] | None = None,
        writes: bool = True,
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
        settings = resolve_settings(
            check_granularity=self.check_granularity,
            schema_rules=self.schema_rules,
            max_failure_samples=self.max_failure_samples,
            statistics=self.statistics,
            row_sample=self.row_sample,
            streaming=self.streaming,
        )
        settings = with_warning_rules(settings, info, self.warning_rules)
        if self.quality_policy is None:
            return settings
        policy = resolve_policy(
            info,
            self.quality_policy,
            quarantine=self.quarantine,
            warning_rules=settings.warning_rules,
            known_rules=known_rules,
            writes=writes,
        )
        return dataclasses.replace(settings, policy=policy)

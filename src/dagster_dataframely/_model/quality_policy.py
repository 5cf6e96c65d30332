"""The quality policy: how much failure each rule tolerates, which checks block, what to remember.

A user declares it once, as a `dd.QualityPolicy` on the asset (or on one output, or on a
Collection's members). Its values are checked where they are built (a fraction outside [0, 1],
a warn bound above the fail bound), its rule names where the asset is declared, against the
schema's rules (as warning rules are), and it then travels, resolved, on the asset's
`Settings`. Without a policy nothing here runs and every outcome is the spec's.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, TypeAlias

import dagster as dg

from dagster_dataframely.errors import (
    InvalidArgumentsError,
    ThresholdNotApplicableError,
    UnknownPolicyRuleError,
)

from .anomaly_check import AnomalyCheck
from .argument_kinds import SEVERITIES, SEVERITY_TEXT, wrong_kind
from .row_threshold import Threshold
from .schema import SchemaInfo
from .volume_check import VolumeCheck


def _refused(parameter: str, value: object, expected: str, fix: str) -> InvalidArgumentsError:
    return wrong_kind("QualityPolicy", parameter, value, expected, fix)


UndeclaredColumns: TypeAlias = Literal["report", "check"]
_UNDECLARED_CHOICES = ("report", "check")


SeverityChoice: TypeAlias = dg.AssetCheckSeverity | Mapping[str, dg.AssetCheckSeverity]


@dataclass(frozen=True, slots=True, eq=False)
class QualityPolicy:
    """An asset's data-quality policy: thresholds, severities, blocking, and checks that remember.

    Everything the policy decides is in one object, passed as `quality_policy=` to `dd.asset`,
    `dd.AssetOut`, `dd.collection_asset`, `dd.table_checks` or a hand-wiring function. Rules
    are named as Dataframely names them (`amount|min`, a `@dy.rule` method's name,
    `primary_key`, a Collection filter's name), and every name is checked against the schema
    where the asset is declared. Without a policy, every outcome is the failure policy's.
    The documentation's "Quality policy" page has the table of what each bound does.

    Parameters
    ----------
    threshold
        The threshold of every rule's check (a Collection's filters included) that `rules`
        does not name. Needs a quarantine (or a reporting entry point such as
        `dd.table_checks`): without one any invalid row fails the run.
    rules
        A threshold per rule, by rule name; it replaces `threshold` for that rule. Without a
        quarantine only a warning rule (`warning_rules=`) can have one.
    severity
        The severity of a failing rule check that no threshold makes fail the run: one
        `dg.AssetCheckSeverity` for every rule, or one per rule name. A rule it does not name
        keeps the failure policy's (`WARN` when the table is written, `ERROR` when not; a
        warning rule's is `WARN`). A rule above its `fail_above` is always `ERROR`.
    blocking
        Which rule checks block (`dg.AssetCheckSpec(blocking=True)`): `True` for all (and the
        volume and undeclared-columns checks), or the rule names. A collapsed check blocks when
        one of its rules does. Dagster then holds back downstream assets after a failure:
        `AutomationCondition.all_deps_blocking_checks_passed()` waits for the check to pass,
        and a blocking check that fails at `ERROR` fails the step.
    volume
        A `dd.VolumeCheck`: a check, `dy_volume`, of how many rows a run writes. `None`: no
        such check.
    undeclared_columns
        The columns the returned frame had that the schema does not declare (Dataframely drops
        them): `"report"` lists them under `dataframely/undeclared_columns` on each
        materialization; `"check"` also adds a check, `dy_undeclared_columns`, that fails at
        `WARN` when they differ from the latest materialization's. `None`: neither.
    anomaly
        A `dd.AnomalyCheck`: checks, `dy_anomaly__<metric>`, of metrics judged against the
        band their own past gives. `None`: no such checks.

    Raises
    ------
    InvalidArgumentsError
        A value of the wrong kind, named with its type and what to pass: a threshold that is
        not a `dd.Threshold` (alone or in `rules`), a severity that is not a
        `dg.AssetCheckSeverity` (its name `"WARN"` included), a rule name that is not a `str`,
        `blocking` that is neither a `bool` nor rule names (`None`, `1`, a mapping), a volume
        that is not a `dd.VolumeCheck`, `undeclared_columns` neither `"report"` nor
        `"check"`, or an anomaly check that is not a `dd.AnomalyCheck`.

    Examples
    --------
    ```python
    import dagster as dg

    import dagster_dataframely as dd

    policy = dd.QualityPolicy(
        threshold=dd.Threshold(warn_above=0.01, fail_above=0.10),
        rules={"amount|min": dd.Threshold(fail_above=0)},
        severity={"primary_key": dg.AssetCheckSeverity.ERROR},
        blocking=["amount|min"],
        volume=dd.VolumeCheck(max_drop=0.5),
        undeclared_columns="check",
    )
    print(policy.blocking, sorted(policy.rules))
    ```
    """

    threshold: Threshold | None = None
    rules: Mapping[str, Threshold] = field(default_factory=dict)
    severity: SeverityChoice | None = None
    blocking: bool | Iterable[str] = False
    volume: VolumeCheck | None = None
    undeclared_columns: UndeclaredColumns | None = None
    anomaly: AnomalyCheck | None = None

    def __post_init__(self) -> None:
        if self.threshold is not None and not isinstance(self.threshold, Threshold):
            raise _refused(
                "threshold",
                self.threshold,
                "a dd.Threshold",
                "Pass it as volume=, and a dd.Threshold as threshold=."
                if isinstance(self.threshold, VolumeCheck)
                else "Wrap the bounds in one: threshold=dd.Threshold(warn_above=..., "
                "fail_above=...).",
            )
        object.__setattr__(self, "rules", _checked_rules(self.rules))
        object.__setattr__(self, "severity", _checked_severity(self.severity))
        object.__setattr__(self, "blocking", _checked_blocking(self.blocking))
        for name, kind in (("volume", VolumeCheck), ("anomaly", AnomalyCheck)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                shown = f"dd.{kind.__name__}"
                raise _refused(name, value, f"a {shown}", f"Pass {shown}(...), or None.")
        if self.undeclared_columns is not None and not (
            isinstance(self.undeclared_columns, str)
            and self.undeclared_columns in _UNDECLARED_CHOICES
        ):
            raise _refused(
                "undeclared_columns",
                self.undeclared_columns,
                "'report' or 'check'",
                "Pass 'report' to list them on each materialization, 'check' to also check "
                "them, or None.",
            )


def _checked_rules(rules: object) -> Mapping[str, Threshold]:
    return _by_rule(
        "rules",
        rules,
        (
            "a mapping from rule name to dd.Threshold",
            "Pass {'amount|min': dd.Threshold(...), ...}.",
        ),
        lambda threshold: isinstance(threshold, Threshold),
        "a dd.Threshold",
        lambda name: (
            f"Wrap the bounds in one: {{{name!r}: dd.Threshold(warn_above=..., fail_above=...)}}."
        ),
    )


def _checked_severity(severity: object) -> SeverityChoice | None:
    if severity is None or severity in SEVERITIES:
        return severity
    return _by_rule(
        "severity",
        severity,
        (
            f"{SEVERITY_TEXT}, or a mapping of rule name to one",
            f"Pass {SEVERITY_TEXT} (the enum, not its name).",
        ),
        lambda chosen: chosen in SEVERITIES,
        SEVERITY_TEXT,
        lambda name: f"Map {name!r} to {SEVERITY_TEXT} (the enum, not its name).",
    )


def _by_rule(
    parameter: str,
    mapping: object,
    refused: tuple[str, str],
    accepts: Callable[[object], bool],
    each: str,
    fix: Callable[[str], str],
) -> Mapping[str, Any]:
    # NOTE: `rules=` and `severity=` map rule names to a value each, refused alike.
    if not isinstance(mapping, Mapping):
        raise _refused(parameter, mapping, *refused)
    for name, value in mapping.items():
        if not isinstance(name, str):
            raise _refused(
                parameter, name, "rule names as text", "Name each rule as Dataframely does."
            )
        if not accepts(value):
            raise _refused(parameter, value, f"{each} for each rule", fix(name))
    return MappingProxyType(dict(mapping))


def _checked_blocking(blocking: object) -> bool | tuple[str, ...]:
    expected = "True, False, or the names of the rules whose checks block"
    fix = "Pass True for every check, False for none, or a list such as ['amount|min']."
    if isinstance(blocking, bool):
        return blocking
    if isinstance(blocking, str):
        return (blocking,)
    if isinstance(blocking, Mapping) or not isinstance(blocking, Iterable):
        raise _refused("blocking", blocking, expected, fix)
    names = tuple(blocking)
    for name in names:
        if not isinstance(name, str):
            raise _refused("blocking", name, "rule names as text", fix)
    return names


def checked_policy(function: str, policy: object) -> QualityPolicy | None:
    """`quality_policy=` of an entry point: a `dd.QualityPolicy` or None, else refused.

    Raises
    ------
    InvalidArgumentsError
        Anything else, such as a dict of its fields or a bare `dd.Threshold`.
    """
    if policy is None or isinstance(policy, QualityPolicy):
        return policy
    fields = {Threshold: "threshold", VolumeCheck: "volume"}
    inner = fields.get(type(policy))
    if inner is not None:
        fix = f"Wrap it in a policy: quality_policy=dd.QualityPolicy({inner}=...)."
    elif isinstance(policy, Mapping):
        fix = "Build the policy from its fields: quality_policy=dd.QualityPolicy(**{...})."
    else:
        fix = "Pass dd.QualityPolicy(...), or None for no policy."
    raise wrong_kind(function, "quality_policy", policy, "a dd.QualityPolicy", fix)


@dataclass(frozen=True, slots=True, eq=False)
class ResolvedPolicy:
    """A quality policy checked against one schema's rules: what the checks and the run use."""

    thresholds: Mapping[str, Threshold]
    """The threshold of each rule that has one (the policy's default applied), by rule name."""
    severities: Mapping[str, dg.AssetCheckSeverity]
    """The chosen severity of each rule that has one, by rule name."""
    blocking: frozenset[str]
    """The rules whose checks block."""
    blocks_own_checks: bool
    """Whether the volume and undeclared-columns checks block (`blocking=True`)."""
    volume: VolumeCheck | None
    undeclared_columns: UndeclaredColumns | None
    anomaly: AnomalyCheck | None = None
    writes: bool = True
    """Whether a run writes the rows, so a bound above `fail_above` fails it; False for the
    checks of a stored table, where it fails the check at `ERROR` and no run."""


def resolve_policy(
    info: SchemaInfo,
    policy: QualityPolicy | None,
    *,
    quarantine: bool | None,
    warning_rules: frozenset[str] = frozenset(),
    known_rules: Collection[str] | None = None,
    writes: bool = True,
) -> ResolvedPolicy | None:
    """Check the policy's rule names against `info` and resolve each rule's threshold.

    `quarantine` says whether the asset writes its invalid rows somewhere (`None`: not known
    here, as for `check_specs`); `known_rules` are all the names a policy may use (a
    Collection's members' rules together), `info`'s own by default; `writes` is False for the
    entry points that only report (`dd.table_checks`, `check_results`).

    Raises
    ------
    UnknownPolicyRuleError
        A name in `rules`, `severity` or `blocking` is not one of the known rules.
    ThresholdNotApplicableError
        A threshold on a rule whose failing rows already fail the run (no quarantine, not a
        warning rule), or a volume or undeclared-columns check where nothing is written.
    """
    if policy is None:
        return None
    own = [rule.name for rule in info.rules]
    known = list(known_rules) if known_rules is not None else own
    severity = policy.severity
    named = {
        "rules": list(policy.rules),
        "severity": list(severity) if isinstance(severity, Mapping) else [],
        "blocking": [] if isinstance(policy.blocking, bool) else list(policy.blocking),
    }
    # NOTE: every name is text: `QualityPolicy` refuses any other at construction.
    for parameter, names in named.items():
        unknown = [name for name in names if name not in known]
        if unknown:
            raise UnknownPolicyRuleError(info.name, parameter, list(dict.fromkeys(unknown)), known)
    needs_run = {
        name: reason
        for name, value, reason in (
            ("volume", policy.volume, "the volume check counts the rows a run writes"),
            (
                "undeclared_columns",
                policy.undeclared_columns,
                "the undeclared columns are those of the frame a run returns, which the write "
                "drops",
            ),
        )
        if value is not None
    }
    if not writes and needs_run:
        refused = " and ".join(f"`{name}=`" for name in needs_run)
        raise ThresholdNotApplicableError(
            info.name,
            f"{refused} {'needs' if len(needs_run) == 1 else 'need'} the run that writes the "
            f"table ({'; '.join(needs_run.values())}), and these checks only read a stored table",
            f"Declare {refused} in the quality policy of the asset that writes the table, and "
            f"leave {'it' if len(needs_run) == 1 else 'them'} out here.",
        )
    chosen = {rule: policy.rules.get(rule, policy.threshold) for rule in own}
    thresholds = {rule: threshold for rule, threshold in chosen.items() if threshold is not None}
    if writes and quarantine is False:
        _refuse_thresholds_without_quarantine(info.name, policy, thresholds, warning_rules)
    if isinstance(severity, Mapping):
        severities = {rule: s for rule, s in severity.items() if rule in own}
    else:
        severities = dict.fromkeys(own, severity) if severity is not None else {}
    blocking = set(own) if policy.blocking is True else set(own).intersection(policy.blocking or ())
    return ResolvedPolicy(
        thresholds=MappingProxyType(thresholds),
        severities=MappingProxyType(severities),
        blocking=frozenset(blocking),
        blocks_own_checks=policy.blocking is True,
        volume=policy.volume,
        undeclared_columns=policy.undeclared_columns,
        anomaly=policy.anomaly,
        writes=writes,
    )


def _refuse_thresholds_without_quarantine(
    schema_name: str,
    policy: QualityPolicy,
    thresholds: Mapping[str, Threshold | None],
    warning_rules: frozenset[str],
) -> None:
    # NOTE: without a quarantine, a failing row of a rule that is not a warning rule fails the run:
    # no bound can tolerate it.
    if policy.threshold is not None:
        raise ThresholdNotApplicableError(
            schema_name,
            "`threshold=` applies to every rule, and without a quarantine any invalid row "
            "already fails the run (its rows have nowhere else to go)",
            "Declare quarantine=True, or give warning rules thresholds of their own with "
            "rules={...}.",
        )
    blocking = [rule for rule in thresholds if rule not in warning_rules]
    if blocking:
        raise ThresholdNotApplicableError(
            schema_name,
            f"rules {blocking!r} are not warning rules, and without a quarantine any row that "
            "fails one already fails the run",
            "Declare quarantine=True, or list the rules in warning_rules= so their rows stay in "
            "the table.",
        )

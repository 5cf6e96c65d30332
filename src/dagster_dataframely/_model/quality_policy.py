"""The quality policy: how much failure each rule tolerates, which checks block, what to remember.

A user declares it once, as a `dd.QualityPolicy` on the asset (or on one output, or on a
Collection's members). Its values are checked where they are built (a fraction outside [0, 1],
a warn bound above the fail bound), its rule names where the asset is declared, against the
schema's rules (as warning rules are), and it then travels, resolved, on the asset's
`Settings`. Without a policy nothing here runs and every outcome is the spec's.
"""

from __future__ import annotations

import math
import reprlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, TypeAlias

import dagster as dg

from dagster_dataframely.errors import (
    InvalidArgumentsError,
    InvalidThresholdError,
    ThresholdNotApplicableError,
    UnknownPolicyRuleError,
)

from .schema import SchemaInfo

Bound: TypeAlias = int | float
"""A bound on failing rows: an `int` counts rows, a `float` is a fraction of the rows."""

UndeclaredColumns: TypeAlias = Literal["report", "check"]
CompareWith: TypeAlias = Literal["partition", "asset"]
_UNDECLARED_CHOICES = ("report", "check")
_COMPARE_CHOICES = ("partition", "asset")
_SEVERITIES = (dg.AssetCheckSeverity.WARN, dg.AssetCheckSeverity.ERROR)


def _checked_bound(parameter: str, value: object) -> Bound:
    """A row count (an int, at least 0) or a fraction of the rows (a float in [0, 1])."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidThresholdError(
            parameter,
            repr(value),
            f"a bound is an int (rows) or a float (a fraction of the rows), {_not_kind(value)}",
        )
    if isinstance(value, int) and value < 0:
        raise InvalidThresholdError(parameter, repr(value), "a row count cannot be negative")
    if isinstance(value, float) and not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InvalidThresholdError(
            parameter,
            repr(value),
            "a float is a fraction of the rows and must be between 0 and 1 (an int counts rows)",
        )
    return value


def exceeds(bound: Bound, failed: int, rows: int) -> bool:
    """Whether `failed` of `rows` rows is more than `bound` tolerates; no rows exceed nothing."""
    if isinstance(bound, int):
        return failed > bound
    return rows > 0 and failed / rows > bound


def describe_bound(bound: Bound) -> str:
    """`10 rows`, `1 row`, `5% of the rows`: a bound as the catalog and the errors write it."""
    if isinstance(bound, int):
        return f"{bound} row" if bound == 1 else f"{bound} rows"
    return f"{bound * 100:g}% of the rows"


def _beyond(bound: Bound) -> str:
    """`on any failing row` for a zero bound, else `above <bound>`."""
    return "on any failing row" if not bound else f"above {describe_bound(bound)}"


@dataclass(frozen=True, slots=True)
class Threshold:
    """How many rows may fail a rule before its check fails, and before the run fails.

    A bound is an `int`, a number of rows, or a `float` between 0 and 1, a fraction of the rows
    the function returned (for a Collection member, of that member's rows). A bound tolerates
    the failures it names: `warn_above=10` tolerates ten failing rows and fails the check at the
    eleventh; `fail_above=0.05` fails the run when more than 5% of the rows fail the rule.
    Thresholds never move a row: the quarantine gets the rows it would get without them, and a
    warning rule's rows stay in the table. See docs/quality-policy.md.

    Parameters
    ----------
    warn_above
        The most failing rows the rule's check passes with. Above it the check fails, at the
        rule's severity. `0` (the default) fails the check on the first failing row, as without
        a threshold.
    fail_above
        The most failing rows the run tolerates. Above it the check fails at `ERROR`, the run
        fails with `ThresholdExceededError`, the table is not written (it keeps its last good
        contents) and the quarantine still gets its rows. `None` (the default): the threshold
        never fails the run.

    Raises
    ------
    InvalidThresholdError
        A bound is neither a row count nor a fraction in [0, 1] (a `bool`, a negative count,
        `1.5`), or `warn_above` is above `fail_above` (both counts, or both fractions).

    Examples
    --------
    ```python
    import dagster_dataframely as dd

    tolerant = dd.Threshold(warn_above=0.01, fail_above=0.05)
    print(tolerant)
    try:
        dd.Threshold(warn_above=1.5)
    except dd.errors.InvalidThresholdError as error:
        print(error)
    ```
    """

    warn_above: Bound = 0
    fail_above: Bound | None = None

    def __post_init__(self) -> None:
        warn = _checked_bound("warn_above", self.warn_above)
        if self.fail_above is None:
            return
        fail = _checked_bound("fail_above", self.fail_above)
        if isinstance(warn, int) == isinstance(fail, int) and warn > fail:
            raise InvalidThresholdError(
                "warn_above",
                repr(warn),
                f"it is above fail_above={fail!r}, so the check could never warn before the "
                "run fails",
            )

    def describe(self) -> str:
        """One line: `the check fails above 1% of the rows, the run above 50 rows`."""
        check = "the check fails " + _beyond(self.warn_above)
        if self.fail_above is None:
            return check
        if not self.warn_above and not self.fail_above:
            return "the run fails on any failing row"
        return f"{check}, the run {_beyond(self.fail_above)}"


@dataclass(frozen=True, slots=True)
class VolumeCheck:
    """A check of how many rows a run writes, against bounds and the asset's recent history.

    The check, `dy_volume`, compares the number of rows a run writes to the table (the valid
    rows) with fixed bounds, and with the median `dagster/row_count` of the asset's last
    `window` materializations in the Dagster instance (read through its public API when the
    run starts; a direct call reads its context's instance). Without such history (a first
    run, a direct call with no context) only the fixed bounds apply. For a partitioned asset it
    runs per partition, like every check of the asset.

    Parameters
    ----------
    min_rows
        The fewest rows a run may write. `None`: no lower bound.
    max_rows
        The most rows a run may write. `None`: no upper bound.
    max_drop
        The largest drop tolerated against the recent median, as a fraction: `0.5` fails the
        check when a run writes fewer than half the usual rows. `None`: drops are not checked.
    max_growth
        The largest growth tolerated against the recent median, as a fraction: `1.0` fails the
        check when a run writes more than twice the usual rows. `None`: growth is not checked.
    window
        How many recent materializations the median is taken over.
    compare_with
        `"partition"`: the recent materializations of the same partition (for static or
        dynamic partitions, whose partitions differ in size). `"asset"`: those of any
        partition (for daily partitions, so a day is compared with recent days). The same for
        an unpartitioned asset.
    severity
        `WARN` (the default): a breach fails the check at `WARN` and the table is written.
        `ERROR`: a breach fails the check at `ERROR`, the run fails with
        `RowCountOutOfBoundsError`, the table keeps its last good contents, and the
        quarantine still gets its rows.

    Raises
    ------
    InvalidThresholdError
        No bound at all, a negative or non-integer count (a `bool` included), `min_rows` above
        `max_rows`, a `max_drop` outside [0.0, 1.0], a negative `max_growth`, or a fraction
        given as an `int` (`max_growth=50` meant as 50%: write `0.5`).
    InvalidArgumentsError
        A `window` that is not an `int` of at least 1, or a `compare_with` or `severity` other
        than those above (a severity's name `"ERROR"` included).

    Examples
    --------
    ```python
    import dagster as dg

    import dagster_dataframely as dd

    volume = dd.VolumeCheck(max_drop=0.5, min_rows=1, severity=dg.AssetCheckSeverity.ERROR)
    print(volume)
    ```
    """

    min_rows: int | None = None
    max_rows: int | None = None
    max_drop: float | None = None
    max_growth: float | None = None
    window: int = 5
    compare_with: CompareWith = "partition"
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.WARN

    def __post_init__(self) -> None:
        for name in ("min_rows", "max_rows"):
            value = getattr(self, name)
            if value is not None and not _is_count(value):
                raise InvalidThresholdError(
                    name, repr(value), f"a row count is an int, at least 0, {_not_kind(value)}"
                )
        if (
            self.min_rows is not None
            and self.max_rows is not None
            and self.min_rows > self.max_rows
        ):
            raise InvalidThresholdError(
                "min_rows", repr(self.min_rows), f"it is above max_rows={self.max_rows!r}"
            )
        for name, most in (("max_drop", 1.0), ("max_growth", math.inf)):
            value = getattr(self, name)
            if value is not None and not _is_fraction(value, most):
                raise InvalidThresholdError(name, repr(value), _fraction_problem(value, most))
        if not _is_count(self.window) or self.window < 1:
            raise InvalidArgumentsError(
                "VolumeCheck",
                *_wrong_kind(
                    "window",
                    self.window,
                    "an int of at least 1, the number of recent materializations",
                    "Pass a count such as window=5: the median of the last five runs.",
                ),
            )
        if not isinstance(self.compare_with, str) or self.compare_with not in _COMPARE_CHOICES:
            raise InvalidArgumentsError(
                "VolumeCheck",
                *_wrong_kind(
                    "compare_with",
                    self.compare_with,
                    "'partition' or 'asset'",
                    "Pass compare_with='partition' or compare_with='asset'.",
                ),
            )
        if self.severity not in _SEVERITIES:
            raise InvalidArgumentsError(
                "VolumeCheck",
                *_wrong_kind("severity", self.severity, _SEVERITY, f"Pass {_SEVERITY} (the enum)."),
            )
        if all(
            bound is None
            for bound in (self.min_rows, self.max_rows, self.max_drop, self.max_growth)
        ):
            raise InvalidThresholdError(
                "VolumeCheck",
                "()",
                "it has no bound: give min_rows, max_rows, max_drop or max_growth",
            )

    @property
    def reads_history(self) -> bool:
        """Whether the check compares with recent materializations, so needs the instance."""
        return self.max_drop is not None or self.max_growth is not None

    def describe(self) -> str:
        """What the check compares, as the catalog shows it before any run."""
        parts = []
        if self.min_rows is not None:
            parts.append(f"at least {describe_bound(self.min_rows)}")
        if self.max_rows is not None:
            parts.append(f"at most {describe_bound(self.max_rows)}")
        if self.max_drop is not None:
            parts.append(f"no drop of more than {self.max_drop * 100:g}%")
        if self.max_growth is not None:
            parts.append(f"no growth of more than {self.max_growth * 100:g}%")
        recent = ""
        if self.reads_history:
            scope = "partition" if self.compare_with == "partition" else "asset"
            recent = (
                f", against the median row count of the {scope}'s last {self.window} "
                "materializations"
            )
        failing = (
            "a breach fails the run and keeps the last good table"
            if self.severity == dg.AssetCheckSeverity.ERROR
            else "a breach warns"
        )
        return f"The rows written: {', '.join(parts)}{recent}; {failing}."


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_fraction(value: object, most: float) -> bool:
    """A float in [0, `most`]: an int here would read as a count, as it does in a threshold."""
    return isinstance(value, float) and math.isfinite(value) and 0.0 <= value <= most


def _fraction_problem(value: object, most: float) -> str:
    """Why `value` is not a fraction in [0, `most`], and what to write."""
    kind = "a float between 0.0 and 1.0" if most == 1.0 else "a float of at least 0.0"
    if isinstance(value, int) and not isinstance(value, bool):
        return (
            f"it is a fraction, so {kind}, not an int: write {float(value)!r} for "
            f"{value * 100}%, or {value / 100!r} for {value}%"
        )
    return f"it is a fraction, {kind}, {_not_kind(value)}"


def _not_kind(value: object) -> str:
    """`not -1` for a number out of its range; `not '5' (a str)` for a value of another kind."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"not {value!r}"
    return f"not {_given(value)}"


SeverityChoice: TypeAlias = dg.AssetCheckSeverity | Mapping[str, dg.AssetCheckSeverity]


@dataclass(frozen=True, slots=True, eq=False)
class QualityPolicy:
    """An asset's data-quality policy: thresholds, severities, blocking, and checks that remember.

    Everything the policy decides is in one object, passed as `quality_policy=` to `dd.asset`,
    `dd.AssetOut`, `dd.collection_asset`, `dd.table_checks` or a hand-wiring function. Rules
    are named as Dataframely names them (`amount|min`, a `@dy.rule` method's name,
    `primary_key`, a Collection filter's name), and every name is checked against the schema
    where the asset is declared. Without a policy, every outcome is the failure policy's.
    See docs/quality-policy.md for the table of what each bound does.

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

    Raises
    ------
    InvalidArgumentsError
        A value of the wrong kind, named with its type and what to pass: a threshold that is
        not a `dd.Threshold` (alone or in `rules`), a severity that is not a
        `dg.AssetCheckSeverity` (its name `"WARN"` included), a rule name that is not a `str`,
        `blocking` that is neither a `bool` nor rule names (`None`, `1`, a mapping), a volume
        that is not a `dd.VolumeCheck`, or `undeclared_columns` neither `"report"` nor
        `"check"`.

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

    def __post_init__(self) -> None:
        if self.threshold is not None and not isinstance(self.threshold, Threshold):
            raise InvalidArgumentsError(
                "QualityPolicy",
                *_wrong_kind(
                    "threshold",
                    self.threshold,
                    "a dd.Threshold",
                    "Pass it as volume=, and a dd.Threshold as threshold=."
                    if isinstance(self.threshold, VolumeCheck)
                    else "Wrap the bounds in one: threshold=dd.Threshold(warn_above=..., "
                    "fail_above=...).",
                ),
            )
        object.__setattr__(self, "rules", _checked_rules(self.rules))
        object.__setattr__(self, "severity", _checked_severity(self.severity))
        object.__setattr__(self, "blocking", _checked_blocking(self.blocking))
        if self.volume is not None and not isinstance(self.volume, VolumeCheck):
            raise InvalidArgumentsError(
                "QualityPolicy",
                *_wrong_kind(
                    "volume", self.volume, "a dd.VolumeCheck", "Pass dd.VolumeCheck(...), or None."
                ),
            )
        if self.undeclared_columns is not None and not (
            isinstance(self.undeclared_columns, str)
            and self.undeclared_columns in _UNDECLARED_CHOICES
        ):
            raise InvalidArgumentsError(
                "QualityPolicy",
                *_wrong_kind(
                    "undeclared_columns",
                    self.undeclared_columns,
                    "'report' or 'check'",
                    "Pass 'report' to list them on each materialization, 'check' to also check "
                    "them, or None.",
                ),
            )


_SEVERITY = "dg.AssetCheckSeverity.WARN or dg.AssetCheckSeverity.ERROR"


def _checked_rules(rules: object) -> Mapping[str, Threshold]:
    """`rules=`, each rule name a `str` mapped to a `dd.Threshold`, as a read-only mapping."""
    if not isinstance(rules, Mapping):
        raise InvalidArgumentsError(
            "QualityPolicy",
            *_wrong_kind(
                "rules",
                rules,
                "a mapping from rule name to dd.Threshold",
                "Pass {'amount|min': dd.Threshold(...), ...}.",
            ),
        )
    for name, threshold in rules.items():
        if not isinstance(name, str):
            raise InvalidArgumentsError(
                "QualityPolicy",
                *_wrong_kind(
                    "rules", name, "rule names as text", "Name each rule as Dataframely does."
                ),
            )
        if not isinstance(threshold, Threshold):
            raise InvalidArgumentsError(
                "QualityPolicy",
                *_wrong_kind(
                    "rules",
                    threshold,
                    "a dd.Threshold for each rule",
                    f"Wrap the bounds in one: {{{name!r}: dd.Threshold(warn_above=..., "
                    "fail_above=...)}.",
                ),
            )
    return MappingProxyType(dict(rules))


def _checked_severity(severity: object) -> SeverityChoice | None:
    """`severity=`: None, one severity, or a read-only mapping of rule name to one."""
    if severity is None or severity in _SEVERITIES:
        return severity
    if not isinstance(severity, Mapping):
        raise InvalidArgumentsError(
            "QualityPolicy",
            *_wrong_kind(
                "severity",
                severity,
                f"{_SEVERITY}, or a mapping of rule name to one",
                f"Pass {_SEVERITY} (the enum, not its name).",
            ),
        )
    for name, chosen in severity.items():
        if not isinstance(name, str):
            raise InvalidArgumentsError(
                "QualityPolicy",
                *_wrong_kind(
                    "severity", name, "rule names as text", "Name each rule as Dataframely does."
                ),
            )
        if chosen not in _SEVERITIES:
            raise InvalidArgumentsError(
                "QualityPolicy",
                *_wrong_kind(
                    "severity",
                    chosen,
                    f"{_SEVERITY} for each rule",
                    f"Map {name!r} to {_SEVERITY} (the enum, not its name).",
                ),
            )
    return MappingProxyType(dict(severity))


def _checked_blocking(blocking: object) -> bool | tuple[str, ...]:
    """`blocking=`: a bool, or the rule names as a tuple (one string names one rule)."""
    expected = "True, False, or the names of the rules whose checks block"
    fix = "Pass True for every check, False for none, or a list such as ['amount|min']."
    if isinstance(blocking, bool):
        return blocking
    if isinstance(blocking, str):
        return (blocking,)
    if isinstance(blocking, Mapping) or not isinstance(blocking, Iterable):
        raise InvalidArgumentsError(
            "QualityPolicy", *_wrong_kind("blocking", blocking, expected, fix)
        )
    names = tuple(blocking)
    for name in names:
        if not isinstance(name, str):
            raise InvalidArgumentsError(
                "QualityPolicy", *_wrong_kind("blocking", name, "rule names as text", fix)
            )
    return names


def _wrong_kind(
    parameter: str, value: object, expected: str, fix: str | None = None
) -> tuple[str, str]:
    """The problem and the fix of a value of the wrong kind, for `InvalidArgumentsError`."""
    return (
        f"`{parameter}=` takes {expected}, not {_given(value)}",
        fix if fix is not None else f"Pass {expected}.",
    )


def _given(value: object) -> str:
    """A value as an error shows it: `None`, `'WARN' (a str)`, or its type (`a dict`)."""
    if value is None:
        return "None"
    kind = type(value).__name__
    kind = f"{'an' if kind[0].lower() in 'aeiou' else 'a'} {kind}"
    if isinstance(value, str | int | float):
        return f"{reprlib.repr(value)} ({kind})"
    return kind


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
    raise InvalidArgumentsError(
        function, *_wrong_kind("quality_policy", policy, "a dd.QualityPolicy", fix)
    )


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

    @property
    def reads_history(self) -> bool:
        """Whether a run reads the asset's recent materializations from the instance."""
        return (
            self.volume is not None and self.volume.reads_history
        ) or self.undeclared_columns == "check"


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
    for parameter, names in named.items():
        unknown = [name if isinstance(name, str) else repr(name) for name in names]
        unknown = [name for name in unknown if name not in known]
        if unknown:
            raise UnknownPolicyRuleError(info.name, parameter, list(dict.fromkeys(unknown)), known)
    if not writes and (policy.volume is not None or policy.undeclared_columns is not None):
        raise ThresholdNotApplicableError(
            info.name,
            "a volume or undeclared-columns check needs a run that writes the table, and "
            "these checks only read a stored table",
            "Declare volume= and undeclared_columns= on the asset that writes the table.",
        )
    thresholds = {
        rule: policy.rules.get(rule, policy.threshold)
        for rule in own
        if policy.rules.get(rule, policy.threshold) is not None
    }
    if writes and quarantine is False:
        _refuse_thresholds_without_quarantine(info.name, policy, thresholds, warning_rules)
    if isinstance(severity, Mapping):
        severities = {rule: s for rule, s in severity.items() if rule in own}
    else:
        severities = dict.fromkeys(own, severity) if severity is not None else {}
    blocking = set(own) if policy.blocking is True else set()
    if not isinstance(policy.blocking, bool):
        blocking = {rule for rule in policy.blocking if rule in own}
    return ResolvedPolicy(
        thresholds=MappingProxyType({rule: t for rule, t in thresholds.items() if t is not None}),
        severities=MappingProxyType(severities),
        blocking=frozenset(blocking),
        blocks_own_checks=policy.blocking is True,
        volume=policy.volume,
        undeclared_columns=policy.undeclared_columns,
    )


def _refuse_thresholds_without_quarantine(
    schema_name: str,
    policy: QualityPolicy,
    thresholds: Mapping[str, Threshold | None],
    warning_rules: frozenset[str],
) -> None:
    """Without a quarantine a blocking rule's failing row fails the run: no bound can tolerate it.

    Raises
    ------
    ThresholdNotApplicableError
        The policy's `threshold`, or a threshold of a rule that is not a warning rule.
    """
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

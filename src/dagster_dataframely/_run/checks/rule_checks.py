"""The schema's checks of one split: the column-schema gate, then one result per check group."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model import names
from dagster_dataframely._model.check_groups import (
    CheckGroup,
    check_groups,
    column_schema_description,
)
from dagster_dataframely._model.quality_policy import ResolvedPolicy
from dagster_dataframely._model.rule_outcome import RuleOutcomes, blocks, rule_outcomes
from dagster_dataframely._run.split.failures import Failures, Samples
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely._upstream import table_of_records

from .history import Series
from .kind import DeclaredCheck, Judged, Reported, Target, When
from .tables import records_value, table_records, table_value
from .thresholds import RulesVerdict, RuleVerdict, rule_verdicts


def check_results_for(
    groups: tuple[CheckGroup, ...],
    failures: Failures,
    *,
    asset_key: dg.AssetKey,
    severity: dg.AssetCheckSeverity,
    max_failure_samples: int,
    extra_metadata: Mapping[str, Any] | None = None,
    policy: ResolvedPolicy | None = None,
    verdicts: Mapping[str, RuleVerdict] | None = None,
    sample_tables: Mapping[str, dg.TableMetadataValue] | None = None,
) -> Iterator[dg.AssetCheckResult]:
    """One result per check, passing the column-schema check, then one per rule group.

    `max_failure_samples` applies per rule, even in a collapsed check, so a rule that a
    thousand rows failed cannot crowd a rule that one row failed out of the sample. A check
    whose failing rules are all warning rules reports at `WARN`, whatever `severity` is. With
    a quality `policy`, `verdicts` (by rule) judge the rules that have a threshold: a tolerated
    rule does not fail its check, and its bound and observed fraction are in the metadata.
    `sample_tables` are `failure_samples` of `failures.samples(max_failure_samples)` when a
    caller has made them already.
    """
    extra = dict(extra_metadata or {})
    yield column_schema_result(asset_key, extra_metadata=extra)
    if sample_tables is None:
        sample_tables = failure_samples(
            groups, failures.samples(max_failure_samples), failures.info.sensitive
        )
    warning_rules = frozenset().union(*(group.warning_rules for group in groups))
    outcomes = rule_outcomes(failures.info, warning_rules, policy)
    for group in groups:
        metadata = _group_metadata(group, failures.counts, sample_tables.get(group.name))
        passed, level = _judged(group, failures.counts, severity, outcomes, verdicts or {})
        if policy is not None:
            metadata.update(_threshold_metadata(group, verdicts or {}, fails_run=policy.writes))
        yield dg.AssetCheckResult(
            check_name=group.name,
            asset_key=asset_key,
            passed=passed,
            severity=level,
            metadata={**metadata, **extra},
        )


def failure_samples(
    groups: tuple[CheckGroup, ...], samples: Samples, masked: frozenset[str]
) -> dict[str, dg.TableMetadataValue]:
    """Each check's failure sample as its table value, by check name (none if no row failed it).

    A collapsed check's sample leads each row with the rule it failed; `masked` (the sensitive
    columns) show `MASK` in every sample. Making these tables turns every sampled cell into a
    Python value, the costliest part of a wide schema's checks, so a run makes them while the
    quarantine frame is built.
    """
    singles = {
        group.name: group.rules[0].name
        for group in groups
        if not group.collapsed and group.rules[0].name in samples.positions
    }
    tables: dict[str, dg.TableMetadataValue] = {}
    if singles:
        # NOTE: the samples are rows of one quarantine: they are converted once (a row several
        # rules show, once), and every rule's table shares the records and one schema, where a
        # wide schema with many failing rules would pay a conversion and a schema per rule.
        records, schema = table_records(samples.rows, masked)
        tables = {
            check: table_of_records([records[p] for p in samples.positions[rule]], schema)
            for check, rule in singles.items()
        }
    for group in (group for group in groups if group.collapsed):
        sampled = [
            samples.of(r.name).select(pl.lit(r.name).alias(names.RULE), pl.all())
            for r in group.rules
            if r.name in samples.positions
        ]
        if sampled:
            tables[group.name] = table_value(pl.concat(sampled), masked)
    return tables


_ERROR = dg.AssetCheckSeverity.ERROR
_WARN = dg.AssetCheckSeverity.WARN


def _judged(
    group: CheckGroup,
    counts: Mapping[str, int],
    outcome: dg.AssetCheckSeverity,
    rules: RuleOutcomes,
    verdicts: Mapping[str, RuleVerdict],
) -> tuple[bool, dg.AssetCheckSeverity]:
    # NOTE: a rule fails its check beyond its threshold's `warn_above` (any failed row without one);
    # its severity is ERROR above `fail_above`, else its outcome's (the policy's, a warning rule's
    # WARN), else the run's.
    failing = [
        rule.name
        for rule in group.rules
        if rule.name in counts and not (rule.name in verdicts and verdicts[rule.name].tolerated)
    ]
    if not failing:
        return True, group.severity(counts, outcome)
    levels = [
        _ERROR if rule in verdicts and verdicts[rule].fails_run else rules[rule].severity or outcome
        for rule in failing
    ]
    return False, _ERROR if _ERROR in levels else _WARN


def _threshold_metadata(
    group: CheckGroup, verdicts: Mapping[str, RuleVerdict], *, fails_run: bool
) -> dict[str, Any]:
    # NOTE: `fails_run` is the policy's `writes`: a stored table's check says `at ERROR`, not `the
    # run`.
    judged = [verdicts[rule.name] for rule in group.rules if rule.name in verdicts]
    if not judged:
        return {}
    if not group.collapsed:
        (verdict,) = judged
        return {
            names.FAILED_FRACTION: verdict.fraction,
            names.THRESHOLD: verdict.threshold.describe(fails_run=fails_run),
        }
    return {
        names.THRESHOLDS: records_value(
            (
                {
                    "rule": v.rule,
                    "failed_count": v.failed,
                    "failed_fraction": v.fraction,
                    "threshold": v.threshold.describe(fails_run=fails_run),
                }
                for v in judged
            ),
            {
                "rule": "string",
                "failed_count": "int",
                "failed_fraction": "float",
                "threshold": "string",
            },
        )
    }


def _group_metadata(
    group: CheckGroup, counts: Mapping[str, int], sample: dg.TableMetadataValue | None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if group.collapsed:
        metadata[names.RULES] = records_value(
            (
                {"rule": r.name, "failed_count": counts.get(r.name, 0), "expr": r.expression()}
                for r in group.rules
            ),
            {"rule": "string", "failed_count": "int", "expr": "string"},
        )
    else:
        (rule,) = group.rules
        metadata[names.RULE] = rule.name
        metadata[names.RULE_EXPR] = rule.expression()
        if rule.name in counts:
            metadata[names.FAILED_COUNT] = counts[rule.name]
    if sample is not None:
        metadata[names.FAILED_SAMPLE] = sample
    return metadata


def column_schema_result(
    asset_key: dg.AssetKey,
    problems: list[dict[str, str]] | None = None,
    extra_metadata: Mapping[str, Any] | None = None,
) -> dg.AssetCheckResult:
    """The column-schema check's result: passing without `problems`, else one row per bad column.

    Always at `ERROR`: the check blocks, and on a mismatch nothing is written.
    """
    metadata: dict[str, Any] = {}
    if problems:
        metadata[names.SCHEMA_ERRORS] = records_value(
            problems, {"column": "string", "expected": "string", "actual": "string"}
        )
    return dg.AssetCheckResult(
        check_name=names.COLUMN_SCHEMA_CHECK,
        asset_key=asset_key,
        passed=not problems,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={**metadata, **(extra_metadata or {})},
    )


def partition_metadata(partition_key: str | None) -> dict[str, str]:
    """The check metadata naming the partition the rules ran over; empty when unpartitioned.

    Dagster records the partition on a partitioned check's evaluation in a run; this names it
    on the result itself, so a direct invocation's results (and a run on a Dagster without
    partitioned checks) say which partition they are about too.
    """
    return {} if partition_key is None else {names.PARTITION: str(partition_key)}


def _described(group: CheckGroup, policy: ResolvedPolicy | None) -> str:
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


class RuleChecks:
    """The schema's checks: the column-schema gate's, then one per check group of its rules.

    The quality policy's thresholds judge the rules that have one: a tolerated rule's check
    passes, and a rule above its `fail_above` fails the run.
    """

    name = "rules"
    when = When.BEFORE_WRITE

    def declare(self, target: Target) -> list[DeclaredCheck]:
        # NOTE: `blocks` alone, not every rule's `rule_outcomes`: declaring then builds no
        # outcome per rule, which a code location of hundreds of schemas pays for on every load.
        groups = check_groups(
            target.info, target.granularity, target.schema_rules, target.warning_rules
        )
        return [
            DeclaredCheck(
                names.COLUMN_SCHEMA_CHECK,
                column_schema_description(target.info.name),
                blocking=True,
            ),
            *(
                DeclaredCheck(
                    group.name,
                    _described(group, target.policy),
                    blocking=any(blocks(target.policy, r.name) for r in group.rules),
                )
                for group in groups
            ),
        ]

    def series(self, output: ValidatedOutput) -> tuple[Series, ...]:
        return ()

    def judge(self, judged: Judged) -> RulesVerdict | None:
        policy = judged.output.settings.policy
        if policy is None:
            return None
        return RulesVerdict(rule_verdicts(policy, judged.counts, judged.rows))

    def results(
        self, verdict: RulesVerdict | None, reported: Reported
    ) -> list[dg.AssetCheckResult]:
        output, settings = reported.output, reported.output.settings
        assert reported.failures is not None  # judged before the write, on the split rows
        return list(
            check_results_for(
                output_check_groups(output),
                reported.failures,
                asset_key=output.key,
                severity=reported.severity,
                max_failure_samples=settings.max_failure_samples,
                extra_metadata=reported.metadata,
                policy=settings.policy,
                verdicts=verdict.rules if verdict is not None else None,
                sample_tables=reported.sample_tables,
            )
        )


RULE_CHECKS = RuleChecks()


def output_check_groups(output: ValidatedOutput) -> tuple[CheckGroup, ...]:
    """The rule checks of `output`, grouped as its settings say."""
    settings = output.settings
    return check_groups(
        output.info, settings.check_granularity, settings.schema_rules, settings.warning_rules
    )

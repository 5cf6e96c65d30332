"""The step's warning when rows went to a quarantine while every check passed.

A rule's check passes with failing rows when the quality policy's threshold tolerates them
(`warn_above`), yet the rows still go to the quarantine: thresholds never move a row. A run
that is green everywhere would then hide that its table lacks rows, so the step says it in
its log, once: how many rows went to which quarantine, and why no check failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg

from dagster_dataframely._run.checks.rule_checks import RULE_CHECKS
from dagster_dataframely._run.checks.thresholds import RulesVerdict
from dagster_dataframely._run.decide.outcome import Outcome, Partial


def passing_quarantine_line(
    outcome: Outcome, checks: Sequence[dg.AssetCheckResult], address: str | None
) -> str | None:
    """One output's line when its rows were quarantined and all its `checks` passed; else None.

    Names no value: the rules, their counts, the threshold and where the rows went.
    """
    if not isinstance(outcome, Partial) or not all(check.passed for check in checks):
        return None
    run, rows = outcome.run, outcome.rows
    where = f" of partition {run.partition_key}" if run.partition_key is not None else ""
    went = f" ({address})" if address is not None else ""
    line = (
        f"{_rows(rows.quarantined.invalid_count)}{where} of "
        f"{run.output.key.to_user_string()!r} went to its quarantine{went}"
    )
    judged = rows.evaluation.verdicts.get(RULE_CHECKS.name)
    verdicts = judged.rules if isinstance(judged, RulesVerdict) else {}
    check_names = {rule.name: rule.check_name for rule in run.output.info.rules}
    tolerated = [
        f"{check_names.get(v.rule, v.rule)} ({v.failed} of {v.rows} rows failed, "
        f"{v.fraction:.1%}; {v.threshold.describe()})"
        for v in verdicts.values()
        if v.rule in rows.quarantined.counts and v.failed and v.tolerated
    ]
    if tolerated:
        line += ": the quality policy's threshold tolerates " + "; ".join(tolerated)
    return line + "."


def warn_of_passing_quarantines(log: Any, lines: Sequence[str | None]) -> None:
    """Warn once, through `log` (the step's), of every output quarantined while its checks passed.

    `lines` are `passing_quarantine_line`'s, one per outcome; nothing is said without one.
    """
    said = [line for line in lines if line is not None]
    if not said:
        return
    (log if log is not None else dg.get_dagster_logger()).warning(
        "dagster-dataframely: rows went to a quarantine while every check of their asset "
        "passed; the run is green, and the table does not have them:"
        + "".join(f"\n  - {line}" for line in said)
        + "\nEach materialization leads with them: `dataframely/invalid_count` and "
        "`dataframely/quarantine_address`."
    )


def _rows(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"

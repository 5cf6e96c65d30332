"""The table's materialization metadata: row count, samples, statistics and the failure summary.

A key is absent, never empty, when there is nothing to show for it, so a reader can tell "no
invalid rows" from "invalid rows, sample turned off".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg

from dagster_dataframely._model import names
from dagster_dataframely._model.settings import Settings

from .failures import Failures
from .tables import records_value, table_value
from .valid_rows import ValidRows, first_rows, row_count


def materialization_metadata(
    valid: ValidRows,
    failures: Failures,
    settings: Settings,
    quarantine_address: str | None,
    statistics: Mapping[str, dg.TableMetadataValue],
    *,
    warning_count: int = 0,
) -> dict[str, Any]:
    """Everything this package reports on the table's materialization.

    `statistics` are `statistics_tables(valid)`, computed by the caller (alongside the
    quarantine write), or empty when they are turned off. `warning_count` is how many of the
    `valid` rows failed a warning rule; `failures` are the quarantined rows only.
    """
    count = row_count(valid)
    metadata: dict[str, Any] = {names.ROW_COUNT: count}
    if settings.row_sample and count:
        metadata[names.VALID_SAMPLE] = table_value(first_rows(valid, settings.row_sample))
    metadata.update({names.statistics_key(g): t for g, t in statistics.items()})
    if warning_count:
        metadata[names.WARNING_COUNT] = warning_count
    if failures.invalid_count:
        metadata.update(invalid_rows_metadata(failures, settings.row_sample, quarantine_address))
    return metadata


def invalid_rows_metadata(
    failures: Failures, row_sample: int, quarantine_address: str | None
) -> dict[str, Any]:
    """Where the invalid rows went, how many there were, and which rules they failed together.

    Both tables lead with what a reader looks for first: the sample with each row's failed
    rules, `invalid_by_rules` with the row count.
    """
    metadata: dict[str, Any] = {}
    if quarantine_address is not None:
        metadata[names.QUARANTINE_ADDRESS] = quarantine_address
    metadata[names.INVALID_COUNT] = failures.invalid_count
    if row_sample:
        metadata[names.INVALID_SAMPLE] = table_value(failures.sample(row_sample))
    check_names = {rule.name: rule.check_name for rule in failures.info.rules}
    # The count first: the rule lists are long, and a wide first column pushes it off screen.
    metadata[names.INVALID_BY_RULES] = records_value(
        (
            {"rows": count, "rules": ", ".join(check_names[r] for r in rules)}
            for rules, count in failures.rule_sets()
        ),
        {"rows": "int", "rules": "string"},
    )
    return metadata

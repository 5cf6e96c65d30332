"""The table's materialization metadata: row count, samples, statistics and the failure summary.

When rows were quarantined, how many and where they went lead the metadata (`LEADING_KEYS`),
before the row count, the user's keys and the IO manager's: a reader of the materialization
meets them first, above the tables of valid-row statistics. A key is absent, never empty, when
there is nothing to show for it, so a reader can tell "no invalid rows" from "invalid rows,
sample turned off". Whatever the data, every value here has a bounded size: samples have their
setting's rows, cut cells and masked sensitive columns, and `invalid_by_rules` at most
`RULE_SET_LIMIT` rule sets, the rest summed in one last row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg

from dagster_dataframely._model import names
from dagster_dataframely._model.settings import Settings
from dagster_dataframely._run.checks.tables import records_value, table_value
from dagster_dataframely._run.split.failures import Failures
from dagster_dataframely._run.split.valid_rows import ValidRows, first_rows, row_count

from .metrics import metric_values

RULE_SET_LIMIT = 20
"""The most rows `invalid_by_rules` has: with more rule sets, the last row sums the smallest."""

LEADING_KEYS = (names.INVALID_COUNT, names.QUARANTINE_ADDRESS)
"""The keys a materialization with quarantined rows shows first: how many, and where they went."""


def materialization_metadata(
    valid: ValidRows,
    failures: Failures,
    settings: Settings,
    quarantine_address: str | None,
    statistics: Mapping[str, dg.TableMetadataValue],
    *,
    warning_count: int = 0,
    partitioned: bool = False,
    undeclared: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Everything this package reports on the table's materialization.

    `statistics` are `statistics_tables(valid)`, computed by the caller (alongside the
    quarantine write), or empty when they are turned off; each column's metrics are read off
    them (`metrics`), so turning statistics off turns the metrics off too. `warning_count` is
    how many of the `valid` rows failed a warning rule; `failures` are the quarantined rows
    only. A partitioned table's row count is also Dagster's `dagster/partition_row_count`; the
    undeclared columns are listed when the quality policy asks for them. The invalid count and
    the quarantine's address, when there are invalid rows, come first (`quarantined_first`).
    """
    count = row_count(valid)
    metadata: dict[str, Any] = {names.ROW_COUNT: count}
    if partitioned:
        metadata[names.PARTITION_ROW_COUNT] = count
    metadata.update(fractions(count, failures.invalid_count, warning_count))
    if undeclared is not None:
        metadata[names.UNDECLARED_COLUMNS] = dg.MetadataValue.json(list(undeclared))
    if settings.row_sample and count:
        metadata[names.VALID_SAMPLE] = table_value(
            first_rows(valid, settings.row_sample), failures.info.sensitive
        )
    metadata.update({names.statistics_key(g): t for g, t in statistics.items()})
    metadata.update(metric_values(statistics))
    if warning_count:
        metadata[names.WARNING_COUNT] = warning_count
    if failures.invalid_count:
        metadata.update(invalid_rows_metadata(failures, settings.row_sample, quarantine_address))
    return quarantined_first(metadata)


def quarantined_first(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """`metadata` with the `LEADING_KEYS` it has first, in that order, every other key after.

    Dagster stores a materialization's metadata, and the UI lists it, in the order it is given.
    """
    lead = {key: metadata[key] for key in LEADING_KEYS if key in metadata}
    return {**lead, **{key: value for key, value in metadata.items() if key not in lead}}


def range_leading_metadata(partitions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The `LEADING_KEYS` of a range's materialization: those every partition has, for the range.

    Dagster puts the metadata a step adds for one partition after the IO manager's, and a key
    already on the range's output keeps its place there with the partition's value. So a key
    every partition has is put on the range first, with the range's figure (the invalid rows
    of every partition, the one quarantine they went to), and each partition's own value
    replaces it on its event. A key some partition lacks is not: that partition would show it.
    """
    lead: dict[str, Any] = {}
    if not partitions or not all(names.INVALID_COUNT in p for p in partitions):
        return lead
    lead[names.INVALID_COUNT] = sum(p[names.INVALID_COUNT] for p in partitions)
    addresses = {p.get(names.QUARANTINE_ADDRESS) for p in partitions}
    if len(addresses) == 1 and None not in addresses:
        lead[names.QUARANTINE_ADDRESS] = addresses.pop()
    return lead


def fractions(written: int, quarantined: int, warned: int) -> dict[str, float]:
    """The invalid and the warning rows as fractions of the rows returned, for charts and alerts.

    Always present, 0.0 included, so a chart has a point for every run and an alert a value to
    compare; a frame without rows has nothing invalid, so both are 0.0.
    """
    returned = written + quarantined
    return {
        names.INVALID_FRACTION: quarantined / returned if returned else 0.0,
        names.WARNING_FRACTION: warned / returned if returned else 0.0,
    }


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
        metadata[names.INVALID_SAMPLE] = table_value(
            failures.sample(row_sample), failures.info.sensitive
        )
    # The count first: the rule lists are long, and a wide first column pushes it off screen.
    metadata[names.INVALID_BY_RULES] = records_value(
        _rule_set_rows(failures), {"rows": "int", "rules": "string"}
    )
    return metadata


def _rule_set_rows(failures: Failures) -> list[dict[str, int | str]]:
    # NOTE: many rules failed in many combinations could give a row per invalid row; the last row
    # sums the rest, so the counts still add up to `invalid_count`.
    check_names = {rule.name: rule.check_name for rule in failures.info.rules}
    ranked = failures.rule_sets()
    listed = ranked if len(ranked) <= RULE_SET_LIMIT else ranked[: RULE_SET_LIMIT - 1]
    rows: list[dict[str, int | str]] = [
        {"rows": count, "rules": ", ".join(check_names[r] for r in rules)}
        for rules, count in listed
    ]
    rest = ranked[len(listed) :]
    if rest:
        rows.append({"rows": sum(c for _, c in rest), "rules": f"({len(rest)} other rule sets)"})
    return rows

"""Every name this package generates, in one place.

Check names, rule-column names and metadata keys are part of the contract with users (they
appear in the catalog, in check histories and in stored tables), so they are built here and
nowhere else; asset keys are in `keys`.
"""

from __future__ import annotations

import re

RESERVED_PREFIX = "dy_"
"""Columns may not start with this: checks and rule columns live in this namespace."""

DAGSTER_NAME = re.compile(r"[A-Za-z0-9_]+")
"""What Dagster allows in an asset check name (an op output name).

Match it with `fullmatch`: with `match` and a `$` anchor, a name ending in a newline passes.
"""

COLUMN_RULE_SEPARATOR = "|"
"""Dataframely names a column's rule `<column>|<rule>`."""

# Check names.
COLUMN_SCHEMA_CHECK = "dy_schema__columns"
SCHEMA_RULES_CHECK = "dy_schema__rules"
_RULE_CHECK_PREFIX = "dy_rule__"
_COLUMN_CHECK_PREFIX = "dy_col__"
_FILTER_CHECK_PREFIX = "dy_filter__"
VOLUME_CHECK = "dy_volume"
"""The quality policy's check of how many rows a run writes."""
UNDECLARED_COLUMNS_CHECK = "dy_undeclared_columns"
"""The quality policy's check that the columns the schema does not declare stay the same."""
KEYS_ACROSS_PARTITIONS_CHECK = "dy_keys_across_partitions"
_ANOMALY_CHECK_PREFIX = "dy_anomaly__"
"""The opt-in check that a partitioned asset's key is unique over every stored partition."""

# Check metadata keys.
RULE = "dy_rule"
RULE_EXPR = "dy_rule__expr"
RULES = "dy_rules"
FAILED_COUNT = "dy_failed_count"
FAILED_SAMPLE = "dy_failed_sample"
SCHEMA_ERRORS = "dy_schema__errors"
PARTITION = "dy_partition"
"""Check metadata of a partitioned asset: the partition the rules ran over."""
FAILED_FRACTION = "dy_failed_fraction"
"""Check metadata of a rule with a threshold: the fraction of the rows that failed it."""
THRESHOLD = "dy_threshold"
"""Check metadata of a rule with a threshold: its bounds, as text."""
THRESHOLDS = "dy_thresholds"
"""Check metadata of a collapsed check: a row per rule with a threshold, its fraction and bounds."""
VOLUME_ROW_COUNT = "dy_row_count"
VOLUME_MIN_ROWS = "dy_min_rows"
VOLUME_MAX_ROWS = "dy_max_rows"
VOLUME_BASELINE = "dy_recent_median"
VOLUME_COMPARED = "dy_recent_materializations"
COLUMNS = "dy_columns"
PREVIOUS_COLUMNS = "dy_previous_columns"
REPEATED_KEYS = "dy_repeated_keys"
"""Check metadata of the key check across partitions: how many keys are in two partitions."""
REPEATED_KEY_PARTITIONS = "dy_repeated_key_partitions"
"""The partitions holding a key stored in another partition too (the first 100, sorted)."""
REPEATED_KEY_PARTITION_COUNT = "dy_repeated_key_partition_count"
"""How many partitions hold a key stored in another partition too."""
REPEATED_KEY_SAMPLE = "dy_repeated_key_sample"
"""Some repeated keys with their partitions, sensitive columns masked."""

ANOMALY_VALUE = "dy_value"
"""Check metadata of an anomaly check: the metric's value in this run."""
ANOMALY_LOWER = "dy_expected_lower"
ANOMALY_UPPER = "dy_expected_upper"
ANOMALY_CENTRE = "dy_expected_centre"
ANOMALY_SCORE = "dy_score"
"""How many spreads the value lies from the centre, signed."""
ANOMALY_TRAINING_POINTS = "dy_training_points"
"""How many earlier points gave the centre (of the same season, with a seasonality)."""
ANOMALY_SPREAD_POINTS = "dy_spread_points"
"""How many earlier points, of every season, gave the spread."""
ANOMALY_TRAINING_WINDOW = "dy_training_window"
ANOMALY_EXCLUDED = "dy_excluded_points"
"""Earlier points kept out of the band, counted by reason (`incident`, `no value`)."""

# Materialization metadata keys.
ROW_COUNT = "dagster/row_count"
COLUMN_SCHEMA = "dagster/column_schema"
VALID_SAMPLE = "dataframely/valid_sample"
VALID_STATISTICS_PREFIX = "dataframely/valid_statistics/"
QUARANTINE_ADDRESS = "dataframely/quarantine_address"
INVALID_COUNT = "dataframely/invalid_count"
INVALID_SAMPLE = "dataframely/invalid_sample"
INVALID_BY_RULES = "dataframely/invalid_by_rules"
WARNING_COUNT = "dataframely/warning_count"
"""How many written rows failed a warning rule; absent when none did."""
INVALID_FRACTION = "dataframely/invalid_fraction"
"""The invalid (quarantined) rows as a fraction of the rows returned: always there, for alerts."""
WARNING_FRACTION = "dataframely/warning_fraction"
"""The written rows that failed a warning rule, as a fraction of the rows returned: always there."""
UNDECLARED_COLUMNS = "dataframely/undeclared_columns"
"""The columns the frame had that the schema does not declare, when the quality policy asks."""
PARTITION_ROW_COUNT = "dagster/partition_row_count"
"""Dagster's key for the rows of one partition (`TableMetadataSet.partition_row_count`)."""
PACKAGE_METADATA_PREFIX = "dataframely/"
METRIC_PREFIX = "dataframely/metric/"
"""Materialization metadata: one number per declared column's metric, for plots and checks."""
INCIDENT = "dataframely/incident"
"""Materialization metadata: `True` on one marked as an incident, which never trains a band;
on an asset observation (`dd.mark_incident`), the mark a user set afterwards (or cleared)."""
INCIDENT_RUN = "dataframely/incident_run"
"""Asset observation metadata (`dd.mark_incident`): the run whose materialization it marks."""
INCIDENT_TAG = "dagster-dataframely/incident"
"""A run tag (or a materialization's tag): `true` marks the run's materializations incidents."""

FAILED_RULES = "dy_failed_rules"
"""The leading column of `dataframely/invalid_sample`: the rules each row failed, by check name."""

EVENT_LOG_VALUES = "dataframely/event_log_values"
"""Definition metadata of a validated output: which of its values the event log may show.

`QuarantineAwareIOManager` reads it to filter what the manager it wraps records for the output.
"""

SENSITIVE = "pii"
"""The key of a Dataframely column's `metadata` that marks the column sensitive (`True`)."""

QUARANTINE_OF = "dataframely/quarantine_of"
"""Definition metadata of a `quarantine_spec`: the asset whose invalid rows it holds."""
RUN = "dataframely/run"
"""Metadata of a quarantine's observation: the run that wrote it."""


def check_name(rule_name: str) -> str:
    """Return the asset check name for the Dataframely rule named `rule_name`.

    The same name labels the rule's column in the quarantine, so a user can go from a failed
    check to the rows that failed it.

    Parameters
    ----------
    rule_name
        The rule's name as Dataframely reports it: `<column>|<rule>` for a column rule, the
        method's name for a `@dy.rule()`, `primary_key` for the primary key.

    Returns
    -------
    str
        `dy_rule__` followed by `rule_name` with `|` replaced by `__`: `amount|min` becomes
        `dy_rule__amount__min`.
    """
    return _RULE_CHECK_PREFIX + rule_name.replace(COLUMN_RULE_SEPARATOR, "__")


def filter_check_name(filter_name: str) -> str:
    """Return the check name, and quarantine column, of a Collection filter named `filter_name`.

    `dy_filter__` followed by the name (a `@dy.filter` function's name, or Dataframely's
    `<member>|failure_propagation` with `|` replaced by `__`), so it can never be the name of a
    member rule's check, which starts with `dy_rule__`, `dy_col__` or `dy_schema__`.
    """
    return _FILTER_CHECK_PREFIX + filter_name.replace(COLUMN_RULE_SEPARATOR, "__")


def column_check_name(column: str) -> str:
    """Return the name of the check that reports every rule of `column`."""
    return _COLUMN_CHECK_PREFIX + column


def anomaly_check_name(metric: str) -> str:
    """Return the check name of a watched metric: `amount/mean` is `dy_anomaly__amount__mean`."""
    return _ANOMALY_CHECK_PREFIX + metric.replace("/", "__")


def statistics_key(group: str) -> str:
    """Return the materialization metadata key of one dtype group's statistics table."""
    return VALID_STATISTICS_PREFIX + group


def metric_key(column: str, metric: str) -> str:
    """Return the materialization metadata key of one column's metric (`row_count`: no column)."""
    return METRIC_PREFIX + f"{column}/{metric}"


def is_package_metadata_key(key: str) -> bool:
    """Whether `key` is one this package writes, and so wins over a user's value."""
    return key == ROW_COUNT or key.startswith(PACKAGE_METADATA_PREFIX)

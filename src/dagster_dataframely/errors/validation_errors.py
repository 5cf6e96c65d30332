"""The data's verdict: the frame failed its schema, its rules or its quality policy."""

import dataclasses
from collections.abc import Mapping, Sequence

from dagster_dataframely.errors.error_base import (
    ValidationFailedError,
    _bulleted,
    _quarantined_at,
    _quoted,
    _rows,
    _rule_counts,
)


class ColumnSchemaError(ValidationFailedError):
    """Raised when a frame's columns or dtypes differ from the schema.

    That points at a bug in the code producing the frame rather than at bad rows, so the
    run stops before row validation and nothing is written.

    Parameters
    ----------
    schema_name
        The schema's name.
    problems
        One mapping per mismatched column, with the keys `column`, `expected` and `actual`
        (dtypes as text; `missing` for a column the frame lacks).
    """

    schema_name: str
    problems: Sequence[Mapping[str, str]]

    def _message(self) -> str:
        listing = _bulleted(
            f"{problem['column']!r}: expected {problem['expected']}, actual {problem['actual']}"
            for problem in self.problems
        )
        return (
            f"The frame's columns do not match schema {self.schema_name!r}:{listing}\n"
            f"Fix the code that builds the frame, or convert it with "
            f"`{self.schema_name}.cast` in the asset body."
        )


class ValidationAbortError(ValidationFailedError):
    """Raised when rows fail validation and the asset has no quarantine for them.

    Without a quarantine every row must be valid, so the asset writes nothing rather than
    silently dropping rows.

    Parameters
    ----------
    schema_name
        The schema's name.
    invalid_count
        How many rows failed at least one rule.
    counts
        How many rows failed each rule, by rule name. A row can fail several rules, so the
        counts may add up to more than `invalid_count`.
    """

    schema_name: str
    invalid_count: int
    counts: Mapping[str, int]

    def _message(self) -> str:
        return (
            f"{_rows(self.invalid_count)} failed validation against schema {self.schema_name!r}, "
            "and the asset has no quarantine, so nothing was "
            f"written.\n{_rule_counts(self.counts, self.invalid_count)}\nFix these rows upstream, "
            "pass `quarantine=True` to send them to a quarantine, or filter them out in the asset "
            "body."
        )


class NoValidRowsError(ValidationFailedError):
    """Raised when every row fails validation, so only the quarantine was written.

    The asset's table is left untouched, so an empty table never replaces the last good one.

    Parameters
    ----------
    schema_name
        The schema's name.
    invalid_count
        How many rows failed: every row.
    counts
        How many rows failed each rule, by rule name.
    address
        Where the quarantine was written: the writer's address.
    """

    schema_name: str
    invalid_count: int
    counts: Mapping[str, int]
    address: str

    def _message(self) -> str:
        return (
            f"All {_rows(self.invalid_count)} failed validation against schema "
            f"{self.schema_name!r}, so only the quarantine was written and the asset's table kept "
            f"its previous contents.\n{_rule_counts(self.counts, self.invalid_count)}\nInspect the "
            f"invalid rows in the quarantine at {self.address!r}."
        )


class ThresholdExceededError(ValidationFailedError):
    """Raised when more rows failed a rule than its threshold's `fail_above` tolerates.

    The table is not written, so it keeps its last good contents; the quarantine still gets its
    rows, and every check reports.

    Parameters
    ----------
    schema_name
        The schema's name.
    rule
        The first rule above its bound, as Dataframely names it.
    failed_count
        How many rows failed it.
    row_count
        How many rows the frame had; `fraction` is `failed_count / row_count`.
    bound
        The rule's `fail_above`: an int counts rows, a float is a fraction of the rows.
    address
        Where the quarantine was written, when it was.
    other_rules
        The other rules above their bounds in the same run.
    """

    schema_name: str
    rule: str
    failed_count: int
    row_count: int
    bound: float
    _: dataclasses.KW_ONLY
    address: str | None = None
    other_rules: Sequence[str] = ()

    @property
    def fraction(self) -> float:
        """The share of the rows that failed the rule; 0.0 for a frame without rows."""
        return self.failed_count / self.row_count if self.row_count else 0.0

    def _message(self) -> str:
        bound = self.bound
        shown = _rows(bound) if isinstance(bound, int) else f"{bound * 100:g}% of the rows"
        others = (
            f"\nAlso above their bounds: {_quoted(self.other_rules)}." if self.other_rules else ""
        )
        return (
            f"Rule {self.rule!r} of schema {self.schema_name!r} failed {self.failed_count} of "
            f"{_rows(self.row_count)} ({self.fraction * 100:.4g}%), above its threshold's "
            f"fail_above of {shown}, so the run failed and the asset's table kept its previous "
            f"contents.{_quarantined_at(self.address)}{others}\n"
            f"Fix the rows upstream, or raise the rule's `fail_above` in the asset's "
            f"`quality_policy=` if this much failure is acceptable."
        )


class MetricAnomalyError(ValidationFailedError):
    """Raised when an anomaly check at `ERROR` finds a metric outside the band its past gives.

    The table is not written (it keeps its last good contents), the quarantine still gets its
    rows, and every check reports, the anomaly checks with their bands.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    verdicts
        One sentence per metric outside its band: its value, the band, the score.
    address
        Where the quarantine was written, when it was.
    """

    asset: str
    verdicts: list[str]
    _: dataclasses.KW_ONLY
    address: str | None = None

    def _message(self) -> str:
        found = "; ".join(self.verdicts)
        return (
            f"Asset {self.asset!r} has metrics outside the band their own history gives ({found}), "
            f"so the run failed and the table kept its previous contents."
            f"{_quarantined_at(self.address)}\nCheck the source; if the change is right, the "
            "next runs learn it once you lower the `dd.AnomalyCheck` severity to WARN for a "
            "while, or raise its `sensitivity` or `min_relative_change`."
        )


class RowCountOutOfBoundsError(ValidationFailedError):
    """Raised when a volume check at `ERROR` finds the rows to write outside its bounds.

    A table that lost most of its rows passes every rule, so the volume check is the one that
    keeps it from replacing the last good table: the table is not written, the quarantine still
    gets its rows, and every check reports.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    row_count
        How many rows the run would have written.
    min_rows
        The fewest rows the check expected, or None.
    max_rows
        The most rows the check expected, or None.
    basis
        Where the bounds come from: the fixed bounds, or the recent materializations.
    address
        Where the quarantine was written, when it was.
    """

    asset: str
    row_count: int
    min_rows: int | None
    max_rows: int | None
    basis: str
    _: dataclasses.KW_ONLY
    address: str | None = None

    def _message(self) -> str:
        low = "" if self.min_rows is None else f"at least {_rows(self.min_rows)}"
        high = "" if self.max_rows is None else f"at most {_rows(self.max_rows)}"
        expected = " and ".join(part for part in (low, high) if part)
        return (
            f"Asset {self.asset!r} would have written {_rows(self.row_count)}, and its volume "
            f"check expects {expected} ({self.basis}), so the run failed and the table kept its "
            f"previous contents.{_quarantined_at(self.address)}\nCheck the source for lost or "
            "duplicated rows; if the new volume is right, widen the asset's `dd.VolumeCheck` "
            "bounds."
        )

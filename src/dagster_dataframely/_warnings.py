"""Warning rules: rules whose failures are reported but never keep a row out of the table.

A user names them once, on the asset (`warning_rules=["amount|min"]`), and the names are checked
against the schema there. Dataframely knows nothing of them: its `filter` still splits the rows
into valid and invalid, and this module then moves the invalid rows that failed only warning
rules back to the valid side. Those rows are a subset of the invalid rows, which a run has
already collected, so the cost grows with the invalid rows; the valid rows are appended to,
never read again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import polars as pl

from ._failures import Failures
from ._schema import SchemaInfo
from ._settings import Settings
from .errors import UnknownWarningRuleError

WARNING_PREFIX = "Warning, rows that fail it are still written: "
"""Starts the description of a warning rule's own check, so the catalog shows it before a run."""

WARNING_SUFFIX = " (warning)"
"""Follows a warning rule's line in a collapsed check's description and in the Columns tab."""


def resolve_warning_rules(info: SchemaInfo, names: Iterable[str] | None) -> frozenset[str]:
    """Check that every name is one of the schema's rules, and return them as a set.

    A single string is taken as one rule name, so `warning_rules="amount|min"` means what it
    says rather than a rule per character.

    Raises
    ------
    UnknownWarningRuleError
        A name is not one of the schema's rules, in Dataframely's naming.
    """
    if names is None:
        return frozenset()
    given = [names] if isinstance(names, str) else list(names)
    rules = [rule.name for rule in info.rules]
    unknown = [name if isinstance(name, str) else repr(name) for name in given if name not in rules]
    if unknown:
        raise UnknownWarningRuleError(info.name, list(dict.fromkeys(unknown)), rules)
    return frozenset(given)


def with_warning_rules(
    settings: Settings, info: SchemaInfo, names: Iterable[str] | None
) -> Settings:
    """`settings` with `names` as its warning rules, once they are checked against the schema.

    Raises
    ------
    UnknownWarningRuleError
        A name is not one of the schema's rules.
    """
    return dataclasses.replace(settings, warning_rules=resolve_warning_rules(info, names))


def keep_warning_only_rows(
    valid: pl.DataFrame, failures: Failures, warning_rules: frozenset[str]
) -> tuple[pl.DataFrame, Failures]:
    """The rows to write and the failures to quarantine, once warning rules no longer block.

    A row is quarantined when a rule that is not a warning failed it, or could not decide it
    (an unknown outcome is no proof the row is valid). The other invalid rows are appended to
    `valid`, after its rows. The quarantined `Failures` count only the rules that block: a rule
    that is not a warning fails only quarantined rows, so its count is the same as in
    `failures`. Without warning rules both arguments come back unchanged.
    """
    if not warning_rules or not failures.invalid_count:
        return valid, failures
    blocking = [rule.name for rule in failures.info.rules if rule.name not in warning_rules]
    quarantined = (
        pl.any_horizontal(pl.col(name).fill_null(False).not_() for name in blocking)
        if blocking
        else pl.repeat(False, pl.len())
    )
    mask = failures.outcomes.select(quarantined).to_series()
    kept = failures.outcomes.filter(~mask).select(*valid.columns)
    written = pl.concat([valid, kept], how="vertical", rechunk=False) if kept.height else valid
    return written, Failures(
        info=failures.info,
        outcomes=failures.outcomes.filter(mask),
        counts={rule: n for rule, n in failures.counts.items() if rule not in warning_rules},
    )

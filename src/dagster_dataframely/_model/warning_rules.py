"""Warning rules: rules whose failures are reported but never keep a row out of the table.

A user names them once, on the asset (`warning_rules=["amount|min"]`), and the names are checked
against the schema there. Dataframely knows nothing of them: its `filter` still splits the rows
into valid and invalid, and the run then moves the invalid rows that failed only warning rules
back to the valid side (`_run.split.keep_warning_only_rows`).
"""

from __future__ import annotations

from collections.abc import Iterable

from dagster_dataframely.errors import UnknownWarningRuleError

from .schema import SchemaInfo

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

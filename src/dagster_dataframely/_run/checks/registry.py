"""The check kinds of every output, in the order their checks are declared and reported."""

from __future__ import annotations

from typing import Any

from dagster_dataframely._run.validated_output import ValidatedOutput

from .anomaly import ANOMALY
from .history import Series
from .keys_across_partitions import KEYS_ACROSS_PARTITIONS
from .kind import CheckKind, When
from .rule_checks import RULE_CHECKS
from .undeclared_columns import UNDECLARED_COLUMNS
from .volume import VOLUME

_KINDS: list[CheckKind[Any]] = [
    RULE_CHECKS,
    VOLUME,
    ANOMALY,
    UNDECLARED_COLUMNS,
    KEYS_ACROSS_PARTITIONS,
]


def kinds(when: When | None = None) -> tuple[CheckKind[Any], ...]:
    """The registered kinds (those that run `when`, if given), in their order."""
    return tuple(kind for kind in _KINDS if when is None or kind.when == when)


def register(kind: CheckKind[Any]) -> None:
    """Add `kind` after every kind registered already: its checks are declared and reported last.

    An output declared after the call has its checks; one declared before has not.
    """
    assert all(known.name != kind.name for known in _KINDS), f"two check kinds named {kind.name}"
    _KINDS.append(kind)


def unregister(kind: CheckKind[Any]) -> None:
    """Remove a kind `register` added."""
    _KINDS.remove(kind)


def series_of(output: ValidatedOutput) -> tuple[Series, ...]:
    """Every series the kinds read for a run of `output`, each once."""
    return tuple(dict.fromkeys(series for kind in _KINDS for series in kind.series(output)))

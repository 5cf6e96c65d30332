"""The base class of every error, its four categories, and the helpers their messages share."""

import dataclasses
import inspect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, dataclass_transform

import dagster as dg

_CHECK_NAME_CHARACTERS = "letters, digits and underscores (A-Za-z0-9_)"


def _quoted(items: Iterable[object]) -> str:
    return ", ".join(repr(item) for item in items)


def _bulleted(lines: Iterable[str]) -> str:
    return "".join(f"\n  - {line}" for line in lines)


def _rows(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"


def _rule_counts(counts: Mapping[str, int], invalid_count: int) -> str:
    listing = _bulleted(f"{rule}: {_rows(count)}" for rule, count in counts.items())
    return (
        f"Rows that failed each rule:{listing}\n"
        f"A row can fail more than one rule, so these counts may add up to more than "
        f"the number of invalid rows ({invalid_count})."
    )


def _unknown_rules(rules: list[str], valid_rules: list[str], *, filters: bool = False) -> str:
    listing = _quoted(valid_rules) if valid_rules else "none"
    kinds = "'primary_key', or a Collection filter's name" if filters else "or 'primary_key'"
    return (
        f"{_quoted(rules)}. Its rules are: {listing}. Name each rule as Dataframely does: "
        f"`<column>|<kind>` for a column's rule (such as 'amount|min'), the method name of "
        f"a `@dy.rule()`, {kinds}; not the check name (`dy_rule__...`)."
    )


def _quarantined_at(address: str | None) -> str:
    return "" if address is None else f" The invalid rows are in the quarantine at {address!r}."


def _copied(value: object) -> object:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_copied(item) if isinstance(item, Mapping) else item for item in value]
    return value


def _rebuild(
    cls: type["DagsterDataframelyError"], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> "DagsterDataframelyError":
    return cls(*args, **kwargs)


@dataclass_transform(eq_default=False)
class DagsterDataframelyError(Exception):
    """Base class of every error this package raises.

    Every subclass stores its constructor arguments as attributes of the same name, so a caller
    can act on the error (which columns, how many rows, where the quarantine went) without
    parsing its message; that is also what lets `__reduce__` rebuild it after pickling (Dagster
    ships errors between processes). Catch this class to catch every error of the package.

    A subclass declares its arguments once, as annotated fields, and says its message in
    `_message`: the class becomes a dataclass whose generated constructor stores each argument
    (a sequence as a list, a mapping as a dict: copies the caller cannot change afterwards),
    with no `__eq__` and the exception's own repr.

    Parameters
    ----------
    message
        The whole message, which says what failed and how to fix it. Also `self.message`.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_message" in vars(cls):
            dataclasses.dataclass(eq=False, repr=False)(cls)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __post_init__(self) -> None:
        """Copy the stored sequences and mappings, then build the message from the fields."""
        vars(self).update(
            (name, _copied(value))
            for name, value in vars(self).items()
            if isinstance(value, Mapping)
            or (isinstance(value, Sequence) and not isinstance(value, str))
        )
        DagsterDataframelyError.__init__(self, self._message())

    def _message(self) -> str:
        # NOTE: every subclass that declares fields builds its whole message from them here.
        raise NotImplementedError

    def __reduce__(self) -> tuple[Any, ...]:
        # The default reduction passes only `self.args` (the message) back to the class,
        # which breaks for constructors with other parameters or keyword-only ones. Rebuild
        # from the constructor's own signature instead, then restore `__dict__` so extras
        # such as `__notes__` survive too.
        parameters = inspect.signature(type(self)).parameters.values()
        args = tuple(getattr(self, p.name) for p in parameters if p.kind is not p.KEYWORD_ONLY)
        kwargs = {p.name: getattr(self, p.name) for p in parameters if p.kind is p.KEYWORD_ONLY}
        return (_rebuild, (type(self), args, kwargs), dict(self.__dict__))


class InvalidDefinitionError(DagsterDataframelyError, dg.DagsterInvalidDefinitionError):
    """Base class of the refusals of a declaration: a schema, setting or argument unusable here.

    Raised where the asset or check is declared, so a code location fails to load instead of a
    run failing later; a hand-wiring function raises them when it is called. Each is also a
    `dg.DagsterInvalidDefinitionError`, so code that catches Dagster's own definition errors
    catches these too (and Dagster reports one raised inside a run as a definition problem,
    which a retry cannot fix).

    Parameters
    ----------
    message
        The whole message, which says what failed and how to fix it.
    """


class ValidationFailedError(DagsterDataframelyError):
    """Base class of the data's verdict: validation failed the step, so no table was written.

    `ColumnSchemaError`, `ValidationAbortError` and `NoValidRowsError`: the frame did not have
    the schema's columns, or rows failed and nothing may be written; with a quality policy,
    `ThresholdExceededError` and `RowCountOutOfBoundsError`: more rows failed a rule, or fewer
    or more rows came, than the policy tolerates. The table keeps its last
    good contents. Catch this one class to handle every failing outcome of the failure policy
    at once; it is never raised for a bug in the package or in the asset's own code.

    Parameters
    ----------
    message
        The whole message, which says what failed and how to fix it.
    """


class StorageRefusedError(DagsterDataframelyError):
    """Base class of the refusals to store rows where they would be lost, replaced or exposed.

    A quarantine that would share the table's place, a key a path cannot hold, two runs writing
    one partition, a URL with credentials, a directory nobody configured: raised before anything
    is written, so the table and the quarantine keep what they had.

    Parameters
    ----------
    message
        The whole message, which says what failed and how to fix it.
    """


class InvalidReturnError(DagsterDataframelyError):
    """Base class of the refusals of what a decorated function or a Collection filter returned.

    A value that is no frame, a mapping with a key that is no output or member, a required
    member left out, a `dg.MaterializeResult` that sets what the decorator fills in, a filter
    that would duplicate rows: raised in the run, when the function has returned and before any
    output is validated or written, so nothing is stored. The fix is in the function's body.

    Parameters
    ----------
    message
        The whole message, which says what failed and how to fix it.
    """

"""`dd.Threshold`: how many rows may fail one rule before its check fails, and the run.

A bound is a row count (an `int`) or a fraction of the rows (a `float`); it is checked where the
threshold is built, and compared against a run's failing rows by `exceeds`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TypeAlias

from dagster_dataframely.errors import InvalidThresholdError

from .argument_kinds import not_kind

Bound: TypeAlias = int | float
"""A bound on failing rows: an `int` counts rows, a `float` is a fraction of the rows."""


def _checked_bound(parameter: str, value: object) -> Bound:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidThresholdError(
            parameter,
            repr(value),
            f"a bound is an int (rows) or a float (a fraction of the rows), {not_kind(value)}",
        )
    if isinstance(value, int) and value < 0:
        raise InvalidThresholdError(parameter, repr(value), "a row count cannot be negative")
    if isinstance(value, float) and not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InvalidThresholdError(
            parameter,
            repr(value),
            "a float is a fraction of the rows and must be between 0 and 1 (an int counts rows)",
        )
    return value


def exceeds(bound: Bound, failed: int, rows: int) -> bool:
    """Whether `failed` of `rows` rows is more than `bound` tolerates; no rows exceed nothing."""
    if isinstance(bound, int):
        return failed > bound
    return rows > 0 and failed / rows > bound


def describe_bound(bound: Bound) -> str:
    """`10 rows`, `1 row`, `5% of the rows`: a bound as the catalog and the errors write it."""
    if isinstance(bound, int):
        return f"{bound} row" if bound == 1 else f"{bound} rows"
    return f"{bound * 100:g}% of the rows"


def _beyond(bound: Bound) -> str:
    return "on any failing row" if not bound else f"above {describe_bound(bound)}"


@dataclass(frozen=True, slots=True)
class Threshold:
    """How many rows may fail a rule before its check fails, and before the run fails.

    A bound is an `int`, a number of rows, or a `float` between 0 and 1, a fraction of the rows
    the function returned (for a Collection member, of that member's rows). A bound tolerates
    the failures it names: `warn_above=10` tolerates ten failing rows and fails the check at the
    eleventh; `fail_above=0.05` fails the run when more than 5% of the rows fail the rule.
    Thresholds never move a row: the quarantine gets the rows it would get without them, and a
    warning rule's rows stay in the table. See the documentation's "Quality policy" page.

    Parameters
    ----------
    warn_above
        The most failing rows the rule's check passes with. Above it the check fails, at the
        rule's severity. `0` (the default) fails the check on the first failing row, as without
        a threshold.
    fail_above
        The most failing rows the run tolerates. Above it the check fails at `ERROR`, the run
        fails with `ThresholdExceededError`, the table is not written (it keeps its last good
        contents) and the quarantine still gets its rows. In the checks of a stored table
        (`dd.table_checks`, `dd.TableChecksComponent`), which never fail a run, the check fails
        at `ERROR` instead. `None` (the default): the threshold never fails the run.

    Raises
    ------
    InvalidThresholdError
        A bound is neither a row count nor a fraction in [0, 1] (a `bool`, a negative count,
        `1.5`), or `warn_above` is above `fail_above` (both counts, or both fractions).

    Examples
    --------
    ```python
    import dagster_dataframely as dd

    tolerant = dd.Threshold(warn_above=0.01, fail_above=0.05)
    print(tolerant)
    try:
        dd.Threshold(warn_above=1.5)
    except dd.errors.InvalidThresholdError as error:
        print(error)
    ```
    """

    warn_above: Bound = 0
    fail_above: Bound | None = None

    def __post_init__(self) -> None:
        warn = _checked_bound("warn_above", self.warn_above)
        if self.fail_above is None:
            return
        fail = _checked_bound("fail_above", self.fail_above)
        if isinstance(warn, int) == isinstance(fail, int) and warn > fail:
            raise InvalidThresholdError(
                "warn_above",
                repr(warn),
                f"it is above fail_above={fail!r}, so the check could never warn before the "
                "run fails",
            )

    def describe(self, *, fails_run: bool = True) -> str:
        """One line: `the check fails above 1% of the rows, the run above 50 rows`.

        Parameters
        ----------
        fails_run
            Whether a bound above `fail_above` fails a run, as it does where the rows are
            written (`dd.asset`). `False` for the checks of a stored table (`dd.table_checks`,
            `dd.TableChecksComponent`, `dd.wiring.check_results`), which never fail a run:
            `the check fails above 1% of the rows, at ERROR above 50 rows`.

        Returns
        -------
        str
            What happens to the check, and to the run or the check's severity, past each bound.
        """
        check = "the check fails " + _beyond(self.warn_above)
        if self.fail_above is None:
            return check
        if not self.warn_above and not self.fail_above:
            if not fails_run:
                return "the check fails at ERROR on any failing row"
            return "the run fails on any failing row"
        if not fails_run:
            return f"{check}, at ERROR {_beyond(self.fail_above)}"
        return f"{check}, the run {_beyond(self.fail_above)}"


def tolerates(threshold: Threshold, failed: int, rows: int) -> bool:
    """Whether `failed` of `rows` rows are within `warn_above`, so the rule's check passes."""
    return not exceeds(threshold.warn_above, failed, rows)


def breaches(threshold: Threshold, failed: int, rows: int) -> bool:
    """Whether `failed` of `rows` rows are above `fail_above`, so the run fails."""
    return threshold.fail_above is not None and exceeds(threshold.fail_above, failed, rows)

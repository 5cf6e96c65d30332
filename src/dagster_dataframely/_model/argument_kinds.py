"""How the policy's argument checks name a value of the wrong kind, shared by its three types.

`dd.Threshold`, `dd.VolumeCheck` and `dd.QualityPolicy` refuse bad values with the same wording
(`takes X, not 'WARN' (a str)`), so the wording lives once, here.
"""

from __future__ import annotations

import reprlib

import dagster as dg

from dagster_dataframely.errors import InvalidArgumentsError

SEVERITIES = (dg.AssetCheckSeverity.WARN, dg.AssetCheckSeverity.ERROR)
SEVERITY_TEXT = "dg.AssetCheckSeverity.WARN or dg.AssetCheckSeverity.ERROR"


def wrong_kind(
    function: str, parameter: str, value: object, expected: str, fix: str | None = None
) -> InvalidArgumentsError:
    """The refusal by `function` of a value of the wrong kind for its `parameter`."""
    return InvalidArgumentsError(
        function,
        f"`{parameter}=` takes {expected}, not {given(value)}",
        fix if fix is not None else f"Pass {expected}.",
    )


def given(value: object) -> str:
    """A value as an error shows it: `None`, `'WARN' (a str)`, or its type (`a dict`)."""
    if value is None:
        return "None"
    kind = type(value).__name__
    kind = f"{'an' if kind[0].lower() in 'aeiou' else 'a'} {kind}"
    return f"{reprlib.repr(value)} ({kind})" if isinstance(value, str | int | float) else kind


def not_kind(value: object) -> str:
    """`not -1` for a number out of its range; `not '5' (a str)` for a value of another kind."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"not {value!r}"
    return f"not {given(value)}"

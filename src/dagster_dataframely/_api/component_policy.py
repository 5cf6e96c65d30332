"""The `quality_policy` field of `dd.TableChecksComponent`: YAML read into a `dd.QualityPolicy`.

The YAML mirrors the Python object, key for key, so a policy moves between a `defs.yaml` and
`dd.table_checks` unchanged; each wrong value is refused at its own field, not deep inside.
"""

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import dagster as dg

from dagster_dataframely._model.anomaly_check import AnomalyCheck
from dagster_dataframely._model.quality_policy import QualityPolicy
from dagster_dataframely._model.row_threshold import Threshold
from dagster_dataframely._model.volume_check import VolumeCheck
from dagster_dataframely.errors import ComponentFieldError, DagsterDataframelyError

Locate = Callable[[tuple[str | int, ...]], tuple[str, str]]
"""A field's path to its file and line and its name, as `_Fields.at` gives them."""

POLICY_EXAMPLE = (
    "quality_policy: {threshold: {warn_above: 0.01, fail_above: 0.1}, "
    "rules: {amount|min: {fail_above: 0}}, severity: ERROR, blocking: true}"
)
_Built = TypeVar("_Built")
_Check = TypeVar("_Check", VolumeCheck, AnomalyCheck)
NEEDS_RUN = ("volume", "undeclared_columns")
"""Keys of a `dd.QualityPolicy` that need the run writing the table: read, then refused by
`dd.table_checks` with that reason, at their own field."""
_USABLE = ("threshold", "rules", "severity", "blocking", "anomaly")
_KEYS = (*_USABLE, *NEEDS_RUN)


def read_policy(value: Mapping[str, Any], at: Locate) -> QualityPolicy:
    """The policy the YAML mapping describes; a wrong key or value names its field and fix."""
    root = ("quality_policy",)
    for key in value:
        if key not in _KEYS:
            raise ComponentFieldError(
                *at(root),
                f"{key!r} is not a setting of a quality policy",
                f"Use {', '.join(_USABLE)}, as in `{POLICY_EXAMPLE}`.",
            )
    rules = value.get("rules") or {}
    if not isinstance(rules, Mapping):
        raise ComponentFieldError(
            *at((*root, "rules")),
            "it is not a mapping from rule name to threshold",
            "Write it as in `rules: {amount|min: {fail_above: 0}}`.",
        )
    return _built(
        root,
        at,
        lambda: QualityPolicy(
            threshold=_threshold(value.get("threshold"), (*root, "threshold"), at),
            rules={
                str(name): _required(
                    _threshold(bounds, (*root, "rules", str(name)), at), (*root, "rules"), at
                )
                for name, bounds in rules.items()
            },
            severity=_severity(value.get("severity"), (*root, "severity"), at),
            blocking=_blocking(value.get("blocking", False), (*root, "blocking"), at),
            volume=_check(VolumeCheck, value.get("volume"), (*root, "volume"), at),
            undeclared_columns=value.get("undeclared_columns"),
            anomaly=_check(AnomalyCheck, value.get("anomaly"), (*root, "anomaly"), at),
        ),
    )


def _built(path: tuple[str | int, ...], at: Locate, build: Callable[[], _Built]) -> _Built:
    """`build()`, its package error reported against `path`."""
    try:
        return build()
    except ComponentFieldError:
        raise
    except DagsterDataframelyError as error:
        raise ComponentFieldError(
            *at(path), error.message.rstrip("."), f"Write it as in `{POLICY_EXAMPLE}`."
        ) from error


def _mapping(
    value: object, path: tuple[str | int, ...], at: Locate, example: str
) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ComponentFieldError(
            *at(path), "it is not a mapping of bounds", f"Write it as in `{example}`."
        )
    return value


def _threshold(value: object, path: tuple[str | int, ...], at: Locate) -> Threshold | None:
    if value is None:
        return None
    bounds = _mapping(value, path, at, "threshold: {warn_above: 10, fail_above: 0.05}")
    return _built(
        path, at, lambda: Threshold(**_only(bounds, ("warn_above", "fail_above"), path, at))
    )


def _required(threshold: Threshold | None, path: tuple[str | int, ...], at: Locate) -> Threshold:
    if threshold is None:
        raise ComponentFieldError(
            *at(path), "a rule's threshold is empty", "Write `{fail_above: 0}` or remove the rule."
        )
    return threshold


# NOTE: each check's keys are its fields, in their order; the fields written as text, and the
# mapping a message shows as the way to write it.
_CHECKS: Mapping[type, tuple[tuple[str, ...], str]] = {
    VolumeCheck: (("compare_with", "severity"), "volume: {min_rows: 1}"),
    AnomalyCheck: (
        ("metrics", "direction", "seasonality", "method", "compare_with", "severity"),
        "anomaly: {metrics: [row_count]}",
    ),
}


def _check(
    kind: type[_Check], value: object, path: tuple[str | int, ...], at: Locate
) -> _Check | None:
    if value is None:
        return None
    text, example = _CHECKS[kind]
    keys = tuple(field.name for field in dataclasses.fields(kind))
    settings = _only(_mapping(value, path, at, example), keys, path, at, text=text)
    if "severity" in settings:
        settings["severity"] = _severity(settings["severity"], (*path, "severity"), at)
    return _built(path, at, lambda: kind(**settings))


def _only(
    bounds: Mapping[str, Any],
    keys: tuple[str, ...],
    path: tuple[str | int, ...],
    at: Locate,
    *,
    text: tuple[str, ...] = ("compare_with", "severity"),
) -> dict[str, Any]:
    """The bounds, refusing a key the object does not take and text where a number goes."""
    for key, bound in bounds.items():
        if key not in keys:
            raise ComponentFieldError(
                *at(path), f"{key!r} is not one of its settings", f"Use {', '.join(keys)}."
            )
        if isinstance(bound, str) and key not in text:
            raise ComponentFieldError(
                *at((*path, key)),
                f"{bound!r} is text, and the field takes a number",
                "Write the number without quotes.",
            )
    return dict(bounds)


def _severity(
    value: object, path: tuple[str | int, ...], at: Locate
) -> dg.AssetCheckSeverity | dict[str, dg.AssetCheckSeverity] | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return {
            str(rule): _one_severity(level, (*path, str(rule)), at) for rule, level in value.items()
        }
    return _one_severity(value, path, at)


def _one_severity(value: object, path: tuple[str | int, ...], at: Locate) -> dg.AssetCheckSeverity:
    if isinstance(value, str) and value.upper() in ("WARN", "ERROR"):
        return dg.AssetCheckSeverity(value.upper())
    raise ComponentFieldError(
        *at(path), f"{value!r} is not a check severity", "Write WARN or ERROR."
    )


def _blocking(value: object, path: tuple[str | int, ...], at: Locate) -> bool | list[str]:
    if isinstance(value, bool):
        return value
    if isinstance(value, list) and all(isinstance(rule, str) for rule in value):
        return value
    raise ComponentFieldError(
        *at(path),
        f"{value!r} is neither true, false nor a list of rule names",
        "Write `blocking: true` or `blocking: [amount|min]`, without quotes around true.",
    )

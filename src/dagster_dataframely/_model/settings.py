"""Resolve the settings from their default, environment variable and argument, as declared.

Every setting goes through one resolver, its parser picked by its declared type, so the order
of the sources, the validation of each one and the wording of `InvalidSettingError` are the
same for all of them. The environment is read when a function here is called, never when the
module is imported.
"""

import difflib
import functools
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, get_args

from dagster_dataframely._credentials import refuse_credentials
from dagster_dataframely.errors import InvalidSettingError

from .setting_model import (
    ENV_PREFIX,
    REPOSITORY_VARIABLES,
    RESERVED_PREFIXES,
    SETTINGS,
    Granularity,
    SchemaRules,
    SettingSpec,
    setting,
)

if TYPE_CHECKING:
    from .quality_policy import ResolvedPolicy


# NOTE: validated like any other source, so a mistake in a default surfaces as an
# `InvalidSettingError` naming it; a module attribute, so a test can put a bad one here.
_DEFAULTS: Mapping[str, object] = MappingProxyType(
    {spec.name: spec.package_default for spec in SETTINGS if spec.env}
)


@dataclass(frozen=True, slots=True)
class Settings:
    """The resolved value of every setting an asset declaration uses."""

    check_granularity: Granularity
    schema_rules: SchemaRules
    max_failure_samples: int
    statistics: bool
    row_sample: int
    warning_rules: frozenset[str] = frozenset()
    """Checked against the asset's schema, so it has no variable and no package default."""
    policy: "ResolvedPolicy | None" = None
    """Checked against the asset's schema too; None (the spec's behaviour) without one."""
    streaming: bool = False


@dataclass(frozen=True, slots=True)
class _Parser:
    """How one type of setting reads a variable's text and a Python value; None is a refusal."""

    from_env: Callable[[str], object]
    env_allowed: Sequence[str] | str
    from_value: Callable[[object], object]
    value_allowed: Sequence[str] | str
    other_text: Callable[[object], str]
    """A variable's text of a valid value other than the default, for a hostile-environment run."""


def _count(value: object) -> int | None:
    # NOTE: `bool` is a subclass of `int`, but `True` meaning one row is never what was meant.
    return None if isinstance(value, bool) or not isinstance(value, int) or value < 0 else value


def _flag_text(text: str) -> bool | None:
    folded = text.strip().lower()
    return folded == "true" if folded in ("true", "false") else None


_DIGITS = re.compile(r"[0-9]+")
_PARSERS: Mapping[type, _Parser] = {
    int: _Parser(
        lambda text: int(text.strip()) if _DIGITS.fullmatch(text.strip()) else None,
        "a non-negative whole number in base 10",
        _count,
        "a non-negative int (a bool is not accepted)",
        lambda default: str((_count(default) or 0) + 1),
    ),
    bool: _Parser(
        _flag_text,
        "true or false, in any letter case",
        lambda value: value if isinstance(value, bool) else None,
        ("True", "False"),
        lambda default: str(default is not True).lower(),
    ),
    # NOTE: an empty directory is refused, as an unset `${VAR}` gives it. Unset by default, so
    # any directory differs: a hostile run gets one only it would write to.
    str: _Parser(
        lambda text: text if text.strip() else None,
        "a non-empty directory path",
        lambda value: None,
        (),
        lambda _: os.path.join(tempfile.gettempdir(), "dagster-dataframely-hostile-quarantine"),
    ),
}


def _parser(spec: SettingSpec) -> _Parser:
    return _PARSERS.get(spec.value_type) or _choice_parser(spec.value_type)


@functools.cache
def _choice_parser(alias: Any) -> _Parser:
    # NOTE: any type but those above is a `Literal` alias, the same text in the environment.
    choices: tuple[str, ...] = get_args(alias.__value__)

    def choice(value: object) -> str | None:
        return value if isinstance(value, str) and value in choices else None

    return _Parser(
        lambda text: choice(text.strip()),
        choices,
        choice,
        choices,
        lambda default: next(one for one in choices if one != default),
    )


def setting_variables() -> tuple[str, ...]:
    """Every `DAGSTER_DATAFRAMELY_*` variable the package reads, so a test suite clears them all."""
    return tuple(spec.env_var for spec in SETTINGS if spec.env_var is not None)


def non_default_environment() -> dict[str, str]:
    """Each setting variable set to a valid value other than its default.

    Exported for a whole test run, it proves the suite does not depend on the environment.
    """
    return {
        spec.env_var: _parser(spec).other_text(spec.package_default)
        for spec in SETTINGS
        if spec.env_var is not None
    }


def _parsed(
    spec: SettingSpec,
    parse: Callable[[Any], object],
    allowed: Sequence[str] | str,
    raw: object,
    source: str,
) -> Any:
    value = parse(raw)
    if value is None:
        raise InvalidSettingError(
            spec.name,
            repr(raw),
            allowed,
            source=source,
            env_var=str(spec.env_var),
            takes_argument=bool(spec.honoured_by),
        )
    return value


_WARNED_VARIABLES: set[str] = set()
"""The unknown variables already warned of in this process: each is warned of once."""


def unknown_variable_warning(name: str) -> str | None:
    """The warning for a `DAGSTER_DATAFRAMELY_*` variable that is no setting's, else None.

    The nearest setting variable is named, so a misspelt privacy setting (`..._ROW_SAMPEL=0`)
    does not leave the rows it meant to hide in the event log unnoticed. The value is never
    read: it may be what the misspelt setting was meant to keep private.
    """
    known = setting_variables()
    if (
        not name.startswith(ENV_PREFIX)
        or name in known
        or name in REPOSITORY_VARIABLES
        or name.startswith(RESERVED_PREFIXES)
    ):
        return None
    # NOTE: compared without the prefix every candidate shares, which would make any two alike.
    nearest = difflib.get_close_matches(
        name.removeprefix(ENV_PREFIX), [v.removeprefix(ENV_PREFIX) for v in known], n=1
    )
    guess = f"Did you mean {ENV_PREFIX}{nearest[0]}? " if nearest else ""
    return (
        f"The environment variable {name} starts with {ENV_PREFIX} but is no setting of "
        f"dagster-dataframely, so it changes nothing. {guess}The settings' variables are "
        f'{", ".join(known)}; the documentation\'s "Settings" page describes each.'
    )


def _warn_of_unknown_variables() -> None:
    # NOTE: called where the environment's settings are read (each declaration, each direct
    # call), not per setting: a scan of the environment costs some 20 µs.
    for name in os.environ:
        if name in _WARNED_VARIABLES or not name.startswith(ENV_PREFIX):
            continue
        message = unknown_variable_warning(name)
        if message is not None:
            _WARNED_VARIABLES.add(name)
            # NOTE: a plain UserWarning: the errors module holds exceptions only, and Python
            # shows a UserWarning by default, where a user filters it by its text if need be.
            warnings.warn(message, UserWarning, stacklevel=2)


def _from_env(spec: SettingSpec) -> Any:
    text = os.environ.get(str(spec.env_var))
    if text is None:
        return None
    parser = _parser(spec)
    return _parsed(
        spec, parser.from_env, parser.env_allowed, text, f"the environment variable {spec.env_var}"
    )


def resolve_setting(spec: SettingSpec, argument: object, default: object) -> Any:
    """A setting's value: `default`, overridden by its variable, overridden by `argument`.

    Every source that is present is validated, even one a later source overrides, so a bad
    value is reported wherever it comes from.

    Raises
    ------
    InvalidSettingError
        The default, the variable or the argument is not allowed.
    """
    parser = _parser(spec)
    value = _parsed(spec, parser.from_value, parser.value_allowed, default, "the package default")
    from_env = _from_env(spec)
    if from_env is not None:
        value = from_env
    if argument is not None:
        value = _parsed(spec, parser.from_value, parser.value_allowed, argument, "the argument")
    return value


def resolve_settings(**arguments: object) -> Settings:
    """Resolve every setting a variable can set; a `None` or absent argument falls back to it.

    The other settings in `arguments` (the warning rules, the policy, the quarantine flags) are
    resolved against the schema, or not at all.

    Raises
    ------
    InvalidSettingError
        A default, environment variable or argument is not allowed.
    """
    _warn_of_unknown_variables()
    return Settings(
        **{
            spec.name: resolve_setting(spec, arguments.get(spec.name), _DEFAULTS[spec.name])
            for spec in SETTINGS
            if spec.env and spec.honoured_by
        }
    )


def resolve_check_naming(
    check_granularity: Granularity | None, schema_rules: SchemaRules | None
) -> tuple[Granularity, SchemaRules]:
    """Resolve only the two settings that decide the asset check names.

    Raises
    ------
    InvalidSettingError
        A default, environment variable or argument is not allowed.
    """
    _warn_of_unknown_variables()
    granularity, rules = setting("check_granularity"), setting("schema_rules")
    return (
        resolve_setting(granularity, check_granularity, _DEFAULTS[granularity.name]),
        resolve_setting(rules, schema_rules, _DEFAULTS[rules.name]),
    )


def read_quarantine_dir() -> str | None:
    """Return `DAGSTER_DATAFRAMELY_QUARANTINE_DIR`, or `None` if it is unset.

    Raises
    ------
    CredentialsInUrlError
        The variable is a URL with a user name or password in it.
    InvalidSettingError
        The variable is set but empty or only whitespace.
    """
    _warn_of_unknown_variables()
    spec = setting("quarantine_dir")
    text = os.environ.get(str(spec.env_var))
    if text is not None:
        # NOTE: before parsing: the parser's error repeats the value it rejects.
        refuse_credentials(text, f"the environment variable {spec.env_var}")
    value: str | None = _from_env(spec)
    return value

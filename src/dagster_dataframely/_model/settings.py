"""Resolve the package's settings from their default, environment variable and argument.

Every setting goes through the same resolver, so the order of the sources, the validation
of each one and the wording of `InvalidSettingError` are the same for all of them. The
environment is read when a function here is called, never when the module is imported.
"""

import difflib
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, get_args

from typing_extensions import TypeAliasType

from dagster_dataframely._credentials import refuse_credentials
from dagster_dataframely._upstream import document_type_alias
from dagster_dataframely.errors import InvalidSettingError

from .setting_model import ENV_PREFIX, REPOSITORY_VARIABLES, RESERVED_PREFIXES, SETTINGS
from .setting_model import setting as model_of

if TYPE_CHECKING:
    from .quality_policy import ResolvedPolicy

__all__ = [
    "ENV_PREFIX",
    "GRANULARITIES",
    "SCHEMA_RULES",
    "Granularity",
    "SchemaRules",
    "Settings",
    "non_default_environment",
    "read_quarantine_dir",
    "resolve_check_naming",
    "resolve_settings",
    "setting_variables",
    "unknown_variable_warning",
]

Granularity = TypeAliasType("Granularity", Literal["rule", "column", "schema"])
document_type_alias(
    Granularity,
    """How many asset checks report a schema's rules: `"rule"`, `"column"` or `"schema"`.

- `"rule"` (the default): one check per rule, `dy_rule__<rule>`.
- `"column"`: one check per column with rules, `dy_col__<column>`, and the schema-level rules
  as `schema_rules` says.
- `"schema"`: one check for every rule, `dy_schema__rules`.

The value of `check_granularity=` and of `DAGSTER_DATAFRAMELY_CHECK_GRANULARITY`. Changing it
renames the checks, so their history starts over.
""",
)
SchemaRules = TypeAliasType("SchemaRules", Literal["collapsed", "per_rule"])
document_type_alias(
    SchemaRules,
    """Which checks report the schema-level rules at `column` granularity.

- `"collapsed"` (the default): one check, `dy_schema__rules`, for the primary key and every
  `@dy.rule()`.
- `"per_rule"`: one check per schema-level rule, `dy_rule__<rule>`.

The value of `schema_rules=` and of `DAGSTER_DATAFRAMELY_SCHEMA_RULES`.
""",
)

# The allowed values come from the aliases themselves, so the two cannot drift apart.
_GRANULARITY_CHOICES: tuple[Granularity, ...] = get_args(Granularity.__value__)
_SCHEMA_RULES_CHOICES: tuple[SchemaRules, ...] = get_args(SchemaRules.__value__)
GRANULARITIES: tuple[str, ...] = _GRANULARITY_CHOICES
SCHEMA_RULES: tuple[str, ...] = _SCHEMA_RULES_CHOICES

_T = TypeVar("_T")
_Raw = TypeVar("_Raw")

# Package defaults, keyed by setting name, from the settings model. They are validated like
# any other source, so a mistake there surfaces as an `InvalidSettingError` naming the default.
_DEFAULTS: Mapping[str, object] = MappingProxyType(
    {spec.name: spec.package_default for spec in SETTINGS if spec.env}
)

_SOURCE_DEFAULT = "the package default"
_SOURCE_ARGUMENT = "the argument"

_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True)
class Settings:
    """The resolved value of every setting an asset declaration uses."""

    check_granularity: Granularity
    schema_rules: SchemaRules
    max_failure_samples: int
    statistics: bool
    row_sample: int
    warning_rules: frozenset[str] = frozenset()
    """Rules whose failures warn and never keep a row out of the table. Per asset, checked
    against its schema, so it has no environment variable and no package default."""
    policy: "ResolvedPolicy | None" = None
    """The asset's quality policy, checked against its schema; None (the spec's behaviour)
    without one. Per asset too."""
    streaming: bool = False
    """Whether a returned `LazyFrame` is validated and written without collecting it."""


@dataclass(frozen=True, slots=True)
class _Parser(Generic[_Raw, _T]):
    """Turn one kind of raw input into a setting's value, or None when the input is refused.

    `allowed` describes the accepted inputs for the error message: the values themselves,
    or a phrase when they cannot be listed. No setting's value is ever None.
    """

    parse: Callable[[_Raw], _T | None]
    allowed: Sequence[str] | str


@dataclass(frozen=True, slots=True)
class _EnvSetting(Generic[_T]):
    """A setting read from its environment variable only, through `from_env`."""

    name: str
    from_env: _Parser[str, _T]
    other_text: str
    """Environment text of a valid value other than the default, for a hostile-environment run."""

    @property
    def env_var(self) -> str:
        """The variable the settings model derives from the name."""
        variable = model_of(self.name).env_var
        assert variable is not None, f"{self.name} has no environment variable in the model"
        return variable


@dataclass(frozen=True, slots=True)
class _Setting(_EnvSetting[_T]):
    """A setting that also has a package default and an argument, both read by `from_value`."""

    from_value: _Parser[object, _T]


def _choice_setting(name: str, choices: tuple[_T, ...]) -> _Setting[_T]:
    """A setting that takes one of `choices`, the same text in the environment."""

    def parse(value: object) -> _T | None:
        if not isinstance(value, str):
            return None
        return next((choice for choice in choices if value == choice), None)

    allowed = tuple(str(choice) for choice in choices)
    return _Setting(
        name,
        from_env=_Parser(lambda text: parse(text.strip()), allowed),
        other_text=next(str(choice) for choice in choices if choice != _DEFAULTS[name]),
        from_value=_Parser(parse, allowed),
    )


def _count_value(value: object) -> int | None:
    # `bool` is a subclass of `int`, but `True` meaning one row is never what was meant.
    """A non-negative int argument; a bool is refused, though Python counts it as an int."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def _count_env(text: str) -> int | None:
    """A non-negative whole number written in base 10 in the environment."""
    stripped = text.strip()
    return int(stripped) if _DIGITS.fullmatch(stripped) else None


def _count_setting(name: str) -> _Setting[int]:
    """A setting that counts rows: an argument or an environment variable."""
    return _Setting(
        name,
        from_env=_Parser(_count_env, "a non-negative whole number in base 10"),
        other_text=str((_count_value(_DEFAULTS[name]) or 0) + 1),
        from_value=_Parser(_count_value, "a non-negative int (a bool is not accepted)"),
    )


def _flag_value(value: object) -> bool | None:
    """A flag argument: a bool, never a truthy value."""
    return value if isinstance(value, bool) else None


def _flag_env(text: str) -> bool | None:
    """A flag in the environment: `true` or `false` in any case, nothing else."""
    folded = text.strip().lower()
    return folded == "true" if folded in ("true", "false") else None


def _directory_env(text: str) -> str | None:
    """A directory in the environment; empty is refused, as an unset `${VAR}` gives it."""
    return text if text.strip() else None


_CHECK_GRANULARITY = _choice_setting("check_granularity", _GRANULARITY_CHOICES)
_SCHEMA_RULES = _choice_setting("schema_rules", _SCHEMA_RULES_CHOICES)
_MAX_FAILURE_SAMPLES = _count_setting("max_failure_samples")
_ROW_SAMPLE = _count_setting("row_sample")


def _flag_setting(name: str) -> _Setting[bool]:
    """A setting that is on or off: a bool argument, or `true`/`false` in the environment."""
    return _Setting(
        name,
        from_env=_Parser(_flag_env, "true or false, in any letter case"),
        other_text=str(_DEFAULTS[name] is not True).lower(),
        from_value=_Parser(_flag_value, ("True", "False")),
    )


_STATISTICS = _flag_setting("statistics")
_STREAMING = _flag_setting("streaming")
_QUARANTINE_DIR = _EnvSetting(
    "quarantine_dir",
    from_env=_Parser(_directory_env, "a non-empty directory path"),
    # Unset by default, so any directory differs; one only a hostile run would write to.
    other_text=os.path.join(tempfile.gettempdir(), "dagster-dataframely-hostile-quarantine"),
)
_ENV_SETTINGS: tuple[_EnvSetting[Any], ...] = (
    _CHECK_GRANULARITY,
    _SCHEMA_RULES,
    _MAX_FAILURE_SAMPLES,
    _STATISTICS,
    _ROW_SAMPLE,
    _STREAMING,
    _QUARANTINE_DIR,
)


def setting_variables() -> tuple[str, ...]:
    """Every `DAGSTER_DATAFRAMELY_*` variable the package reads, so a test suite clears them all."""
    return tuple(spec.env_var for spec in SETTINGS if spec.env_var is not None)


def non_default_environment() -> dict[str, str]:
    """Each setting variable set to a valid value other than its default.

    Exported for a whole test run, it proves the suite does not depend on the environment.
    """
    return {setting.env_var: setting.other_text for setting in _ENV_SETTINGS}


def _parse(setting: _EnvSetting[_T], parser: _Parser[_Raw, _T], raw: _Raw, source: str) -> _T:
    """Parse one source's value, turning a refusal into an `InvalidSettingError`."""
    value = parser.parse(raw)
    if value is None:
        raise InvalidSettingError(
            setting.name,
            repr(raw),
            parser.allowed,
            source=source,
            env_var=setting.env_var,
            takes_argument=isinstance(setting, _Setting),
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
    """Warn once per process of each `DAGSTER_DATAFRAMELY_*` variable that is no setting's.

    Called where the environment's settings are read (each declaration, each direct call), not
    per setting: a scan of the environment costs some 20 µs.
    """
    for name in os.environ:
        if name in _WARNED_VARIABLES or not name.startswith(ENV_PREFIX):
            continue
        message = unknown_variable_warning(name)
        if message is not None:
            _WARNED_VARIABLES.add(name)
            # NOTE: a plain UserWarning: the errors module holds exceptions only, and Python
            # shows a UserWarning by default, where a user filters it by its text if need be.
            warnings.warn(message, UserWarning, stacklevel=2)


def _from_env(setting: _EnvSetting[_T]) -> _T | None:
    """Parse the setting's environment variable, or return `None` if it is unset."""
    text = os.environ.get(setting.env_var)
    if text is None:
        return None
    return _parse(setting, setting.from_env, text, f"the environment variable {setting.env_var}")


def _resolve(setting: _Setting[_T], argument: object) -> _T:
    """Resolve a setting: the default, overridden by the environment, overridden by the argument.

    Every source that is present is validated, even one a later source overrides, so a bad
    value is reported wherever it comes from.
    """
    value = _parse(setting, setting.from_value, _DEFAULTS[setting.name], _SOURCE_DEFAULT)
    from_env = _from_env(setting)
    if from_env is not None:
        value = from_env
    if argument is not None:
        value = _parse(setting, setting.from_value, argument, _SOURCE_ARGUMENT)
    return value


def resolve_settings(
    *,
    check_granularity: Granularity | None = None,
    schema_rules: SchemaRules | None = None,
    max_failure_samples: int | None = None,
    statistics: bool | None = None,
    row_sample: int | None = None,
    streaming: bool | None = None,
) -> Settings:
    """Resolve every setting; a `None` argument falls back to the environment, then the default.

    Raises
    ------
    InvalidSettingError
        A default, environment variable or argument is not allowed.
    """
    granularity, rules = resolve_check_naming(check_granularity, schema_rules)
    return Settings(
        check_granularity=granularity,
        schema_rules=rules,
        max_failure_samples=_resolve(_MAX_FAILURE_SAMPLES, max_failure_samples),
        statistics=_resolve(_STATISTICS, statistics),
        row_sample=_resolve(_ROW_SAMPLE, row_sample),
        streaming=_resolve(_STREAMING, streaming),
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
    return (
        _resolve(_CHECK_GRANULARITY, check_granularity),
        _resolve(_SCHEMA_RULES, schema_rules),
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
    text = os.environ.get(_QUARANTINE_DIR.env_var)
    if text is not None:
        # Before parsing: the parser's error repeats the value it rejects.
        refuse_credentials(text, f"the environment variable {_QUARANTINE_DIR.env_var}")
    return _from_env(_QUARANTINE_DIR)

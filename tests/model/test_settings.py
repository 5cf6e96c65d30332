"""Settings resolution: package default, then environment variable, then argument."""

import dataclasses
from typing import Any, Literal, get_args

import pytest
from typing_extensions import TypeAliasType

from dagster_dataframely._model import settings as _settings
from dagster_dataframely._model.setting_model import (
    GRANULARITIES,
    SCHEMA_RULES,
    Granularity,
    SchemaRules,
)
from dagster_dataframely._model.settings import (
    Settings,
    read_quarantine_dir,
    resolve_check_naming,
    resolve_settings,
)
from dagster_dataframely.errors import InvalidSettingError

SETTINGS = (
    "check_granularity",
    "schema_rules",
    "max_failure_samples",
    "statistics",
    "row_sample",
    "streaming",
)
QUARANTINE_ENV = "DAGSTER_DATAFRAMELY_QUARANTINE_DIR"
DEFAULTS = Settings(
    check_granularity="rule",
    schema_rules="collapsed",
    max_failure_samples=5,
    statistics=True,
    row_sample=5,
)


def env_var(setting: str) -> str:
    return f"DAGSTER_DATAFRAMELY_{setting.upper()}"


# --- the aliases ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alias", "name", "values", "constant"),
    [
        (Granularity, "Granularity", ("rule", "column", "schema"), GRANULARITIES),
        (SchemaRules, "SchemaRules", ("collapsed", "per_rule"), SCHEMA_RULES),
    ],
)
def test_aliases_are_type_alias_types(
    alias: Any, name: str, values: tuple[str, ...], constant: tuple[str, ...]
) -> None:
    assert isinstance(alias, TypeAliasType)
    assert alias.__name__ == name
    assert alias.__value__ == Literal[values]
    assert get_args(alias.__value__) == values
    assert constant == values


# --- defaults and overrides -------------------------------------------------------------


def test_defaults() -> None:
    assert resolve_settings() == DEFAULTS
    assert resolve_check_naming(None, None) == ("rule", "collapsed")


def test_settings_is_frozen_and_slotted() -> None:
    settings = resolve_settings()
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.row_sample = 1  # type: ignore[misc]
    assert not hasattr(settings, "__dict__")


@pytest.mark.parametrize(
    ("setting", "text", "expected"),
    [
        ("check_granularity", "column", "column"),
        ("check_granularity", "schema", "schema"),
        ("check_granularity", " column\n", "column"),
        ("schema_rules", "per_rule", "per_rule"),
        ("max_failure_samples", "0", 0),
        ("max_failure_samples", "12", 12),
        ("max_failure_samples", " 7 ", 7),
        ("row_sample", "0", 0),
        ("row_sample", "007", 7),
        ("statistics", "false", False),
        ("statistics", "FALSE", False),
        ("statistics", "False", False),
        ("statistics", "true", True),
        ("statistics", "TRUE", True),
        ("statistics", "tRuE", True),
        ("streaming", "true", True),
        ("streaming", "False", False),
    ],
)
def test_environment_overrides_default(
    monkeypatch: pytest.MonkeyPatch, setting: str, text: str, expected: Any
) -> None:
    monkeypatch.setenv(env_var(setting), text)
    resolved = getattr(resolve_settings(), setting)
    assert resolved == expected
    assert type(resolved) is type(expected)


@pytest.mark.parametrize(
    ("setting", "text", "argument"),
    [
        ("check_granularity", "column", "schema"),
        ("schema_rules", "per_rule", "collapsed"),
        ("max_failure_samples", "3", 0),
        ("row_sample", "0", 9),
        ("statistics", "false", True),
        ("statistics", "true", False),
        ("streaming", "false", True),
    ],
)
def test_argument_overrides_environment(
    monkeypatch: pytest.MonkeyPatch, setting: str, text: str, argument: Any
) -> None:
    monkeypatch.setenv(env_var(setting), text)
    assert getattr(resolve_settings(**{setting: argument}), setting) == argument


@pytest.mark.parametrize(
    ("setting", "argument"),
    [
        ("check_granularity", "schema"),
        ("schema_rules", "per_rule"),
        ("max_failure_samples", 0),
        ("row_sample", 100),
        ("statistics", False),
        ("streaming", True),
    ],
)
def test_argument_overrides_default(setting: str, argument: Any) -> None:
    settings = resolve_settings(**{setting: argument})
    assert getattr(settings, setting) == argument
    assert settings == dataclasses.replace(DEFAULTS, **{setting: argument})


def test_check_naming_resolves_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(env_var("check_granularity"), "column")
    monkeypatch.setenv(env_var("schema_rules"), "per_rule")
    assert resolve_check_naming(None, None) == ("column", "per_rule")
    assert resolve_check_naming("schema", None) == ("schema", "per_rule")
    assert resolve_check_naming(None, "collapsed") == ("column", "collapsed")


def test_environment_is_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_settings().row_sample == 5
    monkeypatch.setenv(env_var("row_sample"), "2")
    assert resolve_settings().row_sample == 2
    monkeypatch.delenv(env_var("row_sample"))
    assert resolve_settings().row_sample == 5


# --- invalid values ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "argument"),
    [
        ("check_granularity", "rules"),
        ("check_granularity", "RULE"),
        ("check_granularity", 1),
        ("schema_rules", "per-rule"),
        ("schema_rules", True),
        ("max_failure_samples", -1),
        ("max_failure_samples", True),
        ("max_failure_samples", False),
        ("max_failure_samples", 1.0),
        ("max_failure_samples", "5"),
        ("row_sample", -5),
        ("row_sample", True),
        ("row_sample", "0"),
        ("statistics", "false"),
        ("statistics", "true"),
        ("statistics", 1),
        ("statistics", 0),
    ],
)
def test_invalid_argument_raises(setting: str, argument: Any) -> None:
    with pytest.raises(InvalidSettingError) as info:
        resolve_settings(**{setting: argument})
    err = info.value
    assert err.setting == setting
    assert err.value == repr(argument)
    assert err.source == "the argument"
    assert err.env_var == env_var(setting)
    assert err.takes_argument is True
    message = str(err)
    assert repr(setting) in message
    assert repr(argument) in message
    assert "from the argument" in message


@pytest.mark.parametrize(
    ("setting", "text"),
    [
        ("check_granularity", "rules"),
        ("check_granularity", "RULE"),
        ("check_granularity", ""),
        ("schema_rules", "per-rule"),
        ("schema_rules", ""),
        ("max_failure_samples", "-1"),
        ("max_failure_samples", "1.5"),
        ("max_failure_samples", "five"),
        ("max_failure_samples", ""),
        ("max_failure_samples", "+3"),
        ("max_failure_samples", "1_000"),
        ("max_failure_samples", "0x10"),
        (
            "max_failure_samples",
            "\u0663",
        ),  # ARABIC-INDIC DIGIT THREE: isdigit() but not base 10 ASCII
        ("row_sample", "-1"),
        ("row_sample", "1.5"),
        ("row_sample", "five"),
        ("row_sample", ""),
        ("statistics", "1"),
        ("statistics", "0"),
        ("statistics", "yes"),
        ("statistics", "no"),
        ("statistics", "on"),
        ("statistics", ""),
        ("statistics", "truthy"),
    ],
)
def test_invalid_environment_variable_raises(
    monkeypatch: pytest.MonkeyPatch, setting: str, text: str
) -> None:
    variable = env_var(setting)
    monkeypatch.setenv(variable, text)
    with pytest.raises(InvalidSettingError) as info:
        resolve_settings()
    err = info.value
    assert err.setting == setting
    assert err.value == repr(text)
    assert err.source == f"the environment variable {variable}"
    assert err.env_var == variable
    message = str(err)
    assert repr(text) in message
    assert variable in message


@pytest.mark.parametrize("setting", SETTINGS)
def test_invalid_environment_variable_raises_even_when_an_argument_is_given(
    monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    monkeypatch.setenv(env_var(setting), "not a valid value")
    with pytest.raises(InvalidSettingError) as info:
        resolve_settings(**{setting: getattr(DEFAULTS, setting)})
    assert info.value.source == f"the environment variable {env_var(setting)}"


@pytest.mark.parametrize(
    ("setting", "default"),
    [
        ("check_granularity", "everything"),
        ("schema_rules", None),
        ("max_failure_samples", -1),
        ("max_failure_samples", True),
        ("row_sample", "5"),
        ("statistics", "true"),
    ],
)
def test_invalid_package_default_raises(
    monkeypatch: pytest.MonkeyPatch, setting: str, default: object
) -> None:
    monkeypatch.setattr(_settings, "_DEFAULTS", {**_settings._DEFAULTS, setting: default})
    with pytest.raises(InvalidSettingError) as info:
        resolve_settings()
    assert info.value.setting == setting
    assert info.value.source == "the package default"
    assert info.value.value == repr(default)
    assert "from the package default" in str(info.value)


@pytest.mark.parametrize(
    ("setting", "argument", "allowed"),
    [
        ("check_granularity", "x", ("rule", "column", "schema")),
        ("schema_rules", "x", ("collapsed", "per_rule")),
        ("statistics", "x", ("True", "False")),
    ],
)
def test_error_lists_the_allowed_values(setting: str, argument: Any, allowed: Any) -> None:
    with pytest.raises(InvalidSettingError) as info:
        resolve_settings(**{setting: argument})
    assert info.value.allowed == allowed
    assert ", ".join(repr(value) for value in allowed) in str(info.value)


def test_count_error_describes_the_allowed_values() -> None:
    with pytest.raises(InvalidSettingError) as info:
        resolve_settings(row_sample=-1)
    assert isinstance(info.value.allowed, str)
    assert "non-negative" in info.value.allowed
    assert info.value.allowed in str(info.value)


def test_flag_environment_error_describes_the_allowed_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(env_var("statistics"), "yes")
    with pytest.raises(InvalidSettingError) as info:
        resolve_settings()
    assert "true" in str(info.value.allowed)
    assert "false" in str(info.value.allowed)


def test_check_naming_validates_its_arguments() -> None:
    with pytest.raises(InvalidSettingError) as info:
        resolve_check_naming("column", "per-rule")  # type: ignore[arg-type]
    assert info.value.setting == "schema_rules"


# --- quarantine_dir ---------------------------------------------------------------------


def test_quarantine_dir_unset_is_none() -> None:
    assert read_quarantine_dir() is None


def test_quarantine_dir_is_read_at_call_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setenv(QUARANTINE_ENV, str(tmp_path))
    assert read_quarantine_dir() == str(tmp_path)
    monkeypatch.setenv(QUARANTINE_ENV, "s3://bucket/prefix")
    assert read_quarantine_dir() == "s3://bucket/prefix"


@pytest.mark.parametrize("text", ["", " ", "\t\n"])
def test_empty_quarantine_dir_raises(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv(QUARANTINE_ENV, text)
    with pytest.raises(InvalidSettingError) as info:
        read_quarantine_dir()
    err = info.value
    assert err.setting == "quarantine_dir"
    assert err.value == repr(text)
    assert err.env_var == QUARANTINE_ENV
    assert err.source == f"the environment variable {QUARANTINE_ENV}"
    assert err.takes_argument is False
    assert "`quarantine_dir=`" not in str(err)
    assert QUARANTINE_ENV in str(err)


def test_empty_quarantine_dir_does_not_affect_other_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(QUARANTINE_ENV, "")
    assert resolve_settings() == DEFAULTS

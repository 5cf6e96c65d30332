"""The list of setting variables a test suite clears, and the hostile values it can export."""

import dataclasses
import re
from pathlib import Path

import pytest

import dagster_dataframely
from dagster_dataframely._model.settings import (
    non_default_environment,
    read_quarantine_dir,
    resolve_settings,
    setting_variables,
)

_SOURCE = Path(dagster_dataframely.__file__).parent
_VARIABLE = re.compile(r"DAGSTER_DATAFRAMELY_[A-Z_]*[A-Z]")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in setting_variables():
        monkeypatch.delenv(name, raising=False)


def test_every_variable_the_package_names_is_listed() -> None:
    """A variable named anywhere in the source and missing here would leak into the tests.

    The docstrings name most of them through the settings model, so the source names a part.
    """
    named = {
        match
        for module in _SOURCE.rglob("*.py")
        for match in _VARIABLE.findall(module.read_text(encoding="utf-8"))
    }
    assert named <= set(setting_variables())


def test_hostile_environment_covers_every_variable() -> None:
    assert set(non_default_environment()) == set(setting_variables())


def test_hostile_values_are_valid_and_change_every_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    defaults = resolve_settings()
    assert read_quarantine_dir() is None
    for name, text in non_default_environment().items():
        monkeypatch.setenv(name, text)
    hostile = resolve_settings()  # raises InvalidSettingError if a value is not valid
    changed = {
        field.name
        for field in dataclasses.fields(hostile)
        if getattr(hostile, field.name) != getattr(defaults, field.name)
    }
    read_from_env = {
        name.removeprefix("DAGSTER_DATAFRAMELY_").lower() for name in setting_variables()
    }
    assert changed == read_from_env - {"quarantine_dir"}
    assert read_quarantine_dir() == non_default_environment()["DAGSTER_DATAFRAMELY_QUARANTINE_DIR"]


_ROW = re.compile(r"^\| `(?P<name>[a-z_]+)`.*\| (?P<default>[^|]+) \|$")


def test_the_settings_page_table_matches_the_settings() -> None:
    """docs/settings.md lists every setting once, with the default the package resolves."""
    page = _SOURCE.parents[1] / "docs" / "settings.md"
    rows = {
        match["name"]: match["default"].strip().strip("`")
        for line in page.read_text(encoding="utf-8").splitlines()
        if (match := _ROW.match(line))
    }
    defaults = resolve_settings()
    expected = {
        name: str(getattr(defaults, name)) if name != "quarantine_dir" else "unset"
        for name in (
            variable.removeprefix("DAGSTER_DATAFRAMELY_").lower()
            for variable in setting_variables()
        )
    }
    assert rows == expected

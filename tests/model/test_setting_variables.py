"""The list of setting variables a test suite clears, and the hostile values it can export."""

import dataclasses
import re
import warnings
from pathlib import Path

import polars as pl
import pytest

import dagster_dataframely
import dagster_dataframely as dd
from dagster_dataframely._model import settings
from dagster_dataframely._model.setting_model import REPOSITORY_VARIABLES
from dagster_dataframely._model.settings import (
    non_default_environment,
    read_quarantine_dir,
    resolve_settings,
    setting_variables,
    unknown_variable_warning,
)
from tests.schemas import Orders

_SOURCE = Path(dagster_dataframely.__file__).parent
_VARIABLE = re.compile(r"DAGSTER_DATAFRAMELY_[A-Z_]*[A-Z](?![A-Z_])")
"""A whole variable's name; not a prefix such as `DAGSTER_DATAFRAMELY_TEST_`."""


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
    assert named <= set(setting_variables()) | set(REPOSITORY_VARIABLES)


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


# --- a variable that is no setting ---------------------------------------------------------------

_REPOSITORY = _SOURCE.parents[1]
_SETTINGS_LISTED = (
    "DAGSTER_DATAFRAMELY_CHECK_GRANULARITY, DAGSTER_DATAFRAMELY_SCHEMA_RULES, "
    "DAGSTER_DATAFRAMELY_MAX_FAILURE_SAMPLES, DAGSTER_DATAFRAMELY_STATISTICS, "
    "DAGSTER_DATAFRAMELY_ROW_SAMPLE, DAGSTER_DATAFRAMELY_STREAMING, "
    "DAGSTER_DATAFRAMELY_QUARANTINE_DIR"
)


@pytest.fixture
def unwarned(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that has warned of no variable yet."""
    monkeypatch.setattr(settings, "_WARNED_VARIABLES", set())


def _warnings_of(read: object) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert callable(read)
        read()
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


@pytest.mark.usefixtures("unwarned")
def test_a_misspelt_setting_variable_warns_once_naming_the_nearest_setting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_ROW_SAMPEL", "0-private-value")

    def declare() -> None:
        @dd.asset(Orders)
        def orders() -> pl.DataFrame:
            return pl.DataFrame()

    (warned,) = _warnings_of(declare)

    assert warned == (
        "The environment variable DAGSTER_DATAFRAMELY_ROW_SAMPEL starts with "
        "DAGSTER_DATAFRAMELY_ but is no setting of dagster-dataframely, so it changes nothing. "
        "Did you mean DAGSTER_DATAFRAMELY_ROW_SAMPLE? The settings' variables are "
        f'{_SETTINGS_LISTED}; the documentation\'s "Settings" page describes each.'
    )
    assert "private" not in warned
    # Once per process, whatever reads the settings next.
    assert _warnings_of(declare) == []
    assert _warnings_of(resolve_settings) == []
    assert _warnings_of(read_quarantine_dir) == []


@pytest.mark.usefixtures("unwarned")
def test_the_first_read_of_a_direct_call_warns_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_QUARANTINE_DIRECTORY", "/tmp/q")
    (warned,) = _warnings_of(read_quarantine_dir)
    assert "Did you mean DAGSTER_DATAFRAMELY_QUARANTINE_DIR? " in warned


@pytest.mark.usefixtures("unwarned")
def test_a_variable_near_no_setting_warns_without_a_guess(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_X", "1")
    (warned,) = _warnings_of(resolve_settings)
    assert warned == (
        "The environment variable DAGSTER_DATAFRAMELY_X starts with DAGSTER_DATAFRAMELY_ but is "
        "no setting of dagster-dataframely, so it changes nothing. The settings' variables are "
        f'{_SETTINGS_LISTED}; the documentation\'s "Settings" page describes each.'
    )


@pytest.mark.usefixtures("unwarned")
def test_settings_and_the_repositorys_own_variables_do_not_warn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, text in non_default_environment().items():
        monkeypatch.setenv(name, text)
    for name in [*REPOSITORY_VARIABLES, "DAGSTER_DATAFRAMELY_TEST_ANYTHING"]:
        monkeypatch.setenv(name, "1")
    monkeypatch.setenv("DAGSTER_HOME", "/tmp")  # Dagster's own, not this package's prefix
    assert _warnings_of(resolve_settings) == []


def test_every_variable_the_repository_uses_is_known_or_reserved() -> None:
    """The demo, tests, benchmarks, CI and docs set variables of the package's prefix; none warns.

    A new test variable either starts with a reserved prefix (`DAGSTER_DATAFRAMELY_TEST_`,
    `DAGSTER_DATAFRAMELY_BENCH_`) or is listed in `REPOSITORY_VARIABLES`.
    """
    places = [
        "Makefile",
        ".ci",
        "scripts",
        "tests",
        "integration_tests",
        "benchmarks",
        "examples",
        "docs",
        "README.md",
        "CONTRIBUTING.md",
        "docker-compose.yml",
    ]
    files = [
        path
        for place in places
        for path in ([_REPOSITORY / place] if (_REPOSITORY / place).is_file() else [])
        + sorted((_REPOSITORY / place).rglob("*"))
        if path.is_file() and path.suffix not in (".png", ".parquet", ".pyc")
    ]
    named = {
        match
        for path in files
        for match in _VARIABLE.findall(path.read_text(encoding="utf-8", errors="replace"))
    }
    assert {"DAGSTER_DATAFRAMELY_TEST_COLLECT_ALL", "DAGSTER_DATAFRAMELY_DEMO_DIR"} <= named
    # This module's own misspelt examples are what the warning is for.
    examples = {
        "DAGSTER_DATAFRAMELY_ROW_SAMPEL",
        "DAGSTER_DATAFRAMELY_QUARANTINE_DIRECTORY",
        "DAGSTER_DATAFRAMELY_X",
    }
    assert {name for name in named - examples if unknown_variable_warning(name)} == set()

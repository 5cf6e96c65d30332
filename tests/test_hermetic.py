"""The suite is hermetic: a setting variable exported in the shell changes no test's outcome."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dagster_dataframely._model.settings import (
    ENV_PREFIX,
    non_default_environment,
    resolve_settings,
    setting_variables,
)

ROOT = Path(__file__).resolve().parent.parent


def test_no_setting_variable_is_set_inside_a_test() -> None:
    # Fails in CI's version jobs, run with every variable exported (`HOSTILE=1`, as `make
    # unit-hostile` does), if one is not cleared.
    assert {name for name in setting_variables() if name in os.environ} == set()


def test_the_list_is_every_setting_and_no_variable_that_steers_the_suite() -> None:
    names = setting_variables()
    assert all(name.startswith(ENV_PREFIX) for name in names)
    assert "DAGSTER_DATAFRAMELY_STREAMING" in names
    assert "DAGSTER_DATAFRAMELY_QUARANTINE_DIR" in names
    for steering in ("THOROUGH", "TEST_COLLECT_ALL", "DEMO_DIR"):
        assert ENV_PREFIX + steering not in names


def test_every_non_default_value_is_valid_and_differs_from_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    environment = non_default_environment()
    assert set(environment) == set(setting_variables())
    defaults = resolve_settings()
    for name, text in environment.items():
        monkeypatch.setenv(name, text)
    exported = resolve_settings()
    for field in ("check_granularity", "schema_rules", "max_failure_samples", "statistics"):
        assert getattr(exported, field) != getattr(defaults, field)
    assert exported.row_sample != defaults.row_sample
    assert exported.streaming != defaults.streaming


def test_an_exported_granularity_does_not_change_the_threshold_tests() -> None:
    # Issue 37: with it exported, the module's checks were named per schema and 21 tests failed.
    environment = {**os.environ, "DAGSTER_DATAFRAMELY_CHECK_GRANULARITY": "schema"}
    finished = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "tests/run/test_thresholds.py",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
        ],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert finished.returncode == 0, finished.stdout[-3000:]

"""The package's setting variables, and a valid non-default value for each.

A test run clears every one of them so no value from the outer environment changes what a
test sees, and CI runs the unit suite once more with each set to `non_default_environment()`
to prove the clearing is complete. Variables that steer the test suite itself
(`DAGSTER_DATAFRAMELY_THOROUGH`, `..._TEST_COLLECT_ALL`, the demo's `..._DEMO_DIR`) are not
settings and are not listed.
"""

import tempfile
from pathlib import Path

from .settings import ENV_PREFIX, ENV_VARIABLES

__all__ = ["non_default_environment", "setting_variables"]

# A valid value that differs from the package default, per setting name.
_NON_DEFAULT: dict[str, str] = {
    "check_granularity": "schema",
    "schema_rules": "per_rule",
    "max_failure_samples": "2",
    "statistics": "false",
    "row_sample": "2",
    "streaming": "true",
}


def setting_variables() -> tuple[str, ...]:
    """Every `DAGSTER_DATAFRAMELY_*` variable the package reads as a setting."""
    return ENV_VARIABLES


def non_default_environment() -> dict[str, str]:
    """Each setting variable with a valid value other than its default.

    The quarantine directory has no default (unset); it gets a directory under the system's
    temporary directory.
    """
    quarantine = str(Path(tempfile.gettempdir()) / "dagster-dataframely-non-default-quarantine")
    values = {**_NON_DEFAULT, "quarantine_dir": quarantine}
    return {
        variable: values[variable.removeprefix(ENV_PREFIX).lower()] for variable in ENV_VARIABLES
    }

"""Settings every test run shares, from whichever folder it starts (`make test`, `make unit`)."""

import os

import pytest
from hypothesis import settings

from dagster_dataframely._model.settings import setting_variables

# No per-example deadline: on CI's two shared cores one example of a property test can take a
# second, and a deadline would fail it for the machine's load, not for the property.
settings.register_profile("shared-machine", deadline=None)
settings.load_profile("shared-machine")


def pytest_configure(config: pytest.Config) -> None:
    """Clear the package's setting variables before collection.

    Test modules declare assets when they are imported, and a declaration reads the settings
    then; a value exported in the shell must not change what they declare. The subprocesses a
    test starts inherit the cleared environment too.
    """
    for variable in setting_variables():
        os.environ.pop(variable, None)


@pytest.fixture(autouse=True)
def _clean_setting_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts with no setting variable set: each sees the package defaults.

    A test that sets one through `monkeypatch` gets it undone after; one set another way by an
    earlier test does not leak into the next.
    """
    for variable in setting_variables():
        monkeypatch.delenv(variable, raising=False)

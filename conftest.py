"""Settings every test run shares, from whichever folder it starts (`make test`, `make unit`)."""

import os

import pytest
from hypothesis import settings
from tests.alembic_scripts import reuse_alembic_scripts
from tests.parameter_values import each_value_once
from tests.property_examples import cap_examples

from dagster_dataframely._model.settings import setting_variables

# No per-example deadline: on CI's two shared cores one example of a property test can take a
# second, and a deadline would fail it for the machine's load, not for the property.
settings.register_profile("shared-machine", deadline=None)
settings.load_profile("shared-machine")

# A fresh Dagster instance per test stays cheap: see tests/alembic_scripts.py.
reuse_alembic_scripts()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--examples-per-property",
        type=int,
        default=None,
        metavar="N",
        help="draw at most N examples in each property test (the version jobs: see the Makefile)",
    )
    parser.addoption(
        "--each-value-once",
        action="store_true",
        help="run only the cases of a test with 2 or more parameters that show each value of "
        "each parameter once (the version jobs: see the Makefile)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With `--examples-per-property N`, no property test draws more than N examples; with
    `--each-value-once`, a test with two or more parameters runs only the cases that show
    each value of each parameter once (tests/parameter_values.py).

    The version jobs look for a dependency or a Python that behaves differently; such a change
    shows on the first examples a property draws. The search of the input space for the
    package's own mistakes is `make test`'s, on the full count.
    """
    cap: int | None = config.getoption("examples_per_property")
    if cap is not None:
        cap_examples((getattr(item, "obj", None) for item in items), cap)
    if config.getoption("each_value_once"):
        kept = each_value_once(items)
        chosen = set(map(id, kept))
        config.hook.pytest_deselected(items=[item for item in items if id(item) not in chosen])
        items[:] = kept


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

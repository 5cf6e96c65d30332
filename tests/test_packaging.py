"""What a release is made of: one version everywhere, its changelog entry, the license it names.

The wheel itself is checked by `make wheel-test` (`scripts/check_dist.py`), which installs it
into a fresh environment and runs the demo from it.
"""

import importlib.metadata
import re
import tomllib
from pathlib import Path

from dagster_shared.libraries import DagsterLibraryRegistry

import dagster_dataframely as dd

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTION = "dataframely-dagster"


def test_the_version_is_the_installed_distributions() -> None:
    assert dd.__version__ == importlib.metadata.version(DISTRIBUTION)


def test_importing_the_package_registers_it_with_dagsters_library_registry() -> None:
    # The registry is where Dagster lists the integration libraries a code location loaded.
    assert DagsterLibraryRegistry.get()[DISTRIBUTION] == dd.__version__


def test_the_changelog_has_an_entry_for_this_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()

    assert re.search(
        rf"^## \[{re.escape(dd.__version__)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M
    )


def test_the_license_file_is_the_license_the_metadata_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    metadata = importlib.metadata.metadata(DISTRIBUTION)

    assert project["license"] == metadata["License-Expression"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")


def test_the_readme_installs_the_wheel_of_this_version() -> None:
    readme = (ROOT / "README.md").read_text()

    assert f"pip install dist/dataframely_dagster-{dd.__version__}-py3-none-any.whl" in readme

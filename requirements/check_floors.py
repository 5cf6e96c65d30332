"""Check that this environment has every declared floor exactly: the lowest set tests the floors.

`make test-lowest` runs it in `.venv-lowest` before the tests. For each runtime dependency of
pyproject.toml and of each extra that has a lower bound (`>=`), the installed version must equal
that bound; otherwise the floor is not what CI tests, and the message says which floor to raise
(a transitive dependency can lift a package above its floor, as pydantic does typing-extensions).

    python requirements/check_floors.py
"""

import sys
import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def declared_floors(pyproject: Path) -> dict[str, Version]:
    """Each distribution's `>=` bound among the dependencies and the extras, by name."""
    project = tomllib.loads(pyproject.read_text())["project"]
    declared = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        declared.extend(extra)
    floors: dict[str, Version] = {}
    for line in declared:
        requirement = Requirement(line)
        for specifier in requirement.specifier:
            if specifier.operator == ">=":
                floors[requirement.name] = Version(specifier.version)
    return floors


def mismatches(floors: dict[str, Version]) -> list[str]:
    """One line per declared floor this environment does not have installed exactly."""
    problems = []
    for name, floor in sorted(floors.items()):
        try:
            installed = Version(version(name))
        except PackageNotFoundError:
            problems.append(f"{name}: not installed (floor {floor})")
            continue
        if installed != floor:
            problems.append(
                f"{name}: {installed} installed, {floor} declared; raise the floor to "
                f"{installed} in pyproject.toml, or find what lifts it"
            )
    return problems


def main() -> int:
    floors = declared_floors(PYPROJECT)
    problems = mismatches(floors)
    for problem in problems:
        print(f"check_floors: {problem}", file=sys.stderr)
    if not problems:
        tested = ", ".join(f"{name}=={floor}" for name, floor in sorted(floors.items()))
        print(f"check_floors: every declared floor is installed: {tested}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

"""The maps a contributor reads stay true: the module map, the private-API page, the floors.

Each is a table or a sentence someone wrote by hand; these tests read it and hold it against
the package, so a module, a seam function or a floor that changes without its map fails here.
"""

from __future__ import annotations

import ast
import gc
import re
import tomllib
from pathlib import Path

import dagster_dataframely as dd
from dagster_dataframely import _upstream

ROOT = Path(__file__).resolve().parents[1]
SRC = Path(dd.__file__).resolve().parent


def _table_column(text: str, heading: str, column: int) -> list[str]:
    """The backticked names in one column of the first table under `heading`."""
    section = text.split(heading, 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    cells = []
    for row in rows[2:]:  # skip the header and its rule
        if not row.startswith("|"):
            break
        cell = row.replace("\\|", "\x00").split("|")[column + 1]
        cells.extend(re.findall(r"`([^`]+)`", cell))
    return cells


def test_the_module_map_has_one_row_per_module() -> None:
    listed = _table_column(
        (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8"), "## Module map", 0
    )
    modules = sorted(path.relative_to(SRC).as_posix() for path in SRC.rglob("*.py"))
    assert sorted(listed) == modules, (
        f"CONTRIBUTING.md's module map: missing {sorted(set(modules) - set(listed))}, "
        f"stale {sorted(set(listed) - set(modules))}"
    )
    assert len(listed) == len(set(listed)), "a module has two rows"


def test_the_private_api_page_has_one_row_per_seam_name() -> None:
    page = (ROOT / "docs" / "upstream-private-apis.md").read_text(encoding="utf-8")
    listed = set(_table_column(page, "## The accesses", 1))
    missing = sorted(set(_upstream.__all__) - listed)
    assert not missing, f"docs/upstream-private-apis.md has no row for {missing}"
    stale = sorted(listed - set(_upstream.__all__))
    assert not stale, f"docs/upstream-private-apis.md lists names _upstream lacks: {stale}"


def test_every_private_api_row_names_a_real_characterization_test() -> None:
    page = (ROOT / "docs" / "upstream-private-apis.md").read_text(encoding="utf-8")
    named = set(_table_column(page, "## The accesses", 4))
    defined = set()
    sources = (ROOT / "tests" / "test_upstream.py", *ROOT.glob("integration_tests/*upstream*.py"))
    # CPython 3.11.7's `ast.parse` fails ("AST constructor recursion depth mismatch") when a
    # garbage collection runs a finalizer mid-parse, such as a Dagster instance an earlier test
    # left behind: collect them first.
    gc.collect()
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                defined.add(node.name)
    named_tests = {name.split("::")[0] for name in named if name.startswith(("test_", "Test"))}
    assert named_tests, "the page names no test"
    assert named_tests <= defined, sorted(named_tests - defined)


def _floors() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    floors = {}
    for requirement in project["dependencies"]:
        name, _, version = requirement.partition(">=")
        floors[name.strip()] = version.strip()
    return floors


def _as_release(version: str) -> str:
    """`3.1` as `3.1.0`, so a floor and the text quoting it compare as one release."""
    parts = version.split(".")
    return ".".join(parts + ["0"] * (3 - len(parts)))


def test_the_floors_quoted_beside_the_seam_are_the_declared_ones() -> None:
    floors = _floors()
    expected = (_as_release(floors["dagster"]), _as_release(floors["dataframely"]))
    quoted = {
        "_upstream.py": re.search(
            r"declared\s+floors, Dagster ([\d.]+) and Dataframely ([\d.]+)", _upstream.__doc__ or ""
        ),
        "docs/upstream-private-apis.md": re.search(
            r"declared floors \(Dagster ([\d.]+), Dataframely ([\d.]+)\)",
            (ROOT / "docs" / "upstream-private-apis.md").read_text(encoding="utf-8"),
        ),
    }
    for where, found in quoted.items():
        assert found is not None, f"{where} no longer quotes the declared floors"
        assert (found[1], found[2]) == expected, f"{where} quotes {found.groups()}, not {expected}"


def test_no_two_modules_share_a_name() -> None:
    """One file name per module in the package: a name in a traceback or a review is one module."""
    by_name: dict[str, list[str]] = {}
    for path in SRC.rglob("*.py"):
        if path.name != "__init__.py":
            by_name.setdefault(path.name, []).append(path.relative_to(SRC).as_posix())
    shared = {name: sorted(paths) for name, paths in by_name.items() if len(paths) > 1}
    assert not shared, f"modules sharing a name: {shared}"


def test_every_path_a_recipe_lists_exists() -> None:
    """The recipes name the files an extension touches; a moved or renamed one fails here."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    recipes = text.split("\n## Recipes\n", 1)[1].split("\n## ", 1)[0]
    paths = [p for p in re.findall(r"`([^`\s]+)`", recipes) if "/" in p or p.endswith(".md")]
    assert paths, "the recipes name no file"
    assert "src/dagster_dataframely/_model/setting_model.py" in paths
    assert "src/dagster_dataframely/_store/manager_kinds/kind_choice.py" in paths
    missing = [path for path in paths if not (ROOT / path).exists()]
    assert not missing, f"CONTRIBUTING.md's recipes name files that do not exist: {missing}"


def test_every_public_function_of_the_seam_is_in_its_all() -> None:
    """A function `_upstream` defines without `_` is a seam name, so its row and its test are
    required: `__all__` is what the two checks above read."""
    tree = ast.parse(
        (ROOT / "src" / "dagster_dataframely" / "_upstream.py").read_text(encoding="utf-8")
    )
    defined = {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_")
    }
    missing = sorted(defined - set(_upstream.__all__))
    assert not missing, f"_upstream defines {missing} outside its __all__"

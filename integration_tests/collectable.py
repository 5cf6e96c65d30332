"""Which integration test modules this environment can import, and what the others lack.

The suite runs in environments without some IO managers: `make test-newest` runs on polars 2,
where `dagster-polars` and `dagster-duckdb-polars` cannot read, so it installs neither. A test
module (or a directory whose `conftest.py`) that imports a package the environment lacks is not
collected, and pytest's summary names it with the missing packages, so a missing manager never
looks like a passing test. Nothing is skipped at run time: a module is either collected whole or
named as not collected.

The imports are read from the source (never executed), following the repository's own modules
(`from .support import ...`, `from dagster_dataframely_demo import definitions`), so a test that
reaches a manager through the demo code location counts as needing it. Imports inside a function
are not counted: they run only when it is called (`conftest.py` imports `duckdb` in its DuckDB
readers, which only the DuckDB tests call).
"""

import ast
import importlib.util
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent


def missing_packages(module: Path) -> list[str]:
    """The top-level packages `module` imports, directly or through the repository's own
    modules, that are not installed here; sorted, empty when it can be imported."""
    missing: set[str] = set()
    seen: set[Path] = set()
    pending = [module.resolve()]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        for name, local in _imports(current):
            if local is not None:
                pending.append(local)
            elif not _installed(name):
                missing.add(name)
    return sorted(missing)


# NOTE: every test module's walk reaches the conftest and the whole package's source; looking
# each import up again and resolving each path on every walk cost a worker 2 s of CPU.
@cache
def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


@cache
def _imports(module: Path) -> list[tuple[str, Path | None]]:
    """Each import of `module` as (top-level package, the repository file it reads, if any)."""
    found: list[tuple[str, Path | None]] = []
    for node in _outside_functions(ast.parse(module.read_text(), filename=str(module))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.extend(_absolute(alias.name.split(".")))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            found.extend(_absolute(parts, [alias.name for alias in node.names]))
        elif isinstance(node, ast.ImportFrom):
            base = module.parent
            for _ in range(node.level - 1):
                base = base.parent
            parts = node.module.split(".") if node.module else []
            names = [alias.name for alias in node.names]
            found.extend(("", file) for file in _local_files(base, parts, names))
    return [(name, None if local is None else local.resolve()) for name, local in found]


def _outside_functions(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of `tree` that runs on import: all but the bodies of functions and of
    `if TYPE_CHECKING:` blocks."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for node in child.orelse:
                yield node
                yield from _outside_functions(node)
        elif not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield child
            yield from _outside_functions(child)


def _is_type_checking(test: ast.expr) -> bool:
    """Whether an `if` tests `TYPE_CHECKING` (or `typing.TYPE_CHECKING`), false when run."""
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return name == "TYPE_CHECKING"


def _absolute(parts: list[str], names: Sequence[str] = ()) -> list[tuple[str, Path | None]]:
    """An absolute import: the repository's files it reads, or the installed package's name."""
    spec = importlib.util.find_spec(parts[0])
    locations = list(spec.submodule_search_locations or []) if spec else []
    if spec is not None and spec.origin and not locations:
        locations = [str(Path(spec.origin).parent)]
    inside = [Path(place) for place in locations if _in_repository(Path(place))]
    if not inside:
        return [(parts[0], None)]
    return [("", file) for file in _local_files(inside[0].parent, parts, names)]


def _local_files(base: Path, parts: list[str], names: Sequence[str]) -> list[Path]:
    """The source files `from <base>/<parts> import <names>` reads: the module or package, and
    each name that is itself a module."""
    target = base.joinpath(*parts)
    files = [target / "__init__.py", target.with_suffix(".py")] if parts else []
    files += [target / f"{name}.py" for name in names]
    files += [target / name / "__init__.py" for name in names]
    return [file for file in files if file.is_file()]


def _in_repository(path: Path) -> bool:
    """Whether `path` is the repository's own source, not an installed package in a venv."""
    resolved = path.resolve()
    return resolved.is_relative_to(REPOSITORY) and not any(
        part.startswith(".venv") for part in resolved.relative_to(REPOSITORY).parts
    )

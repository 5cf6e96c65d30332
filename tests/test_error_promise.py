"""The error promise: every error the package raises itself is one of `dd.errors`.

"Catch `DagsterDataframelyError` to catch every error of the package" holds only if nothing in
`src/` raises a Dagster or builtin class of its own accord. This scans every `raise` in the
package: a raise of a class not defined in `dagster_dataframely.errors` fails here unless the
spec names that very class for that place, and the errors page lists those places.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import typing
from pathlib import Path

import dagster_dataframely as dd

SRC = Path(dd.__file__).resolve().parent
ERRORS_PAGE = SRC.parents[1] / "docs" / "reference" / "errors.md"

PACKAGE_ERRORS = frozenset(dd.errors.__all__)

SPEC_PINNED = {
    ("_run/returned.py", "unwrap", "DagsterInvariantViolationError"): (
        "a dd.asset function that returns something else"
    ),
    ("_run/validation.py", "validation_results", "DagsterInvariantViolationError"): (
        "a validation_results frame that is not a Polars frame"
    ),
    ("_declare/quarantine_spec.py", "quarantine_spec", "DagsterInvariantViolationError"): (
        "quarantine_spec given a definition and partitions_def"
    ),
    ("_store/delegating.py", "delegating_writer", "DagsterInvalidPropertyError"): (
        "delegating_writer in a direct invocation"
    ),
}
"""Where the spec names Dagster's own class, which stays: (module, function, class) -> when."""

TYPED_FACTORIES = {
    ("_run/emit/emit.py", "emit_as", "error"): ("_run.emit.emit", "Layout", "error"),
}
"""A raise of what a method returns, (module, function, method) -> that method's owner: the scan
cannot see the class, so the method's return annotation must name a package error."""


def _raises() -> list[tuple[str, str, str, int]]:
    """Every `raise <Class>(...)` in the package: (module, enclosing function, class, line)."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = path.relative_to(SRC).as_posix()
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef):
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.Raise) or node.exc is None:
                    continue
                raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(raised, ast.Attribute):
                    found.append((module, function.name, raised.attr, node.lineno))
                elif isinstance(raised, ast.Name) and isinstance(node.exc, ast.Call):
                    found.append((module, function.name, raised.id, node.lineno))
    return found


def test_the_scan_finds_the_raises() -> None:
    """A scan that found nothing would pass whatever the package raised."""
    raised = {name for _, _, name, _ in _raises()}
    assert {
        "PartitionRangeError",
        "InvalidSettingError",
        "DagsterInvariantViolationError",
    } <= raised


def test_a_raised_factory_is_typed_to_return_a_package_error() -> None:
    """Where an error comes from a method (a layout chooses it), its annotation is the promise."""
    for module_name, owner, method in TYPED_FACTORIES.values():
        module = importlib.import_module(f"dagster_dataframely.{module_name}")
        returned = typing.get_type_hints(getattr(getattr(module, owner), method))["return"]
        assert issubclass(returned, dd.errors.DagsterDataframelyError), (owner, method, returned)
    assert set(TYPED_FACTORIES) <= {(m, f, n) for m, f, n, _ in _raises()}


def _typed_to_return_a_package_error(module: str, name: str) -> bool:
    """Whether `name`, seen from `module`, is a function whose return annotation is a package
    error: `raise mismatch(...)` raises what the factory returns, and its annotation says what."""
    imported = importlib.import_module("dagster_dataframely." + module[:-3].replace("/", "."))
    factory = getattr(imported, name, None)
    if not inspect.isfunction(factory):
        return False
    returned = typing.get_type_hints(factory).get("return")
    return isinstance(returned, type) and issubclass(returned, dd.errors.DagsterDataframelyError)


def test_every_raise_is_a_package_error_or_one_the_spec_names() -> None:
    foreign = [
        f"{module}:{line} {function} raises {name}"
        for module, function, name, line in _raises()
        if name not in PACKAGE_ERRORS
        and (module, function, name) not in SPEC_PINNED
        and (module, function, name) not in TYPED_FACTORIES
        and not _typed_to_return_a_package_error(module, name)
    ]
    assert not foreign, "raise a dagster_dataframely.errors class instead:\n" + "\n".join(foreign)


def test_every_spec_pinned_raise_is_still_there() -> None:
    """The list names real places: one that no longer raises must go from the list and page."""
    places = {(module, function, name) for module, function, name, _ in _raises()}
    assert set(SPEC_PINNED) <= places, sorted(set(SPEC_PINNED) - places)


def test_the_errors_page_says_where_dagsters_own_class_is_raised() -> None:
    page = ERRORS_PAGE.read_text(encoding="utf-8")
    for when in SPEC_PINNED.values():
        assert when in page, f"docs/reference/errors.md does not say: {when}"

"""No message and no public docstring points into the repository, which an installed wheel lacks.

A user who installed the package has no `docs/quality-policy.md` to open: messages, check
descriptions, scaffolded YAML and the docstrings `help()` shows name a documentation page by its
title instead. Private docstrings (notes for who works on the package) may cite the repository.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidThresholdError

SRC = Path(dd.__file__).resolve().parent

REPOSITORY_PATH = re.compile(
    r"\b(?:docs|tests|integration_tests|examples|benchmarks|scripts|src)/[\w./-]*"
    r"|\b[\w-]+\.md\b|\bCONTRIBUTING\b"
)
"""A path of the repository (`docs/settings.md`, `tests/...`), or a Markdown file's name."""


def _docstring_nodes(tree: ast.Module) -> set[int]:
    """The `id` of every docstring's constant: a module's, class's or function's first string."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
        # An attribute's docstring: a string statement right after an assignment.
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for before, statement in itertools.pairwise(body):
                if (
                    isinstance(before, ast.Assign | ast.AnnAssign)
                    and isinstance(statement, ast.Expr)
                    and isinstance(statement.value, ast.Constant)
                ):
                    found.add(id(statement.value))
    return found


def _texts() -> Iterator[tuple[str, int, str]]:
    """Every string the package's code builds (not a docstring): (module, line, text)."""
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = _docstring_nodes(tree)
        module = path.relative_to(SRC).as_posix()
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docstrings
            ):
                yield module, node.lineno, node.value


def _public_docstrings() -> Iterator[tuple[str, str]]:
    """The docstring of every public name and of its public members: what `help()` shows."""
    for prefix, module in (
        ("dd", dd),
        ("dd.wiring", dd.wiring),
        ("dd.testing", dd.testing),
        ("dd.errors", dd.errors),
    ):
        yield prefix, inspect.getdoc(module) or ""
        for name in module.__all__:
            value = getattr(module, name)
            yield f"{prefix}.{name}", inspect.getdoc(value) or ""
            if isinstance(value, type):
                for member, attribute in vars(value).items():
                    if not member.startswith("_"):
                        yield f"{prefix}.{name}.{member}", inspect.getdoc(attribute) or ""


def test_the_scans_see_what_they_check() -> None:
    """A scan that found no text would pass whatever the package says."""
    texts = [text for _, _, text in _texts()]
    assert any("is not a bound this package can use" in text for text in texts)
    # Private docstrings are left out: `_upstream`'s names its characterization tests.
    assert not any("tests/test_upstream.py" in text for text in texts)
    names = dict(_public_docstrings())
    assert "Parameters" in names["dd.quarantine_spec"]
    assert "fails_run" in names["dd.Threshold.describe"]


def test_no_message_names_a_path_of_the_repository() -> None:
    named = [
        f"{module}:{line}: {match.group()}"
        for module, line, text in _texts()
        for match in REPOSITORY_PATH.finditer(text)
    ]
    assert named == []


def test_no_public_docstring_names_a_path_of_the_repository() -> None:
    named = [
        f"{name}: {match.group()}"
        for name, doc in _public_docstrings()
        for match in REPOSITORY_PATH.finditer(doc)
    ]
    assert named == []


@pytest.mark.parametrize("value", [1.5, -1])
def test_a_threshold_error_names_the_quality_policy_page_by_its_title(value: float) -> None:
    with pytest.raises(InvalidThresholdError) as refused:
        dd.Threshold(warn_above=value)
    problem = refused.value.problem
    assert str(refused.value) == (
        f"`warn_above={value!r}` is not a bound this package can use: {problem}. An int counts "
        "rows (10 means ten rows), a float is a fraction of the rows between 0 and 1 (0.05 "
        'means 5%); see the documentation\'s "Quality policy" page.'
    )

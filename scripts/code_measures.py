"""Print the package's size and shape: lines by kind, modules per folder, imports between folders.

Figures for a change that should leave the package smaller and its folders layered (run it
before and after, on the same interpreter):

    .venv/bin/python scripts/code_measures.py [src/dagster_dataframely]

Lines are counted from the tokens: a docstring is a string statement at the top of a module,
class or function; a comment is a `#` token. "Imports back up" counts, for each folder, the
imports between its sub-folders (or top-level modules) that form a cycle: a pair of siblings
that import each other, in either direction, counted once per import.
"""

from __future__ import annotations

import argparse
import ast
import io
import itertools
import tokenize
from collections import Counter, defaultdict
from pathlib import Path


def _docstring_lines(tree: ast.Module) -> tuple[set[int], set[int]]:
    """The lines of every docstring, and those of private functions' docstrings."""
    every: set[int] = set()
    private: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        body = node.body
        if not body or not isinstance(body[0], ast.Expr):
            continue
        value = body[0].value
        if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
            continue
        span = set(range(body[0].lineno, (body[0].end_lineno or body[0].lineno) + 1))
        every |= span
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("_")
            and not node.name.startswith("__")
        ):
            private |= span
    # Attribute docstrings (a string statement after an assignment) count as docstrings too.
    for node in ast.walk(tree):
        for field in ("body", "orelse"):
            statements = getattr(node, field, None)
            if not isinstance(statements, list):
                continue
            for before, after in itertools.pairwise(statements):
                if (
                    isinstance(before, ast.Assign | ast.AnnAssign)
                    and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)
                ):
                    every |= set(range(after.lineno, (after.end_lineno or after.lineno) + 1))
    return every, private


def _measure(path: Path) -> Counter[str]:
    text = path.read_text()
    lines = text.splitlines()
    docstrings, private = _docstring_lines(ast.parse(text))
    comments: set[int] = set()
    notes = 0
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            comments.add(token.start[0])
            notes += token.string.lstrip("# ").startswith("NOTE:")
    counts: Counter[str] = Counter(lines=len(lines), notes=notes)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            counts["blank"] += 1
        elif number in docstrings:
            counts["docstring"] += 1
            counts["private docstring"] += number in private
        elif number in comments and line.strip().startswith("#"):
            counts["comment"] += 1
        else:
            counts["code"] += 1
    return counts


def _imports(path: Path, package: Path) -> list[str]:
    """The package modules `path` imports, as paths relative to the package (no suffix)."""
    tree = ast.parse(path.read_text())
    here = path.relative_to(package).with_suffix("").parts
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(here[: len(here) - node.level])
                parts = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == package.name:
                parts = node.module.split(".")[1:]
            else:
                continue
            found.append("/".join(parts))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == package.name:
                    found.append("/".join(alias.name.split(".")[1:]))
    return found


def _folder_of(module: str, folder: str) -> str | None:
    """The child of `folder` that `module` lies in (a sub-folder or a module), or None."""
    prefix = f"{folder}/" if folder else ""
    if not module.startswith(prefix):
        return None
    rest = module[len(prefix) :].split("/")
    return rest[0] if rest and rest[0] else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?", default="src/dagster_dataframely", type=Path)
    package = parser.parse_args().package.resolve()
    files = sorted(package.rglob("*.py"))
    total: Counter[str] = Counter()
    per_folder: Counter[str] = Counter()
    code_per_folder: Counter[str] = Counter()
    for path in files:
        measured = _measure(path)
        total += measured
        per_folder[str(path.parent.relative_to(package.parent))] += 1
        code_per_folder[str(path.parent.relative_to(package.parent))] += measured["code"]
    print(f"package: {package.name} ({len(files)} modules)")
    for kind in ("lines", "code", "docstring", "private docstring", "comment", "blank", "notes"):
        label = {"notes": "NOTE: comments", "lines": "all lines"}.get(kind, f"{kind} lines")
        print(f"  {label:<24} {total[kind]:>6}")
    print("modules and code lines per folder:")
    for folder, count in sorted(per_folder.items()):
        print(f"  {folder:<40} {count:>3} {code_per_folder[folder]:>6}")
    edges: dict[str, Counter[tuple[str, str]]] = defaultdict(Counter)
    for path in files:
        module = "/".join(path.relative_to(package).with_suffix("").parts)
        for imported in _imports(path, package):
            # Every folder that holds both ends, the deepest first, counts the edge once.
            parts = module.split("/")
            for depth in range(len(parts) - 1, -1, -1):
                folder = "/".join(parts[:depth])
                source, target = _folder_of(module, folder), _folder_of(imported, folder)
                if source and target and source != target:
                    edges[folder][(source, target)] += 1
                    break
    print("imports in a cycle between siblings, per folder:")
    for folder in sorted(edges):
        pairs = edges[folder]
        cyclic = sum(n for (a, b), n in pairs.items() if (b, a) in pairs)
        print(f"  {folder or package.name + '/':<40} {cyclic:>3} of {sum(pairs.values())}")


if __name__ == "__main__":
    main()

"""The typed examples of the docs pass the type checkers a user runs, both in strict mode.

A reader copies a typed example into a project checked by `mypy --strict` or by pyright with
`"typeCheckingMode": "strict"`; the page says both accept it. Each example is written to a
module of its own in one temporary directory, and each checker runs once over all of them,
outside the repository, so no setting of this project's reaches it:

    python -m mypy --strict <modules>
    python -m pyright --pythonpath <python> -p <directory>   # pyrightconfig.json: strict

A wrong module beside them marks each line both checkers must refuse, so a checker that accepts
anything (an `Any` where the asset's type should be) fails the test. Both run offline: Node.js
comes as a wheel (`pyright[nodejs]`), and pyright's wheel carries the checker itself.
"""

import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import mypy  # noqa: F401  (a checker under test: without it this module is not collected)
import pyright  # noqa: F401  (the other one)
import pytest

from .test_docs_examples import ROOT, Example, python_blocks

TYPED_SECTIONS: Sequence[tuple[str, str | None]] = (
    ("docs/guide/declaring-an-asset.md", "## The schema from the return hint"),
    ("docs/guide/declaring-an-asset.md", "## Hinted inputs"),
    ("docs/guide/coming-from.md", None),
)
"""The typed examples: a page's section by its heading, or `None` for all of the page."""

PYRIGHT_CONFIG = {"typeCheckingMode": "strict"}
"""The pyright settings a strict project has; the page names the same."""

MYPY = (sys.executable, "-m", "mypy", "--strict")
PYRIGHT = (sys.executable, "-m", "pyright", "--pythonpath", sys.executable)

REFUSED = "# refused"
WRONG = f"""\
from typing import Annotated

import dataframely as dy
import polars as pl

import dagster_dataframely as dd


class Orders(dy.Schema):
    order_id = dy.String(primary_key=True)
    amount = dy.Float64(min=0.0)


@dd.asset(quarantine=True)
def orders(raw_orders: pl.DataFrame) -> dy.DataFrame[Orders]:
    return raw_orders  {REFUSED}: a plain frame is not a dy.DataFrame[Orders]


@dd.asset  {REFUSED}: a function returning no frame
def order_count(raw_orders: pl.DataFrame) -> int:
    return raw_orders.height


@dd.asset(quarantin=True)  {REFUSED}: a misspelt setting
def web_orders(raw_orders: pl.DataFrame) -> Annotated[pl.DataFrame, Orders]:
    return raw_orders


@dd.asset(Orders, max_failure_samples="5")  {REFUSED}: a setting of the wrong type
def app_orders(raw_orders: pl.DataFrame) -> pl.DataFrame:
    return raw_orders


definition: int = orders  {REFUSED}: the decorated name is a dg.AssetsDefinition


def describe(frame) -> str:  {REFUSED} in strict mode only: a parameter without a type
    return "orders"
"""
"""Typed mistakes, each on a line marked `# refused`: exactly those lines must be refused."""


def section(text: str, heading: str | None) -> str:
    """The text under `heading`, up to the next heading of its level or above; all if `None`."""
    if heading is None:
        return text
    level = len(heading) - len(heading.lstrip("#"))
    start = text.index(f"\n{heading}\n")
    after = re.compile(rf"^#{{1,{level}}} ", re.MULTILINE).search(text, start + len(heading) + 2)
    return text[start : after.start() if after else None]


def typed_examples() -> list[Example]:
    """Every python block of the typed sections, where a reader finds it."""
    examples = []
    for page, heading in TYPED_SECTIONS:
        text = (ROOT / page).read_text(encoding="utf-8")
        start = text.index(f"\n{heading}\n") if heading is not None else 0
        offset = text.count("\n", 0, start)
        for example in python_blocks(section(text, heading), page):
            line = int(example.where.rsplit(":", 1)[1]) + offset
            examples.append(Example(example.source, f"{page}:{line}"))
    return examples


Diagnostics = dict[str, set[int]]
"""The lines each checker refused, by module name."""


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Example]]:
    """One module per typed example, and `wrong.py`, in a directory outside the repository."""
    directory = tmp_path_factory.mktemp("typed-examples")
    written = {}
    for index, example in enumerate(typed_examples()):
        name = f"example_{index}.py"
        (directory / name).write_text(example.source, encoding="utf-8")
        written[name] = example
    (directory / "wrong.py").write_text(WRONG, encoding="utf-8")
    (directory / "pyrightconfig.json").write_text(json.dumps(PYRIGHT_CONFIG), encoding="utf-8")
    return directory, written


@pytest.fixture(scope="module")
def mypy_refused(modules: tuple[Path, dict[str, Example]]) -> tuple[Diagnostics, str]:
    directory, written = modules
    cache = str(directory / ".mypy_cache")
    checked = subprocess.run(
        [*MYPY, "--no-error-summary", "--cache-dir", cache, *sorted(written), "wrong.py"],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    refused: Diagnostics = {}
    for name, line in re.findall(r"^(\w+\.py):(\d+): error:", checked.stdout, re.MULTILINE):
        refused.setdefault(name, set()).add(int(line))
    assert refused or checked.returncode == 0, checked.stdout + checked.stderr
    return refused, checked.stdout


@pytest.fixture(scope="module")
def pyright_refused(modules: tuple[Path, dict[str, Example]]) -> tuple[Diagnostics, str]:
    directory, _ = modules
    checked = subprocess.run(
        [*PYRIGHT, "--outputjson", "--project", str(directory)],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    report = json.loads(checked.stdout)
    refused: Diagnostics = {}
    shown = []
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] != "error":
            continue
        line = diagnostic["range"]["start"]["line"] + 1  # pyright counts lines from 0
        name = Path(diagnostic["file"]).name
        refused.setdefault(name, set()).add(line)
        shown.append(f"{name}:{line}: {diagnostic['message']}")
    assert report["summary"]["filesAnalyzed"] >= 2, checked.stdout
    return refused, "\n".join(shown)


def test_the_typed_sections_have_the_forms_a_reader_writes() -> None:
    """The collector finds the examples, the bare and the called decorator among them."""
    sources = "\n".join(example.source for example in typed_examples())
    assert {example.where.split(":")[0] for example in typed_examples()} == {
        page for page, _ in TYPED_SECTIONS
    }
    assert "@dd.asset\ndef " in sources
    assert "@dd.asset(quarantine=True)\ndef " in sources
    assert "@dd.collection_asset\ndef " in sources
    assert "-> dy.DataFrame[" in sources
    assert "-> Annotated[pl.DataFrame, " in sources
    assert "Orders.filter(" in sources
    assert ".validate(" in sources
    assert "(orders: dy.LazyFrame[" in sources  # a hinted input
    assert "from __future__ import annotations" in sources  # every annotation a string
    assert "context: dg.AssetExecutionContext" in sources  # annotated, as strict mode asks
    assert 'TypeAliasType("OrdersFrame"' in sources  # a hint named through an alias


@pytest.mark.parametrize("checker", ["mypy --strict", "pyright strict"])
def test_a_strict_checker_accepts_every_typed_example(
    checker: str,
    modules: tuple[Path, dict[str, Example]],
    mypy_refused: tuple[Diagnostics, str],
    pyright_refused: tuple[Diagnostics, str],
) -> None:
    _, written = modules
    refused, output = mypy_refused if checker.startswith("mypy") else pyright_refused
    failing = [f"{written[name].where}" for name in written if name in refused]
    assert not failing, f"{checker} refuses the examples at {failing}:\n{output}"


@pytest.mark.parametrize("checker", ["mypy --strict", "pyright strict"])
def test_a_strict_checker_refuses_each_typed_mistake(
    checker: str,
    mypy_refused: tuple[Diagnostics, str],
    pyright_refused: tuple[Diagnostics, str],
) -> None:
    refused, output = mypy_refused if checker.startswith("mypy") else pyright_refused
    marked = {number for number, line in enumerate(WRONG.splitlines(), start=1) if REFUSED in line}
    assert refused.get("wrong.py", set()) == marked, output

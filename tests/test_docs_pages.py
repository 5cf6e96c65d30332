"""The pages on the schema's code version, checks for existing tables and the test helper run.

Each ```python block is written to a file in an empty temporary directory and run there on its
own, by this suite's interpreter, without the package's settings in the environment: a block
that leans on a name it never defines, or on data it did not create, fails here.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("code-version.md", "checks-for-existing-tables.md", "testing-helper.md")
_BLOCK = re.compile(r"^```python[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def _blocks() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{page}:{line}", match.group("body")))
    return found


BLOCKS = _blocks()


def test_every_page_has_examples() -> None:
    assert {where.split(":")[0] for where, _ in BLOCKS} == set(PAGES)


@pytest.mark.parametrize("source", [s for _, s in BLOCKS], ids=[w for w, _ in BLOCKS])
def test_the_example_runs_on_its_own(source: str, tmp_path: Path) -> None:
    (tmp_path / "example.py").write_text(source, encoding="utf-8")
    environment = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("DAGSTER_DATAFRAMELY_") and k != "DAGSTER_HOME"
    }
    completed = subprocess.run(  # the interpreter running this suite
        [sys.executable, "example.py"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert completed.returncode == 0, f"{completed.stderr[-2000:]}\n--- the example ---\n{source}"

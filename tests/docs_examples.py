"""Run a docs page's ```python blocks, each on its own, as a reader would.

Each block is written to a file in an empty temporary directory and run there by this suite's
interpreter, without the package's settings in the environment: a block that leans on a name it
never defines, or on data it did not create, fails. Pages whose examples need a third-party IO
manager are run from `integration_tests/`, so the unit suite imports none.
"""

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
_BLOCK = re.compile(r"^```python[^\n]*\n(?P<body>.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Example:
    """One runnable block and where a reader finds it."""

    source: str
    where: str


def examples(*pages: str) -> list[Example]:
    """Every ```python block of the named pages under `docs/`, in order."""
    found = []
    for page in pages:
        text = (DOCS / page).read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(Example(match.group("body"), f"{page}:{line}"))
    return found


def run_example(example: Example, directory: Path) -> None:
    """Run `example` in `directory` (empty) and fail with its stderr if it fails."""
    (directory / "example.py").write_text(example.source, encoding="utf-8")
    environment = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("DAGSTER_DATAFRAMELY_") and k != "DAGSTER_HOME"
    }
    completed = subprocess.run(  # the interpreter running this suite
        [sys.executable, "example.py"],
        cwd=directory,
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert completed.returncode == 0, (
        f"The example at {example.where} failed on its own:\n{completed.stderr[-2000:]}\n"
        f"--- the example ---\n{example.source}"
    )

"""Every Python example a reader can see runs, on its own, as a reader would run it, twice.

The examples are collected from every ```python block in `docs/**/*.md` and `README.md`, and
from the docstrings of every public name (which the API reference renders). Each one is written
to a file in a fresh temporary directory and run there by the test environment's interpreter,
with nothing else defined: an example that uses a name it never defines, a parameter that was
renamed or an import it forgot fails here, not in a reader's terminal. Anything that is not
meant to run belongs in a ```text or ```bash block.

A reader runs an example again in the same folder, so each one runs a second time there, after
the first: a table it creates, a file it writes or a directory it makes must not fail it.

Every run is a process of its own, forked from a server (`tests/warm_server.py`, one per
test process) that has imported polars, Dataframely, Dagster, dagster-polars and this package: an
example costs its own work, not another start of Python and Dagster (most of the time of
this module before). The server never runs an example, so nothing one example leaves in its
process (a module attribute, an environment variable, a global setting) reaches the next, and
the second run finds what a reader's second run finds: the folder, and nothing of the first
run's process.

It lives in the integration suite because the examples use what a reader's project has: real
IO managers (dagster-polars), a Dagster run, and a local S3 stand-in on 127.0.0.1. So `make
test` and CI run it once, and the unit suite on other Pythons does not repeat it.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import inspect
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.warm_server import SECOND_RUN, WarmServer

import dagster_dataframely as dd

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TIMEOUT_SECONDS = 180

# A fence opens a python block at any indentation (inside an admonition, a list item), and the
# block ends at the first fence of the same indentation.
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```python[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)


@dataclass(frozen=True)
class Example:
    """One runnable block and where a reader finds it."""

    source: str
    where: str


def python_blocks(text: str, where: str) -> list[Example]:
    """Every ```python block of a markdown text or docstring, dedented, with its line number."""
    examples = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        indent = match.group("indent")
        body = "".join(
            row[len(indent) :] if row.startswith(indent) else row
            for row in match.group("body").splitlines(keepends=True)
        )
        examples.append(Example(textwrap.dedent(body), f"{where}:{line}"))
    return examples


def markdown_pages() -> list[Path]:
    """The README and every page of the site."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def public_objects() -> dict[str, object]:
    """Every public name the API reference documents, by its dotted name."""
    modules = {"dagster_dataframely": dd, "dagster_dataframely.wiring": dd.wiring}
    modules["dagster_dataframely.errors"] = dd.errors
    found: dict[str, object] = {}
    for module_name, module in modules.items():
        found[module_name] = module
        for name in module.__all__:
            value = getattr(module, name)
            if not inspect.ismodule(value):
                found[f"{module_name}.{name}"] = value
    return found


def collect() -> list[Example]:
    examples = []
    for page in markdown_pages():
        examples += python_blocks(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
    for name, value in public_objects().items():
        doc = inspect.getdoc(value) if not isinstance(value, str) else None
        if doc:
            examples += python_blocks(doc, f"docstring of {name}")
    return examples


def missing_packages(source: str) -> list[str]:
    """The top-level packages an example imports that this environment lacks, sorted."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return sorted(name for name in names if importlib.util.find_spec(name) is None)


def runnable_here(examples: list[Example]) -> list[Example]:
    """The examples this environment can run, as the rest of the integration suite decides.

    `make test-newest` installs no third-party IO manager (they cannot read on polars 2), so an
    example that imports one is left out there, and named in the warnings summary; it is never
    skipped at run time. `make test` sets DAGSTER_DATAFRAMELY_TEST_COLLECT_ALL, so in the
    development environment every example runs and a missing package fails it.
    """
    if os.environ.get("DAGSTER_DATAFRAMELY_TEST_COLLECT_ALL"):
        return examples
    runnable = []
    for example in examples:
        if missing := missing_packages(example.source):
            warnings.warn(
                f"not collected: the example at {example.where} needs {', '.join(missing)}",
                pytest.PytestCollectionWarning,
                stacklevel=1,
            )
        else:
            runnable.append(example)
    return runnable


EXAMPLES_FOUND = runnable_here(collect())


def _environment() -> dict[str, str]:
    """The caller's environment without the package's settings or a Dagster instance, so an
    example sees the defaults a reader gets; `examples/` is importable, as under `make demo`."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("DAGSTER_DATAFRAMELY_") and key != "DAGSTER_HOME"
    }
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(EXAMPLES), environment.get("PYTHONPATH")])
    )
    environment["DAGSTER_DISABLE_TELEMETRY"] = "1"
    return environment


def test_the_site_has_examples_to_run() -> None:
    """The collector finds the blocks: a fence it cannot read would otherwise pass silently."""
    pages = {example.where.split(":")[0] for example in collect()}
    assert "README.md" in pages
    assert {
        "docs/getting-started.md",
        "docs/checks-for-existing-tables.md",
        "docs/code-version.md",
        "docs/quality-policy.md",
        "docs/testing-helper.md",
        "docs/warning-rules.md",
    } <= pages
    assert len(collect()) >= 30


def test_an_example_needing_an_uninstalled_package_is_named() -> None:
    source = "import dagster_dataframely\nfrom no_such_package_here.sub import x\n"
    assert missing_packages(source) == ["no_such_package_here"]


def test_a_fence_inside_an_admonition_is_collected() -> None:
    text = 'Intro\n\n!!! note\n    ```python\n    print("x")\n    ```\n'
    (example,) = python_blocks(text, "page.md")
    assert example.source == 'print("x")\n'
    assert example.where == "page.md:4"


class ExampleServer:
    """One warm interpreter per test process (`tests/warm_server.py`), a child forked per example.

    Where `os.fork` does not exist, each example is a fresh interpreter running the same code.
    """

    def __init__(self) -> None:
        self._server = WarmServer(_environment, TIMEOUT_SECONDS)

    def run(self, directory: str, output: str) -> int:
        """The exit code of `example.py` run twice in `directory`; -1 if it did not finish."""
        if not hasattr(os, "fork"):
            shutil.copy(SERVER, Path(output) / "run_twice.py")
            with (
                (Path(output) / "stdout").open("w") as out,
                (Path(output) / "stderr").open("w") as err,
            ):
                try:
                    return subprocess.run(
                        [sys.executable, str(Path(output) / "run_twice.py"), "--run-twice"],
                        cwd=directory,
                        env=_environment(),
                        stdout=out,
                        stderr=err,
                        timeout=TIMEOUT_SECONDS,
                        check=False,
                    ).returncode
                except subprocess.TimeoutExpired:
                    return -1
        child = self._server.start(directory, output, _environment())
        try:
            return child.wait(TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait(TIMEOUT_SECONDS)
            return -1

    def stop(self) -> None:
        self._server.stop()


SERVER = ROOT / "tests" / "warm_server.py"
_SERVER = ExampleServer()


@pytest.fixture(scope="module", autouse=True)
def _stop_the_example_server() -> Iterator[None]:
    yield
    _SERVER.stop()


def run_example(example: Example) -> subprocess.CompletedProcess[str]:
    """Run one example as a reader would, twice: its own file, its own empty directory."""
    with (
        tempfile.TemporaryDirectory(prefix="dd-docs-example-") as directory,
        tempfile.TemporaryDirectory(prefix="dd-docs-output-") as output,
    ):
        (Path(directory) / "example.py").write_text(example.source, encoding="utf-8")
        code = _SERVER.run(directory, output)
        stdout = (Path(output) / "stdout").read_text(encoding="utf-8", errors="replace")
        stderr = (Path(output) / "stderr").read_text(encoding="utf-8", errors="replace")
        if code == -1:
            stderr += f"\ndid not finish within {TIMEOUT_SECONDS} s"
        return subprocess.CompletedProcess(example.where, code, stdout, stderr)


# Each example is a process of its own, forked from the example server; `make test` spreads
# them over its worker processes (pytest-xdist), as it does every test.
@pytest.mark.parametrize("example", EXAMPLES_FOUND, ids=lambda example: example.where)
def test_example_runs_on_its_own_twice_in_one_folder(example: Example) -> None:
    completed = run_example(example)
    when = "run again in the same folder" if SECOND_RUN in completed.stderr else "run on its own"
    assert completed.returncode == 0, (
        f"The example at {example.where} failed when {when}:\n"
        f"{completed.stderr[-1500:]}\n--- the example ---\n{example.source}"
    )


def test_an_example_that_leaves_its_folder_changed_fails_the_second_run() -> None:
    """The second run is real: an example that cannot run twice in its folder is caught."""
    creates = 'from pathlib import Path\nPath("made").mkdir()\nprint("ran")\n'

    completed = run_example(Example(creates, "a test"))

    assert completed.returncode != 0
    assert completed.stdout.count("ran") == 1
    assert SECOND_RUN in completed.stderr
    assert "FileExistsError" in completed.stderr


def test_the_second_run_finds_the_folder_and_nothing_of_the_first_process() -> None:
    """As for a reader: the first run's file is there, its environment variable is not."""
    source = (
        "import os\nfrom pathlib import Path\n"
        'assert "DD_EXAMPLE_RAN" not in os.environ\n'
        'os.environ["DD_EXAMPLE_RAN"] = "1"\n'
        'print("found" if Path("note").exists() else "fresh")\n'
        'Path("note").write_text("x")\n'
    )

    completed = run_example(Example(source, "a test"))

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["fresh", "found"]


def test_a_pytest_file_example_runs_its_tests_twice() -> None:
    """An example ending `raise SystemExit(pytest.main(...))` succeeds and is run again."""
    source = 'import sys\nprint("ran")\nraise SystemExit(0)\n'

    completed = run_example(Example(source, "a test"))

    assert completed.returncode == 0
    assert completed.stdout.count("ran") == 2


def test_an_example_leaves_nothing_for_the_next_one() -> None:
    """Examples share the server's imports only: a module attribute, an environment variable or
    a global setting one example leaves is not seen by the next, as in a fresh interpreter."""
    leaves = (
        "import os\nimport polars as pl\nimport dagster_dataframely as dd\n"
        "dd.left_by_an_example = True\n"
        'os.environ["DD_LEFT_BY_AN_EXAMPLE"] = "1"\n'
        "pl.Config.set_tbl_rows(3)\n"
    )
    finds = (
        "import os\nimport polars as pl\nimport dagster_dataframely as dd\n"
        'assert not hasattr(dd, "left_by_an_example")\n'
        'assert "DD_LEFT_BY_AN_EXAMPLE" not in os.environ\n'
        'assert pl.Config.state(if_set=True).get("POLARS_FMT_MAX_ROWS") is None\n'
        'print("fresh")\n'
    )

    assert run_example(Example(leaves, "a test")).returncode == 0
    completed = run_example(Example(finds, "a test"))

    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["fresh", "fresh"]

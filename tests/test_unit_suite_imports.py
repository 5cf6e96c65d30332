"""The unit suite needs no third-party IO manager, so it runs on every polars the package supports.

`make test-newest` runs it on polars 2, where `dagster-polars` and `dagster-duckdb-polars`
cannot read; the tests of those managers live in `integration_tests/`.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent
IO_MANAGER_MODULES = ("dagster_polars", "dagster_duckdb", "dagster_duckdb_polars", "duckdb")

_IMPORT_ALL = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted({name.partition(".")[0] for name in sys.modules})))
"""


def _loaded_by_the_unit_suite() -> set[str]:
    """The top-level packages importing every unit test module loads, in a fresh interpreter."""
    modules = sorted(
        ".".join(("tests", *path.relative_to(TESTS).with_suffix("").parts))
        for path in TESTS.rglob("*.py")
        if path.name != "__init__.py"
    )
    # As pytest imports them: from the repository root, with `examples/` on the path.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "examples")])}
    imported = subprocess.run(
        [sys.executable, "-c", _IMPORT_ALL, *modules],
        cwd=TESTS.parent,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(imported.stdout.splitlines()[-1]))


def test_no_unit_test_module_imports_a_third_party_io_manager_or_the_demo() -> None:
    """The demo is a user of the package, not a fixture: changing it moves no unit test."""
    loaded = _loaded_by_the_unit_suite()
    assert sorted(loaded.intersection(IO_MANAGER_MODULES)) == []
    assert "dagster_dataframely_demo" not in loaded

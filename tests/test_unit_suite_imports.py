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


def test_no_unit_test_module_imports_a_third_party_io_manager() -> None:
    modules = sorted(f"tests.{path.stem}" for path in TESTS.glob("*.py"))
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
    loaded = set(json.loads(imported.stdout.splitlines()[-1]))
    assert sorted(loaded.intersection(IO_MANAGER_MODULES)) == []

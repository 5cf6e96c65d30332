"""The page on checks for existing tables: every example runs.

Its examples store with `PolarsParquetIOManager` and `DuckDBPolarsIOManager`; the imports below
say so, so this module is collected only where both are installed.
"""

from pathlib import Path

import dagster_duckdb_polars
import dagster_polars
import pytest
from tests.docs_examples import Example, examples, run_example

EXAMPLES = examples("checks-for-existing-tables.md")
NEEDS = (dagster_polars, dagster_duckdb_polars)
"""What the examples import, named here so a missing manager keeps this module out."""

pytestmark = pytest.mark.integration


def test_the_page_has_examples() -> None:
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.where)
def test_the_example_runs_on_its_own(example: Example, tmp_path: Path) -> None:
    run_example(example, tmp_path)

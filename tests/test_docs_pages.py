"""The pages on the code version, the test helper, warning rules and quality policy run."""

from pathlib import Path

import pytest

from .docs_examples import Example, examples, run_example

PAGES = ("code-version.md", "testing-helper.md", "warning-rules.md", "quality-policy.md")
EXAMPLES = examples(*PAGES)


def test_every_page_has_examples() -> None:
    assert {e.where.split(":")[0] for e in EXAMPLES} == set(PAGES)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.where)
def test_the_example_runs_on_its_own(example: Example, tmp_path: Path) -> None:
    run_example(example, tmp_path)

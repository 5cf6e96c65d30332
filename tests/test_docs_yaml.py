"""Every YAML block of the docs parses, as a reader's `dg` or dbt would read it first.

The Component's `defs.yaml` examples also run through the real `dg` CLI in `tests/component/`;
dbt's side of "Coming from" has no other test, since dbt is not installed.
"""

import re
from pathlib import Path

import pytest
import yaml

DOCS = Path(__file__).parents[1] / "docs"
BLOCKS = [
    pytest.param(block, id=f"{page.relative_to(DOCS)}#{index}")
    for page in sorted(DOCS.rglob("*.md"))
    for index, block in enumerate(re.findall(r"```ya?ml\n(.*?)```", page.read_text(), re.S))
]


def test_the_docs_have_yaml_blocks() -> None:
    assert any("coming-from" in block.id for block in BLOCKS)  # type: ignore[operator]


@pytest.mark.parametrize("block", BLOCKS)
def test_a_yaml_block_parses_to_a_mapping(block: str) -> None:
    assert isinstance(yaml.safe_load(block), dict)

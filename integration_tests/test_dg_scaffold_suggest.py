"""`dg scaffold defs dagster_dataframely.TableChecksComponent ... --source`: a table without a
schema gets a suggested one and the checks' YAML, through the real `dg` CLI, offline."""

from collections.abc import Iterator
from pathlib import Path

import dagster_dg_cli  # noqa: F401  (the `dg` CLI: without it this module is not collected)
import polars as pl
import pytest
from tests.dg_project import COMPONENT, DG_SERVER, ROOT_MODULE, dg_cli, write_project


@pytest.fixture(scope="module", autouse=True)
def _stop_the_dg_server() -> Iterator[None]:
    yield
    DG_SERVER.stop()


def test_scaffold_from_a_source_writes_the_suggested_schema_and_yaml_that_load(
    tmp_path: Path,
) -> None:
    root = write_project(tmp_path / "scratch", storage=False)
    table = tmp_path / "orders.parquet"
    pl.DataFrame(
        {"order_id": [f"o{index:04d}" for index in range(400)], "amount": [10.0, 3.5] * 200}
    ).write_parquet(table)

    done = dg_cli(
        root,
        "scaffold", "defs", COMPONENT, "orders_checks",
        "--asset", "orders", "--source", str(table), "--name", "Orders",
    )  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    folder = root / "src" / ROOT_MODULE / "defs" / "orders_checks"
    module = (folder / "schema.py").read_text()
    assert "class Orders(dy.Schema):" in module
    assert "from 400 rows of" in module
    assert "primary_key=True" in module
    scaffolded = (folder / "defs.yaml").read_text()
    assert f'dataframely_schema: "{ROOT_MODULE}.defs.orders_checks.schema:Orders"' in scaffolded
    assert '- "orders"' in scaffolded
    listed = dg_cli(root, "list", "defs", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "orders:dy_rule__primary_key" in listed.stdout
    assert "orders:dy_rule__amount__min" in listed.stdout


def test_scaffold_from_a_source_that_cannot_be_read_fails_naming_it(tmp_path: Path) -> None:
    root = write_project(tmp_path / "scratch", storage=False)
    missing = tmp_path / "missing.parquet"

    done = dg_cli(root, "scaffold", "defs", COMPONENT, "orders_checks", "--source", str(missing))

    assert done.returncode != 0
    assert f"{str(missing)!r}: no such file or folder" in done.stdout + done.stderr
    assert not (root / "src" / ROOT_MODULE / "defs" / "orders_checks" / "defs.yaml").exists()

"""A scratch `dg` project, written file by file as `dg` lays one out, for the Component's tests.

It has what a team adopting the Component already has: a plain `@dg.asset` stored as parquet
by `PolarsParquetIOManager`, a DuckDB table that SQL writes outside Dagster (declared as a
`dg.AssetSpec` read by `DuckDBPolarsIOManager`, with a job that runs only its checks), and a
schema module. Nothing is installed: the project's `src/` goes on `PYTHONPATH`, so the tests
need no package index.
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.warm_server import WarmServer

ROOT_MODULE = "scratch"
COMPONENT = "dagster_dataframely.TableChecksComponent"
LAUNCH_JOB = "orders_and_sql_checks"
"""Materializes `orders` (and so runs its checks) and runs the checks of the table SQL wrote."""

FILES = {
    "pyproject.toml": f"""
        [project]
        name = "{ROOT_MODULE}"
        version = "0.1.0"

        [tool.dg]
        directory_type = "project"

        [tool.dg.project]
        root_module = "{ROOT_MODULE}"

        [tool.dg.cli.telemetry]
        enabled = false
        """,
    f"src/{ROOT_MODULE}/__init__.py": "",
    f"src/{ROOT_MODULE}/definitions.py": """
        from pathlib import Path

        import dagster as dg


        @dg.definitions
        def defs() -> dg.Definitions:
            return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
        """,
    f"src/{ROOT_MODULE}/schemas.py": """
        import dataframely as dy


        class Orders(dy.Schema):
            order_id = dy.String(primary_key=True)
            amount = dy.Float64(min=0.0)
        """,
    f"src/{ROOT_MODULE}/defs/__init__.py": "",
    f"src/{ROOT_MODULE}/defs/orders.py": """
        import dagster as dg
        import polars as pl


        @dg.asset
        def orders() -> pl.DataFrame:
            return pl.DataFrame({"order_id": ["a", "b", "c"], "amount": [10.0, -1.0, 3.5]})
        """,
}
"""The project without storage: enough to load it, which is where a bad YAML value fails."""

STORAGE_FILES = {
    f"src/{ROOT_MODULE}/defs/sql_orders.py": f"""
        import dagster as dg

        # SQL writes this table outside Dagster, so a job selects its checks, not the asset.
        sql_orders = dg.AssetSpec(["analytics", "orders"]).with_io_manager_key("warehouse")
        launch = dg.define_asset_job(
            "{LAUNCH_JOB}",
            selection=dg.AssetSelection.assets("orders")
            | dg.AssetSelection.checks_for_assets(sql_orders.key),
        )
        """,
    f"src/{ROOT_MODULE}/defs/resources.py": """
        from pathlib import Path

        import dagster as dg
        from dagster_duckdb_polars import DuckDBPolarsIOManager
        from dagster_polars import PolarsParquetIOManager

        PROJECT = Path(__file__).resolve().parents[3]


        @dg.definitions
        def resources() -> dg.Definitions:
            return dg.Definitions(
                resources={
                    "io_manager": PolarsParquetIOManager(base_dir=str(PROJECT / "warehouse")),
                    "warehouse": DuckDBPolarsIOManager(database=str(PROJECT / "warehouse.duckdb")),
                }
            )
        """,
}


def write_project(root: Path, *, storage: bool = True) -> Path:
    """Write the project under `root`; with `storage`, its IO managers and the DuckDB table SQL
    wrote (which need `dagster-polars`, `dagster-duckdb-polars` and `duckdb`). Returns `root`."""
    for name, text in {**FILES, **(STORAGE_FILES if storage else {})}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    if not storage:
        return root
    import duckdb

    with duckdb.connect(str(root / "warehouse.duckdb")) as connection:
        connection.execute(
            """
            create schema analytics;
            create table analytics.orders (order_id varchar, amount double);
            insert into analytics.orders values ('a', 10.0), ('b', -1.0), ('c', -2.0);
            """
        )
    return root


def write_component(root: Path, name: str, yaml: str) -> Path:
    """A component's `defs.yaml` under the project's defs folder; returns its path."""
    path = root / "src" / ROOT_MODULE / "defs" / name / "defs.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(yaml).lstrip())
    return path


def _dg_environment() -> dict[str, str]:
    """What every `dg` command runs with: this interpreter's tools, no telemetry, no colour."""
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "AWS_EC2_METADATA_DISABLED": "true",
        "NO_COLOR": "1",
        "COLUMNS": "200",
    }


def project_environment(root: Path) -> dict[str, str]:
    """Where `dg` runs: this interpreter's tools, the project's source, no telemetry."""
    home = root / "dagster_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    return {**_dg_environment(), "PYTHONPATH": str(root / "src"), "DAGSTER_HOME": str(home)}


TIMEOUT_SECONDS = 240

# NOTE: each `dg` command is forked from one warm interpreter per test process, as the `dg`
# console script would start (tests/warm_server.py): a fresh one spent about 2 s of CPU
# importing Dagster, Polars and the package before it loaded the project.
DG_SERVER = WarmServer(_dg_environment, TIMEOUT_SECONDS)


def dg_cli(root: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`dg` with these arguments, run in the project's folder and environment, unchecked."""
    environment = project_environment(root)
    dg = shutil.which("dg", path=environment["PATH"])
    assert dg is not None, "the `dg` CLI (dagster-dg-cli) is not installed"
    return DG_SERVER.run(str(root), environment, script=dg, argv=arguments)

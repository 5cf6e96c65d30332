"""`TableChecksComponent` through the real `dg` CLI, in a scratch project, offline.

The way a `dg` user meets the Component: `dg list components` finds it through the package's
entry point, `dg scaffold defs` writes its `defs.yaml`, `dg check defs` and `dg list defs` load
it, and `dg launch` evaluates its checks against a table a plain asset wrote (parquet) and a
DuckDB table SQL wrote. Each `dg` command starts a fresh interpreter, so the module shares one
project and keeps the commands few.
"""

import json
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import dagster_dg_cli  # noqa: F401  (the `dg` CLI: without it this module is not collected)
import dagster_duckdb_polars  # noqa: F401  (the scratch project's IO managers)
import dagster_polars  # noqa: F401
import duckdb  # noqa: F401
import pytest
from tests.dg_project import (
    COMPONENT,
    DG_SERVER,
    LAUNCH_JOB,
    ROOT_MODULE,
    dg_cli,
    write_component,
    write_project,
)


@pytest.fixture(scope="module", autouse=True)
def _stop_the_dg_server() -> Iterator[None]:
    yield
    DG_SERVER.stop()


IN_PROCESS = json.dumps({"execution": {"config": {"in_process": {}}}})
"""One process for the whole run: Dagster's default starts a subprocess per step."""


def run_dg(root: Path, *arguments: str) -> str:
    """Run `dg`, check it succeeded, and return what it printed, stdout then stderr."""
    done = dg_cli(root, *arguments)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"dg {' '.join(arguments)}:\n{output}"
    return output


def dg_json(root: Path, *arguments: str) -> object:
    """What a `dg ... --json` command printed, parsed; its warnings go to stderr, not here."""
    done = dg_cli(root, *arguments, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scratch project with the Component scaffolded for `orders`, as a user would."""
    root = write_project(tmp_path_factory.mktemp("dg") / "scratch")
    run_dg(root, "scaffold", "defs", COMPONENT, "orders_checks", "--asset", "orders")
    sql = write_component(
        root,
        "sql_orders_checks",
        f"""
        type: {COMPONENT}
        attributes:
          dataframely_schema: {ROOT_MODULE}.schemas:Orders
          assets: [analytics/orders]
          severity: ERROR
          lazy: false
        """,
    )
    assert sql.is_file()
    return root


def check_evaluations(root: Path) -> dict[tuple[str, str], dg.AssetCheckEvaluation]:
    """Every check evaluation the project's instance recorded, by (asset key, check name)."""
    found = {}
    with dg.DagsterInstance.from_config(str(root / "dagster_home")) as instance:
        for run in instance.get_runs():
            for entry in instance.all_logs(
                run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION
            ):
                evaluation = entry.dagster_event.event_specific_data  # type: ignore[union-attr]
                assert isinstance(evaluation, dg.AssetCheckEvaluation)
                found[(evaluation.asset_key.to_user_string(), evaluation.check_name)] = evaluation
    return found


def test_dg_lists_the_component_from_the_package_entry_point(project: Path) -> None:
    listed = dg_json(project, "list", "components")
    assert isinstance(listed, dict)
    entry = next(item for item in listed["items"] if item["key"] == COMPONENT)
    assert "Dataframely" in entry["summary"]


def test_scaffold_writes_a_defs_yaml_that_loads_as_it_is(project: Path) -> None:
    scaffolded = (
        project / "src" / ROOT_MODULE / "defs" / "orders_checks" / "defs.yaml"
    ).read_text()
    assert f"type: {COMPONENT}" in scaffolded
    assert f'dataframely_schema: "{ROOT_MODULE}.schemas:Orders"' in scaffolded
    assert '- "orders"' in scaffolded

    assert "All definitions loaded successfully" in run_dg(project, "check", "defs")


def test_dg_list_defs_shows_the_checks_on_both_tables(project: Path) -> None:
    listed = dg_json(project, "list", "defs")
    assert isinstance(listed, dict)
    checks = {check["key"] for check in listed["asset_checks"]}
    for asset in ("orders", "analytics/orders"):
        assert f"{asset}:dy_schema__columns" in checks
        assert f"{asset}:dy_rule__amount__min" in checks
        assert f"{asset}:dy_rule__primary_key" in checks


def test_dg_launch_evaluates_the_checks_on_parquet_and_on_a_duckdb_table_sql_wrote(
    project: Path,
) -> None:
    run_dg(project, "launch", "--job", LAUNCH_JOB, "--config-json", IN_PROCESS)

    evaluations = check_evaluations(project)
    parquet_min = evaluations[("orders", "dy_rule__amount__min")]
    assert not parquet_min.passed
    assert parquet_min.severity == dg.AssetCheckSeverity.WARN
    assert parquet_min.metadata["dy_failed_count"].value == 1
    assert evaluations[("orders", "dy_schema__columns")].passed
    duckdb_min = evaluations[("analytics/orders", "dy_rule__amount__min")]
    assert not duckdb_min.passed
    assert duckdb_min.severity == dg.AssetCheckSeverity.ERROR
    assert duckdb_min.metadata["dy_failed_count"].value == 2
    assert evaluations[("analytics/orders", "dy_rule__primary_key")].passed


@pytest.mark.parametrize(
    ("attributes", "line", "field", "problem"),
    [
        (
            "assets: [extra/orders]\n  severity: ERROR\n  lazy: 'false'",
            6,
            "lazy",
            "'false' is text, and the field takes true or false",
        ),
        (
            "assets: [extra/orders, extra/orders]\n  severity: WARN",
            4,
            "assets[1]",
            "the asset 'extra/orders' is already listed, as assets[0]",
        ),
        (
            "assets: [extra/orders]\n  severity: WARN\n  quality_policy:\n    rules:\n"
            "      amount|min: {warn_above: 1}\n      amount|mn: {fail_above: 0}",
            9,
            "quality_policy.rules.amount|mn",
            "Orders has no rule named amount|mn. Did you mean amount|min?",
        ),
        (
            "assets: [extra/orders]\n  severity: WARN\n  quality_policy:\n"
            "    threshold: {warn_above: 1}\n    undeclared_columns: check",
            8,
            "quality_policy.undeclared_columns",
            "`undeclared_columns=` needs the run that writes the table",
        ),
    ],
    ids=["quoted-flag", "duplicate-asset", "misspelt-rule", "undeclared-columns"],
)
def test_dg_check_defs_fails_on_a_bad_value_naming_file_line_and_field(
    project: Path, attributes: str, line: int, field: str, problem: str
) -> None:
    # An asset no other component checks, so the only fault is the bad value.
    extra = project / "src" / ROOT_MODULE / "defs" / "extra_orders.py"
    extra.write_text('import dagster as dg\n\nextra_orders = dg.AssetSpec(["extra", "orders"])\n')
    bad = write_component(
        project,
        "bad_checks",
        f"type: {COMPONENT}\nattributes:\n  dataframely_schema: {ROOT_MODULE}.schemas:Orders\n"
        f"  {attributes}\n",
    )
    try:
        done = dg_cli(project, "check", "defs")
    finally:
        extra.unlink()
        bad.unlink()
        bad.parent.rmdir()
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    located = f"src/{ROOT_MODULE}/defs/bad_checks/defs.yaml:{line}: attributes.{field}: {problem}"
    assert "ComponentFieldError" in output
    assert located in output, output

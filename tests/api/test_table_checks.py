"""`dd.table_checks`: a schema's checks on a table that `dd.asset` did not build.

These tests store the table with Dagster's own `FilesystemIOManager`; the integration suite
runs the same checks through `PolarsParquetIOManager` and `DuckDBPolarsIOManager`.
"""

import warnings
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from tests.asset_support import (
    CLEAN,
    MIXED,
    QUIET,
    WRONG_COLUMNS,
    SmallOrders,
    run_checks,
    step_error,
)
from tests.schemas import OrderBook

WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR
DAYS = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-03")


def _stored(frame: pl.DataFrame, **asset_arguments: Any) -> dg.AssetsDefinition:
    """A plain asset, not a `dd.asset`: the table a team already has."""

    @dg.asset(name="orders", **asset_arguments)
    def orders() -> pl.DataFrame:
        return frame

    return orders


def _run(
    assets: list[Any], tmp_path: Path, instance: dg.DagsterInstance, **kwargs: Any
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        assets,
        resources={"io_manager": dg.FilesystemIOManager(base_dir=str(tmp_path / "storage"))},
        instance=instance,
        run_config=QUIET,
        **kwargs,
    )


# --- what is declared ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        _stored(CLEAN),
        dg.AssetSpec("orders"),
        dg.AssetKey("orders"),
        "orders",
        ["orders"],
        "erp/orders",
    ],
    ids=["definition", "spec", "key", "string", "path", "user-string"],
)
def test_the_checks_are_the_ones_dd_asset_declares(target: Any) -> None:
    checks = dd.table_checks(SmallOrders, target, severity=WARN, check_granularity="column")

    key = dg.AssetKey(["erp", "orders"]) if target == "erp/orders" else dg.AssetKey("orders")
    expected = dd.wiring.check_specs(
        SmallOrders, asset=key.to_user_string(), check_granularity="column"
    )
    assert [(s.name, s.description, s.blocking) for s in checks.check_specs] == [
        (s.name, s.description, s.blocking) for s in expected
    ]
    assert {s.asset_key for s in checks.check_specs} == {key} == {s.asset_key for s in expected}


@pytest.mark.parametrize(("lazy", "frame_type"), [(True, pl.LazyFrame), (False, pl.DataFrame)])
def test_the_io_manager_is_asked_for_the_frame_type_chosen(lazy: bool, frame_type: type) -> None:
    checks = dd.table_checks(SmallOrders, "orders", severity=WARN, lazy=lazy)
    (table_input,) = checks.node_def.input_defs
    assert table_input.dagster_type.typing_type is frame_type
    assert table_input.dagster_type.type_check(None, pl.DataFrame()).success  # type: ignore[arg-type]
    assert checks.keys_by_input_name == {"table": dg.AssetKey("orders")}


def test_a_definition_of_several_assets_is_refused_with_a_pointer_to_the_key() -> None:
    @dg.multi_asset(specs=[dg.AssetSpec("orders"), dg.AssetSpec("customers")])
    def warehouse():  # type: ignore[no-untyped-def]  # Dagster reads `-> None` as one output
        pass

    with pytest.raises(dg.DagsterInvariantViolationError, match="Pass the key"):
        dd.table_checks(SmallOrders, warehouse, severity=WARN)


def test_partitions_come_from_the_definition_or_with_a_key() -> None:
    by_key = dd.table_checks(SmallOrders, "orders", severity=WARN, partitions_def=DAYS)
    by_definition = dd.table_checks(SmallOrders, _stored(CLEAN, partitions_def=DAYS), severity=WARN)
    for checks in (by_key, by_definition):
        assert {spec.partitions_def for spec in checks.check_specs} == {DAYS}
    with pytest.raises(dg.DagsterInvariantViolationError, match="partitions_def"):
        dd.table_checks(SmallOrders, _stored(CLEAN), severity=WARN, partitions_def=DAYS)


def test_partitioned_checks_are_declared_without_dagster_s_preview_warning() -> None:
    # As for dd.asset: the partitions come from the asset, the user did not ask for the preview.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checks = dd.table_checks(SmallOrders, _stored(CLEAN, partitions_def=DAYS), severity=WARN)
    assert {spec.partitions_def for spec in checks.check_specs} == {DAYS}


def test_bad_settings_fail_at_declaration() -> None:
    with pytest.raises(dd.errors.InvalidSettingError):
        dd.table_checks(SmallOrders, "orders", severity=WARN, check_granularity="row")  # type: ignore[arg-type]


# --- what a run reports --------------------------------------------------------------------------


@pytest.mark.parametrize("severity", [WARN, ERROR])
def test_the_results_are_the_ones_check_results_gives_at_the_chosen_severity(
    severity: dg.AssetCheckSeverity, tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    orders = _stored(MIXED)
    checks = dd.table_checks(SmallOrders, orders, severity=severity)

    result = _run([orders, checks], tmp_path, instance)

    expected = {
        r.check_name: r
        for r in dd.wiring.check_results(
            SmallOrders, MIXED, asset_key=orders.key, severity=severity
        )
    }
    evaluations = run_checks(result)
    assert list(evaluations) == list(expected)
    for name, evaluation in evaluations.items():
        assert (evaluation.passed, evaluation.severity) == (
            expected[name].passed,
            expected[name].severity,
        ), name
        assert evaluation.metadata == expected[name].metadata, name
    assert [n for n, e in evaluations.items() if not e.passed] == [
        "dy_rule__amount__nullability",
        "dy_rule__amount__min",
    ]


def test_warning_rules_fail_at_warn_whatever_the_severity(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    orders = _stored(MIXED)
    checks = dd.table_checks(SmallOrders, orders, severity=ERROR, warning_rules=["amount|min"])

    evaluations = run_checks(_run([orders, checks], tmp_path, instance))

    assert (
        evaluations["dy_rule__amount__min"].passed,
        evaluations["dy_rule__amount__min"].severity,
    ) == (
        False,
        WARN,
    )
    assert evaluations["dy_rule__amount__nullability"].severity == ERROR
    specs = {spec.name: spec for spec in checks.check_specs}
    assert specs["dy_rule__amount__min"].description.startswith("Warning")


def test_an_unknown_warning_rule_fails_at_declaration() -> None:
    with pytest.raises(dd.errors.UnknownWarningRuleError, match="amount__min"):
        dd.table_checks(SmallOrders, "orders", severity=WARN, warning_rules=["amount__min"])


def test_two_members_of_a_collection_on_one_asset_are_refused() -> None:
    # One stored table cannot follow two members' schemas; before, their checks merged into
    # one set of check names on that asset, and nothing said so.
    with pytest.raises(dd.errors.InvalidArgumentsError) as raised:
        dd.table_checks(OrderBook, {"orders": "book", "lines": "book"}, severity=WARN)
    assert raised.value.function == "table_checks"
    assert "orders and lines of OrderBook are both mapped to the asset 'book'" in str(raised.value)
    assert raised.value.fix == "Map each member to the asset that stores its own table."


def test_the_checks_write_nothing(tmp_path: Path, instance: dg.DagsterInstance) -> None:
    orders = _stored(MIXED)
    checks = dd.table_checks(SmallOrders, orders, severity=WARN)
    _run([orders], tmp_path, instance)
    stored = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())

    result = _run([orders, checks], tmp_path, instance, selection=dg.AssetSelection.checks(checks))

    assert result.success
    assert len(run_checks(result)) == len(checks.check_specs)
    assert result.get_asset_materialization_events() == []
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()) == stored


def test_a_table_with_the_wrong_columns_fails_the_column_schema_check_and_no_rule_runs(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    orders = _stored(WRONG_COLUMNS)
    checks = dd.table_checks(SmallOrders, orders, severity=WARN)

    result = _run([orders, checks], tmp_path, instance, raise_on_error=False)

    evaluations = run_checks(result)
    assert list(evaluations) == ["dy_schema__columns"]
    assert not evaluations["dy_schema__columns"].passed
    assert step_error(result, checks.node_def.name) == "ColumnSchemaError"


def test_a_partitioned_table_is_checked_one_partition_at_a_time(
    tmp_path: Path, instance: dg.DagsterInstance
) -> None:
    frames = {"2026-01-01": CLEAN, "2026-01-02": MIXED}

    @dg.asset(name="orders", partitions_def=DAYS)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames[context.partition_key]

    checks = dd.table_checks(SmallOrders, orders, severity=WARN)

    for day, failed in [("2026-01-01", []), ("2026-01-02", ["dy_rule__amount__nullability"])]:
        result = _run([orders, checks], tmp_path, instance, partition_key=day)
        evaluations = run_checks(result)
        assert {e.partition for e in evaluations.values()} == {day}
        assert {e.metadata["dy_partition"].value for e in evaluations.values()} == {day}
        assert [n for n, e in evaluations.items() if not e.passed][:1] == failed, day


def test_an_io_manager_that_loads_no_frame_gets_a_clear_type_check_failure() -> None:
    checks = dd.table_checks(SmallOrders, "orders", severity=WARN)
    (table_input,) = checks.node_def.input_defs
    outcome = table_input.dagster_type.type_check(None, {"2026-01-01": CLEAN})  # type: ignore[arg-type]
    assert not outcome.success
    assert "loaded a dict, not a Polars frame" in (outcome.description or "")

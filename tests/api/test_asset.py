"""`dd.asset` end to end: what a declaration builds, and what a run and a call produce.

Every scenario runs through `dg.materialize` with the suite's `ParquetIOManager` (laid out as
`PolarsParquetIOManager` is), and through direct invocation where the guide says a call works.
Files are read back with `pl.read_parquet`, not through the package, so a test sees what a user
would find on disk.
"""

import datetime as dt
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import dagster as dg
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from dagster_dataframely import errors
from dagster_dataframely.errors import UnresolvedAnnotationError
from tests import future_annotated_assets as future
from tests import type_checking_assets as type_checking
from tests.asset_support import (
    ALL_INVALID,
    CLEAN,
    MIXED,
    QUARANTINE_DIR,
    QUIET,
    WRONG_COLUMNS,
    AssetContext,
    Materialize,
    SmallOrders,
    call_checks,
    call_tables,
    collect,
    run_checks,
    run_tables,
    step_error,
    value,
)
from tests.order_lines import Orders, marketplace_orders, storefront_orders
from tests.parquet_io_manager import ParquetIOManager

WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR
COLUMN_SCHEMA_CHECK = "dy_schema__columns"
SMALL_CHECKS = [
    "dy_schema__columns",
    "dy_rule__primary_key",
    "dy_rule__order_id__nullability",
    "dy_rule__amount__nullability",
    "dy_rule__amount__min",
    "dy_rule__amount__inf",
    "dy_rule__amount__nan",
]


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.sort(frame.columns, nulls_last=True)


def _spec(asset: dg.AssetsDefinition) -> dg.AssetSpec:
    (spec,) = asset.specs
    return spec


# --- the signature ----------------------------------------------------------------------------

EXCLUDED = {"check_specs", "key", "output_required", "dagster_type", "is_virtual", "io_manager_def"}
SETTINGS = {
    "check_granularity",
    "schema_rules",
    "max_failure_samples",
    "statistics",
    "row_sample",
    "streaming",
}
OWN = {
    "quarantine",
    "clear_quarantine",
    "warning_rules",
    "quality_policy",
    "keys_across_partitions",
    *SETTINGS,
}


def test_dd_asset_takes_exactly_dg_asset_parameters_minus_the_six_exclusions() -> None:
    dg_parameters = {
        name
        for name, parameter in inspect.signature(dg.asset).parameters.items()
        if name != "compute_fn" and parameter.kind is not inspect.Parameter.VAR_KEYWORD
    }
    dd_parameters = inspect.signature(dd.asset).parameters
    passed_on = set(dd_parameters) - {"schema"} - OWN

    assert dg_parameters >= EXCLUDED, "an exclusion is no longer a @dg.asset parameter"
    lacking = dg_parameters - EXCLUDED - passed_on
    assert not lacking, f"@dg.asset has parameters dd.asset lacks: {sorted(lacking)}"
    removed = passed_on - dg_parameters
    assert not removed, f"dd.asset passes on parameters @dg.asset lost: {sorted(removed)}"


def test_schema_is_the_only_positional_parameter() -> None:
    parameters = list(inspect.signature(dd.asset).parameters.values())
    assert parameters[0].name == "schema"
    assert parameters[0].kind is inspect.Parameter.POSITIONAL_ONLY
    assert {p.kind for p in parameters[1:]} == {inspect.Parameter.KEYWORD_ONLY}
    # Every keyword is optional: `quarantine` is off, and `None` means "not set" for the rest.
    assert {p.name: p.default for p in parameters[1:]} == {
        "quarantine": False,
        **{p.name: None for p in parameters[2:]},
    }
    assert {p.name for p in parameters} >= OWN
    with pytest.raises(TypeError):
        dd.asset(schema=SmallOrders)  # type: ignore[call-arg]


@pytest.mark.parametrize("excluded", sorted(EXCLUDED))
def test_an_excluded_parameter_is_refused(excluded: str) -> None:
    with pytest.raises(TypeError, match=excluded):
        dd.asset(SmallOrders, **{excluded: None})


# --- every passed-on parameter reaches the definition ------------------------------------------


@dg.success_hook
def _noted(context: dg.HookContext) -> None:
    context.log.info("done")


EAGER = dg.AutomationCondition.eager()
DAILY = dg.DailyPartitionsDefinition(start_date="2026-01-01")
FRESH = dg.FreshnessPolicy.time_window(fail_window=dt.timedelta(hours=6))
API = dg.ResourceDefinition.none_resource()

# (keyword arguments, what reads them back from the definition, the expected value)
REACHES: dict[str, tuple[dict[str, Any], Callable[[dg.AssetsDefinition], object], object]] = {
    "name": ({"name": "order_lines"}, lambda a: a.key, dg.AssetKey("order_lines")),
    "group_name": ({"group_name": "sales"}, lambda a: _spec(a).group_name, "sales"),
    "tags": ({"tags": {"tier": "gold"}}, lambda a: _spec(a).tags.get("tier"), "gold"),
    "owners": ({"owners": ["team:sales"]}, lambda a: list(_spec(a).owners), ["team:sales"]),
    "kinds": ({"kinds": {"polars"}}, lambda a: _spec(a).kinds, {"polars"}),
    "code_version": ({"code_version": "v7"}, lambda a: _spec(a).code_version, "v7"),
    "op_tags": ({"op_tags": {"team": "sales"}}, lambda a: a.op.tags.get("team"), "sales"),
    "retry_policy": (
        {"retry_policy": dg.RetryPolicy(max_retries=3)},
        lambda a: a.op.retry_policy,
        dg.RetryPolicy(max_retries=3),
    ),
    "pool": ({"pool": "warehouse_db"}, lambda a: a.op.pool, "warehouse_db"),
    "io_manager_key": (
        {"io_manager_key": "warehouse"},
        lambda a: a.get_io_manager_key_for_asset_key(a.key),
        "warehouse",
    ),
    "automation_condition": (
        {"automation_condition": EAGER},
        lambda a: _spec(a).automation_condition,
        EAGER,
    ),
    "freshness_policy": ({"freshness_policy": FRESH}, lambda a: _spec(a).freshness_policy, FRESH),
    "backfill_policy": (
        {"backfill_policy": dg.BackfillPolicy.single_run()},
        lambda a: a.backfill_policy,
        dg.BackfillPolicy.single_run(),
    ),
    "partitions_def": ({"partitions_def": DAILY}, lambda a: a.partitions_def, DAILY),
    "hooks": ({"hooks": {_noted}}, lambda a: a.hook_defs, {_noted}),
    "required_resource_keys": (
        {"required_resource_keys": {"api"}},
        lambda a: a.op.required_resource_keys,
        {"api"},
    ),
    "resource_defs": ({"resource_defs": {"api": API}}, lambda a: a.resource_defs.get("api"), API),
    "config_schema": (
        {"config_schema": {"threshold": float}},
        lambda a: set(a.op.config_schema.as_field().config_type.fields),
        {"threshold"},
    ),
    "deps": ({"deps": ["raw_orders"]}, lambda a: a.dependency_keys, {dg.AssetKey("raw_orders")}),
}
# These reach the definition too, each tested on its own below: they need a matching function
# signature, a run, or interact with what the schema sets.
TESTED_APART = {"ins", "key_prefix", "metadata", "description"}


def test_every_passed_on_parameter_has_a_test() -> None:
    passed_on = set(inspect.signature(dd.asset).parameters) - {"schema"} - OWN
    assert set(REACHES) | TESTED_APART == passed_on


@pytest.mark.parametrize(("arguments", "read", "expected"), REACHES.values(), ids=REACHES.keys())
def test_a_passed_on_parameter_reaches_the_definition(
    arguments: dict[str, Any],
    read: Callable[[dg.AssetsDefinition], object],
    expected: object,
) -> None:
    @dd.asset(SmallOrders, **arguments)
    def orders() -> pl.DataFrame:
        return CLEAN

    assert read(orders) == expected


def test_ins_map_an_upstream_asset_to_a_parameter_name() -> None:
    @dd.asset(SmallOrders, ins={"feed": dg.AssetIn(key="raw_orders")})
    def orders(feed: pl.DataFrame) -> pl.DataFrame:
        return feed

    assert orders.keys_by_input_name == {"feed": dg.AssetKey("raw_orders")}


def test_schema_column_schema_replaces_the_users_and_other_metadata_is_kept() -> None:
    @dd.asset(SmallOrders, metadata={"team": "sales", "dagster/column_schema": "mine"})
    def orders() -> pl.DataFrame:
        return CLEAN

    metadata = _spec(orders).metadata
    assert metadata["team"] == "sales"
    assert metadata["dagster/column_schema"] == dd.wiring.table_schema(SmallOrders)


class Undocumented(SmallOrders):
    pass


def test_description_argument_wins_over_both_docstrings() -> None:
    @dd.asset(Orders, description="Order lines, deduplicated.")
    def orders() -> pl.DataFrame:
        """Joins the two extracts."""
        return storefront_orders()

    assert _spec(orders).description == "Order lines, deduplicated."


def test_schema_docstring_wins_over_the_function_docstring() -> None:
    @dd.asset(Orders)
    def orders() -> pl.DataFrame:
        """Joins the two extracts."""
        return storefront_orders()

    assert _spec(orders).description == "A customer order line: one row per product on one order."


def test_an_inherited_schema_docstring_is_ignored() -> None:
    @dd.asset(Undocumented)
    def orders() -> pl.DataFrame:
        """Joins the two extracts."""
        return CLEAN

    @dd.asset(Undocumented)
    def bare() -> pl.DataFrame:
        return CLEAN

    assert _spec(orders).description == "Joins the two extracts."
    # Neither the parent's docstring nor `dy.Schema`'s.
    assert _spec(bare).description is None


def test_key_prefix_sets_the_key_the_op_name_and_the_check_keys() -> None:
    @dd.asset(SmallOrders, key_prefix=["shop", "sales"], name="orders")
    def lines() -> pl.DataFrame:
        return CLEAN

    assert lines.key == dg.AssetKey(["shop", "sales", "orders"])
    assert lines.op.name == "shop__sales__orders"
    assert {spec.asset_key for spec in lines.check_specs} == {lines.key}


def test_key_prefix_config_and_ins_in_a_run(
    materialize: Materialize, warehouse: Path, quarantine_dir: Path
) -> None:
    @dg.asset
    def raw_orders() -> pl.DataFrame:
        return MIXED

    @dd.asset(
        SmallOrders,
        quarantine=True,
        key_prefix="sales",
        config_schema={"threshold": float},
        ins={"feed": dg.AssetIn(key="raw_orders")},
    )
    def orders(context: dg.AssetExecutionContext, feed: pl.DataFrame) -> pl.DataFrame:
        threshold = context.op_execution_context.op_config["threshold"]
        return feed.filter(pl.col("amount").is_null() | (pl.col("amount") != threshold))

    result = materialize(
        [raw_orders, orders], run_config={"ops": {"sales__orders": {"config": {"threshold": 3.0}}}}
    )

    # The config dropped `c`, the only valid row besides `a`.
    assert pl.read_parquet(warehouse / "sales" / "orders.parquet")["order_id"].to_list() == ["a"]
    quarantined = pl.read_parquet(warehouse / "sales" / "orders_quarantine.parquet")
    assert sorted(quarantined["order_id"]) == ["b", "d"]
    (table,) = run_tables(result, ["sales", "orders"])
    assert value(table.metadata["dataframely/quarantine_address"]) == "sales/orders_quarantine"
    assert {check.asset_key for check in result.get_asset_check_evaluations()} == {orders.key}
    assert not quarantine_dir.exists()


def test_key_prefix_and_config_in_a_call(quarantine_dir: Path, asset_context: AssetContext) -> None:
    @dd.asset(SmallOrders, quarantine=True, key_prefix="sales", config_schema={"threshold": float})
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return MIXED.filter(pl.col("amount") != context.op_execution_context.op_config["threshold"])

    events = list(orders(asset_context(asset_config={"threshold": 3.0})))

    (table,) = call_tables(events)
    assert table.asset_key == dg.AssetKey(["sales", "orders"])
    assert table.value["order_id"].to_list() == ["a"]
    path = quarantine_dir / "sales" / "orders_quarantine.parquet"
    assert pl.read_parquet(path)["order_id"].to_list() == ["b"]
    assert value((table.metadata or {})["dataframely/quarantine_address"]) == str(path)


def test_io_manager_key_writes_the_table_and_the_quarantine_with_that_manager(
    materialize: Materialize, warehouse: Path, tmp_path: Path
) -> None:
    @dd.asset(SmallOrders, quarantine=True, io_manager_key="lake")
    def orders() -> pl.DataFrame:
        return MIXED

    lake = tmp_path / "lake"
    materialize([orders], resources={"lake": ParquetIOManager(base_dir=str(lake))})

    assert pl.read_parquet(lake / "orders.parquet")["order_id"].to_list() == ["a", "c"]
    assert pl.read_parquet(lake / "orders_quarantine.parquet").height == 2
    assert not warehouse.exists()


def test_resource_defs_supply_the_io_manager(tmp_path: Path, instance: dg.DagsterInstance) -> None:
    lake = tmp_path / "lake"

    @dd.asset(
        SmallOrders,
        quarantine=True,
        resource_defs={"io_manager": ParquetIOManager(base_dir=str(lake))},
    )
    def orders() -> pl.DataFrame:
        return MIXED

    # No `resources=`: the asset brings its own IO manager, for the table and the quarantine.
    assert dg.materialize([orders], instance=instance, run_config=QUIET).success
    assert pl.read_parquet(lake / "orders.parquet").height == 2
    assert pl.read_parquet(lake / "orders_quarantine.parquet").height == 2


# --- check specs and settings -------------------------------------------------------------------


def test_check_specs_exist_before_any_run() -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders(raw_orders: pl.DataFrame) -> pl.DataFrame:
        return raw_orders

    assert [spec.name for spec in orders.check_specs] == SMALL_CHECKS
    assert {spec.asset_key for spec in orders.check_specs} == {dg.AssetKey("orders")}


@pytest.mark.parametrize(
    ("arguments", "names"),
    [
        ({"check_granularity": "rule"}, SMALL_CHECKS),
        (
            {"check_granularity": "column"},
            ["dy_schema__columns", "dy_schema__rules", "dy_col__order_id", "dy_col__amount"],
        ),
        (
            {"check_granularity": "column", "schema_rules": "per_rule"},
            ["dy_schema__columns", "dy_rule__primary_key", "dy_col__order_id", "dy_col__amount"],
        ),
        ({"check_granularity": "schema"}, ["dy_schema__columns", "dy_schema__rules"]),
    ],
    ids=["rule", "column", "column-per_rule", "schema"],
)
def test_check_names_follow_the_granularity_argument(
    arguments: dict[str, Any], names: list[str], asset_context: AssetContext
) -> None:
    @dd.asset(SmallOrders, **arguments)
    def orders() -> pl.DataFrame:
        return MIXED

    assert [spec.name for spec in orders.check_specs] == names
    # A call reports the same names, in the same order, as the specs declare.
    events = collect(orders(asset_context()), errors.ValidationAbortError)
    assert list(call_checks(events)) == names


def test_settings_resolve_once_at_declaration(
    monkeypatch: pytest.MonkeyPatch, materialize: Materialize
) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_CHECK_GRANULARITY", "schema")
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_MAX_FAILURE_SAMPLES", "1")

    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return pl.concat([MIXED, ALL_INVALID])

    monkeypatch.setenv("DAGSTER_DATAFRAMELY_CHECK_GRANULARITY", "rule")
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_MAX_FAILURE_SAMPLES", "5")

    assert [spec.name for spec in orders.check_specs] == ["dy_schema__columns", "dy_schema__rules"]
    checks = run_checks(materialize([orders]))
    assert list(checks) == ["dy_schema__columns", "dy_schema__rules"]
    sample = value(checks["dy_schema__rules"].metadata["dy_failed_sample"])
    # Three rows failed `amount|min` and one `amount|nullability`: one row of each at 1.
    assert sorted(record.data["dy_rule"] for record in sample.records) == [
        "amount|min",
        "amount|nullability",
    ]


def test_sample_and_statistics_arguments_reach_the_metadata(asset_context: AssetContext) -> None:
    frame = pl.concat([MIXED, ALL_INVALID])

    @dd.asset(SmallOrders, max_failure_samples=1, row_sample=0, statistics=False)
    def quiet(rows: pl.DataFrame) -> pl.DataFrame:
        return rows

    @dd.asset(SmallOrders)
    def loud(rows: pl.DataFrame) -> pl.DataFrame:
        return rows

    def sample_size(events: list[object]) -> int:
        check = call_checks(events)["dy_rule__amount__min"]
        return len(value(check.metadata["dy_failed_sample"]).records)

    assert sample_size(collect(quiet(asset_context(), frame), errors.ValidationAbortError)) == 1
    assert sample_size(collect(loud(asset_context(), frame), errors.ValidationAbortError)) == 3

    (quiet_table,) = call_tables(quiet(asset_context(), CLEAN))
    # Off: every sample and statistic; the two fractions are metrics, always there (issue 20).
    assert set(quiet_table.metadata or {}) == {
        "dagster/row_count",
        "dataframely/invalid_fraction",
        "dataframely/warning_fraction",
    }
    (loud_table,) = call_tables(loud(asset_context(), CLEAN))
    assert {"dataframely/valid_sample", "dataframely/valid_statistics/numeric"} <= set(
        loud_table.metadata or {}
    )


# --- what the decorated function returns -------------------------------------------------------


def test_a_returned_frame_is_stored_with_the_schemas_columns_in_its_order(
    materialize: Materialize, warehouse: Path, asset_context: AssetContext
) -> None:
    @dd.asset(Orders)
    def orders() -> pl.DataFrame:
        # Reversed, and with a working column the schema never declared.
        frame = storefront_orders().with_columns(net=pl.col("amount") * 0.8)
        return frame.select(reversed(frame.columns))

    materialize([orders])

    stored = pl.read_parquet(warehouse / "orders.parquet")
    assert stored.columns == Orders.column_names()
    assert_frame_equal(_sorted(stored), _sorted(storefront_orders()))
    (table,) = call_tables(orders(asset_context()))
    assert table.value.columns == Orders.column_names()


class RecordingParquetIOManager(ParquetIOManager):
    """A `ParquetIOManager` that notes the type of every object it stores, by asset."""

    stored: ClassVar[dict[str, type]] = {}

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: Any) -> None:
        RecordingParquetIOManager.stored[context.asset_key.to_user_string()] = type(obj)
        super().dump_to_path(context, obj, path)


def test_lazy_input_and_lazy_return_are_validated_and_stored_as_a_dataframe(
    materialize: Materialize, warehouse: Path
) -> None:
    received: list[type] = []

    @dg.asset
    def raw_orders() -> pl.DataFrame:
        return marketplace_orders()

    @dd.asset(Orders, quarantine=True)
    def orders(raw_orders: pl.LazyFrame) -> pl.LazyFrame:
        received.append(type(raw_orders))
        return raw_orders.filter(pl.col("quantity") > 0)

    RecordingParquetIOManager.stored.clear()
    result = materialize(
        [raw_orders, orders],
        resources={"io_manager": RecordingParquetIOManager(base_dir=str(warehouse))},
    )

    assert received == [pl.LazyFrame]
    assert RecordingParquetIOManager.stored["orders"] is pl.DataFrame
    assert RecordingParquetIOManager.stored["orders_quarantine"] is pl.DataFrame
    assert pl.read_parquet(warehouse / "orders.parquet").height == 12
    # The line with quantity 0 was filtered out before validation; 7 bad lines remain.
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").height == 7
    (table,) = run_tables(result, "orders")
    assert value(table.metadata["dataframely/invalid_count"]) == 7


def test_a_lazy_return_in_a_call_yields_a_dataframe(asset_context: AssetContext) -> None:
    @dd.asset(SmallOrders)
    def orders(raw: pl.LazyFrame) -> pl.LazyFrame:
        return raw.with_columns(pl.col("amount") * 2)

    (table,) = call_tables(orders(asset_context(), CLEAN.lazy()))
    assert isinstance(table.value, pl.DataFrame)
    assert table.value["amount"].to_list() == [2.0, 4.0, 6.0]


def _returned_result(frame: pl.DataFrame) -> dg.MaterializeResult[pl.DataFrame]:
    return dg.MaterializeResult(
        value=frame,
        metadata={
            "source": "stripe",
            "extracted_at": "2026-08-13",
            "dagster/row_count": 999,
            "dataframely/invalid_count": 999,
        },
        data_version=dg.DataVersion("2026-08-13"),
        tags={"run/flavour": "backfill"},
    )


def test_a_returned_materialize_result_in_a_run(materialize: Materialize, warehouse: Path) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> dg.MaterializeResult[pl.DataFrame]:
        return _returned_result(MIXED)

    result = materialize([orders])

    (table,) = run_tables(result, "orders")
    assert value(table.metadata["source"]) == "stripe"
    assert value(table.metadata["extracted_at"]) == "2026-08-13"
    assert value(table.metadata["dagster/row_count"]) == 2
    assert value(table.metadata["dataframely/invalid_count"]) == 2
    assert table.tags is not None
    assert table.tags["run/flavour"] == "backfill"
    assert table.tags["dagster/data_version"] == "2026-08-13"
    assert pl.read_parquet(warehouse / "orders.parquet")["order_id"].to_list() == ["a", "c"]


def test_a_returned_materialize_result_in_a_call(
    quarantine_dir: Path, asset_context: AssetContext
) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> dg.MaterializeResult[pl.LazyFrame]:
        result = _returned_result(MIXED)
        return dg.MaterializeResult(
            value=MIXED.lazy(),
            metadata=result.metadata,
            data_version=result.data_version,
            tags=result.tags,
        )

    (table,) = call_tables(orders(asset_context()))

    metadata = table.metadata or {}
    assert metadata["source"] == "stripe"
    assert metadata["dagster/row_count"] == 2
    assert metadata["dataframely/invalid_count"] == 2
    assert table.tags == {"run/flavour": "backfill"}
    assert table.data_version == dg.DataVersion("2026-08-13")
    assert table.asset_key == dg.AssetKey("orders")
    assert table.value["order_id"].to_list() == ["a", "c"]


def test_none_skips_in_a_run(materialize: Materialize, warehouse: Path) -> None:
    ran: list[bool] = []

    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame | None:
        ran.append(True)
        return None

    result = materialize([orders])

    assert ran == [True]
    assert run_tables(result, "orders") == []
    checks = run_checks(result)
    assert list(checks) == SMALL_CHECKS
    assert all(check.passed for check in checks.values())
    assert not warehouse.exists()


def test_none_skips_in_a_call(asset_context: AssetContext) -> None:
    @dd.asset(SmallOrders)
    def orders() -> pl.DataFrame | None:
        return None

    events = list(orders(asset_context()))
    assert call_tables(events) == []
    checks = call_checks(events)
    assert list(checks) == SMALL_CHECKS
    assert all(check.passed for check in checks.values())


@pytest.mark.parametrize("returned", [{"order_id": ["a"]}, "orders.parquet", CLEAN["amount"]])
def test_anything_else_fails_a_call_before_the_column_schema_check(
    returned: object, asset_context: AssetContext
) -> None:
    @dd.asset(SmallOrders)
    def orders() -> Any:
        return returned

    events: list[object] = []
    with pytest.raises(dg.DagsterInvariantViolationError, match=type(returned).__name__):
        events.extend(orders(asset_context()))
    assert events == []


def test_anything_else_fails_a_run_before_the_column_schema_check(
    materialize: Materialize, warehouse: Path
) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> Any:
        return MIXED.to_dicts()

    result = materialize([orders], raise_on_error=False)

    assert step_error(result) == "DagsterInvariantViolationError"
    assert run_checks(result) == {}
    assert not warehouse.exists()


# --- the failure policy: six outcomes ---------------------------------------------------------


def _mismatched() -> pl.DataFrame:
    return storefront_orders().with_columns(pl.col("quantity").cast(pl.Int32)).drop("ship_by")


@dataclass(frozen=True)
class Outcome:
    frame: Callable[[], pl.DataFrame | None]
    quarantine: bool
    writes_table: bool
    writes_quarantine: bool
    error: type[Exception] | None


OUTCOMES = {
    "column-schema-mismatch": Outcome(_mismatched, True, False, False, errors.ColumnSchemaError),
    "every-row-valid": Outcome(storefront_orders, True, True, False, None),
    "some-failed-no-quarantine": Outcome(
        marketplace_orders, False, False, False, errors.ValidationAbortError
    ),
    "some-failed-quarantine": Outcome(marketplace_orders, True, True, True, None),
    "every-row-failed-quarantine": Outcome(
        lambda: marketplace_orders().tail(8), True, False, True, errors.NoValidRowsError
    ),
    "none": Outcome(lambda: None, True, False, False, None),
}


DEMO_CHECKS = dd.wiring.check_specs(Orders, asset="orders", check_granularity="rule")


def _assert_files(
    outcome: Outcome, frame: pl.DataFrame | None, table: Path | None, quarantine: Path
) -> None:
    """The table holds exactly the valid rows and the quarantine exactly the invalid ones.

    `table` is None for a call, which yields the table instead of writing it.
    """
    if table is not None:
        assert table.exists() is outcome.writes_table
    first_clean_run = table is not None and outcome.quarantine and not outcome.writes_quarantine
    if first_clean_run and outcome.writes_table:
        # A run that finds no quarantine stored writes an empty one, so that it can be read.
        assert pl.read_parquet(quarantine).is_empty()
    else:
        assert quarantine.exists() is outcome.writes_quarantine
    if frame is None or not (outcome.writes_table or outcome.writes_quarantine):
        return
    valid, failure = Orders.filter(frame, cast=False)
    if table is not None and outcome.writes_table:
        assert_frame_equal(_sorted(pl.read_parquet(table)), _sorted(valid))
    if outcome.writes_quarantine:
        stored = pl.read_parquet(quarantine)
        assert_frame_equal(
            _sorted(stored.select(Orders.column_names())), _sorted(failure.invalid())
        )
        # Then one `String` column per rule, named as the rule's check at `rule` granularity,
        # marking each row `invalid` exactly for the rules it failed.
        rule_columns = stored.columns[len(Orders.column_names()) :]
        assert rule_columns == [spec.name for spec in DEMO_CHECKS[1:]]
        assert set(stored.select(rule_columns).dtypes) == {pl.String}
        invalid = {name: stored.filter(pl.col(name) == "invalid").height for name in rule_columns}
        failed = {dd.wiring.check_name(rule): n for rule, n in failure.counts().items()}
        assert {name: n for name, n in invalid.items() if n} == failed


def _assert_checks(
    outcome: Outcome,
    frame: pl.DataFrame | None,
    checks: dict[str, dg.AssetCheckEvaluation] | dict[str, dg.AssetCheckResult],
    asset: dg.AssetsDefinition,
) -> None:
    if outcome.error is errors.ColumnSchemaError:
        # Blocking: no rule ran, so only the column-schema check reports.
        (check,) = checks.values()
        assert check.check_name == COLUMN_SCHEMA_CHECK
        assert not check.passed
        assert check.severity == ERROR
        problems = value(check.metadata["dy_schema__errors"]).records
        assert {record.data["column"] for record in problems} == {"quantity", "ship_by"}
        return
    assert list(checks) == [spec.name for spec in asset.check_specs]
    failing = {name for name, check in checks.items() if not check.passed}
    expected = set()
    if frame is not None:
        expected = {dd.wiring.check_name(r) for r in Orders.filter(frame)[1].counts()}
    assert failing == expected
    assert checks[COLUMN_SCHEMA_CHECK].severity == ERROR
    severities = {c.severity for name, c in checks.items() if name != COLUMN_SCHEMA_CHECK}
    assert severities == {WARN if outcome.writes_table else ERROR}
    if outcome.writes_quarantine and not outcome.writes_table:
        # No materialization to carry the address, so every check result carries it.
        assert all("dataframely/quarantine_address" in c.metadata for c in checks.values())


@pytest.mark.parametrize("outcome", OUTCOMES.values(), ids=OUTCOMES.keys())
def test_outcome_in_a_run(
    outcome: Outcome, materialize: Materialize, warehouse: Path, quarantine_dir: Path
) -> None:
    frame = outcome.frame()

    @dd.asset(Orders, quarantine=outcome.quarantine)
    def orders() -> pl.DataFrame | None:
        return frame

    result = materialize([orders], raise_on_error=False)

    assert result.success is (outcome.error is None)
    if outcome.error is not None:
        assert step_error(result) == outcome.error.__name__
    _assert_files(
        outcome, frame, warehouse / "orders.parquet", warehouse / "orders_quarantine.parquet"
    )
    _assert_checks(outcome, frame, run_checks(result), orders)
    tables = run_tables(result, "orders")
    assert len(tables) == outcome.writes_table
    if outcome.writes_table:
        (table,) = tables
        assert value(table.metadata["dagster/row_count"]) == 12
        # The failure summary is there exactly when rows failed.
        failure_keys = {
            "dataframely/quarantine_address",
            "dataframely/invalid_count",
            "dataframely/invalid_sample",
            "dataframely/invalid_by_rules",
        }
        present = failure_keys & set(table.metadata)
        assert present == (failure_keys if outcome.writes_quarantine else set())
        assert "dataframely/valid_sample" in table.metadata
    if outcome.writes_table and outcome.writes_quarantine:
        assert value(table.metadata["dataframely/invalid_count"]) == 8
        assert value(table.metadata["dataframely/quarantine_address"]) == "orders_quarantine"
    assert run_tables(result, "orders_quarantine") == []  # the quarantine never materializes
    assert not quarantine_dir.exists()  # a run never writes to the directory


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("outcome", OUTCOMES.values(), ids=OUTCOMES.keys())
def test_outcome_in_a_call(
    outcome: Outcome, lazy: bool, quarantine_dir: Path, asset_context: AssetContext
) -> None:
    frame = outcome.frame()

    @dd.asset(Orders, quarantine=outcome.quarantine)
    def orders() -> pl.DataFrame | pl.LazyFrame | None:
        return frame.lazy() if lazy and frame is not None else frame

    events = collect(orders(asset_context()), outcome.error)

    _assert_files(outcome, frame, None, quarantine_dir / "orders_quarantine.parquet")
    assert not (quarantine_dir / "orders.parquet").exists()
    _assert_checks(outcome, frame, call_checks(events), orders)
    tables = call_tables(events)
    assert len(tables) == outcome.writes_table
    if outcome.writes_table and frame is not None:
        (table,) = tables
        assert_frame_equal(_sorted(table.value), _sorted(Orders.filter(frame)[0]))


def test_the_guides_quarantine_test(quarantine_dir: Path) -> None:
    @dd.asset(Orders, quarantine=True)
    def orders(raw_orders: pl.DataFrame) -> pl.DataFrame:
        return raw_orders

    events = list(orders(dg.build_asset_context(), marketplace_orders()))
    tables = {event.asset_key: event.value for event in call_tables(events)}
    checks = {name: check.passed for name, check in call_checks(events).items()}

    assert tables[dg.AssetKey(["orders"])].height == 12
    assert not checks["dy_rule__amount__min"]
    assert pl.read_parquet(quarantine_dir / "orders_quarantine.parquet").height == 8


def test_a_failing_run_leaves_the_last_good_table_unchanged(
    materialize: Materialize, warehouse: Path
) -> None:
    source = {"frame": CLEAN}

    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return source["frame"]

    @dd.asset(SmallOrders, name="orders")
    def strict_orders() -> pl.DataFrame:
        return MIXED

    materialize([orders])
    table = warehouse / "orders.parquet"
    good = table.read_bytes()

    for asset, frame, error in [
        (orders, WRONG_COLUMNS, errors.ColumnSchemaError),
        (orders, ALL_INVALID, errors.NoValidRowsError),
        (strict_orders, MIXED, errors.ValidationAbortError),
    ]:
        source["frame"] = frame
        result = materialize([asset], raise_on_error=False)
        assert step_error(result) == error.__name__
        assert table.read_bytes() == good
    assert_frame_equal(pl.read_parquet(table), CLEAN)


def test_a_frame_with_no_rows_is_written_and_only_none_keeps_the_last_table(
    materialize: Materialize, warehouse: Path
) -> None:
    # The spec's "every row valid: written" holds for zero rows too: nothing failed, so the
    # empty table replaces the last one. Only invalid rows (`NoValidRowsError`) or `None`
    # (a skip) leave the last table in place.
    source: dict[str, pl.DataFrame | None] = {"frame": CLEAN}

    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame | None:
        return source["frame"]

    materialize([orders])
    table = warehouse / "orders.parquet"

    source["frame"] = None
    skipped = materialize([orders])
    assert run_tables(skipped, "orders") == []
    assert_frame_equal(pl.read_parquet(table), CLEAN)

    source["frame"] = CLEAN.clear()
    emptied = materialize([orders])
    (materialization,) = run_tables(emptied, "orders")
    assert value(materialization.metadata["dagster/row_count"]) == 0
    assert all(check.passed for check in run_checks(emptied).values())
    assert run_tables(emptied, "orders_quarantine") == []
    # Only the first clean run stored a quarantine, an empty one, so that it can be read.
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").is_empty()
    assert_frame_equal(pl.read_parquet(table), CLEAN.clear())


def test_a_run_raises_the_packages_error_when_asked_to(materialize: Materialize) -> None:
    @dd.asset(SmallOrders)
    def orders() -> pl.DataFrame:
        return MIXED

    with pytest.raises(errors.ValidationAbortError) as raised:
        materialize([orders])
    assert raised.value.counts == {"amount|min": 1, "amount|nullability": 1}


# --- quarantine=True and the context parameter ------------------------------------------------


def test_quarantine_adds_a_context_parameter(quarantine_dir: Path) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders(raw_orders: pl.DataFrame) -> pl.DataFrame:
        return raw_orders

    with pytest.raises(dg.DagsterInvalidInvocationError, match="context"):
        orders(MIXED)
    (table,) = call_tables(orders(dg.build_asset_context(), MIXED))
    assert table.value["order_id"].to_list() == ["a", "c"]
    assert pl.read_parquet(quarantine_dir / "orders_quarantine.parquet").height == 2


def test_quarantine_with_a_declared_context_passes_it_on(
    quarantine_dir: Path, asset_context: AssetContext
) -> None:
    seen: list[dg.AssetKey] = []

    @dd.asset(SmallOrders, quarantine=True)
    def annotated(context: dg.AssetExecutionContext, raw_orders: pl.DataFrame) -> pl.DataFrame:
        context.log.info("%d rows arrived", raw_orders.height)
        seen.append(context.asset_key)
        return raw_orders

    @dd.asset(SmallOrders, quarantine=True)
    def unannotated(context, raw_orders: pl.DataFrame) -> pl.DataFrame:  # type: ignore[no-untyped-def]
        seen.append(context.asset_key)
        return raw_orders

    for asset in (annotated, unannotated):
        assert asset.keys_by_input_name == {"raw_orders": dg.AssetKey("raw_orders")}
        (table,) = call_tables(asset(asset_context(), MIXED))
        assert table.value.height == 2
        stored = pl.read_parquet(quarantine_dir / f"{asset.key.path[-1]}_quarantine.parquet")
        assert stored.height == 2
    assert seen == [dg.AssetKey("annotated"), dg.AssetKey("unannotated")]


def test_without_quarantine_the_asset_keeps_the_users_signature() -> None:
    @dd.asset(Orders)
    def plain_orders(raw_orders: pl.DataFrame) -> pl.DataFrame:
        return raw_orders

    events = list(plain_orders(storefront_orders()))

    (table,) = call_tables(events)
    assert table.value.height == 12
    assert all(check.passed for check in call_checks(events).values())


def test_a_call_reads_the_quarantine_dir_when_it_writes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, asset_context: AssetContext
) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return MIXED

    # Set only after the declaration, as a test's monkeypatch does after the import.
    monkeypatch.setenv(QUARANTINE_DIR, str(tmp_path / "first"))
    list(orders(asset_context()))
    monkeypatch.setenv(QUARANTINE_DIR, str(tmp_path / "second"))
    (table,) = call_tables(orders(asset_context()))

    for directory in ("first", "second"):
        stored = pl.read_parquet(tmp_path / directory / "orders_quarantine.parquet")
        assert stored["order_id"].to_list() == ["b", "d"]
    address = (table.metadata or {})["dataframely/quarantine_address"]
    assert address == str(tmp_path / "second" / "orders_quarantine.parquet")


def test_a_call_with_every_row_valid_never_reads_the_quarantine_dir(
    monkeypatch: pytest.MonkeyPatch, asset_context: AssetContext
) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return CLEAN

    (table,) = call_tables(orders(asset_context()))  # unset
    assert table.value.height == 3
    monkeypatch.setenv(QUARANTINE_DIR, "   ")  # a value that raises wherever it is read
    (table,) = call_tables(orders(asset_context()))
    assert table.value.height == 3


# --- metadata through the context ---------------------------------------------------------------


def test_metadata_through_the_context_in_a_run(materialize: Materialize) -> None:
    @dd.asset(SmallOrders)
    def with_asset_metadata(context: dg.AssetExecutionContext) -> pl.DataFrame:
        context.add_asset_metadata({"source": "stripe", "dagster/row_count": 999})
        return CLEAN

    @dd.asset(SmallOrders)
    def with_output_metadata(context: dg.AssetExecutionContext) -> pl.DataFrame:
        context.add_output_metadata({"source": "stripe"})
        return CLEAN

    @dd.asset(SmallOrders)
    def with_named_output_metadata(context: dg.AssetExecutionContext) -> pl.DataFrame:
        context.add_output_metadata({"source": "stripe"}, output_name="result")
        return CLEAN

    result = materialize(
        [with_asset_metadata, with_output_metadata, with_named_output_metadata],
        raise_on_error=False,
    )

    (table,) = run_tables(result, "with_asset_metadata")
    assert value(table.metadata["source"]) == "stripe"
    # Dagster merges the context's metadata last, so it overrides the package's own key.
    assert value(table.metadata["dagster/row_count"]) == 999
    assert step_error(result, "with_output_metadata") == "DagsterInvariantViolationError"
    failure = result.failure_data_for_node("with_output_metadata")
    assert failure is not None
    assert failure.error is not None
    assert "multiple outputs exist" in str(failure.error.cause or failure.error)
    assert run_tables(result, "with_output_metadata") == []
    (named,) = run_tables(result, "with_named_output_metadata")
    assert value(named.metadata["source"]) == "stripe"
    assert value(named.metadata["dagster/row_count"]) == 3


def test_add_asset_metadata_in_a_call_raises_as_for_a_plain_asset(
    asset_context: AssetContext,
) -> None:
    @dd.asset(SmallOrders)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        context.add_asset_metadata({"source": "stripe"})
        return CLEAN

    @dg.asset
    def plain(context: dg.AssetExecutionContext) -> pl.DataFrame:
        context.add_asset_metadata({"source": "stripe"})
        return CLEAN

    with pytest.raises(AttributeError, match="_step_execution_context"):
        list(orders(asset_context()))
    with pytest.raises(AttributeError, match="_step_execution_context"):
        plain(asset_context())


def test_an_asset_check_of_your_own_runs_beside_the_schemas(materialize: Materialize) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return MIXED

    @dg.asset_check(asset=orders, name="triage_needed")
    def triage_needed() -> dg.AssetCheckResult:
        return dg.AssetCheckResult(passed=False)

    result = materialize([orders, triage_needed])

    checks = run_checks(result)
    assert list(checks) == [*SMALL_CHECKS, "triage_needed"]
    assert not checks["triage_needed"].passed


# --- from __future__ import annotations -------------------------------------------------------


def test_string_annotations_still_reach_the_io_manager(
    materialize: Materialize, warehouse: Path
) -> None:
    future.seen.clear()

    materialize([future.raw_orders, future.lazy_orders, future.unannotated_context_orders])

    assert future.seen == {
        "lazy_orders": pl.LazyFrame,
        "unannotated_context_orders": pl.DataFrame,
    }
    assert pl.read_parquet(warehouse / "lazy_orders.parquet")["order_id"].to_list() == ["a", "c"]
    quarantined = pl.read_parquet(warehouse / "unannotated_context_orders_quarantine.parquet")
    assert quarantined["order_id"].to_list() == ["b"]


def test_an_annotated_context_under_pep_563_gets_the_assets_context(
    materialize: Materialize, warehouse: Path
) -> None:
    # Before, Dagster compared the string with its context classes and refused it ("Cannot
    # annotate `context`"), or evaluated it in this package's module and blamed an `if
    # TYPE_CHECKING` block for `AssetExecutionContext`, which the module imports.
    future.seen.clear()

    materialize(
        [
            future.raw_orders,
            future.annotated_context_orders,
            future.imported_context_orders,
            future.channel_orders,
            future.shop,
        ]
    )

    assert future.seen == {
        "annotated_context_orders": pl.LazyFrame,
        "annotated_context_orders context": dg.AssetExecutionContext,
        "imported_context_orders context": dg.AssetExecutionContext,
        "channel_orders context": dg.AssetExecutionContext,
        "shop context": dg.AssetExecutionContext,
    }
    stored = pl.read_parquet(warehouse / "annotated_context_orders.parquet")
    assert stored["order_id"].to_list() == ["a", "c"]
    quarantined = pl.read_parquet(warehouse / "annotated_context_orders_quarantine.parquet")
    assert quarantined["order_id"].to_list() == ["b"]


def test_an_annotated_context_under_pep_563_works_where_dg_asset_refuses_it() -> None:
    with pytest.raises(dg.DagsterInvalidDefinitionError, match="Cannot annotate `context`"):
        future.declare_with_annotated_context(dg.asset)

    future.declare_with_annotated_context(dd.asset(SmallOrders))
    future.declare_with_annotated_context(dd.asset(SmallOrders, quarantine=True))


@pytest.mark.parametrize(
    ("function", "parameter", "annotation", "name"),
    [
        (type_checking.context_orders, "context", "dg.AssetExecutionContext", "dg"),
        (type_checking.lazy_orders, "raw_orders", "pl.LazyFrame", "pl"),
    ],
    ids=["context", "input"],
)
def test_an_annotation_naming_what_only_type_checking_imports_says_so(
    function: Any, parameter: str, annotation: str, name: str
) -> None:
    with pytest.raises(UnresolvedAnnotationError) as raised:
        dd.asset(function)

    assert str(raised.value) == (
        f"The annotation of parameter {parameter!r} of {function.__name__!r}, `{annotation}`, "
        f"does not resolve in the function's module (name {name!r} is not defined). Under "
        "`from __future__ import annotations` an annotation is a string, and Dagster evaluates "
        "the parameters' annotations when the asset is declared, so every name in one must "
        "exist in the module when it runs: a name imported only under `if TYPE_CHECKING:` "
        "(where ruff's flake8-type-checking rules move an import used only in annotations) or "
        "a class defined inside a function is missing. Import it at the top of the module, "
        "such as `import dagster as dg`; to keep ruff from moving it, list the decorator under "
        '`lint.flake8-type-checking.runtime-evaluated-decorators` (`"dagster_dataframely.asset"`).'
    )

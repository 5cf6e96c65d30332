"""Every error in the guide's Errors table, raised through `dd.asset` (and `quarantine_spec`)."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely import errors
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
    collect,
    run_checks,
    run_tables,
    step_error,
)
from tests.parquet_io_manager import ParquetIOManager
from tests.schemas import Shop


class StartsWith(str):
    """Equal to any string that starts with it: for a message whose tail varies by version."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and other.startswith(str(self))

    __hash__ = str.__hash__


def _declare(schema: type[dy.Schema], **arguments: Any) -> dg.AssetsDefinition:
    @dd.asset(schema, **arguments)
    def orders() -> pl.DataFrame:
        return CLEAN

    return orders


# --- at decoration -----------------------------------------------------------------------------


def test_a_collection_is_refused_at_decoration() -> None:
    with pytest.raises(errors.CollectionNotSupportedError) as raised:
        _declare(Shop)  # type: ignore[arg-type]
    assert raised.value.collection_name == "Shop"


class Reserved(dy.Schema):
    order_id = dy.String()
    dy_note = dy.String()


class Unnameable(dy.Schema):
    order_id = dy.String(alias="order id")


class Colliding(dy.Schema):
    amount = dy.Float64(min=0.0)

    @dy.rule()
    def amount__min(cls) -> pl.Expr:
        return pl.col("amount") < 1_000


class TooWideDecimal(dy.Schema):
    order_id = dy.String()
    amount = dy.Decimal(76)


SCHEMA_ERRORS = {
    "reserved": (Reserved, errors.ReservedColumnError, {"columns": ["dy_note"]}),
    "invalid-name": (Unnameable, errors.InvalidColumnNameError, {"columns": ["order id"]}),
    "collision": (Colliding, errors.CheckNameCollisionError, {"name": "dy_rule__amount__min"}),
    "decimal-76": (
        TooWideDecimal,
        errors.UnsupportedDtypeError,
        {
            "problems": [
                {
                    "column": "amount",
                    "dtype": "Decimal(precision=76, scale=0)",
                    # Polars' own words; newer releases add the value (", got 76").
                    "reason": StartsWith("precision must be between 1 and 38"),
                }
            ]
        },
    ),
}


@pytest.mark.parametrize(
    ("schema", "error", "attributes"), SCHEMA_ERRORS.values(), ids=SCHEMA_ERRORS
)
@pytest.mark.parametrize(
    "declare",
    [
        _declare,
        lambda schema: dd.asset(schema, quarantine=True, check_granularity="column"),
        lambda schema: dd.quarantine_spec(schema, "orders"),
    ],
    ids=["dd.asset", "dd.asset-column", "quarantine_spec"],
)
def test_a_schema_this_package_cannot_name_is_refused_where_it_is_declared(
    schema: type[dy.Schema],
    error: type[errors.DagsterDataframelyError],
    attributes: dict[str, object],
    declare: Callable[[type[dy.Schema]], object],
) -> None:
    with pytest.raises(error) as raised:
        declare(schema)
    for name, expected in attributes.items():
        assert getattr(raised.value, name) == expected
    assert isinstance(raised.value, errors.DagsterDataframelyError)


@pytest.mark.parametrize(
    ("setting", "bad"),
    [
        ("check_granularity", "table"),
        ("schema_rules", "flat"),
        ("max_failure_samples", True),
        ("max_failure_samples", -1),
        ("statistics", "false"),
        ("row_sample", 2.5),
    ],
)
def test_a_bad_setting_argument_raises_at_declaration(setting: str, bad: object) -> None:
    with pytest.raises(errors.InvalidSettingError) as raised:
        dd.asset(SmallOrders, **{setting: bad})
    assert raised.value.setting == setting
    assert raised.value.value == repr(bad)
    assert raised.value.source == "the argument"


@pytest.mark.parametrize(
    ("variable", "bad"),
    [
        ("DAGSTER_DATAFRAMELY_CHECK_GRANULARITY", "table"),
        ("DAGSTER_DATAFRAMELY_STATISTICS", "yes"),
        ("DAGSTER_DATAFRAMELY_STATISTICS", "1"),
        ("DAGSTER_DATAFRAMELY_ROW_SAMPLE", "five"),
        ("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", ""),
        ("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", "   "),
    ],
)
def test_a_bad_environment_variable_raises_at_declaration(
    variable: str, bad: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(variable, bad)
    with pytest.raises(errors.InvalidSettingError) as raised:
        dd.asset(SmallOrders, quarantine=True)
    assert raised.value.env_var == variable
    assert raised.value.source == f"the environment variable {variable}"


def test_an_argument_overrides_the_environment_and_a_flag_ignores_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_CHECK_GRANULARITY", "schema")
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_STATISTICS", "FALSE")

    orders = _declare(SmallOrders, check_granularity="column")

    assert [s.name for s in orders.check_specs][-1] == "dy_col__amount"


# --- the returned value ----------------------------------------------------------------------


RESULTS: dict[str, tuple[Callable[[], dg.MaterializeResult[Any]], type[Exception], str | None]] = {
    "value-none": (
        lambda: dg.MaterializeResult(value=None, metadata={"source": "stripe"}),
        errors.MaterializeResultValueError,
        None,
    ),
    "asset_key": (
        lambda: dg.MaterializeResult(value=CLEAN, asset_key="orders"),
        errors.MaterializeResultFieldError,
        "asset_key",
    ),
    "check_results": (
        lambda: dg.MaterializeResult(
            value=CLEAN,
            check_results=[dg.AssetCheckResult(check_name="dy_rule__amount__min", passed=True)],
        ),
        errors.MaterializeResultFieldError,
        "check_results",
    ),
}


@pytest.mark.parametrize(("returned", "error", "field"), RESULTS.values(), ids=RESULTS)
def test_a_returned_result_the_decorator_cannot_use_fails_before_the_gate(
    returned: Callable[[], dg.MaterializeResult[Any]],
    error: type[Exception],
    field: str | None,
    materialize: Materialize,
    asset_context: AssetContext,
) -> None:
    @dd.asset(SmallOrders)
    def orders() -> dg.MaterializeResult[pl.DataFrame]:
        return returned()

    events = collect(orders(asset_context()), error)
    assert events == []

    result = materialize([orders], raise_on_error=False)
    assert step_error(result) == error.__name__
    assert run_checks(result) == {}
    assert run_tables(result, "orders") == []

    with pytest.raises(error) as raised:
        list(orders(asset_context()))
    assert raised.value.asset == "orders"  # type: ignore[attr-defined]
    if field is not None:
        assert raised.value.field == field  # type: ignore[attr-defined]
        assert field in str(raised.value)


@pytest.mark.parametrize(
    ("value", "value_type", "conversion"),
    [
        (lambda: CLEAN.to_arrow(), "pyarrow.Table", "pl.from_arrow"),
        (lambda: CLEAN.to_dicts(), "list", "pl.from_pandas"),
        (lambda: CLEAN["amount"], "polars.Series", "value="),
    ],
    ids=["arrow-table", "list", "polars-series"],
)
def test_a_result_holding_something_else_than_a_frame_says_what_it_holds(
    value: Callable[[], object],
    value_type: str,
    conversion: str,
    materialize: Materialize,
    asset_context: AssetContext,
) -> None:
    # A pandas frame was reported as "holds no frame"; the message now names what `value`
    # holds, whose module tells a pandas or Arrow frame from a Polars one.
    @dd.asset(SmallOrders)
    def orders() -> dg.MaterializeResult[Any]:
        return dg.MaterializeResult(value=value())

    with pytest.raises(errors.MaterializeResultValueError) as raised:
        list(orders(asset_context()))
    assert raised.value.value_type == value_type
    message = str(raised.value)
    assert f"holds a {value_type}, not a Polars frame" in message
    assert "holds no frame" not in message
    assert conversion in message

    result = materialize([orders], raise_on_error=False)
    assert step_error(result) == "MaterializeResultValueError"
    assert run_tables(result, "orders") == []


# --- the failure policy --------------------------------------------------------------------------


def test_column_schema_error_names_every_mismatched_column(
    asset_context: AssetContext, materialize: Materialize
) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.LazyFrame:
        return WRONG_COLUMNS.lazy()

    with pytest.raises(errors.ColumnSchemaError) as raised:
        list(orders(asset_context()))
    assert [problem["column"] for problem in raised.value.problems] == ["order_id", "amount"]
    assert "order_id" in str(raised.value)
    assert "amount" in str(raised.value)

    with pytest.raises(errors.ColumnSchemaError):
        materialize([orders])


def test_validation_abort_error_gives_the_count_per_rule(materialize: Materialize) -> None:
    @dd.asset(SmallOrders)
    def orders() -> pl.DataFrame:
        return pl.concat([MIXED, ALL_INVALID])

    with pytest.raises(errors.ValidationAbortError) as raised:
        materialize([orders])
    assert raised.value.invalid_count == 4
    assert raised.value.counts == {"amount|min": 3, "amount|nullability": 1}


def test_no_valid_rows_error_names_the_quarantine_address(
    materialize: Materialize, warehouse: Path, quarantine_dir: Path, asset_context: AssetContext
) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return ALL_INVALID

    with pytest.raises(errors.NoValidRowsError) as in_a_run:
        materialize([orders])
    with pytest.raises(errors.NoValidRowsError) as in_a_call:
        list(orders(asset_context()))

    assert in_a_run.value.address == "orders_quarantine"
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").height == 2
    assert not (warehouse / "orders.parquet").exists()
    path = quarantine_dir / "orders_quarantine.parquet"
    assert in_a_call.value.address == str(path)
    assert str(path) in str(in_a_call.value)
    assert pl.read_parquet(path).height == 2


# --- the quarantine's key and directory ----------------------------------------------------------


def _collider(name: str = "orders_quarantine", **arguments: Any) -> dg.AssetsDefinition:
    @dg.asset(name=name, **arguments)
    def collider() -> pl.DataFrame:
        return CLEAN

    return collider


@pytest.mark.parametrize("selected", [False, True], ids=["whole-graph", "selection"])
def test_another_asset_at_the_quarantine_key_fails_the_run_before_the_function(
    selected: bool, materialize: Materialize, warehouse: Path
) -> None:
    ran: list[bool] = []

    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        ran.append(True)
        return MIXED

    collider = _collider()
    selection = {"selection": [orders]} if selected else {}
    result = materialize([orders, collider], raise_on_error=False, **selection)

    assert step_error(result) == "QuarantineKeyCollisionError"
    assert ran == []
    assert run_checks(result) == {}
    assert not (warehouse / "orders.parquet").exists()
    # Run as well, the other asset wrote its own file; selected away, nothing wrote one.
    assert (warehouse / "orders_quarantine.parquet").exists() is not selected
    failure = result.failure_data_for_node("orders")
    assert failure is not None
    assert failure.error is not None
    assert "quarantine_spec" in str(failure.error.cause)


def test_a_collision_anywhere_in_the_code_location_fails_every_run_of_the_asset(
    warehouse: Path, instance: dg.DagsterInstance
) -> None:
    ran: list[str] = []

    @dd.asset(SmallOrders, quarantine=True, key_prefix="sales")
    def orders() -> pl.DataFrame:
        ran.append("orders")
        return MIXED

    @dd.asset(SmallOrders, quarantine=True)
    def returns() -> pl.DataFrame:
        ran.append("returns")
        return MIXED

    defs = dg.Definitions(
        # Only `sales/orders_quarantine` collides: the quarantine key keeps the asset's prefix,
        # and a spec adds the quarantine to the graph without materializing it.
        assets=[
            orders,
            returns,
            _collider(key_prefix="sales"),
            _collider(name="orders"),
            dd.quarantine_spec(SmallOrders, returns),
        ],
        jobs=[dg.define_asset_job("sales_job", selection=[orders.key, returns.key])],
        resources={"io_manager": ParquetIOManager(base_dir=str(warehouse))},
    )
    dg.Definitions.validate_loadable(defs)
    quiet = {"run_config": QUIET, "instance": instance}

    # A run of the one asset, as the UI launches it, and a job of the code location's own.
    one = defs.resolve_implicit_global_asset_job_def().execute_in_process(
        asset_selection=[orders.key], raise_on_error=False, **quiet
    )
    job = defs.resolve_job_def("sales_job").execute_in_process(raise_on_error=False, **quiet)

    assert step_error(one, "sales__orders") == "QuarantineKeyCollisionError"
    assert step_error(job, "sales__orders") == "QuarantineKeyCollisionError"
    assert job.failure_data_for_node("returns") is None
    assert ran == ["returns"]
    assert pl.read_parquet(warehouse / "returns_quarantine.parquet").height == 2
    assert not (warehouse / "sales").exists()


def test_a_call_does_not_check_the_quarantine_key(
    quarantine_dir: Path, asset_context: AssetContext
) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return MIXED

    _collider()  # exists, but a call has no code location to find it in
    checks = call_checks(orders(asset_context()))
    assert not checks["dy_rule__amount__min"].passed
    assert pl.read_parquet(quarantine_dir / "orders_quarantine.parquet").height == 2


def test_a_call_with_invalid_rows_and_no_quarantine_dir_raises(
    monkeypatch: pytest.MonkeyPatch, asset_context: AssetContext, tmp_path: Path
) -> None:
    monkeypatch.delenv(QUARANTINE_DIR, raising=False)
    monkeypatch.chdir(tmp_path)

    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> pl.DataFrame:
        return MIXED

    with pytest.raises(errors.QuarantineDirError) as raised:
        list(orders(asset_context()))
    assert raised.value.asset == "orders"
    assert QUARANTINE_DIR in str(raised.value)
    assert "dd.testing.call_asset" in str(raised.value)  # the fix a test wants
    assert list(tmp_path.rglob("*")) == []  # no default directory


# --- three ways to get this wrong ----------------------------------------------------------------


class RuleWithoutCls(dy.Schema):
    amount = dy.Float64()

    @dy.rule()
    def amount_is_positive() -> pl.Expr:  # type: ignore[misc]  # the mistake under test
        return pl.col("amount") > 0


def test_a_rule_without_cls_declares_and_then_fails_when_it_runs(
    asset_context: AssetContext,
) -> None:
    @dd.asset(RuleWithoutCls)
    def orders() -> pl.DataFrame:
        return pl.DataFrame({"amount": [1.0]})

    assert "dy_rule__amount_is_positive" in [spec.name for spec in orders.check_specs]
    with pytest.raises(TypeError, match="takes 0 positional arguments"):
        list(orders(asset_context()))

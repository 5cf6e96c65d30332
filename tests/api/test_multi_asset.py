"""`dd.multi_asset`: each output validated as `dd.asset` validates one asset, all or nothing."""

import inspect
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely import errors
from dagster_dataframely._upstream import DagsterInvalidPropertyError
from tests.asset_support import (
    ALL_INVALID,
    CLEAN,
    MIXED,
    WRONG_COLUMNS,
    AssetContext,
    Materialize,
    collect,
    run_tables,
    value,
)
from tests.parquet_io_manager import ParquetIOManager
from tests.schemas import Orders


class Lines(dy.Schema):
    """One line of an order."""

    line_id = dy.Int64(primary_key=True)
    quantity = dy.Int64(min=1)


LINES_CLEAN = pl.DataFrame({"line_id": [1, 2], "quantity": [1, 5]})
LINES_MIXED = pl.DataFrame({"line_id": [1, 2, 3], "quantity": [1, 0, 4]})
"""Line 2 fails `quantity|min`."""
LINES_ALL_INVALID = pl.DataFrame({"line_id": [1, 2], "quantity": [0, -1]})


def _orders_and_lines(
    frames: Mapping[str, object] | object,
    *,
    orders: dd.AssetOut | None = None,
    lines: dd.AssetOut | None = None,
    **kwargs: Any,
) -> dg.AssetsDefinition:
    """A multi-asset `orders_and_lines` returning `frames`, both outputs quarantined by default."""

    @dd.multi_asset(
        outs={
            "orders": orders or dd.AssetOut(Orders, quarantine=True),
            "lines": lines or dd.AssetOut(Lines, quarantine=True),
        },
        **kwargs,
    )
    def orders_and_lines() -> Any:
        return frames

    return orders_and_lines


def _checks_by_asset(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], bool]:
    return {
        (check.asset_key.to_user_string(), check.check_name): check.passed
        for check in result.get_asset_check_evaluations()
    }


def _files(directory: Path) -> dict[str, bytes]:
    """Every file under `directory` by its relative path, with its bytes."""
    if not directory.exists():
        return {}
    return {
        str(path.relative_to(directory)): path.read_bytes()
        for path in sorted(directory.rglob("*"))
        if path.is_file()
    }


# --- declaration -----------------------------------------------------------------------------


def test_each_output_is_an_asset_with_its_own_checks_tab_and_version() -> None:
    asset = _orders_and_lines(
        {},
        lines=dd.AssetOut(Lines, check_granularity="schema", key_prefix=["shop"]),
    )
    assert set(asset.keys) == {dg.AssetKey("orders"), dg.AssetKey(["shop", "lines"])}
    by_asset: dict[str, list[str]] = {}
    for spec in asset.check_specs:
        by_asset.setdefault(spec.asset_key.to_user_string(), []).append(spec.name)
    assert by_asset["orders"] == [s.name for s in dd.wiring.check_specs(Orders, asset="orders")]
    assert by_asset["shop/lines"] == ["dy_schema__columns", "dy_schema__rules"]
    lines_key = dg.AssetKey(["shop", "lines"])
    metadata = asset.metadata_by_key[lines_key]
    assert metadata["dagster/column_schema"] == dd.wiring.table_schema(Lines)
    assert asset.code_versions_by_key[lines_key] == dd.wiring.schema_version(Lines)
    assert asset.descriptions_by_key[lines_key] == "One line of an order."
    assert asset.descriptions_by_key[dg.AssetKey("orders")] == Orders.__doc__


def test_output_settings_and_dg_parameters_pass_through() -> None:
    spec = dg.AssetSpec(["sales", "lines"], description="Mine.", group_name="sales")
    asset = _orders_and_lines(
        {},
        orders=dd.AssetOut(
            Orders, io_manager_key="warehouse", code_version="7", metadata={"owner": "x"}
        ),
        lines=dd.AssetOut.from_spec(Lines, spec, quarantine=True, io_manager_key="db"),
    )
    orders = dg.AssetKey("orders")
    lines = dg.AssetKey(["sales", "lines"])
    assert asset.code_versions_by_key[orders] == "7"
    assert asset.metadata_by_key[orders]["owner"] == "x"
    assert asset.descriptions_by_key[lines] == "Mine."
    assert asset.group_names_by_key[lines] == "sales"
    assert asset.get_io_manager_key_for_asset_key(orders) == "warehouse"
    assert asset.get_io_manager_key_for_asset_key(lines) == "db"


def test_clear_quarantine_without_quarantine_fails_at_declaration() -> None:
    with pytest.raises(errors.ClearQuarantineError, match="'lines'"):
        _orders_and_lines({}, lines=dd.AssetOut(Lines, clear_quarantine=True))


def test_unknown_warning_rule_fails_at_declaration() -> None:
    with pytest.raises(errors.UnknownWarningRuleError):
        _orders_and_lines({}, lines=dd.AssetOut(Lines, warning_rules=["nope"]))


def test_a_collection_is_refused_as_an_output_schema() -> None:
    from tests.schemas import Shop

    with pytest.raises(errors.CollectionNotSupportedError):
        dd.AssetOut(Shop)  # type: ignore[arg-type]


# --- runs ------------------------------------------------------------------------------------


def test_every_output_is_written_with_its_own_quarantine(
    materialize: Materialize, warehouse: Path
) -> None:
    result = materialize([_orders_and_lines({"orders": MIXED, "lines": LINES_MIXED})])
    assert pl.read_parquet(warehouse / "orders.parquet")["order_id"].to_list() == ["a", "c"]
    assert pl.read_parquet(warehouse / "lines.parquet")["line_id"].to_list() == [1, 3]
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet")[
        "order_id"
    ].sort().to_list() == [
        "b",
        "d",
    ]
    lines_quarantine = pl.read_parquet(warehouse / "lines_quarantine.parquet")
    assert lines_quarantine["dy_rule__quantity__min"].to_list() == ["invalid"]
    checks = _checks_by_asset(result)
    assert checks[("orders", "dy_rule__amount__min")] is False
    assert checks[("lines", "dy_rule__quantity__min")] is False
    assert checks[("lines", "dy_rule__primary_key")] is True
    (orders,) = run_tables(result, "orders")
    (lines,) = run_tables(result, "lines")
    assert value(orders.metadata["dataframely/invalid_count"]) == 2
    assert value(lines.metadata["dataframely/invalid_count"]) == 1
    assert value(lines.metadata["dataframely/quarantine_address"]) == "lines_quarantine"
    assert "dataframely/valid_statistics/numeric" in lines.metadata


def test_columns_tab_of_every_output_survives_the_run(
    materialize: Materialize, instance: dg.DagsterInstance
) -> None:
    asset = _orders_and_lines({"orders": CLEAN, "lines": LINES_CLEAN})
    materialize([asset])
    for key, schema in ((dg.AssetKey("orders"), Orders), (dg.AssetKey("lines"), Lines)):
        event = instance.get_latest_materialization_event(key)
        assert event is not None
        materialization = event.asset_materialization
        assert materialization is not None
        assert value(materialization.metadata["dagster/column_schema"]) == dd.wiring.table_schema(
            schema
        )


@pytest.mark.parametrize(
    ("lines", "lines_out", "error"),
    [
        (LINES_ALL_INVALID, dd.AssetOut(Lines, quarantine=True), errors.NoValidRowsError),
        (LINES_MIXED, dd.AssetOut(Lines), errors.ValidationAbortError),
        (WRONG_COLUMNS, dd.AssetOut(Lines, quarantine=True), errors.ColumnSchemaError),
    ],
    ids=["no-valid-rows", "abort", "column-mismatch"],
)
def test_a_failing_output_leaves_every_table_of_the_step_as_it_was(
    materialize: Materialize,
    warehouse: Path,
    lines: pl.DataFrame,
    lines_out: dd.AssetOut,
    error: type[Exception],
) -> None:
    first = _orders_and_lines({"orders": CLEAN, "lines": LINES_CLEAN}, lines=lines_out)
    materialize([first])
    before = {k: v for k, v in _files(warehouse).items() if "quarantine" not in k}
    assert set(before) == {"orders.parquet", "lines.parquet"}
    # The clean first run stored an empty quarantine for each output that has one.
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").is_empty()

    failing = _orders_and_lines({"orders": MIXED, "lines": lines}, lines=lines_out)
    result = materialize([failing], raise_on_error=False)

    assert not result.success
    after = _files(warehouse)
    assert {k: v for k, v in after.items() if "quarantine" not in k} == before
    # The clean-but-partial `orders` still quarantined what arrived.
    quarantined = pl.read_parquet(warehouse / "orders_quarantine.parquet")
    assert sorted(quarantined["order_id"]) == ["b", "d"]
    assert run_tables(result, "orders") == []
    assert run_tables(result, "lines") == []
    checks = _checks_by_asset(result)
    assert checks[("orders", "dy_rule__amount__min")] is False
    assert checks[("lines", "dy_schema__columns")] is (error is not errors.ColumnSchemaError)
    failure = result.failure_data_for_node("orders_and_lines")
    assert failure is not None
    assert failure.error is not None
    cause = failure.error.cause or failure.error
    assert cause.cls_name == error.__name__
    assert "'lines'" in cause.message
    assert "No table of the step was written" in cause.message


def test_the_first_failing_output_is_raised_and_every_failing_output_named(
    asset_context: AssetContext, quarantine_dir: Path
) -> None:
    asset = _orders_and_lines(
        {"orders": ALL_INVALID, "lines": LINES_MIXED}, lines=dd.AssetOut(Lines)
    )
    events = collect(asset(asset_context()), errors.NoValidRowsError)
    assert not [e for e in events if isinstance(e, dg.MaterializeResult)]
    checks = [e for e in events if isinstance(e, dg.AssetCheckResult)]
    assert {c.asset_key for c in checks} == {dg.AssetKey("orders"), dg.AssetKey("lines")}
    with pytest.raises(errors.NoValidRowsError) as raised:
        collect(asset(asset_context()))
    notes = "".join(raised.value.__notes__)
    assert "'orders'" in notes
    assert "'lines'" in notes


def test_without_a_failing_output_a_clean_output_is_written_beside_a_partial_one(
    asset_context: AssetContext, quarantine_dir: Path
) -> None:
    asset = _orders_and_lines({"orders": CLEAN, "lines": LINES_MIXED})
    events = collect(asset(asset_context()))
    tables = {e.asset_key: e.value for e in events if isinstance(e, dg.MaterializeResult)}
    assert tables[dg.AssetKey("orders")].equals(CLEAN)
    assert tables[dg.AssetKey("lines")]["line_id"].to_list() == [1, 3]


def test_none_and_a_missing_output_are_skips(materialize: Materialize, warehouse: Path) -> None:
    asset = _orders_and_lines({"orders": None})
    result = materialize([asset])
    assert result.success
    assert _files(warehouse) == {}
    checks = _checks_by_asset(result)
    assert checks
    assert all(checks.values())
    assert {asset for asset, _ in checks} == {"orders", "lines"}


def test_a_materialize_result_per_output_keeps_its_metadata(
    asset_context: AssetContext,
) -> None:
    asset = _orders_and_lines(
        {"orders": dg.MaterializeResult(value=CLEAN, metadata={"source": "api"})},
    )
    (table,) = [e for e in asset(asset_context()) if isinstance(e, dg.MaterializeResult)]
    assert table.asset_key == dg.AssetKey("orders")
    assert value(table.metadata["source"]) == "api"
    assert value(table.metadata["dagster/row_count"]) == 3


@pytest.mark.parametrize(
    ("returned", "fragment"),
    [
        ([CLEAN], "returned a list, not a mapping"),
        (CLEAN, "returned a polars.DataFrame, not a mapping"),
        ({"order": CLEAN}, "'order'"),
        ({"orders": CLEAN.to_dicts()}, "returned a list for output 'orders'"),
    ],
    ids=["list", "frame", "unknown-name", "wrong-type"],
)
def test_a_bad_return_fails_with_a_clear_error_before_anything_is_written(
    materialize: Materialize, warehouse: Path, returned: object, fragment: str
) -> None:
    result = materialize([_orders_and_lines(returned)], raise_on_error=False)
    failure = result.failure_data_for_node("orders_and_lines")
    assert failure is not None
    assert failure.error is not None
    cause = failure.error.cause or failure.error
    assert cause.cls_name == "MultiAssetReturnError"
    assert fragment in cause.message
    assert result.get_asset_check_evaluations() == []
    assert _files(warehouse) == {}


# --- subsets ---------------------------------------------------------------------------------


def test_a_subset_run_validates_and_writes_only_the_selected_outputs(
    materialize: Materialize, warehouse: Path
) -> None:
    seen: list[set[str]] = []

    @dd.multi_asset(
        outs={"orders": dd.AssetOut(Orders), "lines": dd.AssetOut(Lines, quarantine=True)},
        can_subset=True,
    )
    def orders_and_lines(context: dg.AssetExecutionContext) -> dict[str, Any]:
        seen.append(set(context.op_execution_context.selected_output_names))
        # `orders` would abort the step; it is not selected, so it is ignored.
        return {"orders": WRONG_COLUMNS, "lines": LINES_MIXED}

    result = materialize([orders_and_lines], selection=["lines"])
    assert result.success
    assert "orders" not in seen[0]
    assert set(_files(warehouse)) == {"lines.parquet", "lines_quarantine.parquet"}
    assert {asset for asset, _ in _checks_by_asset(result)} == {"lines"}


# --- collisions, quarantine specs ------------------------------------------------------------


def test_every_outputs_quarantine_key_is_checked_for_a_collision(materialize: Materialize) -> None:
    @dg.asset(name="lines_quarantine")
    def impostor() -> pl.DataFrame:
        return pl.DataFrame()

    asset = _orders_and_lines({"orders": CLEAN, "lines": LINES_CLEAN})
    # The impostor is not in the run: the code location's graph is what is checked.
    result = materialize(
        [asset, impostor],
        selection=[dg.AssetKey("orders"), dg.AssetKey("lines")],
        raise_on_error=False,
    )
    failure = result.failure_data_for_node("orders_and_lines")
    assert failure is not None
    assert failure.error is not None
    cause = failure.error.cause or failure.error
    assert cause.cls_name == "QuarantineKeyCollisionError"
    assert "lines_quarantine" in cause.message


def test_quarantine_spec_takes_the_definition_and_the_output_key() -> None:
    asset = _orders_and_lines(
        {}, lines=dd.AssetOut(Lines, quarantine=True, group_name="shop", metadata={"s": "1"})
    )
    spec = dd.quarantine_spec(Lines, asset, asset_key="lines")
    assert spec.key == dg.AssetKey("lines_quarantine")
    assert spec.group_name == "shop"
    assert spec.metadata["s"] == "1"
    assert [dep.asset_key for dep in spec.deps] == [dg.AssetKey("lines")]
    with pytest.raises(errors.MultiAssetKeyError, match="asset_key="):
        dd.quarantine_spec(Lines, asset)
    with pytest.raises(errors.MultiAssetKeyError, match="has no asset 'line'"):
        dd.quarantine_spec(Lines, asset, asset_key="line")


def test_a_downstream_asset_reads_an_outputs_quarantine(materialize: Materialize) -> None:
    asset = _orders_and_lines({"orders": CLEAN, "lines": LINES_MIXED})

    @dg.asset(ins={"invalid": dg.AssetIn("lines_quarantine")}, deps=[dg.AssetKey("lines")])
    def review(invalid: pl.DataFrame) -> pl.DataFrame:
        return invalid

    result = materialize([asset, dd.quarantine_spec(Lines, asset, asset_key="lines"), review])
    read = result.output_for_node("review")
    assert read["line_id"].to_list() == [2]
    assert read["dy_rule__quantity__min"].to_list() == ["invalid"]


# --- partitions ------------------------------------------------------------------------------


def test_each_partition_is_validated_and_quarantined_on_its_own(
    materialize: Materialize, warehouse: Path
) -> None:
    days = dg.StaticPartitionsDefinition(["d1", "d2"])

    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(Orders, quarantine=True),
            "lines": dd.AssetOut(Lines, quarantine=True),
        },
        partitions_def=days,
    )
    def orders_and_lines(context: dg.AssetExecutionContext) -> dict[str, pl.DataFrame]:
        lines = LINES_MIXED if context.partition_key == "d2" else LINES_CLEAN
        return {"orders": CLEAN, "lines": lines}

    for day in ("d1", "d2"):
        result = materialize([orders_and_lines], partition_key=day)
        assert result.success
        for check in result.get_asset_check_evaluations():
            assert check.metadata["dy_partition"].value == day
    assert set(_files(warehouse)) == {
        "orders/d1.parquet",
        "orders/d2.parquet",
        "lines/d1.parquet",
        "lines/d2.parquet",
        "lines_quarantine/d2.parquet",
        # Stored empty by the clean runs, so that every partition's quarantine can be read.
        "orders_quarantine/d1.parquet",
        "orders_quarantine/d2.parquet",
        "lines_quarantine/d1.parquet",
    }


# --- direct invocation -----------------------------------------------------------------------


def test_a_direct_call_writes_one_quarantine_file_per_output(
    asset_context: AssetContext, quarantine_dir: Path
) -> None:
    asset = _orders_and_lines({"orders": MIXED, "lines": LINES_MIXED})
    collect(asset(asset_context()))
    assert set(_files(quarantine_dir)) == {
        "orders_quarantine.parquet",
        "lines_quarantine.parquet",
    }
    assert pl.read_parquet(quarantine_dir / "lines_quarantine.parquet")["line_id"].to_list() == [2]


def test_a_direct_call_without_a_quarantine_dir_fails_only_with_invalid_rows(
    asset_context: AssetContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", raising=False)
    clean = _orders_and_lines({"orders": CLEAN, "lines": LINES_CLEAN})
    assert len([e for e in clean(asset_context()) if isinstance(e, dg.MaterializeResult)]) == 2
    mixed = _orders_and_lines({"orders": CLEAN, "lines": LINES_MIXED})
    with pytest.raises(errors.QuarantineDirError, match="'lines'"):
        collect(mixed(asset_context()))


def test_call_asset_returns_one_output_of_a_multi_asset() -> None:
    asset = _orders_and_lines({"orders": MIXED, "lines": LINES_ALL_INVALID})
    lines = dd.testing.call_asset(asset, asset_key="lines")
    orders = dd.testing.call_asset(asset, asset_key="orders")
    assert isinstance(lines.error, errors.NoValidRowsError)
    assert lines.table is None
    assert orders.table is None  # the atomicity rule: lines failed the step
    assert lines.quarantine is not None
    assert lines.quarantine["line_id"].to_list() == [1, 2]
    assert orders.quarantine is not None
    assert sorted(orders.quarantine["order_id"]) == ["b", "d"]
    assert "dy_rule__quantity__min" in lines.failed_checks
    assert "dy_rule__amount__min" in orders.failed_checks
    with pytest.raises(errors.MultiAssetKeyError):
        dd.testing.call_asset(asset)


def test_a_hand_wired_multi_asset_names_the_output_for_the_writer_and_the_key_check(
    materialize: Materialize, warehouse: Path
) -> None:
    keys = {"orders": dg.AssetKey("orders"), "lines": dg.AssetKey("lines")}

    @dg.multi_asset(
        outs={name: dg.AssetOut(is_required=False) for name in keys},
        check_specs=[
            *dd.wiring.check_specs(Orders, asset="orders"),
            *dd.wiring.check_specs(Lines, asset="lines"),
        ],
    )
    def orders_and_lines(context: dg.AssetExecutionContext) -> Any:
        for name, schema, frame in (("orders", Orders, MIXED), ("lines", Lines, LINES_MIXED)):
            dd.wiring.validate_quarantine_key(context, keys[name])
            yield from dd.wiring.validation_results(
                schema,
                frame,
                valid_key=keys[name],
                quarantine_writer=dd.wiring.delegating_writer(context, keys[name]),
            )

    materialize([orders_and_lines])
    assert {"orders_quarantine.parquet", "lines_quarantine.parquet"} <= set(_files(warehouse))
    assert os.path.exists(warehouse / "lines.parquet")


def test_the_hand_wiring_functions_take_an_asset_key_as_the_string_dagster_prints(
    materialize: Materialize, warehouse: Path
) -> None:
    schemas = {"erp/orders": Orders, "erp/lines": Lines}

    @dg.multi_asset(
        outs={
            "orders": dg.AssetOut(key_prefix="erp", is_required=False),
            "lines": dg.AssetOut(key_prefix="erp", is_required=False),
        },
        check_specs=[
            spec for key, s in schemas.items() for spec in dd.wiring.check_specs(s, asset=key)
        ],
    )
    def erp(context: dg.AssetExecutionContext) -> Any:
        for key, schema, frame in (
            ("erp/orders", Orders, MIXED),
            ("erp/lines", Lines, LINES_MIXED),
        ):
            dd.wiring.validate_quarantine_key(context, key)
            yield from dd.wiring.validation_results(
                schema,
                frame,
                valid_key=dg.AssetKey.from_user_string(key),
                quarantine_writer=dd.wiring.delegating_writer(context, key),
            )

    result = materialize([erp])
    assert {"orders_quarantine.parquet", "lines_quarantine.parquet"} <= set(
        _files(warehouse / "erp")
    )
    checked = {
        (c.asset_key.to_user_string(), c.check_name) for c in result.get_asset_check_evaluations()
    }
    assert ("erp/orders", "dy_rule__amount__min") in checked
    results = dd.wiring.check_results(
        Orders, MIXED, asset_key="erp/orders", severity=dg.AssetCheckSeverity.WARN
    )
    assert {r.asset_key for r in results} == {dg.AssetKey(["erp", "orders"])}


def test_the_writer_refuses_to_guess_the_output_of_a_multi_asset(
    materialize: Materialize,
) -> None:
    @dg.multi_asset(outs={"a": dg.AssetOut(), "b": dg.AssetOut()})
    def both(context: dg.AssetExecutionContext) -> Any:
        dd.wiring.delegating_writer(context)
        yield dg.Output(1, "a")
        yield dg.Output(2, "b")

    result = materialize([both], raise_on_error=False)
    failure = result.failure_data_for_node("both")
    assert failure is not None
    assert failure.error is not None
    cause = failure.error.cause or failure.error
    assert cause.cls_name == "MultiAssetKeyError"


def test_multi_asset_takes_every_dg_multi_asset_parameter_but_the_excluded_ones() -> None:
    # `outs` declares the outputs (`dd.AssetOut.from_spec` takes a spec), the schemas give
    # the checks, and `resource_defs` binds an IO manager.
    excluded = {"specs", "check_specs", "io_manager_def", "internal_asset_deps"}
    theirs = {
        name
        for name, parameter in inspect.signature(dg.multi_asset).parameters.items()
        if parameter.kind is not inspect.Parameter.VAR_KEYWORD
    }
    ours = set(inspect.signature(dd.multi_asset).parameters)
    assert ours == theirs - excluded


def test_asset_out_takes_every_dg_asset_out_parameter_but_the_type_and_virtual_ones() -> None:
    theirs = {
        name
        for name, parameter in inspect.signature(dg.AssetOut.__init__).parameters.items()
        if parameter.kind is not inspect.Parameter.VAR_KEYWORD and name != "self"
    }
    # `dd.asset`'s own settings, which are no `@dg.asset` parameter.
    settings = set(inspect.signature(dd.asset).parameters) - set(
        inspect.signature(dg.asset).parameters
    )
    ours = set(inspect.signature(dd.AssetOut).parameters)
    assert settings <= ours
    assert ours - settings == theirs - {"dagster_type", "is_virtual"}


class _FullDiskForLinesQuarantine(ParquetIOManager):
    """Writes as `ParquetIOManager` does, but cannot write `lines_quarantine`."""

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: Any) -> None:
        if context.asset_key == dg.AssetKey("lines_quarantine"):
            raise OSError("No space left on device")
        super().dump_to_path(context, obj, path)


def test_a_quarantine_that_cannot_be_written_leaves_every_table_unwritten(
    materialize: Materialize, warehouse: Path
) -> None:
    asset = _orders_and_lines(
        {"orders": MIXED, "lines": LINES_MIXED},
        lines=dd.AssetOut(Lines, quarantine=True, io_manager_key="full"),
    )
    result = materialize(
        [asset],
        resources={"full": _FullDiskForLinesQuarantine(base_dir=str(warehouse))},
        raise_on_error=False,
    )
    assert not result.success
    assert result.get_asset_materialization_events() == []
    assert set(_files(warehouse)) == {"orders_quarantine.parquet"}


def test_inputs_are_loaded_as_annotated_and_lazy_outputs_are_validated(
    materialize: Materialize, warehouse: Path
) -> None:
    @dg.asset
    def raw_lines() -> pl.DataFrame:
        return LINES_MIXED

    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(Orders, quarantine=True),
            "lines": dd.AssetOut(Lines, quarantine=True),
        },
    )
    def orders_and_lines(raw_lines: pl.LazyFrame) -> dict[str, pl.LazyFrame]:
        assert isinstance(raw_lines, pl.LazyFrame)
        return {"orders": CLEAN.lazy(), "lines": raw_lines}

    materialize([raw_lines, orders_and_lines])
    assert pl.read_parquet(warehouse / "lines.parquet")["line_id"].to_list() == [1, 3]
    assert pl.read_parquet(warehouse / "lines_quarantine.parquet")["line_id"].to_list() == [2]


def test_each_output_has_its_own_warning_rules(asset_context: AssetContext) -> None:
    asset = _orders_and_lines(
        {"orders": MIXED, "lines": LINES_MIXED},
        lines=dd.AssetOut(Lines, quarantine=True, warning_rules=["quantity|min"]),
    )
    with pytest.raises(errors.QuarantineDirError):
        # `orders` has invalid rows and no quarantine dir: proof its rule still blocks.
        collect(asset(asset_context()))
    lines = dd.testing.call_asset(asset, asset_key="lines")
    assert lines.table is not None
    assert lines.table["line_id"].to_list() == [1, 3, 2]
    assert lines.quarantine is None
    assert lines.checks["dy_rule__quantity__min"].severity == dg.AssetCheckSeverity.WARN
    orders = dd.testing.call_asset(asset, asset_key="orders")
    assert orders.quarantine is not None
    assert sorted(orders.quarantine["order_id"]) == ["b", "d"]


def test_clear_quarantine_clears_only_its_output_and_never_in_a_failing_step(
    materialize: Materialize, warehouse: Path
) -> None:
    def asset(frames: Mapping[str, object]) -> dg.AssetsDefinition:
        return _orders_and_lines(
            frames,
            orders=dd.AssetOut(Orders, quarantine=True, clear_quarantine=True),
        )

    materialize([asset({"orders": MIXED, "lines": LINES_MIXED})])
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").height == 2
    # `lines` fails the step: `orders` is clean, but its table is not replaced, nor its quarantine.
    materialize([asset({"orders": CLEAN, "lines": LINES_ALL_INVALID})], raise_on_error=False)
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").height == 2
    materialize([asset({"orders": CLEAN, "lines": LINES_CLEAN})])
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").height == 0
    assert pl.read_parquet(warehouse / "lines_quarantine.parquet").height == 2  # not cleared


def test_the_writer_raises_exactly_dagsters_error_under_direct_invocation() -> None:
    """The spec names `DagsterInvalidPropertyError` itself, so a caller matching the class by
    identity (or by name in a serialized error) sees that class, not a subclass."""
    context = dg.build_asset_context()
    with pytest.raises(DagsterInvalidPropertyError) as raised:
        dd.wiring.delegating_writer(context)
    assert type(raised.value) is DagsterInvalidPropertyError
    assert "file_writer" in str(raised.value)

"""`dd.testing.call_asset`: a direct call's materialization, checks and quarantine as values."""

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from dagster_dataframely import errors
from dagster_dataframely._store.capture import capturing_quarantine
from tests.asset_support import (
    ALL_INVALID,
    CLEAN,
    MIXED,
    QUARANTINE_DIR,
    WRONG_COLUMNS,
    Materialize,
    SmallOrders,
    value,
)

ADDRESS = "dataframely/quarantine_address"
COLUMNS = "dy_schema__columns"
AMOUNT_MIN = "dy_rule__amount__min"
AMOUNT_NULL = "dy_rule__amount__nullability"
EVERY_CHECK = [spec.name for spec in dd.wiring.check_specs(SmallOrders, asset="orders")]


@pytest.fixture(autouse=True)
def _in_an_empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs in an empty directory, so a file written anywhere relative shows."""
    monkeypatch.chdir(tmp_path)


def _orders(frame: pl.DataFrame | None, *, quarantine: bool = True) -> dg.AssetsDefinition:
    @dd.asset(SmallOrders, quarantine=quarantine)
    def orders() -> pl.DataFrame | None:
        return frame

    return orders


def test_a_clean_call_holds_the_table_and_every_check_passed(tmp_path: Path) -> None:
    call = dd.testing.call_asset(_orders(CLEAN))

    assert call.error is None
    assert call.table is not None
    assert_frame_equal(call.table, CLEAN)
    assert call.materialization is not None
    assert value(call.materialization.metadata["dagster/row_count"]) == 3
    assert list(call.checks) == EVERY_CHECK
    assert call.failed_checks == []
    assert call.quarantine is None
    assert list(tmp_path.rglob("*")) == []


def test_a_partial_write_keeps_the_quarantine_in_memory_and_writes_no_file(
    tmp_path: Path,
) -> None:
    # No DAGSTER_DATAFRAMELY_QUARANTINE_DIR is set (the root conftest clears it): a plain direct
    # call would raise QuarantineDirError here.
    call = dd.testing.call_asset(_orders(MIXED))

    assert call.error is None
    assert call.table is not None
    assert sorted(call.table["order_id"]) == ["a", "c"]
    assert call.quarantine is not None
    assert sorted(call.quarantine["order_id"]) == ["b", "d"]
    by_id = {row["order_id"]: row for row in call.quarantine.iter_rows(named=True)}
    assert by_id["b"][AMOUNT_MIN] == "invalid"
    assert by_id["d"][AMOUNT_NULL] == "invalid"
    assert call.failed_checks == [AMOUNT_NULL, AMOUNT_MIN]
    assert call.checks[AMOUNT_MIN].severity == dg.AssetCheckSeverity.WARN
    assert call.materialization is not None
    assert value(call.materialization.metadata[ADDRESS]) == "memory://orders_quarantine"
    assert list(tmp_path.rglob("*")) == []


def test_a_set_quarantine_dir_is_not_used_either(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(QUARANTINE_DIR, str(tmp_path / "quarantine"))
    call = dd.testing.call_asset(_orders(MIXED))
    assert call.quarantine is not None
    assert call.quarantine.height == 2
    assert list(tmp_path.rglob("*")) == []


def test_an_abort_is_recorded_with_the_checks_yielded_before_it() -> None:
    call = dd.testing.call_asset(_orders(MIXED, quarantine=False))

    assert isinstance(call.error, errors.ValidationAbortError)
    assert call.error.invalid_count == 2
    assert call.materialization is None
    assert call.table is None
    assert call.quarantine is None
    assert call.failed_checks == [AMOUNT_NULL, AMOUNT_MIN]
    assert call.checks[AMOUNT_MIN].severity == dg.AssetCheckSeverity.ERROR


def test_no_valid_rows_is_recorded_and_the_quarantine_holds_every_row() -> None:
    call = dd.testing.call_asset(_orders(ALL_INVALID))

    assert isinstance(call.error, errors.NoValidRowsError)
    assert call.materialization is None
    assert call.quarantine is not None
    assert sorted(call.quarantine["order_id"]) == ["x", "y"]
    assert value(call.checks[AMOUNT_MIN].metadata[ADDRESS]) == "memory://orders_quarantine"


def test_a_column_schema_mismatch_is_recorded_with_its_failing_check() -> None:
    call = dd.testing.call_asset(_orders(WRONG_COLUMNS))

    assert isinstance(call.error, errors.ColumnSchemaError)
    assert list(call.checks) == [COLUMNS]
    assert call.failed_checks == [COLUMNS]
    assert call.materialization is None
    assert call.quarantine is None


def test_a_skip_has_no_materialization_and_every_check_passed() -> None:
    call = dd.testing.call_asset(_orders(None))

    assert call.error is None
    assert call.materialization is None
    assert list(call.checks) == EVERY_CHECK
    assert call.failed_checks == []


def test_an_error_in_the_asset_function_propagates() -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders(raw: pl.DataFrame) -> pl.DataFrame:
        return raw.rename({"missing": "amount"})

    with pytest.raises(pl.exceptions.ColumnNotFoundError):
        dd.testing.call_asset(orders, {"raw": CLEAN})


def test_inputs_partition_key_and_resources_reach_the_function() -> None:
    days = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-03")

    @dd.asset(SmallOrders, quarantine=True, partitions_def=days, required_resource_keys={"cap"})
    def orders(context: dg.AssetExecutionContext, raw: pl.DataFrame) -> pl.DataFrame:
        cap: float = context.resources.cap
        return raw.with_columns(
            pl.col("order_id") + "@" + context.partition_key,
            pl.col("amount").clip(upper_bound=cap),
        )

    call = dd.testing.call_asset(
        orders, {"raw": MIXED}, partition_key="2026-01-02", resources={"cap": 2.0}
    )

    assert call.table is not None
    assert call.table["order_id"].to_list() == ["a@2026-01-02", "c@2026-01-02"]
    assert call.table["amount"].to_list() == [1.0, 2.0]
    assert call.materialization is not None
    assert value(call.materialization.metadata[ADDRESS]) == "memory://orders_quarantine/2026-01-02"


BY_DAY_AND_REGION = dg.MultiPartitionsDefinition(
    {
        "date": dg.StaticPartitionsDefinition(["2026-01-01"]),
        "region": dg.StaticPartitionsDefinition(["eu", "us"]),
    }
)


def test_a_multi_partitioned_function_gets_the_key_object_a_run_gives(
    materialize: Materialize,
) -> None:
    seen: list[tuple[type, dict[str, str]]] = []

    @dd.asset(SmallOrders, quarantine=True, partitions_def=BY_DAY_AND_REGION)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        key: Any = context.partition_key  # a run's is a dg.MultiPartitionKey, typed str
        seen.append((type(key), key.keys_by_dimension))
        return MIXED.with_columns(pl.col("order_id") + "@" + key.keys_by_dimension["region"])

    materialize([orders], partition_key="2026-01-01|eu")
    call = dd.testing.call_asset(orders, partition_key="2026-01-01|eu")

    (in_the_run, in_the_call) = seen
    assert (
        in_the_call == in_the_run == (dg.MultiPartitionKey, {"date": "2026-01-01", "region": "eu"})
    )
    assert call.table is not None
    assert call.table["order_id"].to_list() == ["a@eu", "c@eu"]
    assert call.materialization is not None
    assert value(call.materialization.metadata[ADDRESS]) == (
        "memory://orders_quarantine/2026-01-01|eu"
    )


def test_a_multi_partition_key_without_a_key_per_dimension_is_refused() -> None:
    @dd.asset(SmallOrders, quarantine=True, partitions_def=BY_DAY_AND_REGION)
    def orders() -> pl.DataFrame:
        raise AssertionError("the key is refused before the function runs")

    with pytest.raises(errors.InvalidArgumentsError, match=r"<date>\|<region>"):
        dd.testing.call_asset(orders, partition_key="eu")


@pytest.mark.parametrize(
    ("partitions_def", "example"),
    [
        (dg.DailyPartitionsDefinition(start_date="2026-01-01"), "'2026-01-01'"),
        (BY_DAY_AND_REGION, "'2026-01-01|eu'"),
        (dg.DynamicPartitionsDefinition(name="stores"), "one of its partition keys"),
    ],
    ids=["daily", "multi", "dynamic"],
)
def test_a_partitioned_asset_without_a_partition_key_is_refused(
    tmp_path: Path, partitions_def: dg.PartitionsDefinition[str], example: str
) -> None:
    """A run is launched for a partition; a call without one would validate no partition's rows."""
    called: list[bool] = []

    @dd.asset(SmallOrders, quarantine=True, partitions_def=partitions_def, key_prefix="shop")
    def orders() -> pl.DataFrame:
        called.append(True)
        return MIXED

    with pytest.raises(errors.InvalidArgumentsError) as refused:
        dd.testing.call_asset(orders)

    message = str(refused.value)
    assert "'shop/orders'" in message
    assert "partition_key=" in message
    assert example in message
    assert isinstance(refused.value, dg.DagsterInvariantViolationError)
    assert called == []
    assert list(tmp_path.rglob("*")) == []


def test_asset_key_takes_the_string_dagster_prints() -> None:
    @dd.multi_asset(
        outs={
            "flights": dd.AssetOut(SmallOrders, quarantine=True, key_prefix="fleet"),
            "planes": dd.AssetOut(SmallOrders, quarantine=True, key_prefix="fleet"),
        }
    )
    def fleet() -> dict[str, pl.DataFrame]:
        return {"flights": MIXED, "planes": CLEAN}

    call = dd.testing.call_asset(fleet, asset_key="fleet/flights")

    assert call.table is not None
    assert call.table["order_id"].to_list() == ["a", "c"]
    assert call.quarantine is not None
    assert call.quarantine["order_id"].to_list() == ["b", "d"]
    with pytest.raises(errors.MultiAssetKeyError, match="fleet/flights"):
        dd.testing.call_asset(fleet, asset_key="fleet/flight")


def test_a_plain_asset_that_returns_its_value_is_refused_with_a_clear_error() -> None:
    @dg.asset
    def plain() -> pl.DataFrame:
        return CLEAN

    with pytest.raises(dg.DagsterInvariantViolationError, match=r"dd\.asset"):
        dd.testing.call_asset(plain)


# --- no state leaks between calls, tests or threads ----------------------------------------------


def test_after_a_call_a_plain_direct_invocation_writes_to_the_quarantine_dir_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    orders = _orders(MIXED)
    dd.testing.call_asset(orders)

    with pytest.raises(errors.QuarantineDirError):
        list(orders(dg.build_asset_context()))
    monkeypatch.setenv(QUARANTINE_DIR, str(tmp_path / "quarantine"))
    list(orders(dg.build_asset_context()))
    assert (tmp_path / "quarantine" / "orders_quarantine.parquet").exists()


def test_a_capture_in_one_thread_does_not_catch_another_threads_quarantine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(QUARANTINE_DIR, str(tmp_path / "quarantine"))
    orders = _orders(MIXED)
    captured_started = threading.Event()
    other_done = threading.Event()

    def other_thread() -> None:
        captured_started.wait(timeout=30)
        try:
            list(orders(dg.build_asset_context()))
        finally:
            other_done.set()

    with ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(other_thread)
        with capturing_quarantine() as captured:
            captured_started.set()
            other_done.wait(timeout=60)
        future.result()

    assert captured.frames == []
    assert (tmp_path / "quarantine" / "orders_quarantine.parquet").exists()


def test_concurrent_calls_each_get_their_own_quarantine() -> None:
    assets = [
        _orders(pl.DataFrame({"order_id": [f"ok{i}", f"bad{i}"], "amount": [1.0, -1.0]}))
        for i in range(4)
    ]
    with ThreadPoolExecutor(max_workers=4) as pool:
        calls = list(pool.map(dd.testing.call_asset, assets))

    for i, call in enumerate(calls):
        assert call.quarantine is not None
        assert call.quarantine["order_id"].to_list() == [f"bad{i}"]


def test_a_clean_call_of_an_asset_that_clears_its_quarantine_shows_the_empty_frame() -> None:
    @dd.asset(SmallOrders, quarantine=True, clear_quarantine=True)
    def orders() -> pl.DataFrame:
        return CLEAN

    call = dd.testing.call_asset(orders)

    assert call.error is None
    assert call.quarantine is not None
    assert call.quarantine.height == 0
    assert call.quarantine.columns[: len(SmallOrders.column_names())] == (
        SmallOrders.column_names()
    )

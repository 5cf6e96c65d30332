"""`dd.collection_asset` through `PolarsParquetIOManager` and `DuckDBPolarsIOManager`.

One asset per member of a Collection of orders and their lines, with the filter "every line has
an order". Each member's table and quarantine go through that member's own IO manager (the
same one for both members, or one each in the same step); the quarantine's filter column says
which rows the filter removed; a failing member leaves every table of the step exactly as the
previous run left it, while every member's checks report and its quarantine is written.
"""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

from .conftest import DAILY, DAY_1, DAY_2, QUIET, shared_instance
from .two_managers import KINDS, TwoManagers, checks

pytestmark = pytest.mark.integration


class Orders(dy.Schema):
    """An order."""

    order_id = dy.String(primary_key=True)
    amount = dy.Float64(min=0.0)


class Lines(dy.Schema):
    """A line of an order."""

    order_id = dy.String(primary_key=True)
    line_no = dy.Int64(primary_key=True, min=1)
    quantity = dy.Int64(min=1)


class OrderBook(dy.Collection):
    """Orders and their lines."""

    orders: dy.LazyFrame[Orders]
    lines: dy.LazyFrame[Lines]

    @dy.filter()
    def line_has_order(self) -> pl.LazyFrame:
        """Every line has an order."""
        return self.orders.select("order_id")


ORDERS = pl.DataFrame({"order_id": ["o-1", "o-2", "o-3"], "amount": [10.0, -1.0, 5.0]})
"""`o-2` fails `amount|min`."""
LINES = pl.DataFrame(
    {
        "order_id": ["o-1", "o-1", "o-2", "o-3", "o-9"],
        "line_no": [1, 2, 1, 1, 1],
        "quantity": [1, 0, 1, 2, 1],
    }
)
"""`(o-1, 2)` fails `quantity|min`; the filter removes `(o-2, 1)` and `(o-9, 1)`."""
CLEAN = {
    "orders": ORDERS.filter(pl.col("amount") >= 0),
    "lines": LINES.filter(pl.col("order_id").is_in(["o-1", "o-3"]), pl.col("quantity") > 0),
}
MIXED = {"orders": ORDERS, "lines": LINES.lazy()}
ORPHAN_LINES = pl.DataFrame({"order_id": ["o-7"], "line_no": [1], "quantity": [1]})
WRONG_LINES = LINES.with_columns(pl.col("quantity").cast(pl.String))

FILTER = "dy_filter__line_has_order"


class Warehouse(TwoManagers):
    """`orders` and `lines`; with `both`, `orders` on parquet, `lines` in DuckDB."""

    def __init__(self, kind: str, root: Path) -> None:
        super().__init__(kind, root, ("orders", "lines"))

    def asset(self, returned: object, **settings: Any) -> dg.AssetsDefinition:
        outs = {m: dg.AssetOut(io_manager_key=self.manager_of(m)) for m in ("orders", "lines")}

        @dd.collection_asset(OrderBook, outs=outs, **settings)
        def order_book() -> Any:
            return returned

        return order_book

    def run(self, returned: object, **settings: Any) -> dg.ExecuteInProcessResult:
        return dg.materialize(
            [self.asset(returned, **settings)],
            resources=self.resources(),
            instance=shared_instance(),
            run_config=QUIET,
            raise_on_error=False,
        )


@pytest.fixture(params=KINDS)
def warehouse(request: pytest.FixtureRequest, tmp_path: Path) -> Warehouse:
    return Warehouse(request.param, tmp_path)


def rows(frame: pl.DataFrame | None, *columns: str) -> list[tuple[Any, ...]]:
    assert frame is not None
    return sorted(frame.select(columns).rows())


def materialized(result: dg.ExecuteInProcessResult) -> set[str]:
    return {
        e.asset_key.to_user_string()
        for e in result.get_asset_materialization_events()
        if e.asset_key is not None
    }


def step_error(result: dg.ExecuteInProcessResult) -> str:
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None
    return error.to_string()


# --- Outcomes -------------------------------------------------------------------------------


def test_a_partial_run_writes_valid_rows_and_quarantines_what_rules_and_filters_removed(
    warehouse: Warehouse,
) -> None:
    result = warehouse.run(MIXED, quarantine=True)
    assert result.success
    assert materialized(result) == {"orders", "lines"}
    assert rows(warehouse.read("orders"), "order_id") == [("o-1",), ("o-3",)]
    assert rows(warehouse.read("lines"), "order_id", "line_no") == [("o-1", 1), ("o-3", 1)]
    assert rows(warehouse.read("orders_quarantine"), "order_id", "dy_rule__amount__min") == [
        ("o-2", "invalid")
    ]
    # The quarantine says which filter removed each line, and that a rule removed the other.
    assert rows(
        warehouse.read("lines_quarantine"), "order_id", "line_no", "dy_rule__quantity__min", FILTER
    ) == [
        ("o-1", 2, "invalid", "unknown"),
        ("o-2", 1, "valid", "invalid"),
        ("o-9", 1, "valid", "invalid"),
    ]
    evaluations = checks(result)
    assert evaluations["orders", FILTER] is True
    assert evaluations["lines", FILTER] is False
    assert evaluations["lines", "dy_rule__quantity__min"] is False
    assert evaluations["orders", "dy_rule__amount__min"] is False


def test_a_clean_run_writes_every_member(warehouse: Warehouse) -> None:
    result = warehouse.run(CLEAN, quarantine=True)
    assert result.success
    assert rows(warehouse.read("lines"), "order_id", "line_no") == [("o-1", 1), ("o-3", 1)]
    assert all(checks(result).values())
    # No row was quarantined, and an empty quarantine is stored, so that it can be read.
    quarantine = warehouse.read("lines_quarantine")
    assert quarantine is not None
    assert quarantine.is_empty()


def test_a_collection_instance_is_returned_as_its_members(warehouse: Warehouse) -> None:
    result = warehouse.run(OrderBook.validate(CLEAN), quarantine=True)
    assert result.success
    assert rows(warehouse.read("orders"), "order_id") == [("o-1",), ("o-3",)]


def test_a_member_with_no_valid_row_fails_the_step_and_writes_no_table(
    warehouse: Warehouse,
) -> None:
    assert warehouse.run(CLEAN, quarantine=True).success
    before = warehouse.snapshot()
    result = warehouse.run({"orders": CLEAN["orders"], "lines": ORPHAN_LINES}, quarantine=True)
    assert not result.success
    assert "NoValidRowsError" in step_error(result)
    assert "no table of the step was written" in step_error(result).lower()
    assert warehouse.snapshot() == before  # orders was clean, and kept its previous table too
    assert materialized(result) == set()
    assert rows(warehouse.read("lines_quarantine"), "order_id", FILTER) == [("o-7", "invalid")]
    evaluations = checks(result)
    assert evaluations["orders", FILTER] is True
    assert evaluations["lines", FILTER] is False


def test_invalid_rows_without_a_quarantine_abort_and_write_nothing(warehouse: Warehouse) -> None:
    assert warehouse.run(CLEAN).success
    before = warehouse.snapshot()
    result = warehouse.run(MIXED)
    assert not result.success
    assert "ValidationAbortError" in step_error(result)
    assert warehouse.snapshot() == before
    assert warehouse.read("orders_quarantine") is None
    assert warehouse.read("lines_quarantine") is None


def test_a_column_mismatch_in_one_member_runs_no_rule_in_any(warehouse: Warehouse) -> None:
    assert warehouse.run(CLEAN, quarantine=True).success
    before = warehouse.snapshot()
    result = warehouse.run({"orders": ORDERS, "lines": WRONG_LINES}, quarantine=True)
    assert not result.success
    assert "ColumnSchemaError" in step_error(result)
    assert warehouse.snapshot() == before
    assert checks(result) == {
        ("orders", "dy_schema__columns"): True,
        ("lines", "dy_schema__columns"): False,
    }
    # The first clean run stored an empty quarantine; the refused run left it as it was.
    kept = warehouse.read("orders_quarantine")
    assert kept is not None
    assert kept.is_empty()


def test_returning_no_member_skips_every_member(warehouse: Warehouse) -> None:
    result = warehouse.run(None, quarantine=True)
    assert result.success
    assert materialized(result) == set()
    evaluations = checks(result)
    assert evaluations[("lines", FILTER)] is True
    assert all(evaluations.values())
    assert warehouse.read("orders") is None


def test_a_missing_required_member_fails_with_the_members_name(warehouse: Warehouse) -> None:
    result = warehouse.run({"orders": ORDERS}, quarantine=True)
    assert not result.success
    assert "CollectionMemberMissingError" in step_error(result)
    assert "'lines'" in step_error(result)
    assert warehouse.snapshot() == {"orders": None, "lines": None}


def test_a_frame_for_no_member_is_refused(warehouse: Warehouse) -> None:
    result = warehouse.run({**CLEAN, "line": LINES}, quarantine=True)
    assert "MultiAssetReturnError" in step_error(result)
    assert "'line'" in step_error(result)
    assert warehouse.snapshot() == {"orders": None, "lines": None}


# --- Partitions, reading the quarantine downstream, direct calls ------------------------------


def test_each_partition_is_validated_on_its_own(tmp_path: Path) -> None:
    frames = {DAY_1: CLEAN, DAY_2: MIXED}

    @dd.collection_asset(OrderBook, quarantine=True, partitions_def=DAILY)
    def order_book(context: dg.AssetExecutionContext) -> Mapping[str, Any]:
        return frames[context.partition_key]

    resources = {"io_manager": PolarsParquetIOManager(base_dir=str(tmp_path))}
    for day in (DAY_1, DAY_2):
        result = dg.materialize(
            [order_book], partition_key=day, resources=resources, instance=shared_instance()
        )
        assert result.success
        evaluations = [e for e in result.get_asset_check_evaluations() if e.check_name == FILTER]
        assert {e.partition for e in evaluations} in ({day}, {None})
    assert rows(pl.read_parquet(tmp_path / "lines" / f"{DAY_1}.parquet"), "line_no") == [
        (1,),
        (1,),
    ]
    # The clean day stored an empty quarantine, so that it can be read.
    assert pl.read_parquet(tmp_path / "lines_quarantine" / f"{DAY_1}.parquet").is_empty()
    quarantined = pl.read_parquet(tmp_path / "lines_quarantine" / f"{DAY_2}.parquet")
    assert rows(quarantined, "order_id", FILTER) == [
        ("o-1", "unknown"),
        ("o-2", "invalid"),
        ("o-9", "invalid"),
    ]


def test_a_members_quarantine_is_read_downstream(tmp_path: Path) -> None:
    @dd.collection_asset(OrderBook, quarantine=True)
    def order_book() -> Mapping[str, Any]:
        return MIXED

    lines_quarantine = dd.quarantine_spec(OrderBook, order_book, asset_key="lines")
    columns = lines_quarantine.metadata["dagster/column_schema"].columns
    assert [c.name for c in columns][-2:] == ["dy_rule__quantity__min", FILTER]

    @dg.asset(deps=[dg.AssetKey("lines")])
    def orphans(lines_quarantine: pl.DataFrame) -> pl.DataFrame:
        return lines_quarantine.filter(pl.col(FILTER) == "invalid")

    result = dg.materialize(
        [order_book, lines_quarantine, orphans],
        resources={"io_manager": PolarsParquetIOManager(base_dir=str(tmp_path))},
        instance=shared_instance(),
    )
    assert result.success
    assert rows(result.output_for_node("orphans"), "order_id") == [("o-2",), ("o-9",)]


def test_a_direct_call_writes_one_quarantine_file_per_member(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", str(tmp_path))

    @dd.collection_asset(OrderBook, quarantine=True)
    def order_book() -> Mapping[str, Any]:
        return MIXED

    events = list(order_book(dg.build_asset_context(instance=shared_instance())))
    tables = {
        e.asset_key.to_user_string(): e.value
        for e in events
        if isinstance(e, dg.MaterializeResult) and e.asset_key is not None
    }
    assert rows(tables["lines"], "order_id", "line_no") == [("o-1", 1), ("o-3", 1)]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "lines_quarantine.parquet",
        "orders_quarantine.parquet",
    ]
    lines = pl.read_parquet(tmp_path / "lines_quarantine.parquet")
    assert rows(lines, "order_id", FILTER) == [
        ("o-1", "unknown"),
        ("o-2", "invalid"),
        ("o-9", "invalid"),
    ]

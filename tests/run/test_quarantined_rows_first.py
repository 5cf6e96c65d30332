"""What a user meets first is true: quarantined rows lead the materialization, and a green run
that quarantined rows says so in its step's log.

The order is read from the event as Dagster stores it (a SQLite instance, so the event went
through Dagster's serialization) and as the UI lists it; the log line from the run's event log.
Every entry point is run: `dd.asset`, `dd.multi_asset`, `dd.collection_asset`, a partition
range, and `dd.wiring.validation_results` in a hand-wired `@dg.asset`, and a direct call.
"""

# No `from __future__ import annotations`: Dataframely reads a Collection's annotations.
import datetime as dt
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from tests.asset_support import CLEAN, MIXED, QUIET, SmallOrders, range_tags, value
from tests.parquet_io_manager import ParquetIOManager
from tests.schemas import OrderBook

pytestmark = pytest.mark.filterwarnings("ignore::dagster.PreviewWarning")

LEAD = ["dataframely/invalid_count", "dataframely/quarantine_address"]
SPEC_KEYS = {
    "dagster/row_count",
    "dataframely/valid_sample",
    "dataframely/valid_statistics/numeric",
    "dataframely/quarantine_address",
    "dataframely/invalid_count",
    "dataframely/invalid_sample",
    "dataframely/invalid_by_rules",
}
"""The spec's keys of a materialization with invalid rows (`SmallOrders` has a number)."""
TOLERANT = dd.QualityPolicy(rules={"amount|min": dd.Threshold(warn_above=0.5)})
"""`amount|min`'s check passes while at most half the rows fail it."""
NOTICE = "rows went to a quarantine while every check of their asset passed"


@pytest.fixture(scope="module")
def stored() -> Iterator[dg.DagsterInstance]:
    """An instance that stores events in SQLite, as `dagster dev` does: read back, not kept."""
    with (
        tempfile.TemporaryDirectory() as home,
        dg.DagsterInstance.local_temp(home) as instance,
    ):
        yield instance


def run(
    instance: dg.DagsterInstance,
    assets: list[Any],
    warehouse: Path,
    *,
    tags: dict[str, str] | None = None,
    io_manager: dg.IOManager | None = None,
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        assets,
        resources={"io_manager": io_manager or ParquetIOManager(base_dir=str(warehouse))},
        instance=instance,
        run_config=QUIET,
        tags=tags,
    )


def stored_keys(
    instance: dg.DagsterInstance, result: dg.ExecuteInProcessResult, asset: str
) -> dict[str | None, list[str]]:
    """Each stored materialization of `asset` in the run, its metadata keys in stored order."""
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey.from_user_string(asset)), limit=100
    ).records
    return {
        r.asset_materialization.partition: list(r.asset_materialization.metadata)
        for r in records
        if r.run_id == result.run_id and r.asset_materialization is not None
    }


def warnings_of(instance: dg.DagsterInstance, result: dg.ExecuteInProcessResult) -> list[str]:
    """The package's warning lines of a run, from its event log."""
    return [
        entry.user_message
        for entry in instance.all_logs(result.run_id)
        if entry.level == 30 and NOTICE in entry.user_message
    ]


def orders_asset(frame: pl.DataFrame, **arguments: Any) -> dg.AssetsDefinition:
    @dd.asset(SmallOrders, name="orders", quarantine=True, **arguments)
    def orders() -> pl.DataFrame:
        return frame

    return orders


# --- the order of the metadata ----------------------------------------------------------------


def test_quarantined_rows_lead_the_stored_materialization(
    stored: dg.DagsterInstance, tmp_path: Path
) -> None:
    @dd.asset(SmallOrders, quarantine=True)
    def orders() -> dg.MaterializeResult[pl.DataFrame]:
        return dg.MaterializeResult(value=MIXED, metadata={"owner": "sales"})

    result = run(stored, [orders], tmp_path)

    (keys,) = stored_keys(stored, result, "orders").values()
    assert keys[:2] == LEAD
    # Every key is still there, Dagster's row count, the user's and the IO manager's included.
    assert set(keys) >= SPEC_KEYS | {"owner", "path", "dagster/column_schema"}
    assert keys.index("path") > keys.index("owner") > 1
    (event,) = result.get_asset_materialization_events()
    assert value(event.materialization.metadata["dataframely/invalid_count"]) == 2


def test_a_clean_run_has_no_quarantine_keys_and_starts_with_the_row_count(
    stored: dg.DagsterInstance, tmp_path: Path
) -> None:
    result = run(stored, [orders_asset(CLEAN)], tmp_path)

    (keys,) = stored_keys(stored, result, "orders").values()
    assert keys[0] == "dagster/row_count"
    assert not set(LEAD) & set(keys)


def test_a_direct_call_leads_with_them_too() -> None:
    call = dd.testing.call_asset(orders_asset(MIXED))

    assert call.materialization is not None
    assert list(call.materialization.metadata or {})[:2] == LEAD


def test_each_output_of_a_multi_asset_leads_with_its_own(
    stored: dg.DagsterInstance, tmp_path: Path
) -> None:
    @dd.multi_asset(
        outs={
            "left": dd.AssetOut(SmallOrders, quarantine=True),
            "right": dd.AssetOut(SmallOrders, quarantine=True),
        }
    )
    def both() -> dict[str, pl.DataFrame]:
        return {"left": MIXED, "right": CLEAN}

    result = run(stored, [both], tmp_path)

    (left,) = stored_keys(stored, result, "left").values()
    (right,) = stored_keys(stored, result, "right").values()
    assert left[:2] == LEAD
    assert right[0] == "dagster/row_count"


def test_each_member_of_a_collection_leads_with_its_own(
    stored: dg.DagsterInstance, tmp_path: Path
) -> None:
    orders = pl.DataFrame({"order_id": ["o-1", "o-2"], "amount": [10.0, 5.0]})
    lines = pl.DataFrame(
        {"order_id": ["o-1", "o-2", "o-9"], "line_no": [1, 1, 1], "quantity": [1, 2, 3]}
    )

    @dd.collection_asset(OrderBook, quarantine=True)
    def book() -> dict[str, pl.DataFrame]:
        return {"orders": orders, "lines": lines}

    result = run(stored, [book], tmp_path)

    (keys,) = stored_keys(stored, result, "lines").values()  # o-9 has no order
    assert keys[:2] == LEAD


def test_a_hand_wired_asset_leads_with_them(stored: dg.DagsterInstance, tmp_path: Path) -> None:
    @dg.asset(check_specs=dd.wiring.check_specs(SmallOrders, asset="orders"))
    def orders() -> dd.wiring.AssetYield:
        yield from dd.wiring.validation_results(
            SmallOrders,
            MIXED,
            valid_key=dg.AssetKey("orders"),
            quarantine_writer=lambda invalid: "memory://orders_quarantine",
        )

    result = run(stored, [orders], tmp_path)

    (keys,) = stored_keys(stored, result, "orders").values()
    assert keys[:2] == LEAD
    assert "path" in keys[2:]


# --- a partition range ------------------------------------------------------------------------

DAYS = ("2026-01-01", "2026-01-02", "2026-01-03")
DAILY = dg.DailyPartitionsDefinition(start_date=DAYS[0], end_date="2026-01-04")


class Sales(dy.Schema):
    sale_id = dy.String(primary_key=True)
    day = dy.Date(nullable=False)
    amount = dy.Float64(nullable=False, min=0.0)


def sales(rows: list[tuple[str, str, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "sale_id": [r[0] for r in rows],
            "day": [dt.date.fromisoformat(r[1]) for r in rows],
            "amount": [r[2] for r in rows],
        }
    )


class RangeStore(dg.IOManager):
    """Stores a range in one write, as a database does, and records metadata as one does."""

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        context.add_output_metadata({"table": "warehouse.sales", "written_rows": obj.height})

    def load_input(self, context: dg.InputContext) -> Any:
        raise NotImplementedError


def sales_asset(frame: pl.DataFrame, **arguments: Any) -> dg.AssetsDefinition:
    @dd.asset(
        Sales,
        name="sales",
        quarantine=True,
        partitions_def=DAILY,
        backfill_policy=dg.BackfillPolicy.single_run(),
        metadata={"partition_expr": "day"},
        **arguments,
    )
    def sales_() -> pl.DataFrame:
        return frame

    return sales_


RANGE = range_tags(DAYS[0], DAYS[1])


def test_a_range_whose_partitions_all_quarantined_rows_leads_each_with_its_own(
    stored: dg.DagsterInstance, tmp_path: Path
) -> None:
    frame = sales([("a", DAYS[0], -1.0), ("b", DAYS[0], 1.0), ("c", DAYS[1], -1.0)])
    frame = pl.concat([frame, sales([("d", DAYS[1], -2.0), ("e", DAYS[1], 3.0)])])

    result = run(stored, [sales_asset(frame)], tmp_path, tags=RANGE, io_manager=RangeStore())

    keys = stored_keys(stored, result, "sales")
    assert set(keys) == set(DAYS[:2])
    assert all(found[:2] == LEAD for found in keys.values())
    # Each partition shows its own count where the range put the total.
    counts = {
        str(e.materialization.partition): value(e.materialization.metadata[LEAD[0]])
        for e in result.get_asset_materialization_events()
    }
    assert counts == {DAYS[0]: 1, DAYS[1]: 2}


def test_in_a_mixed_range_only_the_partitions_with_invalid_rows_have_them(
    stored: dg.DagsterInstance, tmp_path: Path
) -> None:
    """A key on the range goes to every partition, so a clean one's metadata never gets it."""
    frame = sales([("a", DAYS[0], 1.0), ("b", DAYS[1], -1.0), ("c", DAYS[1], 1.0)])

    result = run(stored, [sales_asset(frame)], tmp_path, tags=RANGE, io_manager=RangeStore())

    keys = stored_keys(stored, result, "sales")
    assert not set(LEAD) & set(keys[DAYS[0]])
    package = [k for k in keys[DAYS[1]] if k.startswith(("dataframely/", "dagster/row_count"))]
    assert package[:2] == LEAD


# --- the step's log ---------------------------------------------------------------------------


def test_a_green_run_that_quarantined_rows_says_so_in_its_log(
    stored: dg.DagsterInstance, tmp_path: Path
) -> None:
    result = run(stored, [orders_asset(MIXED.drop_nulls(), quality_policy=TOLERANT)], tmp_path)

    assert all(c.passed for c in result.get_asset_check_evaluations())
    (line,) = warnings_of(stored, result)
    assert "1 row of 'orders' went to its quarantine (orders_quarantine)" in line
    assert "threshold tolerates dy_rule__amount__min (1 of 3 rows failed, 33.3%" in line
    assert "the check fails above 50% of the rows" in line


@pytest.mark.parametrize(
    ("frame", "policy"),
    [(MIXED, None), (CLEAN, TOLERANT)],
    ids=["a failing check says it", "nothing quarantined"],
)
def test_no_line_when_a_check_fails_or_nothing_was_quarantined(
    stored: dg.DagsterInstance, tmp_path: Path, frame: pl.DataFrame, policy: Any
) -> None:
    result = run(stored, [orders_asset(frame, quality_policy=policy)], tmp_path)

    assert warnings_of(stored, result) == []


def test_a_range_names_each_partition_in_its_line(
    stored: dg.DagsterInstance, tmp_path: Path
) -> None:
    frame = sales([("a", DAYS[0], -1.0), ("b", DAYS[0], 1.0), ("c", DAYS[1], 1.0)])
    policy = dd.QualityPolicy(rules={"amount|min": dd.Threshold(warn_above=1)})
    asset = sales_asset(frame, quality_policy=policy)

    result = run(stored, [asset], tmp_path, tags=RANGE, io_manager=RangeStore())

    (line,) = warnings_of(stored, result)
    assert f"1 row of partition {DAYS[0]} of 'sales' went to its quarantine" in line
    assert DAYS[1] not in line


def test_a_hand_wired_asset_says_so_through_its_step(
    stored: dg.DagsterInstance, tmp_path: Path
) -> None:
    @dg.asset(check_specs=dd.wiring.check_specs(SmallOrders, asset="orders"))
    def orders() -> dd.wiring.AssetYield:
        yield from dd.wiring.validation_results(
            SmallOrders,
            MIXED.drop_nulls(),
            valid_key=dg.AssetKey("orders"),
            quarantine_writer=lambda invalid: "memory://orders_quarantine",
            quality_policy=TOLERANT,
        )

    result = run(stored, [orders], tmp_path)

    (line,) = warnings_of(stored, result)
    assert "went to its quarantine (memory://orders_quarantine)" in line


def test_a_direct_call_says_so_through_its_context(capfd: pytest.CaptureFixture[str]) -> None:
    """The built context's log is Dagster's console logger."""
    asset = orders_asset(MIXED.drop_nulls(), quality_policy=TOLERANT)

    call = dd.testing.call_asset(asset)

    assert call.error is None
    assert not call.failed_checks
    logged = capfd.readouterr().err
    assert "WARNING" in logged
    assert NOTICE in logged
    assert "1 row of 'orders' went to its quarantine (memory://orders_quarantine)" in logged


# --- a run and a direct call agree ------------------------------------------------------------

AMOUNTS = st.lists(st.sampled_from([1.0, 2.0, -1.0, None]), min_size=1, max_size=6)


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(amounts=AMOUNTS, tolerant=st.booleans())
def test_a_run_and_a_direct_call_order_the_package_keys_alike(
    stored: dg.DagsterInstance, tmp_path: Path, amounts: list[float | None], tolerant: bool
) -> None:
    frame = pl.DataFrame(
        {"order_id": [f"o{i}" for i in range(len(amounts))], "amount": amounts},
        schema={"order_id": pl.String, "amount": pl.Float64},
    )
    asset = orders_asset(frame, quality_policy=TOLERANT if tolerant else None)

    call = dd.testing.call_asset(asset)
    result = dg.materialize(
        [asset],
        resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
        instance=stored,
        run_config=QUIET,
        raise_on_error=False,
    )

    quarantined = call.quarantine is not None and call.quarantine.height > 0
    green = call.error is None and not call.failed_checks
    # The run warns exactly when the call's outcome is green with rows quarantined.
    assert bool(warnings_of(stored, result)) == (green and quarantined)
    if call.materialization is None:  # every row invalid: no materialization either way
        assert not result.get_asset_materialization_events()
        return
    called = call.materialization.metadata or {}
    (ran,) = stored_keys(stored, result, "orders").values()
    # The package's keys in the same order, the quarantined rows' first when there are any.
    assert [k for k in ran if k in called] == list(called)
    lead = [k for k in LEAD if k in called]
    assert ran[: len(lead)] == list(called)[: len(lead)] == lead
    assert bool(lead) == quarantined
    if quarantined:
        (event,) = result.get_asset_materialization_events()
        assert value(event.materialization.metadata[LEAD[0]]) == called[LEAD[0]]
        assert value(event.materialization.metadata[LEAD[1]]) == "orders_quarantine"

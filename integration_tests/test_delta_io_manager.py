"""`dd.asset(quarantine=True)` on dagster-polars' `PolarsDeltaIOManager`, bare and wrapped.

The table and its quarantine are Delta tables side by side (`orders.delta`,
`orders_quarantine.delta`): a table per partition, or one table partitioned by the columns
`partition_by` names. Each test runs bare, wrapped in `QuarantineAwareIOManager`, and wrapped
with `staged_writes=True`, which relies on Delta's own commit. Every reader here is
`pl.read_delta` on the table itself.
"""

from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster_polars import PolarsDeltaIOManager
from deltalake import DeltaTable
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from dagster_dataframely.errors import PartitionRangeError

from .conftest import (
    ADDRESS,
    DAILY,
    DAY_1,
    DAY_2,
    MULTI,
    ORDERS_COLUMNS,
    QUIET,
    UNPARTITIONED,
    Orders,
    assert_quarantine,
    assert_table,
    materialization_metadata,
    materialize,
    multi_key,
    orders_asset,
    orders_frame,
    rerun_first_partition,
    shared_instance,
    valid_rows,
)

pytestmark = pytest.mark.integration

MODES = ("bare", "wrapped", "staged")
BY_MODE = pytest.mark.parametrize("mode", MODES)
BY_DAY = {"partition_by": "day"}
BY_DAY_AND_REGION = {"partition_by": {"day": "day", "region": "region"}}


def delta(mode: str, base: Path, **config: Any) -> object:
    """`PolarsDeltaIOManager` on `base`, as the test binds it in `mode`."""
    manager = PolarsDeltaIOManager(base_dir=str(base), **config)
    if mode == "bare":
        return manager
    return dd.QuarantineAwareIOManager(io_manager=manager, staged_writes=mode == "staged")


def tables_under(root: Path) -> set[str]:
    """Every Delta table below `root` (a directory holding a `_delta_log`), relative to it."""
    return {log.parent.relative_to(root).as_posix() for log in root.rglob("_delta_log")}


def read(path: Path) -> pl.DataFrame:
    """The Delta table at `path`, sorted by id, the orders' columns first in their order (a
    table's schema may evolve with its partition columns anywhere)."""
    stored = pl.read_delta(str(path))
    first = [column for column in ORDERS_COLUMNS if column in stored.columns]
    return stored.select(*first, pl.exclude(first)).sort("order_id")


class LimitedOrders(Orders):
    """`Orders` with one rule more, so the quarantine gains a rule column."""

    @dy.rule()
    def below_limit(cls) -> pl.Expr:
        return pl.col("amount") < 1000


class NotedOrders(Orders):
    """`Orders` with a nullable column more, so the table gains a column."""

    note = dy.String(nullable=True)


@BY_MODE
def test_the_table_and_its_quarantine_are_delta_tables_side_by_side(
    warehouse: Path, frame: pl.DataFrame, mode: str
) -> None:
    orders = orders_asset({UNPARTITIONED: frame})

    result = materialize([orders], delta(mode, warehouse))

    assert tables_under(warehouse) == {"orders.delta", "orders_quarantine.delta"}
    assert_table(read(warehouse / "orders.delta"), frame)
    assert_quarantine(read(warehouse / "orders_quarantine.delta"), frame)
    metadata = materialization_metadata(result, orders.key)
    assert metadata["path"] == str(warehouse / "orders.delta")
    assert metadata["version"] == 0
    assert metadata["dagster/row_count"] == 2
    # Wrapped, the address is the quarantine's table; bound directly, its asset key.
    wrapped = str(warehouse / "orders_quarantine.delta")
    assert metadata[ADDRESS] == ("orders_quarantine" if mode == "bare" else wrapped)


@BY_MODE
def test_a_rerun_commits_a_new_version_of_both_tables(warehouse: Path, mode: str) -> None:
    first, second = orders_frame(DAY_1, tag="first"), orders_frame(DAY_1, tag="second", invalid=2)
    frames = {UNPARTITIONED: first}
    orders = orders_asset(frames)
    manager = delta(mode, warehouse)
    materialize([orders], manager)
    frames[UNPARTITIONED] = second

    result = materialize([orders], manager)

    assert materialization_metadata(result, orders.key)["version"] == 1
    assert_table(read(warehouse / "orders.delta"), second)
    assert_quarantine(read(warehouse / "orders_quarantine.delta"), second)
    # The first version stays readable, as Delta keeps every commit.
    assert_table(pl.read_delta(str(warehouse / "orders.delta"), version=0).sort("order_id"), first)


@BY_MODE
def test_without_partition_by_each_partition_is_a_table_of_its_own(
    warehouse: Path, mode: str
) -> None:
    first = orders_frame(DAY_1, tag="first")
    second = orders_frame(DAY_1, tag="second", valid=1, invalid=2)
    other = orders_frame(DAY_2, tag="other")
    frames: dict[str, pl.DataFrame] = {}
    orders = orders_asset(frames, partitions_def=DAILY)

    rerun_first_partition(
        orders,
        frames,
        delta(mode, warehouse),
        first=(DAY_1, first, second),
        others=[(DAY_2, other)],
    )

    assert tables_under(warehouse) == {
        f"orders/{DAY_1}.delta",
        f"orders/{DAY_2}.delta",
        f"orders_quarantine/{DAY_1}.delta",
        f"orders_quarantine/{DAY_2}.delta",
    }
    for day, frame in ((DAY_1, second), (DAY_2, other)):
        assert_table(read(warehouse / "orders" / f"{day}.delta"), frame)
        assert_quarantine(read(warehouse / "orders_quarantine" / f"{day}.delta"), frame)


@BY_MODE
@pytest.mark.parametrize(
    ("partitions_def", "metadata", "a", "b"),
    [
        (DAILY, BY_DAY, DAY_1, DAY_2),
        (MULTI, BY_DAY_AND_REGION, multi_key(DAY_1, "eu"), multi_key(DAY_1, "us")),
    ],
    ids=["daily", "multi"],
)
def test_partition_by_keeps_every_partition_in_one_table(
    warehouse: Path,
    mode: str,
    partitions_def: dg.PartitionsDefinition[str],
    metadata: dict[str, Any],
    a: str,
    b: str,
) -> None:
    day_b, region_b = (DAY_1, "us") if isinstance(b, dg.MultiPartitionKey) else (DAY_2, "eu")
    first = orders_frame(DAY_1, tag="first")
    second = orders_frame(DAY_1, tag="second", valid=1, invalid=2)
    other = orders_frame(day_b, region_b, tag="other")
    frames: dict[str, pl.DataFrame] = {}
    orders = orders_asset(frames, partitions_def=partitions_def, metadata=metadata)

    rerun_first_partition(
        orders, frames, delta(mode, warehouse), first=(a, first, second), others=[(b, other)]
    )

    assert tables_under(warehouse) == {"orders.delta", "orders_quarantine.delta"}
    both = pl.concat([second, other])
    assert_table(read(warehouse / "orders.delta"), both)
    assert_quarantine(read(warehouse / "orders_quarantine.delta"), both)
    # Delta partitions the table itself, by the columns `partition_by` names.
    columns = DeltaTable(str(warehouse / "orders.delta")).metadata().partition_columns
    partition_by = metadata["partition_by"]
    assert columns == ([partition_by] if isinstance(partition_by, str) else list(partition_by))


@BY_MODE
def test_a_downstream_asset_reads_its_partition_of_a_partition_by_quarantine(
    warehouse: Path, mode: str
) -> None:
    seen: dict[str, pl.DataFrame] = {}
    frames = {DAY_1: orders_frame(DAY_1), DAY_2: orders_frame(DAY_2, invalid=2)}
    orders = orders_asset(frames, partitions_def=DAILY, metadata=BY_DAY)

    @dg.asset(partitions_def=DAILY, deps=["orders"])
    def triage(orders_quarantine: pl.DataFrame) -> None:
        seen["quarantine"] = orders_quarantine

    manager = delta(mode, warehouse)
    for day in (DAY_1, DAY_2):
        materialize(
            [orders, dd.quarantine_spec(Orders, orders), triage], manager, partition_key=day
        )

        assert_quarantine(seen["quarantine"].sort("order_id"), frames[day])


@BY_MODE
def test_a_rule_added_or_removed_never_fails_a_run(warehouse: Path, mode: str) -> None:
    """The quarantine gains a rule's column (Delta's `schema_mode="merge"`), bare or wrapped."""
    manager = delta(mode, warehouse)
    frames = {UNPARTITIONED: orders_frame(DAY_1, tag="first")}
    materialize([orders_asset(frames)], manager)
    frames[UNPARTITIONED] = orders_frame(DAY_1, tag="second", invalid=2)

    materialize([orders_asset(frames, schema=LimitedOrders)], manager)

    stored = read(warehouse / "orders_quarantine.delta")
    assert stored["dy_rule__below_limit"].to_list() == ["valid", "valid"]
    assert_quarantine(stored, frames[UNPARTITIONED])
    frames[UNPARTITIONED] = orders_frame(DAY_1, tag="third")

    materialize([orders_asset(frames)], manager)

    # The removed rule's column stays, and holds no value for the new rows.
    stored = read(warehouse / "orders_quarantine.delta")
    assert stored["dy_rule__below_limit"].to_list() == [None]
    assert set(stored["order_id"]) == {"third-2026-01-02-eu-bad0"}


@pytest.mark.parametrize("mode", ["wrapped", "staged", "bare-merging"])
def test_a_column_added_to_a_partition_by_table_keeps_every_stored_row(
    warehouse: Path, mode: str
) -> None:
    """Wrapped, the table merges the new column in; bound directly, the manager must be told."""
    config = {"schema_mode": "merge"} if mode == "bare-merging" else {}
    manager = delta(mode.removesuffix("-merging"), warehouse, **config)
    first, second = orders_frame(DAY_1), orders_frame(DAY_2)
    frames = {DAY_1: first}
    materialize(
        [orders_asset(frames, partitions_def=DAILY, metadata=BY_DAY)], manager, partition_key=DAY_1
    )
    frames[DAY_2] = second.with_columns(note=pl.lit("new"))

    orders = orders_asset(frames, partitions_def=DAILY, metadata=BY_DAY, schema=NotedOrders)
    materialize([orders], manager, partition_key=DAY_2)

    stored = read(warehouse / "orders.delta")
    assert_table(stored.drop("note"), pl.concat([first, second]))
    assert stored.filter(pl.col("day") == pl.date(2026, 1, 3))["note"].to_list() == ["new"] * 2
    assert stored.filter(pl.col("day") == pl.date(2026, 1, 2))["note"].null_count() == 2


def test_a_column_added_fails_a_bare_manager_not_told_to_merge_and_keeps_the_table(
    warehouse: Path,
) -> None:
    """Delta refuses the new schema, as it does for any asset; the last version stays whole."""
    frames = {UNPARTITIONED: orders_frame(DAY_1, tag="first")}
    materialize([orders_asset(frames)], delta("bare", warehouse))
    frames[UNPARTITIONED] = orders_frame(DAY_1, tag="second").with_columns(note=pl.lit("new"))

    result = dg.materialize(
        [orders_asset(frames, schema=NotedOrders)],
        resources={"io_manager": delta("bare", warehouse)},
        run_config=QUIET,
        instance=shared_instance(),
        raise_on_error=False,
    )

    assert not result.success
    assert_table(read(warehouse / "orders.delta"), orders_frame(DAY_1, tag="first"))


@BY_MODE
def test_a_write_delta_refuses_leaves_the_last_version(warehouse: Path, mode: str) -> None:
    """A row outside the partition fails Delta's own check of `partition_by`, mid-write."""
    frames = {DAY_2: orders_frame(DAY_2, tag="first")}
    orders = orders_asset(frames, partitions_def=DAILY, metadata=BY_DAY)
    materialize([orders], delta(mode, warehouse), partition_key=DAY_2)
    stray = valid_rows(orders_frame(DAY_1, tag="stray"))
    frames[DAY_2] = pl.concat([orders_frame(DAY_2, tag="second"), stray])

    result = dg.materialize(
        [orders],
        resources={"io_manager": delta(mode, warehouse)},
        partition_key=DAY_2,
        run_config=QUIET,
        instance=shared_instance(),
        raise_on_error=False,
    )

    assert not result.success
    assert DeltaTable(str(warehouse / "orders.delta")).version() == 0
    assert_table(read(warehouse / "orders.delta"), orders_frame(DAY_2, tag="first"))


@pytest.mark.parametrize("mode", ["bare", "wrapped"])
@pytest.mark.parametrize("metadata", [{}, BY_DAY], ids=["tables", "partition-by"])
def test_a_single_run_backfill_is_refused_before_the_function(
    warehouse: Path, mode: str, metadata: dict[str, Any]
) -> None:
    calls: list[list[str]] = []

    @dd.asset(
        Orders,
        quarantine=True,
        partitions_def=DAILY,
        backfill_policy=dg.BackfillPolicy.single_run(),
        metadata={"partition_expr": "day", **metadata},
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        calls.append(list(context.partition_keys))
        return pl.concat([orders_frame(day) for day in context.partition_keys])

    result = dg.materialize(
        [orders],
        resources={"io_manager": delta(mode, warehouse)},
        run_config=QUIET,
        instance=shared_instance(),
        tags={
            "dagster/asset_partition_range_start": DAY_1,
            "dagster/asset_partition_range_end": DAY_2,
        },
        raise_on_error=False,
    )

    assert not result.success
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None
    error = error.cause or error
    assert error.cls_name == PartitionRangeError.__name__
    assert "PolarsDeltaIOManager" in error.message
    assert "one partition per output" in error.message
    assert "BackfillPolicy.multi_run()" in error.message
    assert calls == []
    assert tables_under(warehouse) == set()


class Keyed(dy.Schema):
    region = dy.String()
    order_id = dy.Int64(primary_key=True)


REGIONS = dg.StaticPartitionsDefinition(["east", "north", "west"])


@BY_MODE
@pytest.mark.parametrize(
    "metadata", [{}, {"partition_by": "region"}], ids=["tables", "partition-by"]
)
def test_keys_across_partitions_reads_every_stored_partition(
    tmp_path: Path, mode: str, metadata: dict[str, Any]
) -> None:
    frames = {
        "east": pl.DataFrame({"region": ["east"] * 2, "order_id": [1, 2]}),
        "north": pl.DataFrame({"region": ["north"] * 2, "order_id": [2, 3]}),
        "west": pl.DataFrame({"region": ["west"] * 2, "order_id": [4, 2]}),
    }

    @dd.asset(
        Keyed,
        name="orders",
        partitions_def=REGIONS,
        keys_across_partitions=True,
        quarantine=True,
        metadata=metadata,
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames[context.partition_key]

    manager, instance = delta(mode, tmp_path), dg.DagsterInstance.ephemeral()
    passed = []
    for region in ("east", "north", "west"):
        result = dg.materialize(
            [orders], resources={"io_manager": manager}, partition_key=region, instance=instance
        )
        (evaluation,) = result.get_asset_check_evaluations()[-1:]
        passed.append(evaluation.passed)

    assert evaluation.check_name == "dy_keys_across_partitions"
    assert passed == [True, False, False]
    found = {name: value.value for name, value in evaluation.metadata.items()}
    assert found["dy_repeated_keys"] == 1
    assert found["dy_repeated_key_partitions"] == ["east", "north", "west"]
    assert found["dy_repeated_key_sample"] == [
        {"order_id": 2, "dy_partitions": "east, north, west"}
    ]


def test_the_wrapped_quarantine_can_live_in_another_delta_base(
    warehouse: Path, restricted: Path, frame: pl.DataFrame
) -> None:
    orders = orders_asset({UNPARTITIONED: frame})
    manager = dd.QuarantineAwareIOManager(
        io_manager=PolarsDeltaIOManager(base_dir=str(warehouse)),
        quarantine_io_manager=PolarsDeltaIOManager(base_dir=str(restricted)),
        staged_writes=True,
    )

    result = materialize([orders], manager)

    assert tables_under(warehouse) == {"orders.delta"}
    assert tables_under(restricted) == {"orders_quarantine.delta"}
    assert_quarantine(read(restricted / "orders_quarantine.delta"), frame)
    address = materialization_metadata(result, orders.key)[ADDRESS]
    assert address == str(restricted / "orders_quarantine.delta")
    assert_frame_equal(read(warehouse / "orders.delta"), valid_rows(frame).sort("order_id"))

"""`keys_across_partitions=True`: a key stored in two partitions fails one table-wide check.

Each partition runs alone through `dg.materialize`, on dagster-polars' parquet manager and on
DuckDB's; the check reads the stored key columns of every partition after each write.
"""

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

pytestmark = pytest.mark.integration

REGIONS = dg.StaticPartitionsDefinition(["east", "north", "west"])
CHECK = "dy_keys_across_partitions"


class Orders(dy.Schema):
    region = dy.String()
    order_id = dy.Int64(primary_key=True)
    amount = dy.Int64()


class Customers(dy.Schema):
    region = dy.String()
    email = dy.String(primary_key=True, metadata={"pii": True})


def _asset(schema: type[dy.Schema], frames: dict[str, pl.DataFrame], **kwargs: Any) -> Any:
    @dd.asset(
        schema,
        name="orders",
        partitions_def=REGIONS,
        keys_across_partitions=True,
        quarantine=True,
        metadata={"partition_expr": "region"},
        **kwargs,
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames[context.partition_key]

    return orders


def _orders(region: str, ids: list[int]) -> pl.DataFrame:
    return pl.DataFrame({"region": [region] * len(ids), "order_id": ids, "amount": [1] * len(ids)})


def _managers(tmp_path: Path) -> dict[str, dg.ConfigurableIOManagerFactory]:
    return {
        "parquet": PolarsParquetIOManager(base_dir=str(tmp_path / "tables")),
        "duckdb": DuckDBPolarsIOManager(database=str(tmp_path / "warehouse.duckdb")),
    }


def _run_each(
    asset: Any,
    manager: Any,
    partitions: list[Any],
    instance: dg.DagsterInstance | None = None,
) -> dg.AssetCheckEvaluation:
    instance = instance or dg.DagsterInstance.ephemeral()
    evaluations = []
    for partition in partitions:
        result = dg.materialize(
            [asset], resources={"io_manager": manager}, partition_key=partition, instance=instance
        )
        assert result.success
        (evaluation,) = [e for e in result.get_asset_check_evaluations() if e.check_name == CHECK]
        evaluations.append(evaluation)
    return evaluations[-1]


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_a_key_in_two_partitions_fails_naming_both_and_the_count(
    tmp_path: Path, store: str
) -> None:
    frames = {
        "east": _orders("east", [1, 2, 3]),
        "north": _orders("north", [4, 5]),
        "west": _orders("west", [3, 5, 6]),
    }
    evaluation = _run_each(_asset(Orders, frames), _managers(tmp_path)[store], list(frames))

    assert not evaluation.passed
    metadata = evaluation.metadata
    assert metadata["dy_repeated_keys"].value == 2
    assert metadata["dy_repeated_key_partitions"].data == ["east", "north", "west"]
    assert metadata["dy_repeated_key_sample"].data == [
        {"order_id": 3, "dy_partitions": "east, west"},
        {"order_id": 5, "dy_partitions": "north, west"},
    ]


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_keys_in_one_partition_each_pass(tmp_path: Path, store: str) -> None:
    frames = {"east": _orders("east", [1, 2]), "west": _orders("west", [3, 4])}
    evaluation = _run_each(_asset(Orders, frames), _managers(tmp_path)[store], list(frames))

    assert evaluation.passed
    assert evaluation.metadata["dy_repeated_keys"].value == 0


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_a_duplicate_inside_one_partition_is_the_primary_key_rule_s(
    tmp_path: Path, store: str
) -> None:
    frames = {"east": _orders("east", [1, 1, 2]), "west": _orders("west", [3])}
    instance = dg.DagsterInstance.ephemeral()
    asset = _asset(Orders, frames)
    manager = _managers(tmp_path)[store]
    for partition in frames:
        result = dg.materialize(
            [asset], resources={"io_manager": manager}, partition_key=partition, instance=instance
        )
    evaluations = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert evaluations[CHECK].passed
    first = dg.materialize(
        [asset], resources={"io_manager": manager}, partition_key="east", instance=instance
    )
    rule = {e.check_name: e for e in first.get_asset_check_evaluations()}
    assert not rule["dy_rule__primary_key"].passed
    assert rule[CHECK].passed


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_a_sensitive_key_is_masked_in_the_samples(tmp_path: Path, store: str) -> None:
    frames = {
        "east": pl.DataFrame({"region": ["east"], "email": ["ann@example.com"]}),
        "west": pl.DataFrame({"region": ["west"], "email": ["ann@example.com"]}),
    }
    evaluation = _run_each(_asset(Customers, frames), _managers(tmp_path)[store], list(frames))

    assert not evaluation.passed
    assert evaluation.metadata["dy_repeated_key_sample"].data == [
        {"email": "[sensitive]", "dy_partitions": "east, west"}
    ]
    assert "ann@example.com" not in str(evaluation.metadata)


DAYS = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-04")
DAYS_BY_REGION = dg.MultiPartitionsDefinition(
    {"day": DAYS, "region": dg.StaticPartitionsDefinition(["east", "west"])}
)


class DatedOrders(dy.Schema):
    day = dy.Datetime()
    region = dy.String()
    order_id = dy.Int64(primary_key=True)


def _dated(day: str, region: str, ids_at_hours: dict[int, int]) -> pl.DataFrame:
    """Orders of one day and region, each `id: hour` placed at its own hour of the day."""
    return pl.DataFrame(
        {
            "day": [
                datetime.fromisoformat(day) + timedelta(hours=h) for h in ids_at_hours.values()
            ],
            "region": [region] * len(ids_at_hours),
            "order_id": list(ids_at_hours),
        },
        schema={"day": pl.Datetime("us"), "region": pl.String, "order_id": pl.Int64},
    )


def _dated_asset(
    partitions_def: dg.PartitionsDefinition, frames: dict[str, pl.DataFrame], expr: object
) -> Any:
    @dd.asset(
        DatedOrders,
        name="orders",
        partitions_def=partitions_def,
        keys_across_partitions=True,
        quarantine=True,
        metadata={"partition_expr": expr},
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames[str(context.partition_key)]

    return orders


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_time_window_partitions_are_named_by_their_keys(tmp_path: Path, store: str) -> None:
    frames = {
        "2026-01-01": _dated("2026-01-01", "east", {1: 1, 2: 23}),
        "2026-01-02": _dated("2026-01-02", "east", {3: 5, 4: 6}),
        "2026-01-03": _dated("2026-01-03", "east", {1: 12}),
    }
    asset = _dated_asset(DAYS, frames, "day")
    evaluation = _run_each(asset, _managers(tmp_path)[store], list(frames))

    assert evaluation.metadata["dy_repeated_keys"].value == 1
    assert evaluation.metadata["dy_repeated_key_partitions"].data == ["2026-01-01", "2026-01-03"]


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_multi_partitions_are_told_apart_by_every_dimension(tmp_path: Path, store: str) -> None:
    # Order 1 is on one day in two regions, order 2 in one region on two days.
    frames = {
        "2026-01-01|east": _dated("2026-01-01", "east", {1: 3, 2: 4}),
        "2026-01-01|west": _dated("2026-01-01", "west", {1: 9}),
        "2026-01-02|east": _dated("2026-01-02", "east", {2: 8, 5: 1}),
    }
    asset = _dated_asset(DAYS_BY_REGION, frames, {"day": "day", "region": "region"})
    keys = [
        dg.MultiPartitionKey(dict(zip(["day", "region"], k.split("|"), strict=True)))
        for k in frames
    ]
    evaluation = _run_each(asset, _managers(tmp_path)[store], keys)

    assert evaluation.metadata["dy_repeated_keys"].value == 2
    assert evaluation.metadata["dy_repeated_key_sample"].data == [
        {"order_id": 1, "dy_partitions": "2026-01-01|east, 2026-01-01|west"},
        {"order_id": 2, "dy_partitions": "2026-01-01|east, 2026-01-02|east"},
    ]


def test_no_samples_with_row_sample_zero(tmp_path: Path) -> None:
    frames = {"east": _orders("east", [1]), "west": _orders("west", [1])}
    asset = _asset(Orders, frames, row_sample=0)
    evaluation = _run_each(asset, _managers(tmp_path)["parquet"], list(frames))

    assert evaluation.metadata["dy_repeated_keys"].value == 1
    assert "dy_repeated_key_sample" not in evaluation.metadata


def test_one_check_not_per_partition() -> None:
    asset = _asset(Orders, {})
    (spec,) = [s for s in asset.check_specs if s.name == CHECK]
    assert spec.partitions_def is None


def test_an_unpartitioned_asset_is_refused() -> None:
    with pytest.raises(dd.errors.InvalidArgumentsError, match="partitions_def"):

        @dd.asset(Orders, keys_across_partitions=True)
        def orders() -> pl.DataFrame:
            return _orders("east", [1])


def test_a_schema_without_a_key_is_refused() -> None:
    class Unkeyed(dy.Schema):
        region = dy.String()

    with pytest.raises(dd.errors.InvalidArgumentsError, match="primary_key=True"):

        @dd.asset(Unkeyed, partitions_def=REGIONS, keys_across_partitions=True)
        def orders() -> pl.DataFrame:
            return pl.DataFrame({"region": ["east"]})


# --- At its edges (issue 52) -------------------------------------------------------------


class Visits(dy.Schema):
    visited_at = dy.Datetime(metadata={"pii": True})
    visit_id = dy.Int64(primary_key=True)


def test_duckdb_names_no_partition_by_a_stored_value(tmp_path: Path) -> None:
    """A row of no partition (a time before the first window or after the last, stored by an
    older release or another writer) takes no part, and its sensitive value names nothing."""
    database = tmp_path / "warehouse.duckdb"
    manager = DuckDBPolarsIOManager(database=str(database))
    frames = {
        "2026-01-01": pl.DataFrame(
            {"visited_at": [datetime(2026, 1, 1, 3)], "visit_id": [1]},
            schema={"visited_at": pl.Datetime("us"), "visit_id": pl.Int64},
        ),
        "2026-01-02": pl.DataFrame(
            {"visited_at": [datetime(2026, 1, 2, 9)], "visit_id": [2]},
            schema={"visited_at": pl.Datetime("us"), "visit_id": pl.Int64},
        ),
    }

    @dd.asset(
        Visits,
        name="visits",
        partitions_def=DAYS,
        keys_across_partitions=True,
        metadata={"partition_expr": "visited_at"},
    )
    def visits(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames[context.partition_key]

    instance = dg.DagsterInstance.ephemeral()
    _run_each(visits, manager, ["2026-01-01"], instance)
    with duckdb.connect(str(database)) as connection:
        connection.execute(
            "INSERT INTO public.visits VALUES "
            "('2025-12-31 23:59:58', 1), ('2026-02-14 07:06:05', 1), ('2026-02-14 07:06:05', 2)"
        )
    evaluation = _run_each(visits, manager, ["2026-01-02"], instance)

    assert evaluation.passed
    assert evaluation.metadata["dy_repeated_keys"].value == 0
    shown = f"{evaluation.metadata} {evaluation.description}"
    assert "2025-12-31" not in shown
    assert "2026-02-14" not in shown


def test_duckdb_leaves_out_a_value_that_is_no_static_partition(tmp_path: Path) -> None:
    database = tmp_path / "warehouse.duckdb"
    manager = DuckDBPolarsIOManager(database=str(database))
    frames = {"east": _orders("east", [1]), "west": _orders("west", [2])}
    instance = dg.DagsterInstance.ephemeral()
    _run_each(_asset(Orders, frames), manager, ["east"], instance)
    with duckdb.connect(str(database)) as connection:
        connection.execute("INSERT INTO public.orders VALUES ('south', 1, 1), ('south', 2, 1)")
    evaluation = _run_each(_asset(Orders, frames), manager, ["west"], instance)

    assert evaluation.passed
    assert "south" not in f"{evaluation.metadata} {evaluation.description}"


class Coupons(Orders):
    coupon = dy.String(nullable=True, unique=True)


def _coupons(region: str, ids: list[int], coupons: list[str | None]) -> pl.DataFrame:
    return _orders(region, ids).with_columns(coupon=pl.Series(coupons, dtype=pl.String))


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_a_partition_stored_before_a_key_column_was_added_takes_no_part(
    tmp_path: Path, store: str
) -> None:
    """`coupon` (nullable, unique) is added after east and west were stored without it."""
    manager = _managers(tmp_path)[store]
    instance = dg.DagsterInstance.ephemeral()
    before = {"east": _orders("east", [1, 2]), "west": _orders("west", [3])}
    _run_each(_asset(Orders, before), manager, ["east", "west"], instance)

    after = {"north": _coupons("north", [4, 5], ["spring", None])}
    evaluation = _run_each(_asset(Coupons, after), manager, ["north"], instance)
    assert evaluation.passed
    assert evaluation.metadata["dy_repeated_keys"].value == 0

    # Rewritten with the column, west takes part: its coupon and its null repeat north's.
    after["west"] = _coupons("west", [3, 6], ["spring", None])
    evaluation = _run_each(_asset(Coupons, after), manager, ["west"], instance)
    assert not evaluation.passed
    assert evaluation.metadata["dy_repeated_keys"].value == 2
    assert evaluation.metadata["dy_repeated_key_partitions"].data == ["north", "west"]
    assert evaluation.metadata["dy_repeated_key_sample"].data == [
        {"coupon": None, "dy_partitions": "north, west"},
        {"coupon": "spring", "dy_partitions": "north, west"},
    ]


LONG = dg.StaticPartitionsDefinition([f"{region}-{'x' * 150}" for region in ("east", "west")])


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_the_partitions_cell_is_cut_as_every_cell(tmp_path: Path, store: str) -> None:
    frames = {key: _orders(key, [1]) for key in LONG.get_partition_keys()}

    @dd.asset(
        Orders,
        name="orders",
        partitions_def=LONG,
        keys_across_partitions=True,
        metadata={"partition_expr": "region"},
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames[context.partition_key]

    evaluation = _run_each(orders, _managers(tmp_path)[store], list(frames))

    joined = ", ".join(sorted(frames))
    assert len(joined) > 256
    cut = f"{joined[:256]}…[cut: {len(joined)} characters]"
    assert evaluation.metadata["dy_repeated_key_sample"].data == [
        {"order_id": 1, "dy_partitions": cut}
    ]
    assert (
        evaluation.description
        == f"1 key(s) stored in more than one partition, in partitions {cut}."
    )


class Tagged(dy.Schema):
    region = dy.String()
    tag = dy.Binary(primary_key=True)
    label = dy.Struct({"a": dy.Int64()}, nullable=True, unique=True)
    note = dy.String(nullable=True, unique=True)


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_keys_are_shown_as_every_sample_shows_values(tmp_path: Path, store: str) -> None:
    """Null as null, binary as hex, nested as JSON, a number as a number."""
    frames = {
        region: pl.DataFrame(
            {
                "region": [region, region],
                "tag": [b"\x00ab", region.encode()],
                "label": [{"a": 1}, {"a": 2 if region == "east" else 3}],
                "note": [None, region],
            },
            schema={
                "region": pl.String,
                "tag": pl.Binary,
                "label": pl.Struct({"a": pl.Int64}),
                "note": pl.String,
            },
        )
        for region in ("east", "west")
    }
    evaluation = _run_each(_asset(Tagged, frames), _managers(tmp_path)[store], list(frames))

    assert evaluation.metadata["dy_repeated_keys"].value == 3
    assert evaluation.metadata["dy_repeated_key_sample"].data == [
        {"tag": "006162", "dy_partitions": "east, west"},
        {"label": '{"a":1}', "dy_partitions": "east, west"},
        {"note": None, "dy_partitions": "east, west"},
    ]


SHOPS = dg.DynamicPartitionsDefinition(name="shops")


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_a_deleted_dynamic_partition_takes_no_part(tmp_path: Path, store: str) -> None:
    frames = {
        "a": _orders("a", [1, 2]),
        "b": _orders("b", [2, 3]),
        "c": _orders("c", [4]),
    }

    @dd.asset(
        Orders,
        name="orders",
        partitions_def=SHOPS,
        keys_across_partitions=True,
        metadata={"partition_expr": "region"},
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames[context.partition_key]

    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("shops", list(frames))
    manager = _managers(tmp_path)[store]
    evaluation = _run_each(orders, manager, ["a", "b"], instance)
    assert evaluation.metadata["dy_repeated_key_partitions"].data == ["a", "b"]

    instance.delete_dynamic_partition("shops", "b")
    evaluation = _run_each(orders, manager, ["c"], instance)
    assert evaluation.passed
    assert evaluation.metadata["dy_repeated_keys"].value == 0


def test_a_direct_call_reports_the_check_as_not_evaluated() -> None:
    asset = _asset(Orders, {"east": _orders("east", [1, 1, 2])})

    call = dd.testing.call_asset(asset, partition_key="east")
    check = call.checks[CHECK]
    assert check.passed
    assert check.description is not None
    assert check.description.startswith("Not evaluated: a direct call stores no partition")
    assert call.failed_checks == ["dy_rule__primary_key"]

    # The function called with a context, as Dagster's docs show (no quarantine to write).
    clean = _asset(Orders, {"east": _orders("east", [1, 2])})
    with dg.build_asset_context(partition_key="east") as context:
        events = list(clean(context))
    (result,) = [e for e in events if isinstance(e, dg.AssetCheckResult) and e.check_name == CHECK]
    assert result == check


class ShopOrders(dy.Schema):
    day = dy.String()
    region = dy.String()
    order_id = dy.Int64(primary_key=True)


SLASHED = dg.MultiPartitionsDefinition(
    {
        "region": dg.StaticPartitionsDefinition(["/north", "a/b", "south"]),
        "day": dg.StaticPartitionsDefinition(["2026-01-01", "2026-01-02"]),
    }
)


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_keys_with_slashes_are_found_where_the_manager_wrote_them(
    tmp_path: Path, store: str
) -> None:
    """The parquet files are found by listing the asset's folder: a key's `/` makes folders,
    a leading one is escaped, and a multi-partition's parts are folders too."""
    frames = {
        "2026-01-01|/north": [1, 2],
        "2026-01-01|a/b": [2, 3],
        "2026-01-02|south": [3],
    }

    @dd.asset(
        ShopOrders,
        name="orders",
        partitions_def=SLASHED,
        keys_across_partitions=True,
        metadata={"partition_expr": {"region": "region", "day": "day"}},
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        ids = frames[str(context.partition_key)]
        return pl.DataFrame(
            {"day": [context.partition_key.keys_by_dimension["day"]] * len(ids), "order_id": ids}
        ).with_columns(region=pl.lit(context.partition_key.keys_by_dimension["region"]))

    keys = [
        dg.MultiPartitionKey(dict(zip(["day", "region"], k.split("|"), strict=True)))
        for k in frames
    ]
    evaluation = _run_each(orders, _managers(tmp_path)[store], keys)

    assert evaluation.metadata["dy_repeated_key_sample"].data == [
        {"order_id": 2, "dy_partitions": "2026-01-01|/north, 2026-01-01|a/b"},
        {"order_id": 3, "dy_partitions": "2026-01-01|a/b, 2026-01-02|south"},
    ]


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_a_first_partition_that_stores_nothing_passes(tmp_path: Path, store: str) -> None:
    """A skipped partition (None) or an empty one before anything is stored: DuckDB's manager
    creates no table for either, and there is no key to repeat."""
    frames: dict[str, pl.DataFrame | None] = {
        "east": None,
        "north": _orders("north", [1]).clear(),
        "west": _orders("west", [1]),
    }
    evaluation = _run_each(_asset(Orders, frames), _managers(tmp_path)[store], ["east"])
    assert evaluation.passed
    evaluation = _run_each(_asset(Orders, frames), _managers(tmp_path)[store], ["north"])
    assert evaluation.passed
    assert evaluation.metadata["dy_repeated_keys"].value == 0


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
def test_a_key_column_only_an_empty_partition_brought_takes_no_part(
    tmp_path: Path, store: str
) -> None:
    """`coupon` arrives with an empty partition: DuckDB's table never gets the column (no row
    brought it), and the parquet file that has it holds no row."""
    manager = _managers(tmp_path)[store]
    instance = dg.DagsterInstance.ephemeral()
    _run_each(_asset(Orders, {"east": _orders("east", [1])}), manager, ["east"], instance)
    empty = {"west": _coupons("west", [1], ["spring"]).clear()}
    evaluation = _run_each(_asset(Coupons, empty), manager, ["west"], instance)
    assert evaluation.passed
    assert evaluation.metadata["dy_repeated_keys"].value == 0


def test_reading_the_stored_partitions_builds_no_instance_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each Dagster instance built in a run costs about 0.1 s of CPU (its storage's migrations);
    # the check reads the stored partitions on the run's own.
    manager = _managers(tmp_path)["parquet"]
    asset = _asset(Orders, {"east": _orders("east", [1, 2]), "west": _orders("west", [3])})
    with dg.DagsterInstance.ephemeral() as instance:
        _run_each(asset, manager, ["east"], instance)
        built: list[dg.DagsterInstance] = []
        ephemeral = dg.DagsterInstance.ephemeral

        def counted(*args: Any, **kwargs: Any) -> dg.DagsterInstance:
            built.append(ephemeral(*args, **kwargs))
            return built[-1]

        monkeypatch.setattr(dg.DagsterInstance, "ephemeral", staticmethod(counted))
        evaluation = _run_each(asset, manager, ["west"], instance)
    assert evaluation.passed
    assert built == []

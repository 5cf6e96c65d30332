"""`keys_across_partitions=True`: a key stored in two partitions fails one table-wide check.

Each partition runs alone through `dg.materialize`, on dagster-polars' parquet manager and on
DuckDB's; the check reads the stored key columns of every partition after each write.
"""

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
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


def _run_each(asset: Any, manager: Any, partitions: list[Any]) -> dg.AssetCheckEvaluation:
    instance = dg.DagsterInstance.ephemeral()
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
        {"order_id": "3", "dy_partitions": "east, west"},
        {"order_id": "5", "dy_partitions": "north, west"},
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
        {"order_id": "1", "dy_partitions": "2026-01-01|east, 2026-01-01|west"},
        {"order_id": "2", "dy_partitions": "2026-01-01|east, 2026-01-02|east"},
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

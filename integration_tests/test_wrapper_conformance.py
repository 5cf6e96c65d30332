"""`QuarantineAwareIOManager` is transparent: for every output that is not a quarantine, the
wrapped manager, plain or staged, does exactly what the bare manager does.

Every test here runs the same assertions three times: against the bare manager, the wrapped
one, and the wrapped one with `staged_writes=True`. dagster-polars: eager and lazy loads,
`Optional` outputs returning `None`, partition dicts (eager, lazy, missing partitions allowed),
`path` and `dagster/uri` metadata, column selection, on its parquet manager and on its Delta
manager (a table per partition, and one table partitioned by `partition_by`).
dagster-duckdb-polars: ops with `schema` output metadata, key prefixes, a custom schema, column
selection, time-window, static, multi and dynamic partitions, a self-dependent partitioned
asset. And a `dg.EnvVar` in a wrapped
manager's config is read when the resource starts. Storage options are in
`s3/test_wrapper_conformance.py`, on the suite's S3 server.
"""

import datetime as dt
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsDeltaIOManager, PolarsParquetIOManager
from polars.testing import assert_frame_equal

import dagster_dataframely as dd

from .conftest import QUIET, files_under, materialization_metadata, shared_instance
from .storage_modes import FRAME, assert_polars_loads, polars_loads

pytestmark = pytest.mark.integration

MODES = ("bare", "wrapped", "staged")
BY_MODE = pytest.mark.parametrize("mode", MODES)


def bound(mode: str, manager: object) -> object:
    """`manager` as the test binds it in `mode`."""
    if mode == "bare":
        return manager
    return dd.QuarantineAwareIOManager(io_manager=manager, staged_writes=mode == "staged")


def run(
    assets: Sequence[dg.AssetsDefinition],
    io_manager: object,
    *,
    partition_key: str | None = None,
    selection: Sequence[dg.AssetKey] | None = None,
    instance: dg.DagsterInstance | None = None,
) -> dg.ExecuteInProcessResult:
    result = dg.materialize(
        assets,
        resources={"io_manager": io_manager},
        run_config=QUIET,
        partition_key=partition_key,
        selection=selection,
        instance=instance or shared_instance(),
    )
    assert result.success
    return result


def rows(database: Path, query: str) -> pl.DataFrame:
    with duckdb.connect(str(database), read_only=True) as connection:
        return connection.execute(query).pl()


# dagster-polars


@BY_MODE
def test_polars_loads_eager_lazy_selected_and_optional(tmp_path: Path, mode: str) -> None:
    seen: dict[str, Any] = {}
    assets = polars_loads(seen)
    table, absent = assets[:2]

    manager = PolarsParquetIOManager(base_dir=str(tmp_path))
    result = run(assets, bound(mode, manager))

    assert_polars_loads(seen)
    assert files_under(tmp_path) == {"table.parquet"}  # no staging file, nothing for `absent`
    metadata = materialization_metadata(result, table.key)
    # The real file, never a staging one (dagster-polars 0.27 logs `path`, and no `dagster/uri`).
    assert metadata["path"] == str(tmp_path / "table.parquet")
    assert metadata.get("dagster/uri", metadata["path"]) == metadata["path"]
    assert metadata["dagster/row_count"] == FRAME.height
    assert [column.name for column in metadata["dagster/column_schema"].columns] == ["a", "b"]
    assert materialization_metadata(result, absent.key)["missing"] is True


THREE_DAYS = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-04")


@BY_MODE
def test_polars_partition_dicts_eager_lazy_and_missing_allowed(tmp_path: Path, mode: str) -> None:
    seen: dict[str, Any] = {}

    @dg.asset(partitions_def=THREE_DAYS)
    def daily(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return FRAME.with_columns(day=pl.lit(context.partition_key))

    missing_allowed = {"allow_missing_partitions": True}

    @dg.asset(ins={"daily": dg.AssetIn("daily", metadata=missing_allowed)})
    def eager_rollup(daily: dict[str, pl.DataFrame]) -> None:
        seen["eager"] = daily

    @dg.asset(ins={"daily": dg.AssetIn("daily", metadata=missing_allowed)})
    def lazy_rollup(daily: dict[str, pl.LazyFrame]) -> None:
        seen["lazy"] = daily

    manager = bound(mode, PolarsParquetIOManager(base_dir=str(tmp_path)))
    written = ["2026-01-01", "2026-01-03"]  # 2026-01-02 is never materialized
    rollups = [eager_rollup, lazy_rollup]
    for day in written:
        run([daily, *rollups], manager, partition_key=day, selection=[daily.key])
    run([daily, *rollups], manager, selection=[r.key for r in rollups])

    assert sorted(seen["eager"]) == written
    assert sorted(seen["lazy"]) == written
    for day in written:
        expected = FRAME.with_columns(day=pl.lit(day))
        assert_frame_equal(seen["eager"][day], expected)
        assert_frame_equal(seen["lazy"][day].collect(), expected)
    assert files_under(tmp_path) == {f"daily/{day}.parquet" for day in written}


# dagster-polars' Delta manager


def delta_tables(root: Path) -> set[str]:
    """Every Delta table below `root` (a directory holding a `_delta_log`), relative to it."""
    return {log.parent.relative_to(root).as_posix() for log in root.rglob("_delta_log")}


@BY_MODE
def test_delta_loads_eager_lazy_selected_and_optional(tmp_path: Path, mode: str) -> None:
    seen: dict[str, Any] = {}
    assets = polars_loads(seen)
    table, absent = assets[:2]

    result = run(assets, bound(mode, PolarsDeltaIOManager(base_dir=str(tmp_path))))

    assert_polars_loads(seen)
    assert delta_tables(tmp_path) == {"table.delta"}  # nothing for `absent`
    assert not [path for path in tmp_path.rglob("*") if path.name.startswith(".dy-")]
    metadata = materialization_metadata(result, table.key)
    assert metadata["path"] == str(tmp_path / "table.delta")
    assert metadata["version"] == 0
    assert metadata["dagster/row_count"] == FRAME.height
    assert [column.name for column in metadata["dagster/column_schema"].columns] == ["a", "b"]
    assert materialization_metadata(result, absent.key)["missing"] is True


@BY_MODE
def test_delta_partition_dicts_and_a_table_partitioned_by_delta(tmp_path: Path, mode: str) -> None:
    seen: dict[str, Any] = {}

    def frame_of(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return FRAME.with_columns(day=pl.lit(context.partition_key).str.to_date())

    @dg.asset(partitions_def=THREE_DAYS)
    def daily(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frame_of(context)

    @dg.asset(partitions_def=THREE_DAYS, metadata={"partition_by": "day"})
    def native(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frame_of(context)

    # NOTE: no missing partition: the Delta manager fails to load one, wrapped or not.
    @dg.asset
    def eager_rollup(daily: dict[str, pl.DataFrame]) -> None:
        seen["eager"] = daily

    @dg.asset
    def lazy_rollup(daily: dict[str, pl.LazyFrame]) -> None:
        seen["lazy"] = daily

    @dg.asset
    def native_rollup(native: pl.LazyFrame) -> None:
        seen["native"] = native.collect()

    manager = bound(mode, PolarsDeltaIOManager(base_dir=str(tmp_path)))
    days = ["2026-01-01", "2026-01-02", "2026-01-03"]
    for day in [*days, days[0]]:  # the first day again: its rows are replaced, not added
        run([daily, native], manager, partition_key=day)
    rollups = [eager_rollup, lazy_rollup, native_rollup]
    run([daily, native, *rollups], manager, selection=[r.key for r in rollups])

    assert sorted(seen["eager"]) == days
    assert sorted(seen["lazy"]) == days
    expected = {day: FRAME.with_columns(day=pl.lit(day).str.to_date()) for day in days}
    for day in days:
        assert_frame_equal(seen["eager"][day], expected[day])
        assert_frame_equal(seen["lazy"][day].collect(), expected[day])
    both = pl.concat(expected.values())
    assert_frame_equal(seen["native"].sort("day", "a"), both.sort("day", "a"))
    assert delta_tables(tmp_path) == {f"daily/{day}.delta" for day in days} | {"native.delta"}


# dagster-duckdb-polars


@BY_MODE
def test_duckdb_op_schema_key_prefix_custom_schema_and_selected_columns(
    tmp_path: Path, mode: str
) -> None:
    database = tmp_path / "w.duckdb"
    seen: dict[str, Any] = {}

    # Ops, under a manager with a schema of its own: an output's `schema` metadata wins.
    @dg.op(out={"produced": dg.Out(metadata={"schema": "ops"}), "plain": dg.Out()})
    def produce() -> tuple[pl.DataFrame, pl.DataFrame]:
        return FRAME, FRAME.head(1)

    @dg.op
    def consume(produced: pl.DataFrame, plain: pl.DataFrame) -> None:
        seen.update(op=produced, plain=plain)

    op_manager = DuckDBPolarsIOManager(database=str(database), schema="analytics")

    @dg.job(resource_defs={"io_manager": bound(mode, op_manager)})  # type: ignore[dict-item]
    def ops_job() -> None:
        consume(*produce())

    assert ops_job.execute_in_process(instance=shared_instance(), run_config=QUIET).success

    manager = bound(mode, DuckDBPolarsIOManager(database=str(database)))

    @dg.asset(key_prefix=["sales"])
    def prefixed() -> pl.DataFrame:
        return FRAME

    @dg.asset(metadata={"schema": "custom"})
    def in_custom_schema() -> pl.DataFrame:
        return FRAME

    @dg.asset(ins={"picked": dg.AssetIn(["sales", "prefixed"], metadata={"columns": ["b"]})})
    def reader(picked: pl.DataFrame) -> None:
        seen["picked"] = picked

    result = run([prefixed, in_custom_schema, reader], manager)

    assert_frame_equal(seen["op"], FRAME)
    assert_frame_equal(seen["plain"], FRAME.head(1))
    assert_frame_equal(rows(database, "select * from ops.produced"), FRAME)
    assert_frame_equal(rows(database, "select * from analytics.plain"), FRAME.head(1))
    assert_frame_equal(rows(database, "select * from sales.prefixed"), FRAME)
    assert_frame_equal(rows(database, "select * from custom.in_custom_schema"), FRAME)
    assert_frame_equal(seen["picked"], FRAME.select("b"))
    metadata = materialization_metadata(result, prefixed.key)
    assert metadata["dagster/table_name"] == f"{database}.sales.prefixed"
    assert metadata["row_count"] == FRAME.height


def _day(key: str) -> dt.date:
    return dt.date.fromisoformat(key)


REGIONS = dg.DynamicPartitionsDefinition(name="regions")

# kind: (partitions, partition_expr, the two keys, the frame of a key)
PARTITIONED: dict[str, tuple[Any, Any, list[Any], Callable[[Any], pl.DataFrame]]] = {
    "time-window": (
        THREE_DAYS,
        "day",
        ["2026-01-01", "2026-01-02"],
        lambda key: FRAME.with_columns(day=pl.lit(_day(key))),
    ),
    "static": (
        dg.StaticPartitionsDefinition(["eu", "us"]),
        "region",
        ["eu", "us"],
        lambda key: FRAME.with_columns(region=pl.lit(key)),
    ),
    "multi": (
        dg.MultiPartitionsDefinition(
            {"day": THREE_DAYS, "region": dg.StaticPartitionsDefinition(["eu", "us"])}
        ),
        {"day": "day", "region": "region"},
        [
            dg.MultiPartitionKey({"day": "2026-01-01", "region": "eu"}),
            dg.MultiPartitionKey({"day": "2026-01-01", "region": "us"}),
        ],
        lambda key: FRAME.with_columns(
            day=pl.lit(_day(key.keys_by_dimension["day"])),
            region=pl.lit(key.keys_by_dimension["region"]),
        ),
    ),
    "dynamic": (
        REGIONS,
        "region",
        ["north", "south"],
        lambda key: FRAME.with_columns(region=pl.lit(key)),
    ),
}


@pytest.mark.parametrize("kind", list(PARTITIONED))
@BY_MODE
def test_duckdb_partitions_each_replace_and_load_their_own_rows(
    tmp_path: Path, mode: str, kind: str
) -> None:
    partitions, expr, keys, frame_of = PARTITIONED[kind]
    database = tmp_path / "w.duckdb"
    manager = bound(mode, DuckDBPolarsIOManager(database=str(database)))
    seen: dict[str, pl.DataFrame] = {}

    @dg.asset(partitions_def=partitions, metadata={"partition_expr": expr})
    def parts(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frame_of(context.partition_key)

    @dg.asset(partitions_def=partitions)
    def reader(context: dg.AssetExecutionContext, parts: pl.DataFrame) -> None:
        seen[str(context.partition_key)] = parts

    with dg.DagsterInstance.ephemeral() as instance:
        if kind == "dynamic":
            instance.add_dynamic_partitions("regions", keys)
        for key in [*keys, keys[0]]:  # the first key again: its rows are replaced, not added
            run([parts, reader], manager, partition_key=key, instance=instance)

    stored = rows(database, "select * from public.parts")
    expected = pl.concat([frame_of(key) for key in keys])
    assert_frame_equal(stored.sort(stored.columns), expected.sort(expected.columns))
    for key in keys:
        assert_frame_equal(seen[str(key)], frame_of(key))


@BY_MODE
def test_duckdb_self_dependent_partitioned_asset(tmp_path: Path, mode: str) -> None:
    database = tmp_path / "w.duckdb"
    manager = bound(mode, DuckDBPolarsIOManager(database=str(database)))

    @dg.asset(
        partitions_def=THREE_DAYS,
        metadata={"partition_expr": "day"},
        ins={
            "running": dg.AssetIn(
                "running",
                partition_mapping=dg.TimeWindowPartitionMapping(start_offset=-1, end_offset=-1),
            )
        },
    )
    def running(context: dg.AssetExecutionContext, running: pl.DataFrame) -> pl.DataFrame:
        total = int(running["total"].sum()) if running.height else 0
        return pl.DataFrame({"day": [_day(context.partition_key)], "total": [total + 1]})

    for day in ("2026-01-01", "2026-01-02", "2026-01-03"):
        run([running], manager, partition_key=day)

    stored = rows(database, "select * from public.running order by day")
    assert stored["total"].to_list() == [1, 2, 3]


# A `dg.EnvVar` in a wrapped manager's config.


class Orders(dy.Schema):
    order_id = dy.String(primary_key=True)
    amount = dy.Float64(nullable=False, min=0.0)


@pytest.mark.parametrize("staged", [False, True], ids=["plain", "staged"])
def test_an_env_var_in_a_wrapped_managers_config_is_read_when_the_resource_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, staged: bool
) -> None:
    manager = dd.QuarantineAwareIOManager(
        io_manager=DuckDBPolarsIOManager(database=dg.EnvVar("DD_TEST_DATABASE")),
        quarantine_io_manager=PolarsParquetIOManager(base_dir=dg.EnvVar("DD_TEST_QUARANTINE")),
        staged_writes=staged,
    )
    # Set only now, as a deployment sets them: unknown when the wrapper was built.
    monkeypatch.setenv("DD_TEST_DATABASE", str(tmp_path / "w.duckdb"))
    monkeypatch.setenv("DD_TEST_QUARANTINE", str(tmp_path / "restricted"))

    @dd.asset(Orders, quarantine=True)
    def orders() -> pl.DataFrame:
        return pl.DataFrame({"order_id": ["a", "b"], "amount": [1.0, -1.0]})

    run([orders], manager)

    table = rows(tmp_path / "w.duckdb", "select order_id from public.orders")
    assert table["order_id"].to_list() == ["a"]
    quarantine = pl.read_parquet(tmp_path / "restricted" / "orders_quarantine.parquet")
    assert quarantine["order_id"].to_list() == ["b"]

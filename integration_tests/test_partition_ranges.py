"""A single-run backfill: one run over a range of partitions, reported partition by partition.

`DuckDBPolarsIOManager` stores a range in one write (one delete over the range's window, one
insert); each partition's materialization must still carry its own counts, statistics and
samples, and each check evaluation name its partition. `PolarsParquetIOManager` writes a file
per partition and refuses a range, so the package refuses it first, before the function runs.
"""

import datetime as dt
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.asset_support import first_failure, range_tags

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    MissingPartitionExprError,
    NoValidRowsError,
    PartitionRangeError,
)

from .conftest import (
    AMOUNT_MIN,
    QUIET,
    Orders,
    duckdb_frame,
    duckdb_ids,
    duckdb_tables,
    files_under,
    invalid_ids,
    orders_frame,
    shared_instance,
    valid_ids,
)

pytestmark = pytest.mark.integration

DAYS = ("2026-01-01", "2026-01-02", "2026-01-03")
THREE_DAYS = dg.DailyPartitionsDefinition(start_date=DAYS[0], end_date="2026-01-04")
RANGE_TAGS = range_tags(DAYS[0], DAYS[-1])
"""The tags a single-run backfill of the three days gives its one run."""

ROW_COUNT = "dagster/row_count"
INVALID_COUNT = "dataframely/invalid_count"
VALID_SAMPLE = "dataframely/valid_sample"
INVALID_SAMPLE = "dataframely/invalid_sample"
NUMERIC = "dataframely/valid_statistics/numeric"
PARTITION = "dy_partition"


def each_day(valid: int = 1, invalid: int = 1) -> pl.DataFrame:
    """`valid` good rows and `invalid` rows failing `amount|min` on each of the three days."""
    return pl.concat([orders_frame(day, valid=valid, invalid=invalid) for day in DAYS])


def ranged_orders(
    source: Mapping[str, pl.DataFrame] | pl.DataFrame,
    calls: list[tuple[str, ...]] | None = None,
    **kwargs: Any,
) -> dg.AssetsDefinition:
    """`dd.asset(Orders, quarantine=True)` over the three days, returning the range's rows.

    `source` is the whole range's frame, or one frame per day to concatenate; each call records
    the partition keys it was asked for.
    """
    kwargs.setdefault("metadata", {"partition_expr": "day"})

    @dd.asset(
        Orders,
        quarantine=True,
        partitions_def=THREE_DAYS,
        backfill_policy=dg.BackfillPolicy.single_run(),
        **kwargs,
    )
    def orders(context: dg.AssetExecutionContext) -> pl.LazyFrame:
        if calls is not None:
            calls.append(tuple(context.partition_keys))
        if isinstance(source, pl.DataFrame):
            return source.lazy()
        return pl.concat([source[key] for key in context.partition_keys]).lazy()

    return orders


def run_range(
    assets: list[dg.AssetsDefinition], io_manager: object, *, tags: Mapping[str, str] = RANGE_TAGS
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        assets,
        resources={"io_manager": io_manager},
        run_config=QUIET,
        instance=shared_instance(),
        tags=dict(tags),
        raise_on_error=False,
    )


def by_partition(result: dg.ExecuteInProcessResult, key: dg.AssetKey) -> dict[str, dict[str, Any]]:
    """Each partition's materialization metadata, as raw values, by partition key."""
    found: dict[str, dict[str, Any]] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.materialization
        if event.asset_key == key and materialization.partition is not None:
            metadata = {name: value.value for name, value in materialization.metadata.items()}
            found[materialization.partition] = metadata
    return found


def evaluations(result: dg.ExecuteInProcessResult, check: str) -> dict[str | None, Any]:
    """The evaluations of one check in the run, by the partition each names."""
    found = {}
    for evaluation in result.get_asset_check_evaluations():
        if evaluation.check_name == check:
            assert evaluation.partition not in found, "two evaluations of one partition"
            found[evaluation.partition] = evaluation
    return found


def step_error(result: dg.ExecuteInProcessResult) -> Any:
    """The error the one failed step raised, under Dagster's wrapper."""
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None
    return error.cause or error


def sample_ids(table: Any) -> set[str]:
    return {record.data["order_id"] for record in table.records}


@pytest.fixture
def database(warehouse: Path) -> Path:
    return warehouse / "warehouse.duckdb"


def test_each_partition_of_a_range_reports_its_own_rows_on_duckdb(database: Path) -> None:
    """The issue's case: three days of one valid and one invalid row each, in one run."""
    frame = each_day()
    orders = ranged_orders(frame)

    result = run_range([orders], DuckDBPolarsIOManager(database=str(database)))

    assert result.success
    assert [e.step_key for e in result.get_step_success_events()] == ["orders"]
    assert duckdb_ids(database, "public.orders") == valid_ids(frame)
    assert duckdb_ids(database, "public.orders_quarantine") == invalid_ids(frame)
    reported = by_partition(result, orders.key)
    assert sorted(reported) == list(DAYS)
    for day, metadata in reported.items():
        assert metadata[ROW_COUNT] == 1, day
        assert metadata[INVALID_COUNT] == 1, day
        assert sample_ids(metadata[VALID_SAMPLE]) == {f"first-{day}-eu-ok0"}
        assert sample_ids(metadata[INVALID_SAMPLE]) == {f"first-{day}-eu-bad0"}
        (amount,) = [r.data for r in metadata[NUMERIC].records if r.data["column"] == "amount"]
        assert amount["count"] == 1
        assert amount["max"] == 10.0
    checks = evaluations(result, "dy_rule__amount__min")
    assert sorted(checks) == list(DAYS)
    for day, evaluation in checks.items():
        assert not evaluation.passed
        assert evaluation.severity == dg.AssetCheckSeverity.WARN
        assert evaluation.metadata[PARTITION].value == day
        assert evaluation.metadata["dy_failed_count"].value == 1
        sample = evaluation.metadata["dy_failed_sample"].value
        assert sample_ids(sample) == {f"first-{day}-eu-bad0"}
    columns = evaluations(result, "dy_schema__columns")
    assert sorted(columns) == list(DAYS)
    assert all(evaluation.passed for evaluation in columns.values())


def test_each_partition_keeps_its_own_check_history(database: Path) -> None:
    """The instance records one execution per check and partition, each linked to its table."""
    orders = ranged_orders(each_day(valid=1, invalid=0), name="clean_orders")
    result = run_range([orders], DuckDBPolarsIOManager(database=str(database)))

    assert result.success
    instance = shared_instance()
    check = dg.AssetCheckKey(orders.key, AMOUNT_MIN)
    records = instance.event_log_storage.get_asset_check_execution_history(check, limit=10)
    ours = [r for r in records if r.run_id == result.run_id]
    assert sorted(r.partition for r in ours) == list(DAYS)
    assert {r.status.value for r in ours} == {"SUCCEEDED"}
    materializations = {
        e.materialization.partition: e.event_specific_data
        for e in result.get_asset_materialization_events()
    }
    assert set(materializations) == set(DAYS)
    for evaluation in evaluations(result, AMOUNT_MIN).values():
        target = evaluation.target_materialization_data
        assert target is not None
        assert target.run_id == result.run_id


def test_a_partition_with_only_invalid_rows_fails_the_range(database: Path) -> None:
    """Its table would be emptied by the range's one write, so no table is written at all."""
    manager = DuckDBPolarsIOManager(database=str(database))
    first = each_day(valid=2, invalid=0)
    assert run_range([ranged_orders(first)], manager).success
    frames = {day: orders_frame(day, tag="second") for day in DAYS}
    frames[DAYS[1]] = orders_frame(DAYS[1], tag="second", valid=0, invalid=2)

    result = run_range([ranged_orders(frames)], manager)

    assert not result.success
    error = step_error(result)
    assert error.cls_name == NoValidRowsError.__name__
    assert f"{DAYS[1]} of 'orders'" in str(error)
    assert duckdb_ids(database, "public.orders") == valid_ids(first)
    quarantined = pl.concat(list(frames.values()))
    assert duckdb_ids(database, "public.orders_quarantine") == invalid_ids(quarantined)
    checks = evaluations(result, AMOUNT_MIN)
    assert sorted(checks) == list(DAYS)
    assert [checks[day].passed for day in DAYS] == [False, False, False]
    # Each partition's severity is its own outcome's, as each output's is in a multi-asset step.
    assert [checks[day].severity.value for day in DAYS] == ["WARN", "ERROR", "WARN"]


def test_rows_outside_the_range_stop_the_run_before_writing(database: Path) -> None:
    """A row of another day would land beside rows this run does not replace."""
    stray = orders_frame("2026-01-05", tag="stray", valid=1, invalid=0)
    orders = ranged_orders(pl.concat([each_day(), stray]))

    result = run_range([orders], DuckDBPolarsIOManager(database=str(database)))

    assert not result.success
    error = step_error(result)
    assert error.cls_name == PartitionRangeError.__name__
    assert "1 of the 7 rows" in error.message
    assert not database.exists() or not duckdb_ids(database, "public.orders")
    assert not result.get_asset_materialization_events()


def test_a_range_without_partition_expr_is_refused_before_the_function(database: Path) -> None:
    calls: list[tuple[str, ...]] = []
    orders = ranged_orders(each_day(), calls, metadata={})

    result = run_range([orders], DuckDBPolarsIOManager(database=str(database)))

    assert not result.success
    error = step_error(result)
    assert error.cls_name == PartitionRangeError.__name__
    assert "partition_expr" in error.message
    assert calls == []


def test_the_parquet_manager_is_refused_before_the_function(warehouse: Path) -> None:
    """dagster-polars writes a file per partition and refuses a range; the package says so first."""
    calls: list[tuple[str, ...]] = []
    orders = ranged_orders(each_day(), calls)

    result = run_range([orders], PolarsParquetIOManager(base_dir=str(warehouse)))

    assert not result.success
    error = step_error(result)
    assert error.cls_name == PartitionRangeError.__name__
    assert "PolarsParquetIOManager" in error.message
    assert "BackfillPolicy.multi_run()" in error.message
    assert calls == []
    assert files_under(warehouse) == set()


def test_a_range_of_one_partition_runs_as_a_single_partition(warehouse: Path) -> None:
    """A one-day range is stored in one file, so even the parquet manager takes it."""
    orders = ranged_orders({DAYS[0]: orders_frame(DAYS[0])})
    tags = {**RANGE_TAGS, "dagster/asset_partition_range_end": DAYS[0]}

    result = run_range([orders], PolarsParquetIOManager(base_dir=str(warehouse)), tags=tags)

    assert result.success
    assert files_under(warehouse) == {
        f"orders/{DAYS[0]}.parquet",
        f"orders_quarantine/{DAYS[0]}.parquet",
    }
    assert sorted(evaluations(result, AMOUNT_MIN)) == [DAYS[0]]


class Stamped(dy.Schema):
    """Rows partitioned by a time-zone-aware timestamp."""

    event_id = dy.String(primary_key=True)
    happened_at = dy.Datetime(nullable=False, time_zone="UTC")
    amount = dy.Float64(nullable=False, min=0.0)


def test_a_time_zone_aware_column_is_split_by_instant(database: Path) -> None:
    """A day in New York starts at 05:00 UTC: a row at 04:59 UTC belongs to the day before."""
    days = dg.DailyPartitionsDefinition(
        start_date="2026-01-01", end_date="2026-01-03", timezone="America/New_York"
    )
    utc = dt.UTC
    frame = pl.DataFrame(
        {
            "event_id": ["a", "b", "c"],
            "happened_at": [
                dt.datetime(2026, 1, 1, 12, tzinfo=utc),
                dt.datetime(2026, 1, 2, 4, 59, tzinfo=utc),
                dt.datetime(2026, 1, 2, 5, 0, tzinfo=utc),
            ],
            "amount": [1.0, 2.0, 3.0],
        },
        schema={
            "event_id": pl.String,
            "happened_at": pl.Datetime("us", "UTC"),
            "amount": pl.Float64,
        },
    )

    @dd.asset(
        Stamped,
        partitions_def=days,
        backfill_policy=dg.BackfillPolicy.single_run(),
        metadata={"partition_expr": "happened_at"},
    )
    def stamped() -> pl.DataFrame:
        return frame

    result = run_range(
        [stamped],
        DuckDBPolarsIOManager(database=str(database)),
        tags=range_tags("2026-01-01", "2026-01-02"),
    )

    assert result.success
    reported = by_partition(result, stamped.key)
    assert {day: m[ROW_COUNT] for day, m in reported.items()} == {
        "2026-01-01": 2,
        "2026-01-02": 1,
    }


# --- multi-partitioned ranges and `partition_expr` on DuckDB -----------------------------------


DAY_BY_REGION = dg.MultiPartitionsDefinition(
    {"region": dg.StaticPartitionsDefinition(["eu", "us"]), "day": THREE_DAYS}
)


def cells_orders(calls: list[tuple[str, ...]]) -> dg.AssetsDefinition:
    """`Orders` by day and region, one valid and one invalid row in each cell it is asked for."""

    @dd.asset(
        Orders,
        quarantine=True,
        partitions_def=DAY_BY_REGION,
        backfill_policy=dg.BackfillPolicy.single_run(),
        metadata={"partition_expr": {"day": "day", "region": "region"}},
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        calls.append(tuple(str(key) for key in context.partition_keys))
        cells = [key.keys_by_dimension for key in context.partition_keys]
        return pl.concat([orders_frame(c["day"], c["region"], valid=1) for c in cells])

    return orders


def test_a_multi_partitioned_range_of_one_region_is_stored_per_cell(database: Path) -> None:
    """The days differ, the region does not: DuckDB stores the range as one slice."""
    calls: list[tuple[str, ...]] = []
    tags = range_tags(f"{DAYS[0]}|us", f"{DAYS[2]}|us")

    result = run_range(
        [cells_orders(calls)], DuckDBPolarsIOManager(database=str(database)), tags=tags
    )

    assert result.success
    assert calls == [tuple(f"{day}|us" for day in DAYS)]
    stored = duckdb_ids(database, "public.orders")
    assert stored == {f"first-{day}-us-ok0" for day in DAYS}
    assert duckdb_ids(database, "public.orders_quarantine") == {
        f"first-{day}-us-bad0" for day in DAYS
    }
    reported = by_partition(result, dg.AssetKey("orders"))
    assert {cell: m[ROW_COUNT] for cell, m in reported.items()} == {f"{d}|us": 1 for d in DAYS}


def test_a_multi_partitioned_range_over_both_dimensions_is_refused_before_the_function(
    database: Path,
) -> None:
    """DuckDB's manager would fail after the function ran, with Dagster's bare `CheckError`."""
    calls: list[tuple[str, ...]] = []
    tags = range_tags(f"{DAYS[0]}|eu", f"{DAYS[1]}|us")

    result = run_range(
        [cells_orders(calls)], DuckDBPolarsIOManager(database=str(database)), tags=tags
    )

    assert not result.success
    error = step_error(result)
    assert error.cls_name == PartitionRangeError.__name__
    assert f"{DAYS[0]}|eu...{DAYS[1]}|us" in error.message
    assert "differ in every dimension" in error.message
    assert "one backfill per region" in error.message
    assert calls == []
    assert not database.exists() or duckdb_tables(database) == set()


@pytest.mark.parametrize("quarantine", [True, False], ids=["quarantine", "no quarantine"])
@pytest.mark.parametrize(
    ("partitions_def", "key", "metadata", "missing"),
    [
        (THREE_DAYS, DAYS[0], {}, []),
        (DAY_BY_REGION, f"{DAYS[0]}|eu", {"partition_expr": {"day": "day"}}, ["region"]),
    ],
    ids=["daily", "by day and region"],
)
def test_a_partition_without_partition_expr_is_refused_before_the_function(
    database: Path,
    quarantine: bool,
    partitions_def: dg.PartitionsDefinition[str],
    key: str,
    metadata: dict[str, Any],
    missing: list[str],
) -> None:
    """DuckDB's manager fails at its first write without it, naming `orders_quarantine`."""
    calls: list[str] = []

    @dd.asset(Orders, quarantine=quarantine, partitions_def=partitions_def, metadata=metadata)
    def orders() -> pl.DataFrame:
        calls.append("called")
        return orders_frame(DAYS[0], valid=1, invalid=int(quarantine))

    result = dg.materialize(
        [orders],
        resources={"io_manager": DuckDBPolarsIOManager(database=str(database))},
        partition_key=key,
        run_config=QUIET,
        instance=shared_instance(),
        raise_on_error=False,
    )

    error = step_error(result)
    assert error.cls_name == MissingPartitionExprError.__name__
    assert "'orders'" in error.message
    assert "partition_expr" in error.message
    assert "orders_quarantine" not in error.message
    assert all(f"'{dimension}'" in error.message for dimension in missing)
    assert calls == []
    assert not database.exists() or duckdb_tables(database) == set()


# --- a range and the same partitions one at a time: the same verdicts ------------------------


PROPERTY_EXAMPLES = int(os.environ.get("DAGSTER_DATAFRAMELY_RANGE_EXAMPLES", "6"))
"""Examples of the range-versus-partitions property. A longer run sets the variable (200) and
lifts pytest's per-test timeout: `DAGSTER_DATAFRAMELY_RANGE_EXAMPLES=200 pytest --timeout=0 -k
judges_each integration_tests/test_partition_ranges.py`."""


class World:
    """One instance and one DuckDB file: `orders` run over ranges, or one partition at a time.

    Each run returns the rows of its partitions from the round's frame, so a run of one day
    returns that day's slice of what the range returns, with the same columns.
    """

    def __init__(self, database: Path, quarantine: bool, policy: dd.QualityPolicy) -> None:
        self.instance = dg.DagsterInstance.ephemeral()
        self.database = database
        self.manager = DuckDBPolarsIOManager(database=str(database))
        self.frame = each_day(valid=0, invalid=0)

        @dd.asset(
            Orders,
            quarantine=quarantine,
            partitions_def=THREE_DAYS,
            backfill_policy=dg.BackfillPolicy.single_run(),
            metadata={"partition_expr": "day"},
            quality_policy=policy,
        )
        def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
            days = [dt.date.fromisoformat(key) for key in context.partition_keys]
            return self.frame.filter(pl.col("day").is_in(days))

        self.asset = orders

    def run(self, first: str, last: str | None = None) -> dg.ExecuteInProcessResult:
        """A run of the range `first...last`, or of the one partition `first`."""
        tags = {} if last is None else range_tags(first, last)
        return dg.materialize(
            [self.asset],
            resources={"io_manager": self.manager},
            run_config=QUIET,
            instance=self.instance,
            partition_key=None if last is not None else first,
            tags=tags,
            raise_on_error=False,
        )

    def rows(self, table: str) -> list[tuple[Any, ...]]:
        """Every stored row of `table`, in order; none when it does not exist yet."""
        if f"public.{table}" not in duckdb_tables(self.database):
            return []
        return sorted(duckdb_frame(self.database, f"public.{table}").rows())


def verdicts(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    """Each partition's check results and materialization, and the run's error.

    A check result without the quarantine's address (a run's write names its own range).
    """
    checks = {
        (e.partition, e.check_name): (
            e.passed,
            e.severity,
            e.description,
            {k: v.value for k, v in e.metadata.items() if "address" not in k},
        )
        for e in result.get_asset_check_evaluations()
    }
    written = {
        e.materialization.partition: {
            k: e.materialization.metadata[k].value
            for k in (ROW_COUNT, INVALID_COUNT, "dataframely/undeclared_columns")
            if k in e.materialization.metadata
        }
        for e in result.get_asset_materialization_events()
    }
    error = first_failure(result)
    return {"checks": checks, "written": written, "error": error}


DAY_ROWS = st.tuples(
    st.sampled_from([0, 1, 2, 5, 20]),  # valid rows
    st.sampled_from([0, 0, 0, 1, 2]),  # invalid rows
)
ROUND = st.tuples(
    st.tuples(DAY_ROWS, DAY_ROWS, DAY_ROWS),
    st.sampled_from([(0, 2), (0, 2), (0, 1), (1, 2)]),  # the range: first and last day
    st.sampled_from([(), ("note",), ("note", "channel")]),  # undeclared columns
)
POLICY = st.builds(
    dd.VolumeCheck,
    max_drop=st.sampled_from([0.5, 0.9]),
    max_growth=st.sampled_from([None, 1.0]),
    window=st.sampled_from([1, 2, 5]),
    compare_with=st.sampled_from(["partition", "asset"]),
    severity=st.sampled_from([dg.AssetCheckSeverity.WARN, dg.AssetCheckSeverity.ERROR]),
)


@settings(
    max_examples=PROPERTY_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    rounds=st.lists(ROUND, min_size=2, max_size=4),
    volume=POLICY,
    quarantine=st.booleans(),
)
def test_a_range_judges_each_partition_as_runs_of_one_partition_do(
    tmp_path_factory: pytest.TempPathFactory,
    rounds: list[Any],
    volume: dd.VolumeCheck,
    quarantine: bool,
) -> None:
    """Rounds of one single-run backfill against the same days run one at a time, in order.

    Each partition gets the same checks (its own history: volume, undeclared columns), the
    range fails exactly when one of those runs does, with the first one's error, and writes
    its table exactly when all of them write theirs. The worlds diverge once a range fails (the
    other partitions' runs wrote their tables), so the example ends there.
    """
    root = tmp_path_factory.mktemp("range-versus-partitions")
    policy = dd.QualityPolicy(volume=volume, undeclared_columns="check")
    ranged = World(root / "ranged.duckdb", quarantine, policy)
    single = World(root / "single.duckdb", quarantine, policy)
    try:
        for number, (days, (first, last), extra) in enumerate(rounds):
            frame = pl.concat(
                [
                    orders_frame(DAYS[i], tag=f"r{number}", valid=valid, invalid=invalid)
                    for i, (valid, invalid) in enumerate(days)
                ]
            ).with_columns(pl.lit("x").alias(name) for name in extra)
            ranged.frame = single.frame = frame
            before = ranged.rows("orders")

            in_range = verdicts(ranged.run(DAYS[first], DAYS[last]))
            one_by_one = [verdicts(single.run(DAYS[i])) for i in range(first, last + 1)]

            errors = [o["error"] for o in one_by_one if o["error"] is not None]
            assert in_range["error"] == (errors[0] if errors else None)
            assert in_range["checks"] == {k: v for o in one_by_one for k, v in o["checks"].items()}
            if errors:
                assert in_range["written"] == {}
                assert ranged.rows("orders") == before
            else:
                assert in_range["written"] == {
                    k: v for o in one_by_one for k, v in o["written"].items()
                }
                assert ranged.rows("orders") == single.rows("orders")
            if quarantine:
                invalid = frame.filter(pl.col("amount") < 0)
                for day in {d for d in invalid["day"] if DAYS[first] <= str(d) <= DAYS[last]}:
                    in_day = pl.col("day") == day
                    stored = [r for r in ranged.rows("orders_quarantine") if r[1] == day]
                    assert stored == [r for r in single.rows("orders_quarantine") if r[1] == day]
                    assert {r[0] for r in stored} == set(invalid.filter(in_day)["order_id"])
            if errors:
                return
    finally:
        ranged.instance.dispose()
        single.instance.dispose()

"""A run of one partition on a database manager refuses rows outside its partition.

`DuckDBPolarsIOManager` replaces one partition by deleting the rows `partition_expr` puts in it,
then inserting every row it is given: a row dated outside the partition (a late event, a time
zone at midnight) or with a null value was stored beside rows no run replaces, and stored again
by every rerun. The run now stops with `PartitionRangeError` before anything is written, as a
range run does; a path manager, which writes a file per partition, still takes every row.
"""

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster._serdes import serialize_value
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.asset_support import range_tags
from tests.changing_source import ChangingSource
from tests.rule_grammar import examples

import dagster_dataframely as dd
from dagster_dataframely._run.scope import row_partitions
from dagster_dataframely._run.split import split
from dagster_dataframely.errors import PartitionRangeError

from .conftest import (
    QUIET,
    Orders,
    duckdb_ids,
    duckdb_stored,
    duckdb_tables,
    files_under,
    invalid_ids,
    orders_frame,
    parquet_ids,
    shared_instance,
    valid_ids,
)

pytestmark = pytest.mark.integration

DAYS = ("2026-01-01", "2026-01-02", "2026-01-03")
DAILY = dg.DailyPartitionsDefinition(start_date=DAYS[0], end_date="2026-01-04")
REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])
CELLS = dg.MultiPartitionsDefinition({"day": DAILY, "region": REGIONS})


def run(
    asset: dg.AssetsDefinition,
    io_manager: object,
    partition_key: str | None,
    *,
    tags: Mapping[str, str] | None = None,
    instance: dg.DagsterInstance | None = None,
) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [asset],
        resources={"io_manager": io_manager},
        partition_key=partition_key,
        run_config=QUIET,
        instance=instance or shared_instance(),
        tags=dict(tags or {}),
        raise_on_error=False,
    )


def refusal(result: dg.ExecuteInProcessResult) -> Any:
    """The `PartitionRangeError` the run's one failed step raised, under Dagster's wrapper."""
    assert not result.success
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None
    cause = error.cause or error
    assert cause.cls_name == PartitionRangeError.__name__, cause.to_string()
    return cause


def returning(
    frames: dict[str, pl.DataFrame],
    partitions_def: dg.PartitionsDefinition[str],
    partition_expr: str | Mapping[str, str],
    *,
    schema: type[dy.Schema] = Orders,
    **kwargs: Any,
) -> dg.AssetsDefinition:
    """`dd.asset(schema, quarantine=True)` returning `frames[<partition key>]`."""

    @dd.asset(
        schema,
        quarantine=True,
        partitions_def=partitions_def,
        metadata={"partition_expr": partition_expr},
        **kwargs,
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames[str(context.partition_key)]

    return orders


def duckdb(database: Path) -> DuckDBPolarsIOManager:
    return DuckDBPolarsIOManager(database=str(database))


@pytest.fixture
def database(warehouse: Path) -> Path:
    return warehouse / "warehouse.duckdb"


# --- each kind of partition on DuckDB ---------------------------------------------------------


def test_a_row_of_another_day_is_refused_and_the_stored_partition_kept(database: Path) -> None:
    """The issue's case: a late event in the day's rows was stored, and again on every rerun."""
    day = DAYS[1]
    good = orders_frame(day, tag="good")
    frames = {day: good}
    orders = returning(frames, DAILY, "day")
    assert run(orders, duckdb(database), day).success

    late = orders_frame(DAYS[0], tag="late", valid=1, invalid=1)
    frames[day] = pl.concat([orders_frame(day, tag="second"), late])
    for _ in range(2):
        error = refusal(run(orders, duckdb(database), day))

        assert f"'orders' of the partition {day} stopped before writing anything" in error.message
        assert "2 of the 5 rows it returned fall outside the partition" in error.message
        assert "`partition_expr` 'day'" in error.message
        assert "`context.partition_time_window`" in error.message
        # The rows of the day stay the first run's, and the late rows are nowhere.
        assert duckdb_ids(database, "public.orders") == valid_ids(good)
        assert duckdb_ids(database, "public.orders_quarantine") == invalid_ids(good)


def test_a_first_run_refused_writes_no_table(database: Path) -> None:
    frames = {DAYS[0]: pl.concat([orders_frame(DAYS[0]), orders_frame(DAYS[2], tag="x")])}

    error = refusal(run(returning(frames, DAILY, "day"), duckdb(database), DAYS[0]))

    assert "3 of the 6 rows" in error.message
    assert not database.exists() or duckdb_tables(database) == set()


class Stamped(dy.Schema):
    """Events by a time-zone-aware instant, the partitions' days in New York."""

    event_id = dy.String(primary_key=True)
    happened_at = dy.Datetime(nullable=False, time_zone="UTC")
    amount = dy.Float64(nullable=False, min=0.0)


def test_a_time_zone_at_midnight_is_outside_the_day(database: Path) -> None:
    """A day in New York starts at 05:00 UTC: an event at 04:59 UTC is the day before's."""
    new_york = dg.DailyPartitionsDefinition(
        start_date="2026-01-01", end_date="2026-01-04", timezone="America/New_York"
    )

    def events(*hours: tuple[int, int]) -> pl.DataFrame:
        return pl.DataFrame(
            {
                "event_id": [f"e{h}:{m}" for h, m in hours],
                "happened_at": [dt.datetime(2026, 1, 2, h, m, tzinfo=dt.UTC) for h, m in hours],
                "amount": [1.0] * len(hours),
            },
            schema={
                "event_id": pl.String,
                "happened_at": pl.Datetime("us", "UTC"),
                "amount": pl.Float64,
            },
        )

    frames = {"2026-01-02": events((5, 0), (23, 59), (4, 59))}
    stamped = returning(frames, new_york, "happened_at", schema=Stamped, name="stamped")

    error = refusal(run(stamped, duckdb(database), "2026-01-02"))

    assert "1 of the 3 rows" in error.message
    frames["2026-01-02"] = events((5, 0), (23, 59))
    assert run(stamped, duckdb(database), "2026-01-02").success
    stored = duckdb_stored(database, "stamped")
    assert stored is not None
    assert sorted(stored["event_id"]) == ["e23:59", "e5:0"]


def test_a_row_of_another_static_partition_is_refused(database: Path) -> None:
    frames = {"eu": pl.concat([orders_frame(DAYS[0], "eu"), orders_frame(DAYS[0], "us")])}

    error = refusal(run(returning(frames, REGIONS, "region"), duckdb(database), "eu"))

    assert "of the partition eu stopped" in error.message
    assert "3 of the 6 rows" in error.message
    assert "whose 'region' is `context.partition_key`" in error.message
    assert not database.exists() or duckdb_tables(database) == set()


@pytest.mark.parametrize(
    ("other_day", "other_region"),
    [(DAYS[1], "eu"), (DAYS[0], "us"), (DAYS[1], "us")],
    ids=["another day", "another region", "both"],
)
def test_a_row_of_another_cell_of_a_multi_partition_is_refused(
    database: Path, other_day: str, other_region: str
) -> None:
    key = dg.MultiPartitionKey({"day": DAYS[0], "region": "eu"})
    frames = {
        str(key): pl.concat(
            [
                orders_frame(DAYS[0], "eu"),
                orders_frame(other_day, other_region, tag="stray", valid=1, invalid=0),
            ]
        )
    }
    orders = returning(frames, CELLS, {"day": "day", "region": "region"})

    error = refusal(run(orders, duckdb(database), key))

    assert f"of the partition {key} stopped" in error.message
    assert "1 of the 4 rows" in error.message
    assert "`context.partition_key.keys_by_dimension`" in error.message
    assert not database.exists() or duckdb_tables(database) == set()


class MaybeDated(dy.Schema):
    """Orders whose day may be missing: a null day is in no partition."""

    order_id = dy.String(primary_key=True)
    day = dy.Date(nullable=True)
    amount = dy.Float64(nullable=False, min=0.0)


def maybe_dated(days: Sequence[dt.date | None], amounts: Sequence[float]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "order_id": [f"o{i}" for i in range(len(days))],
            "day": list(days),
            "amount": list(amounts),
        },
        schema={"order_id": pl.String, "day": pl.Date, "amount": pl.Float64},
    )


def test_a_null_partition_expr_value_is_refused(database: Path) -> None:
    """DuckDB never deletes a row whose day is null: each run would add it again."""
    first = dt.date(2026, 1, 1)
    frames = {DAYS[0]: maybe_dated([first, None, first], [1.0, 2.0, -1.0])}

    error = refusal(
        run(returning(frames, DAILY, "day", schema=MaybeDated), duckdb(database), DAYS[0])
    )

    assert "1 of the 3 rows" in error.message
    assert "a null value counts as outside" in error.message
    assert not database.exists() or duckdb_tables(database) == set()


# --- which managers: the table's or the quarantine's on a database; never a file per partition --


def test_the_parquet_manager_still_stores_every_row(warehouse: Path) -> None:
    """A file per partition holds whatever the run returned, and a rerun replaces it whole."""
    day = DAYS[1]
    frame = pl.concat([orders_frame(day), orders_frame(DAYS[0], tag="late")])
    orders = returning({day: frame}, DAILY, "day")

    for _ in range(2):
        assert run(orders, PolarsParquetIOManager(base_dir=str(warehouse)), day).success

    assert parquet_ids(warehouse / "orders" / f"{day}.parquet") == valid_ids(frame)
    assert parquet_ids(warehouse / "orders_quarantine" / f"{day}.parquet") == invalid_ids(frame)


@pytest.mark.parametrize("on_duckdb", ["table", "quarantine"])
def test_either_store_on_a_database_refuses(warehouse: Path, on_duckdb: str) -> None:
    """Behind `QuarantineAwareIOManager`, the manager that stores each write decides."""
    parquet = PolarsParquetIOManager(base_dir=str(warehouse / "files"))
    database = duckdb(warehouse / "warehouse.duckdb")
    manager = (
        dd.QuarantineAwareIOManager(io_manager=database, quarantine_io_manager=parquet)
        if on_duckdb == "table"
        else dd.QuarantineAwareIOManager(io_manager=parquet, quarantine_io_manager=database)
    )
    frame = pl.concat([orders_frame(DAYS[0]), orders_frame(DAYS[1], tag="late", valid=0)])

    error = refusal(run(returning({DAYS[0]: frame}, DAILY, "day"), manager, DAYS[0]))

    assert "1 of the 4 rows" in error.message
    assert files_under(warehouse / "files") == set()
    assert duckdb_tables(warehouse / "warehouse.duckdb") == set()


@pytest.mark.parametrize("late", [0, 1], ids=["every row in the day", "a late row"])
@pytest.mark.parametrize(
    "streaming", [False, True], ids=["on duckdb", "streamed, the quarantine on duckdb"]
)
def test_the_returned_plan_runs_once(
    warehouse: Path, monkeypatch: pytest.MonkeyPatch, streaming: bool, late: int
) -> None:
    """The rows are counted where the split reads them: collected, or staged for a streamed
    output whose table a manager sinks (the quarantine alone on DuckDB), never held."""
    collected: list[str] = []

    def collect_once(frames: Mapping[str, Any]) -> dict[str, pl.DataFrame]:
        collected.extend(n for n, f in frames.items() if isinstance(f, pl.LazyFrame))
        return split.collect_once(frames)

    monkeypatch.setattr(row_partitions, "collect_once", collect_once)
    frame = pl.concat(
        [orders_frame(DAYS[0]), orders_frame(DAYS[1], tag="late", valid=late, invalid=0)]
    )
    source = ChangingSource(frame, lambda rows, _: rows)
    database = warehouse / "warehouse.duckdb"
    files = warehouse / "files"
    manager: object = (
        dd.QuarantineAwareIOManager(
            io_manager=PolarsParquetIOManager(base_dir=str(files)),
            quarantine_io_manager=duckdb(database),
        )
        if streaming
        else duckdb(database)
    )

    @dd.asset(
        Orders,
        quarantine=True,
        streaming=streaming,
        partitions_def=DAILY,
        metadata={"partition_expr": "day"},
    )
    def orders() -> pl.LazyFrame:
        return source.scan()

    result = run(orders, manager, DAYS[0])

    assert source.reads == 1
    assert collected == ([] if streaming else ["result"])
    if late:
        assert "1 of the 4 rows" in refusal(result).message
        assert files_under(files) == set()
        assert not database.exists() or duckdb_tables(database) == set()
        return
    assert result.success
    table = files / "orders" / f"{DAYS[0]}.parquet"
    assert (parquet_ids(table) if streaming else duckdb_ids(database, "public.orders")) == (
        valid_ids(frame)
    )
    assert duckdb_ids(database, "public.orders_quarantine") == invalid_ids(frame)


# --- no value in the message or the event log -------------------------------------------------


class Customers(dy.Schema):
    """Rows partitioned by a column marked sensitive."""

    customer_id = dy.String(primary_key=True)
    segment = dy.String(nullable=False, metadata={"pii": True})
    day = dy.Date(nullable=False)


@pytest.mark.parametrize(
    ("partitions_def", "partition_expr", "key"),
    [(dg.StaticPartitionsDefinition(["gold", "iron"]), "segment", "gold"), (DAILY, "day", DAYS[0])],
    ids=["sensitive partition column", "samples off"],
)
def test_no_value_of_a_row_reaches_the_message_or_the_event_log(
    database: Path,
    partitions_def: dg.PartitionsDefinition[str],
    partition_expr: str,
    key: str,
) -> None:
    stray = {"customer_id": "cust-7f3a9", "segment": "tin-secret", "day": dt.date(2026, 3, 17)}
    frame = pl.DataFrame(
        [
            {"customer_id": "cust-1b2c3", "segment": "gold", "day": dt.date(2026, 1, 1)},
            stray,
        ],
        schema={"customer_id": pl.String, "segment": pl.String, "day": pl.Date},
    )
    samples_off = {"row_sample": 0, "max_failure_samples": 0} if partition_expr == "day" else {}
    customers = returning(
        {key: frame},
        partitions_def,
        partition_expr,
        schema=Customers,
        name="customers",
        **samples_off,
    )
    instance = shared_instance()

    result = run(customers, duckdb(database), key, instance=instance)

    error = refusal(result)
    assert "1 of the 2 rows" in error.message
    shown = [str(v) for v in stray.values()] + ["2026-03-17"]
    if partition_expr == "day":
        shown += ["cust-1b2c3"]
    logged = [serialize_value(entry) for entry in instance.all_logs(result.run_id)]
    assert [value for value in shown if any(value in text for text in logged)] == []


# --- properties: the rows a one-partition run stores, and a range run of the same days ---------


PROPERTY_EXAMPLES = examples(normal=8, thorough=100)
"""Examples of each property below; the long profile (`DAGSTER_DATAFRAMELY_THOROUGH=1`) draws
more, as the streamed-rules properties do."""

FIVE_DAYS = dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-06")
"""The property's partitions: a range is the middle three, so a row may fall in a day of the
definition outside the range, as well as before or after every partition, or on no day."""

DAY_CHOICES = [
    dt.date(2025, 12, 31),  # before the first partition
    *(dt.date(2026, 1, d) for d in range(1, 6)),
    dt.date(2026, 1, 6),  # after the last partition
    None,
]

OUTSIDE_THE_RANGE = [DAY_CHOICES[0], DAY_CHOICES[1], DAY_CHOICES[5], DAY_CHOICES[6], None]
"""The days outside a range of the middle three partitions, and no day."""

ROWS = st.lists(
    st.tuples(st.sampled_from(DAY_CHOICES), st.booleans()),  # its day, and whether it is valid
    min_size=1,
    max_size=12,
)


def generated(rows: Sequence[tuple[dt.date | None, bool]], tag: str) -> pl.DataFrame:
    frame = maybe_dated([day for day, _ in rows], [1.0 if ok else -1.0 for _, ok in rows])
    return frame.with_columns(pl.col("order_id") + f"-{tag}")


class World:
    """One instance and one DuckDB file, where `orders` returns whatever `frames` holds."""

    def __init__(self, root: Path, name: str) -> None:
        self.instance = dg.DagsterInstance.ephemeral()
        self.database = root / f"{name}.duckdb"
        self.frames: dict[str, pl.DataFrame] = {}

        @dd.asset(
            MaybeDated,
            quarantine=True,
            partitions_def=FIVE_DAYS,
            backfill_policy=dg.BackfillPolicy.single_run(),
            metadata={"partition_expr": "day"},
        )
        def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
            if context.has_partition_key:
                return self.frames[context.partition_key]
            return self.frames["range"]

        self.asset = orders

    def run(
        self, key: str | None, tags: Mapping[str, str] | None = None
    ) -> dg.ExecuteInProcessResult:
        return run(self.asset, duckdb(self.database), key, tags=tags, instance=self.instance)

    def stored(self, table: str) -> pl.DataFrame:
        """Every stored row of `table` by id; none when there is no such table yet."""
        found = duckdb_stored(self.database, table)
        schema = {"order_id": pl.String, "day": pl.Date, "amount": pl.Float64}
        if found is None:
            return pl.DataFrame(schema=schema)
        return found.select(list(schema)).sort("order_id")


def error_of(result: dg.ExecuteInProcessResult) -> Any | None:
    failures = result.get_step_failure_events()
    if not failures:
        return None
    error = failures[0].step_failure_data.error
    assert error is not None
    return error.cause or error


def on_day(frame: pl.DataFrame, day: dt.date, valid: bool) -> pl.DataFrame:
    rows = frame.filter((pl.col("day") == day) & ((pl.col("amount") >= 0) == valid))
    return rows.sort("order_id")


@pytest.mark.timeout(examples(normal=300, thorough=0))  # 0: the long profile has no limit
@settings(
    max_examples=PROPERTY_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=ROWS, rows=ROWS, partition=st.integers(0, 4))
def test_property_a_partition_run_refuses_exactly_a_row_outside_it_or_stores_its_rows(
    tmp_path_factory: pytest.TempPathFactory,
    seed: list[tuple[dt.date | None, bool]],
    rows: list[tuple[dt.date | None, bool]],
    partition: int,
) -> None:
    """Compared with Polars over the returned rows, over two runs of the same partition.

    A first run stores the seed's rows of the day (it holds only those), a second returns the
    generated rows twice over (a rerun): it refuses exactly when a row is on another day or
    none, naming how many, and leaves the first run's rows; otherwise the day holds exactly
    the generated valid rows, the quarantine exactly its invalid ones, however often it ran.
    """
    world = World(tmp_path_factory.mktemp("partition-rows"), "one")
    key = FIVE_DAYS.get_partition_keys()[partition]
    day = dt.date.fromisoformat(key)
    first = generated(seed, "seed").filter(pl.col("day") == day)
    frame = generated(rows, "run")
    outside = frame.filter(pl.col("day").is_null() | (pl.col("day") != day)).height
    try:
        world.frames[key] = first
        world.run(key)
        before = {name: world.stored(name) for name in ("orders", "orders_quarantine")}
        world.frames[key] = frame
        for _ in range(2):
            error = error_of(world.run(key))
            if outside:
                assert error is not None
                assert error.cls_name == PartitionRangeError.__name__
                assert f"{outside} of the {frame.height} rows" in error.message
                assert all(world.stored(name).equals(rows) for name, rows in before.items())
                continue
            valid = on_day(frame, day, valid=True)
            invalid = on_day(frame, day, valid=False)
            if valid.height == 0:  # every row invalid: the quarantine is written, not the table
                assert error is not None
                assert error.cls_name == "NoValidRowsError"
                assert world.stored("orders").equals(before["orders"])
            else:
                assert error is None
                assert world.stored("orders").equals(valid)
            # A run with no invalid row leaves the quarantine as it was.
            expected = invalid if invalid.height else before["orders_quarantine"]
            assert world.stored("orders_quarantine").equals(expected)
    finally:
        world.instance.dispose()


@pytest.mark.timeout(examples(normal=300, thorough=0))  # 0: the long profile has no limit
@settings(
    max_examples=PROPERTY_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=ROWS, stray=st.lists(st.sampled_from(OUTSIDE_THE_RANGE), max_size=3))
def test_property_a_partition_run_refuses_as_a_range_run_of_its_days_does(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[dt.date | None, bool]],
    stray: list[dt.date | None],
) -> None:
    """A range over the middle three days, against a run of each day alone.

    The range returns every row; each day's run returns that day's rows and the rows outside
    the range. Both refuse exactly when there is such a row, naming as many, and write
    nothing; otherwise both store the same rows.
    """
    root = tmp_path_factory.mktemp("partition-rows-range")
    ranged, single = World(root, "ranged"), World(root, "single")
    keys = FIVE_DAYS.get_partition_keys()[1:4]
    span = [dt.date.fromisoformat(key) for key in keys]
    inside = generated(rows, "in").filter(pl.col("day").is_in(span))
    outside = generated([(day, True) for day in stray], "out")
    try:
        ranged.frames["range"] = pl.concat([inside, outside])
        for key, day in zip(keys, span, strict=True):
            single.frames[key] = pl.concat([inside.filter(pl.col("day") == day), outside])

        in_range = error_of(ranged.run(None, range_tags(keys[0], keys[-1])))
        one_by_one = [error_of(single.run(key)) for key in keys]

        if outside.height:
            errors = [in_range, *one_by_one]
            assert all(e is not None and e.cls_name == PartitionRangeError.__name__ for e in errors)
            assert all(f"{outside.height} of the" in e.message for e in errors)
            assert duckdb_tables(ranged.database) == duckdb_tables(single.database) == set()
            return
        refused = [e for e in [in_range, *one_by_one] if e is not None]
        assert all(e.cls_name != PartitionRangeError.__name__ for e in refused)
        if in_range is None:
            for table in ("orders", "orders_quarantine"):
                assert ranged.stored(table).equals(single.stored(table))
    finally:
        ranged.instance.dispose()
        single.instance.dispose()

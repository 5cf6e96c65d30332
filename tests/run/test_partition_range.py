"""A run over a partition range: each partition's rows decided as a run of it alone would be.

The runs here go through `dg.materialize` with the tags of a single-run backfill, on a small IO
manager that stores a range in one write, as a database manager does, and records each write.
The DuckDB and parquet managers themselves are in `integration_tests/test_partition_ranges.py`.
"""

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from tests.asset_support import QUIET, range_tags, value
from tests.schemas import BookLines, BookOrders, OrderBook

pytestmark = pytest.mark.filterwarnings("ignore::dagster.PreviewWarning")

DAYS = ("2026-01-01", "2026-01-02", "2026-01-03")
DAILY = dg.DailyPartitionsDefinition(start_date=DAYS[0], end_date="2026-01-04")
REGIONS = dg.StaticPartitionsDefinition(["eu", "us", "apac"])
CELLS = dg.MultiPartitionsDefinition(
    {"region": dg.StaticPartitionsDefinition(["eu", "us"]), "day": DAILY}
)
SINGLE_RUN = dg.BackfillPolicy.single_run()
AMOUNT_MIN = "dy_rule__amount__min"


class Sales(dy.Schema):
    """One sale: its id is unique within its day, not across days."""

    sale_id = dy.String(primary_key=True)
    day = dy.Date(nullable=False)
    region = dy.String(nullable=False)
    amount = dy.Float64(nullable=False, min=0.0)


def sales(rows: list[tuple[str, str, str, float]]) -> pl.DataFrame:
    """Rows of (sale_id, day, region, amount)."""
    return pl.DataFrame(
        {
            "sale_id": [r[0] for r in rows],
            "day": [dt.date.fromisoformat(r[1]) for r in rows],
            "region": [r[2] for r in rows],
            "amount": [r[3] for r in rows],
        },
        schema={"sale_id": pl.String, "day": pl.Date, "region": pl.String, "amount": pl.Float64},
    )


class RangeStore(dg.IOManager):
    """Stores each output's value once per write, whole range included, as a database would."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, tuple[str, ...], Any]] = []

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        keys = (
            tuple(str(k) for k in context.asset_partition_keys)
            if context.has_asset_partitions
            else ()
        )
        self.writes.append((context.asset_key.to_user_string(), keys, obj))

    def load_input(self, context: dg.InputContext) -> Any:
        raise NotImplementedError

    def written(self, asset: str) -> list[tuple[tuple[str, ...], Any]]:
        return [(keys, obj) for key, keys, obj in self.writes if key == asset]


def run_range(
    assets: list[Any], first: str, last: str, store: RangeStore | None = None
) -> tuple[dg.ExecuteInProcessResult, RangeStore]:
    store = store or RangeStore()
    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize(
            assets,
            resources={"io_manager": store},
            instance=instance,
            run_config=QUIET,
            raise_on_error=False,
            tags=range_tags(first, last),
        )
    return result, store


def per_partition(result: dg.ExecuteInProcessResult, asset: str) -> dict[str, dict[str, Any]]:
    found = {}
    for event in result.get_asset_materialization_events():
        if event.asset_key.to_user_string() == asset:
            materialization = event.materialization
            assert materialization.partition is not None
            found[str(materialization.partition)] = {
                k: value(v) for k, v in materialization.metadata.items()
            }
    return found


def check_by_partition(
    result: dg.ExecuteInProcessResult, check: str, asset: str | None = None
) -> dict[str, dg.AssetCheckEvaluation]:
    found: dict[str, dg.AssetCheckEvaluation] = {}
    for evaluation in result.get_asset_check_evaluations():
        if evaluation.check_name != check:
            continue
        if asset is not None and evaluation.asset_key.to_user_string() != asset:
            continue
        assert evaluation.partition is not None, "an evaluation of no partition"
        assert str(evaluation.partition) not in found, "two evaluations of one partition"
        found[str(evaluation.partition)] = evaluation
    return found


def failure_cause(result: dg.ExecuteInProcessResult) -> Any:
    (failure,) = result.get_step_failure_events()
    error = failure.step_failure_data.error
    assert error is not None
    return error.cause or error


def sales_asset(
    frame: pl.DataFrame | Callable[[], pl.LazyFrame] | None,
    partitions_def: dg.PartitionsDefinition[str] = DAILY,
    partition_expr: str | Mapping[str, str] = "day",
    **kwargs: Any,
) -> dg.AssetsDefinition:
    @dd.asset(
        Sales,
        quarantine=True,
        partitions_def=partitions_def,
        backfill_policy=SINGLE_RUN,
        metadata={"partition_expr": partition_expr},
        **kwargs,
    )
    def orders() -> pl.DataFrame | pl.LazyFrame | None:
        return frame() if callable(frame) else frame

    return orders


def test_a_key_repeated_on_two_days_is_valid_as_in_runs_of_each_day() -> None:
    """The primary key is checked within each partition, never across the range."""
    frame = sales(
        [("s1", DAYS[0], "eu", 1.0), ("s1", DAYS[1], "eu", 2.0), ("s1", DAYS[1], "eu", 3.0)]
    )

    result, store = run_range([sales_asset(frame)], DAYS[0], DAYS[1])

    assert not result.success  # day 2 repeats s1: every row of it is invalid
    checks = check_by_partition(result, "dy_rule__primary_key")
    assert {day: c.passed for day, c in checks.items()} == {DAYS[0]: True, DAYS[1]: False}
    ((keys, quarantined),) = store.written("orders_quarantine")
    assert keys == DAYS[:2]
    assert quarantined["amount"].to_list() == [2.0, 3.0]
    assert store.written("orders") == []


def test_static_partitions_are_read_from_the_column_itself() -> None:
    frame = sales(
        [("a", DAYS[0], "eu", 1.0), ("b", DAYS[0], "us", -1.0), ("c", DAYS[0], "us", 2.0)]
    )

    result, store = run_range([sales_asset(frame, REGIONS, "region")], "eu", "apac")

    assert result.success
    reported = per_partition(result, "orders")
    assert {k: m["dagster/row_count"] for k, m in reported.items()} == {"eu": 1, "us": 1, "apac": 0}
    assert {k: m.get("dataframely/invalid_count") for k, m in reported.items()} == {
        "eu": None,
        "us": 1,
        "apac": None,
    }
    checks = check_by_partition(result, AMOUNT_MIN)
    assert {k: c.passed for k, c in checks.items()} == {"eu": True, "us": False, "apac": True}
    assert {k: value(c.metadata["dy_partition"]) for k, c in checks.items()} == {
        k: k for k in ("eu", "us", "apac")
    }
    ((keys, table),) = store.written("orders")
    assert sorted(keys) == ["apac", "eu", "us"]
    assert sorted(table["sale_id"]) == ["a", "c"]


def test_a_multi_partition_range_is_split_by_cell() -> None:
    frame = sales(
        [
            ("a", DAYS[0], "eu", 1.0),
            ("b", DAYS[0], "us", 1.0),
            ("c", DAYS[1], "eu", -1.0),
            ("d", DAYS[1], "eu", 1.0),
        ]
    )
    orders = sales_asset(frame, CELLS, {"day": "day", "region": "region"})
    first = dg.MultiPartitionKey({"day": DAYS[0], "region": "eu"})
    last = dg.MultiPartitionKey({"day": DAYS[1], "region": "us"})

    result, _ = run_range([orders], str(first), str(last))

    assert result.success
    reported = per_partition(result, "orders")
    counts = {k: m["dagster/row_count"] for k, m in reported.items()}
    assert counts == {
        f"{DAYS[0]}|eu": 1,
        f"{DAYS[0]}|us": 1,
        f"{DAYS[1]}|eu": 1,
        f"{DAYS[1]}|us": 0,
    }
    assert reported[f"{DAYS[1]}|eu"]["dataframely/invalid_count"] == 1
    checks = check_by_partition(result, AMOUNT_MIN)
    assert [k for k, c in checks.items() if not c.passed] == [f"{DAYS[1]}|eu"]


def test_a_skipped_range_passes_every_check_in_every_partition() -> None:
    result, store = run_range([sales_asset(None)], DAYS[0], DAYS[2])

    assert result.success
    assert store.writes == []
    checks = check_by_partition(result, AMOUNT_MIN)
    assert sorted(checks) == list(DAYS)
    assert all(c.passed for c in checks.values())


def test_a_column_mismatch_fails_every_partition_without_running_the_plan() -> None:
    ran: list[bool] = []

    def plan() -> pl.LazyFrame:
        def counted(frame: pl.DataFrame) -> pl.DataFrame:
            ran.append(True)
            return frame

        rows = sales([("a", DAYS[0], "eu", 1.0)]).drop("amount").lazy()
        return rows.map_batches(counted)

    result, store = run_range([sales_asset(plan)], DAYS[0], DAYS[1])

    assert not result.success
    assert failure_cause(result).cls_name == "ColumnSchemaError"
    assert ran == []
    assert store.writes == []
    checks = check_by_partition(result, "dy_schema__columns")
    assert {k: c.passed for k, c in checks.items()} == {DAYS[0]: False, DAYS[1]: False}


def test_a_null_partition_value_belongs_to_no_partition() -> None:
    frame = sales([("a", DAYS[0], "eu", 1.0)]).with_columns(region=pl.lit(None, pl.String))

    result, store = run_range([sales_asset(frame, REGIONS, "region")], "eu", "us")

    assert failure_cause(result).cls_name == "PartitionRangeError"
    assert "1 of the 1 rows" in failure_cause(result).message
    assert store.writes == []


def test_a_text_column_cannot_place_rows_in_time_windows() -> None:
    """Refused from the frame's columns, before its plan runs."""
    frame = sales([("a", DAYS[0], "eu", 1.0)])

    result, store = run_range(
        [sales_asset(lambda: frame.lazy(), partition_expr="region")], DAYS[0], DAYS[1]
    )

    cause = failure_cause(result)
    assert cause.cls_name == "PartitionRangeError"
    assert "'region' gives String values" in cause.message
    assert store.writes == []


def test_a_naive_datetime_is_wall_clock_time_in_the_partitions_time_zone() -> None:
    days = dg.DailyPartitionsDefinition(
        start_date=DAYS[0], end_date="2026-01-03", timezone="Asia/Tokyo"
    )

    class Events(dy.Schema):
        event_id = dy.String(primary_key=True)
        happened = dy.Datetime(nullable=False)

    frame = pl.DataFrame(
        {
            "event_id": ["late", "early"],
            "happened": [dt.datetime(2026, 1, 1, 23, 59), dt.datetime(2026, 1, 2, 0, 0)],
        }
    )

    @dd.asset(
        Events,
        partitions_def=days,
        backfill_policy=SINGLE_RUN,
        metadata={"partition_expr": "happened"},
    )
    def events() -> pl.DataFrame:
        return frame

    result, _ = run_range([events], DAYS[0], DAYS[1])

    assert result.success
    reported = per_partition(result, "events")
    assert {k: m["dagster/row_count"] for k, m in reported.items()} == {DAYS[0]: 1, DAYS[1]: 1}


def test_each_output_of_a_multi_asset_is_reported_per_partition() -> None:
    frame = sales(
        [("a", DAYS[0], "eu", 1.0), ("b", DAYS[1], "eu", -1.0), ("c", DAYS[1], "eu", 2.0)]
    )
    metadata = {"partition_expr": "day"}

    @dd.multi_asset(
        outs={
            "left": dd.AssetOut(Sales, quarantine=True, metadata=metadata),
            "right": dd.AssetOut(Sales, quarantine=True, metadata=metadata),
        },
        partitions_def=DAILY,
        backfill_policy=SINGLE_RUN,
    )
    def both() -> dict[str, pl.DataFrame]:
        return {"left": frame, "right": frame.filter(pl.col("amount") > 0)}

    result, store = run_range([both], DAYS[0], DAYS[1])

    assert result.success
    assert {k: m["dagster/row_count"] for k, m in per_partition(result, "left").items()} == {
        DAYS[0]: 1,
        DAYS[1]: 1,
    }
    assert per_partition(result, "left")[DAYS[1]]["dataframely/invalid_count"] == 1
    assert "dataframely/invalid_count" not in per_partition(result, "left")[DAYS[0]]
    assert per_partition(result, "right")[DAYS[1]]["dagster/row_count"] == 1
    left = check_by_partition(result, AMOUNT_MIN, "left")
    right = check_by_partition(result, AMOUNT_MIN, "right")
    assert {k: c.passed for k, c in left.items()} == {DAYS[0]: True, DAYS[1]: False}
    assert all(c.passed for c in right.values())
    assert [keys for keys, _ in store.written("left_quarantine")] == [DAYS[:2]]


def test_a_collections_filters_apply_within_each_partition() -> None:
    """A line of day 2 whose order is on day 1 has no order in its own partition."""

    class DatedOrders(BookOrders):
        day = dy.Date(nullable=False)

    class DatedLines(BookLines):
        day = dy.Date(nullable=False)

    class DatedBook(OrderBook):
        orders: dy.LazyFrame[DatedOrders]  # type: ignore[assignment]
        lines: dy.LazyFrame[DatedLines]  # type: ignore[assignment]

    one, two = (dt.date.fromisoformat(d) for d in DAYS[:2])
    orders = pl.DataFrame({"order_id": ["o1", "o2"], "amount": [1.0, 2.0], "day": [one, two]})
    lines = pl.DataFrame(
        {
            "order_id": ["o1", "o2", "o1"],
            "line_no": [1, 1, 2],
            "quantity": [1, 1, 1],
            "day": [one, two, two],
        }
    )
    metadata = {"partition_expr": "day"}

    @dd.collection_asset(
        DatedBook,
        quarantine=True,
        partitions_def=DAILY,
        backfill_policy=SINGLE_RUN,
        outs={
            "orders": dg.AssetOut(metadata=metadata),
            "lines": dg.AssetOut(metadata=metadata),
        },
    )
    def book() -> dict[str, pl.DataFrame]:
        return {"orders": orders, "lines": lines}

    result, store = run_range([book], DAYS[0], DAYS[1])

    assert result.success, failure_cause(result)
    reported = per_partition(result, "lines")
    assert {k: m["dagster/row_count"] for k, m in reported.items()} == {DAYS[0]: 1, DAYS[1]: 1}
    assert reported[DAYS[1]]["dataframely/invalid_count"] == 1
    ((_, quarantined),) = store.written("lines_quarantine")
    assert quarantined.select("order_id", "line_no").rows() == [("o1", 2)]


# --- history per partition ---------------------------------------------------------------------


WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR
VOLUME = "dy_volume"
UNDECLARED = "dy_undeclared_columns"


class History:
    """Runs of one asset on one instance and one store, over ranges or one partition at a time."""

    def __init__(self, instance: dg.DagsterInstance, **policy: Any) -> None:
        self.instance = instance
        self.store = RangeStore()
        self.frames: dict[str, pl.DataFrame] = {}
        self.partitions_def: dg.PartitionsDefinition[str] = policy.pop("partitions_def", DAILY)
        expr = policy.pop("partition_expr", "day")

        @dd.asset(
            Sales,
            quarantine=True,
            partitions_def=self.partitions_def,
            backfill_policy=SINGLE_RUN,
            metadata={"partition_expr": expr},
            quality_policy=dd.QualityPolicy(**policy),
        )
        def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
            keys = context.partition_keys
            return pl.concat([self.frames[key] for key in keys], how="diagonal_relaxed")

        self.asset = orders

    def run(self, first: str, last: str | None = None) -> dg.ExecuteInProcessResult:
        """A run of `first`, or of the range `first...last`."""
        tags = {} if last is None else range_tags(first, last)
        return dg.materialize(
            [self.asset],
            resources={"io_manager": self.store},
            instance=self.instance,
            run_config=QUIET,
            raise_on_error=False,
            partition_key=first if last is None else None,
            tags=tags,
        )


def day_rows(day: str, count: int, **extra: Any) -> pl.DataFrame:
    """`count` valid sales of `day`, with a column of each `extra` value."""
    rows = sales([(f"{day}-{i}", day, "eu", 1.0) for i in range(count)])
    return rows.with_columns(pl.lit(v).alias(name) for name, v in extra.items())


def verdicts(result: dg.ExecuteInProcessResult, check: str) -> dict[str, tuple[bool, Any]]:
    """Each partition's result of `check`: passed, and its bounds (or the columns it compared)."""
    shown = ("dy_min_rows", "dy_max_rows", "dy_recent_median", "dy_previous_columns")
    return {
        key: (c.passed, tuple(value(c.metadata[k]) for k in shown if k in c.metadata))
        for key, c in check_by_partition(result, check).items()
    }


def test_a_range_compares_each_partition_with_its_own_row_counts() -> None:
    """The issue's case: a big day among small ones, each judged against itself.

    Against the asset's history, the big day's unchanged 1,000 rows were out of bounds, and 12
    rows in its place were within them.
    """
    policy = dd.VolumeCheck(max_drop=0.5, max_growth=1.0, severity=ERROR)
    with dg.DagsterInstance.ephemeral() as instance:
        runs = History(instance, volume=policy)
        runs.frames = {DAYS[0]: day_rows(DAYS[0], 1000)}
        runs.frames |= {day: day_rows(day, 12) for day in DAYS[1:]}
        assert runs.run(DAYS[0], DAYS[2]).success

        unchanged = runs.run(DAYS[0], DAYS[2])
        assert unchanged.success
        assert all(passed for passed, _ in verdicts(unchanged, VOLUME).values())

        runs.frames[DAYS[0]] = day_rows(DAYS[0], 12)
        dropped = runs.run(DAYS[0], DAYS[2])

    assert failure_cause(dropped).cls_name == "RowCountOutOfBoundsError"
    assert verdicts(dropped, VOLUME) == {
        DAYS[0]: (False, (500, 2000, 1000.0)),
        DAYS[1]: (True, (6, 24, 12.0)),
        DAYS[2]: (True, (6, 24, 12.0)),
    }
    tables = [table.height for _, table in runs.store.written("orders")]
    assert tables == [1024, 1024], "the 12 rows did not replace the 1,000"


def test_a_range_compared_with_the_asset_sees_its_earlier_partitions() -> None:
    """With `compare_with="asset"`, a day's run after the days before it would compare with them.

    A first backfill of three days, the third a tenth of the others: a run per day fails the
    third against the first two, and so does the range.
    """
    policy = dd.VolumeCheck(max_drop=0.5, compare_with="asset")
    frames = {DAYS[0]: day_rows(DAYS[0], 100), DAYS[1]: day_rows(DAYS[1], 80)}
    frames[DAYS[2]] = day_rows(DAYS[2], 10)
    with dg.DagsterInstance.ephemeral() as instance:
        ranged = History(instance, volume=policy)
        ranged.frames = frames
        in_range = verdicts(ranged.run(DAYS[0], DAYS[2]), VOLUME)
    with dg.DagsterInstance.ephemeral() as instance:
        single = History(instance, volume=policy)
        single.frames = frames
        one_by_one = {k: v for day in DAYS for k, v in verdicts(single.run(day), VOLUME).items()}

    assert (
        in_range
        == one_by_one
        == {
            DAYS[0]: (True, ()),
            DAYS[1]: (True, (50, 100.0)),
            DAYS[2]: (False, (45, 90.0)),
        }
    )


def test_a_range_compares_each_partitions_columns_with_its_own_last_run() -> None:
    """`eu` last brought `note`, `us` `note` and `channel`; the range brings `note` for both."""
    with dg.DagsterInstance.ephemeral() as instance:
        runs = History(
            instance, partitions_def=REGIONS, partition_expr="region", undeclared_columns="check"
        )
        eu = sales([("a", DAYS[0], "eu", 1.0)])
        us = sales([("b", DAYS[0], "us", 1.0)])
        runs.frames = {"eu": eu.with_columns(note=pl.lit("x"))}
        runs.frames["us"] = us.with_columns(note=pl.lit("x"), channel=pl.lit("web"))
        assert runs.run("eu").success
        assert runs.run("us").success
        runs.frames["us"] = us.with_columns(note=pl.lit("x"))

        result = runs.run("eu", "us")

    assert result.success
    assert verdicts(result, UNDECLARED) == {
        "eu": (True, (["note"],)),
        "us": (False, (["note", "channel"],)),
    }

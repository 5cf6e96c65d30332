"""`validation_results`: the six outcomes of the failure policy, and what each one reports."""

from __future__ import annotations

import datetime as dt
import decimal
import time
from collections.abc import Iterable
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from dagster_dataframely import errors, wiring
from dagster_dataframely._run.checks.tables import table_value
from dagster_dataframely._run.emit import emit as _emit
from tests.schemas import NoRules, OrderLines, Orders

KEY = dg.AssetKey(["orders"])

# Two valid rows, then one row failing `amount|min`, two sharing a key (Dataframely rejects both
# rows of a duplicated key), one of them also failing `amount|min`, and one failing
# `amount|nullability`.
ROWS = pl.DataFrame(
    {
        "order_id": ["a", "b", "c", "e", "e", "d"],
        "amount": [1.0, 2.5, -1.0, 4.0, -3.0, None],
        "note": ["x", "y", "z", "w", "u", "v"],
    }
)


class Writer:
    """A quarantine writer that keeps what it was given."""

    def __init__(self, address: str = "memory://orders_quarantine") -> None:
        self.address = address
        self.frames: list[pl.DataFrame] = []

    def __call__(self, frame: pl.DataFrame) -> str:
        self.frames.append(frame)
        return self.address


def _materializations(events: Iterable[object]) -> list[dg.MaterializeResult[Any]]:
    return [e for e in events if isinstance(e, dg.MaterializeResult)]


def _checks(events: Iterable[object]) -> dict[str, dg.AssetCheckResult]:
    return {e.check_name: e for e in events if isinstance(e, dg.AssetCheckResult)}  # type: ignore[misc]


def _records(value: Any) -> list[dict[str, Any]]:
    return [record.data for record in value.records]


def _as(frame: pl.DataFrame, lazy: bool) -> pl.DataFrame | pl.LazyFrame:
    return frame.lazy() if lazy else frame


def _collect(iterator: Iterable[object], error: type[Exception] | None = None) -> list[object]:
    """Every event yielded before `error` was raised (or all events, when `error` is None)."""
    events: list[object] = []
    try:
        events.extend(iterator)
    except Exception as raised:
        if error is None or not isinstance(raised, error):
            raise
        return events
    if error is not None:
        pytest.fail(f"{error.__name__} was not raised")
    return events


LAZY = pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])


@LAZY
def test_every_row_valid_writes_the_table_and_passes_every_check(lazy: bool) -> None:
    clean = ROWS.head(2)
    writer = Writer()
    events = list(
        wiring.validation_results(Orders, _as(clean, lazy), valid_key=KEY, quarantine_writer=writer)
    )
    assert isinstance(events[0], dg.MaterializeResult)
    (table,) = _materializations(events)
    assert table.asset_key == KEY
    assert_frame_equal(table.value, clean.select("order_id", "amount"))
    assert writer.frames == []
    checks = _checks(events)
    assert list(checks) == [spec.name for spec in wiring.check_specs(Orders, asset=KEY)]
    assert all(check.passed for check in checks.values())
    metadata = table.metadata or {}
    assert metadata["dagster/row_count"] == 2
    assert "dataframely/invalid_count" not in metadata
    assert "dataframely/quarantine_address" not in metadata
    assert "dataframely/invalid_sample" not in metadata
    assert "dataframely/invalid_by_rules" not in metadata
    assert _records(metadata["dataframely/valid_sample"]) == [
        {"order_id": "a", "amount": 1.0},
        {"order_id": "b", "amount": 2.5},
    ]
    assert set(metadata) == {
        "dagster/row_count",
        "dataframely/valid_sample",
        "dataframely/valid_statistics/numeric",
        "dataframely/valid_statistics/string",
        # The metrics every materialization carries, for charts and alerts (issue 20).
        "dataframely/invalid_fraction",
        "dataframely/warning_fraction",
        # Each declared column's metrics as numbers Dagster plots (issue 49): a string's and a
        # float's, as their dtype groups record them.
        *(
            f"dataframely/metric/order_id/{metric}"
            for metric in ("null_fraction", "distinct_count", "min_length", "max_length")
        ),
        "dataframely/metric/order_id/mean_length",
        "dataframely/metric/order_id/empty_fraction",
        *(
            f"dataframely/metric/amount/{metric}"
            for metric in ("null_fraction", "mean", "std", "min", "median", "max", "zero_fraction")
        ),
    }
    assert metadata["dataframely/invalid_fraction"] == 0.0


@LAZY
def test_some_rows_failed_with_a_quarantine_writes_both(lazy: bool) -> None:
    writer = Writer()
    events = list(
        wiring.validation_results(Orders, _as(ROWS, lazy), valid_key=KEY, quarantine_writer=writer)
    )
    (table,) = _materializations(events)
    assert_frame_equal(table.value, pl.DataFrame({"order_id": ["a", "b"], "amount": [1.0, 2.5]}))
    (quarantined,) = writer.frames
    assert quarantined.columns == [
        "order_id",
        "amount",
        "dy_rule__primary_key",
        "dy_rule__order_id__nullability",
        "dy_rule__amount__nullability",
        "dy_rule__amount__min",
        "dy_rule__amount__inf",
        "dy_rule__amount__nan",
    ]
    assert quarantined.schema["dy_rule__amount__min"] == pl.String
    assert quarantined["order_id"].to_list() == ["c", "e", "e", "d"]
    assert quarantined["dy_rule__amount__min"].to_list() == ["invalid", "valid", "invalid", "valid"]
    metadata = table.metadata or {}
    assert metadata["dagster/row_count"] == table.value.height
    assert metadata["dataframely/quarantine_address"] == "memory://orders_quarantine"
    assert metadata["dataframely/invalid_count"] == quarantined.height
    assert len(_records(metadata["dataframely/invalid_sample"])) == min(5, quarantined.height)
    # Ties are ordered by the rules' positions in the schema, so the table is stable.
    assert _records(metadata["dataframely/invalid_by_rules"]) == [
        {"rules": "dy_rule__primary_key", "rows": 1},
        {"rules": "dy_rule__primary_key, dy_rule__amount__min", "rows": 1},
        {"rules": "dy_rule__amount__nullability", "rows": 1},
        {"rules": "dy_rule__amount__min", "rows": 1},
    ]
    checks = _checks(events)
    assert checks["dy_schema__columns"].passed
    assert not checks["dy_rule__amount__min"].passed
    assert not checks["dy_rule__amount__nullability"].passed
    assert not checks["dy_rule__primary_key"].passed
    assert checks["dy_rule__amount__inf"].passed
    failing = [c for c in checks.values() if not c.passed]
    assert {c.severity for c in failing} == {dg.AssetCheckSeverity.WARN}


def test_valid_plus_quarantined_rows_are_the_input() -> None:
    writer = Writer()
    events = list(wiring.validation_results(Orders, ROWS, valid_key=KEY, quarantine_writer=writer))
    (table,) = _materializations(events)
    (quarantined,) = writer.frames
    together = pl.concat([table.value, quarantined.select("order_id", "amount")])
    assert_frame_equal(
        together.sort("order_id", "amount", nulls_last=True),
        ROWS.select("order_id", "amount").sort("order_id", "amount", nulls_last=True),
    )


@LAZY
def test_some_rows_failed_without_a_quarantine_aborts_and_writes_nothing(lazy: bool) -> None:
    events = _collect(
        wiring.validation_results(Orders, _as(ROWS, lazy), valid_key=KEY),
        errors.ValidationAbortError,
    )
    assert _materializations(events) == []
    checks = _checks(events)
    assert list(checks) == [spec.name for spec in wiring.check_specs(Orders, asset=KEY)]
    failing = [c for c in checks.values() if not c.passed]
    assert {c.severity for c in failing} == {dg.AssetCheckSeverity.ERROR}


def test_abort_error_carries_the_counts() -> None:
    with pytest.raises(errors.ValidationAbortError) as raised:
        list(wiring.validation_results(Orders, ROWS, valid_key=KEY))
    assert raised.value.schema_name == "Orders"
    assert raised.value.counts == {"primary_key": 2, "amount|min": 2, "amount|nullability": 1}
    assert raised.value.invalid_count == 4


@LAZY
def test_every_row_failed_writes_only_the_quarantine_and_fails(lazy: bool) -> None:
    bad = ROWS.filter(pl.col("order_id").is_in(["c", "d"]))
    writer = Writer()
    events = _collect(
        wiring.validation_results(Orders, _as(bad, lazy), valid_key=KEY, quarantine_writer=writer),
        errors.NoValidRowsError,
    )
    assert _materializations(events) == []
    (quarantined,) = writer.frames
    assert quarantined.height == 2
    checks = _checks(events)
    assert len(checks) == len(wiring.check_specs(Orders, asset=KEY))
    for check in checks.values():
        assert check.metadata["dataframely/quarantine_address"].value == writer.address
    failing = [c for c in checks.values() if not c.passed]
    assert {c.severity for c in failing} == {dg.AssetCheckSeverity.ERROR}


class _CountingStatistics:
    """Stands in for `statistics_tables`, recording each call and whether it had finished."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started = 0
        self.finished = 0
        monkeypatch.setattr(_emit, "statistics_tables", self)

    def __call__(self, frame: pl.DataFrame, distinct: object, masked: object) -> dict[str, Any]:
        self.started += 1
        time.sleep(0.2)  # still running when a fast writer fails
        self.finished += 1
        return {}


@pytest.mark.parametrize(
    ("rows", "writer", "error"),
    [
        (ROWS, None, errors.ValidationAbortError),
        (ROWS.filter(pl.col("order_id") == "c"), Writer(), errors.NoValidRowsError),
    ],
    ids=["abort", "no valid rows"],
)
def test_statistics_are_not_computed_when_the_table_is_not_written(
    monkeypatch: pytest.MonkeyPatch,
    rows: pl.DataFrame,
    writer: Writer | None,
    error: type[Exception],
) -> None:
    statistics = _CountingStatistics(monkeypatch)
    _collect(
        wiring.validation_results(Orders, rows, valid_key=KEY, quarantine_writer=writer), error
    )
    assert statistics.started == 0


def test_a_failed_quarantine_write_leaves_no_statistics_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    statistics = _CountingStatistics(monkeypatch)

    def failing(frame: pl.DataFrame) -> str:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        list(wiring.validation_results(Orders, ROWS, valid_key=KEY, quarantine_writer=failing))
    assert (statistics.started, statistics.finished) == (1, 1)


def test_no_valid_rows_error_names_the_address() -> None:
    bad = ROWS.filter(pl.col("order_id") == "c")
    with pytest.raises(errors.NoValidRowsError, match="memory://orders_quarantine") as raised:
        list(wiring.validation_results(Orders, bad, valid_key=KEY, quarantine_writer=Writer()))
    assert raised.value.address == "memory://orders_quarantine"
    assert raised.value.invalid_count == 1
    assert raised.value.counts == {"amount|min": 1}


def test_none_skips_and_every_check_passes() -> None:
    writer = Writer()
    events = list(wiring.validation_results(Orders, None, valid_key=KEY, quarantine_writer=writer))
    assert _materializations(events) == []
    assert writer.frames == []
    checks = _checks(events)
    assert list(checks) == [spec.name for spec in wiring.check_specs(Orders, asset=KEY)]
    assert all(check.passed for check in checks.values())


@LAZY
def test_column_schema_mismatch_fails_first_and_reports_every_column(lazy: bool) -> None:
    drifted = pl.DataFrame({"order_id": [1, 2], "extra": ["x", "y"]})
    writer = Writer()
    events = _collect(
        wiring.validation_results(
            Orders, _as(drifted, lazy), valid_key=KEY, quarantine_writer=writer
        ),
        errors.ColumnSchemaError,
    )
    assert writer.frames == []
    (check,) = events
    assert isinstance(check, dg.AssetCheckResult)
    assert check.check_name == "dy_schema__columns"
    assert not check.passed
    assert check.severity == dg.AssetCheckSeverity.ERROR
    assert _records(check.metadata["dy_schema__errors"]) == [
        {"column": "order_id", "expected": "String", "actual": "Int64"},
        {"column": "amount", "expected": "Float64", "actual": "missing"},
    ]


def test_column_schema_error_names_each_column() -> None:
    drifted = pl.DataFrame({"order_id": [1, 2]})
    with pytest.raises(errors.ColumnSchemaError, match="amount") as raised:
        list(wiring.validation_results(Orders, drifted, valid_key=KEY))
    assert [p["column"] for p in raised.value.problems] == ["order_id", "amount"]


def test_column_schema_gate_does_not_run_the_plan() -> None:
    def explode(frame: pl.DataFrame) -> pl.DataFrame:
        raise AssertionError("the plan ran")

    plan = pl.LazyFrame({"order_id": [1]}).map_batches(explode)
    with pytest.raises(errors.ColumnSchemaError):
        list(wiring.validation_results(Orders, plan, valid_key=KEY))


def test_the_plan_runs_exactly_once() -> None:
    calls: list[int] = []

    def count(frame: pl.DataFrame) -> pl.DataFrame:
        calls.append(frame.height)
        return frame

    plan = ROWS.lazy().map_batches(count)
    writer = Writer()
    events = list(wiring.validation_results(Orders, plan, valid_key=KEY, quarantine_writer=writer))
    assert len(calls) == 1
    assert _materializations(events)[0].value.height == 2


def test_extra_columns_are_dropped_and_the_schema_order_kept() -> None:
    shuffled = ROWS.head(2).select("note", "amount", "order_id")
    (table,) = _materializations(wiring.validation_results(Orders, shuffled, valid_key=KEY))
    assert table.value.columns == ["order_id", "amount"]


def test_a_plans_undeclared_columns_are_never_computed() -> None:
    # `note` is not declared: as `Orders.filter(plan)` would, the run never computes it, so its
    # failing cast (text to integer) raises nothing and the split is `filter`'s.
    plan = ROWS.lazy().with_columns(pl.col("note").str.to_integer())
    writer = Writer()
    events = list(wiring.validation_results(Orders, plan, valid_key=KEY, quarantine_writer=writer))
    valid, failure = Orders.filter(plan, cast=False).collect_all()
    assert_frame_equal(_materializations(events)[0].value, valid)
    assert writer.frames[0].height == failure.invalid().height == 4


def test_never_casts() -> None:
    class Counts(NoRules):
        pass

    frame = pl.DataFrame({"note": ["a"], "score": [1]})  # Int64 where Float64 is declared
    with pytest.raises(errors.ColumnSchemaError, match="score"):
        list(wiring.validation_results(Counts, frame, valid_key=KEY))


def test_schema_without_rules() -> None:
    frame = pl.DataFrame({"note": ["a", None], "score": [float("nan"), 1.0]})
    events = list(wiring.validation_results(NoRules, frame, valid_key=KEY))
    (table,) = _materializations(events)
    assert table.value.height == 2
    assert list(_checks(events)) == ["dy_schema__columns"]


def test_turning_samples_and_statistics_off() -> None:
    writer = Writer()
    events = list(
        wiring.validation_results(
            Orders,
            ROWS,
            valid_key=KEY,
            quarantine_writer=writer,
            statistics=False,
            row_sample=0,
            max_failure_samples=0,
        )
    )
    (table,) = _materializations(events)
    assert set(table.metadata or {}) == {
        "dagster/row_count",
        "dataframely/quarantine_address",
        "dataframely/invalid_count",
        "dataframely/invalid_by_rules",
        "dataframely/invalid_fraction",
        "dataframely/warning_fraction",
    }
    for check in _checks(events).values():
        assert "dy_failed_sample" not in check.metadata


def test_rule_check_metadata() -> None:
    checks = _checks(
        wiring.validation_results(Orders, ROWS, valid_key=KEY, quarantine_writer=Writer())
    )
    failing = checks["dy_rule__amount__min"].metadata
    assert failing["dy_rule"].value == "amount|min"
    assert "amount" in failing["dy_rule__expr"].value
    assert failing["dy_failed_count"].value == 2
    assert _records(failing["dy_failed_sample"]) == [
        {"order_id": "c", "amount": -1.0},
        {"order_id": "e", "amount": -3.0},
    ]
    passing = checks["dy_rule__amount__inf"].metadata
    assert set(passing) == {"dy_rule", "dy_rule__expr"}


def test_failure_samples_are_capped_per_rule() -> None:
    many = pl.DataFrame(
        {"order_id": [f"o{i}" for i in range(21)], "amount": [-1.0] * 19 + [None, 1.0]}
    )
    checks = _checks(
        wiring.validation_results(
            Orders, many, valid_key=KEY, quarantine_writer=Writer(), max_failure_samples=3
        )
    )
    assert len(_records(checks["dy_rule__amount__min"].metadata["dy_failed_sample"])) == 3
    assert checks["dy_rule__amount__min"].metadata["dy_failed_count"].value == 19


class _Typed(dy.Schema):
    key = dy.String(primary_key=True)
    price = dy.Decimal(8, 2, min=decimal.Decimal("0"))
    at = dy.Datetime(time_zone="UTC", nullable=True, max=dt.datetime(2030, 1, 1, tzinfo=dt.UTC))
    ratio = dy.Float64(nullable=True, max=1.0)
    tags = dy.List(dy.String(), nullable=True, max_length=1)


def test_each_rules_sample_is_its_own_rows_in_every_columns_type() -> None:
    """Each one-rule check's sample is that rule's first failing rows, every cell as shown alone."""
    frame = pl.DataFrame(
        {
            "key": ["a", "b", "c", "d", "e", "f"],
            "price": [decimal.Decimal(v) for v in ("1.50", "-2.00", "3.25", "-0.01", "4", "5")],
            "at": [
                dt.datetime(2031, 1, 1, tzinfo=dt.UTC),
                None,
                dt.datetime(2020, 5, 6, tzinfo=dt.UTC),
                None,
                None,
                None,
            ],
            "ratio": [0.5, float("inf"), float("nan"), 2.0, None, 0.1],
            "tags": [["x"], None, ["y", "z"], [], ["w", "v"], None],
        },
        schema=_Typed.create_empty().schema,
    )
    checks = _checks(
        wiring.validation_results(
            _Typed, frame, valid_key=KEY, quarantine_writer=Writer(), max_failure_samples=2
        )
    )
    expected_rows = {
        "dy_rule__price__min": ["b", "d"],
        "dy_rule__at__max": ["a"],
        "dy_rule__ratio__max": ["b", "c"],
        "dy_rule__tags__max_length": ["c", "e"],
    }
    for check, keys in expected_rows.items():
        alone = table_value(frame.filter(pl.col("key").is_in(keys)))
        assert checks[check].metadata["dy_failed_sample"] == alone, check
    assert "dy_failed_sample" not in checks["dy_rule__primary_key"].metadata


@pytest.mark.parametrize("granularity", ["column", "schema"])
def test_collapsed_checks_sample_every_rule(granularity: str) -> None:
    many = pl.DataFrame(
        {"order_id": [f"o{i}" for i in range(21)], "amount": [-1.0] * 19 + [None, 1.0]}
    )
    checks = _checks(
        wiring.validation_results(
            Orders,
            many,
            valid_key=KEY,
            quarantine_writer=Writer(),
            max_failure_samples=2,
            check_granularity=granularity,  # type: ignore[arg-type]
        )
    )
    name = "dy_col__amount" if granularity == "column" else "dy_schema__rules"
    metadata = checks[name].metadata
    assert not checks[name].passed
    assert "dy_failed_count" not in metadata
    sample = _records(metadata["dy_failed_sample"])
    assert [row["dy_rule"] for row in sample] == [
        "amount|nullability",
        "amount|min",
        "amount|min",
    ]
    rules = {row["rule"]: row for row in _records(metadata["dy_rules"])}
    assert rules["amount|min"]["failed_count"] == 19
    assert rules["amount|nullability"]["failed_count"] == 1
    assert rules["amount|inf"]["failed_count"] == 0
    assert "amount" in rules["amount|min"]["expr"]


def test_results_match_the_specs_at_every_granularity() -> None:
    for granularity in ("rule", "column", "schema"):
        for schema_rules in ("collapsed", "per_rule"):
            settings: dict[str, Any] = {
                "check_granularity": granularity,
                "schema_rules": schema_rules,
            }
            specs = [s.name for s in wiring.check_specs(OrderLines, asset=KEY, **settings)]
            results = _checks(
                wiring.validation_results(
                    OrderLines,
                    _order_lines(),
                    valid_key=KEY,
                    quarantine_writer=Writer(),
                    **settings,
                )
            )
            assert list(results) == specs


def _order_lines() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "order_id": ["o-1", "o-1", "bad"],
            "line_no": pl.Series([1, 2, 0], dtype=pl.Int32),
            "sku": ["abc", "abcd", "ab"],
            "quantity": [1, 2, 0],
            "price": pl.Series(
                [decimal.Decimal("1.50"), decimal.Decimal("0.00"), decimal.Decimal("2.00")],
                dtype=pl.Decimal(10, 2),
            ),
            "status": pl.Series(["new", "paid", "new"], dtype=pl.Enum(["new", "paid", "shipped"])),
            "channel": pl.Series([1, None, 3], dtype=pl.Int8),
            "ordered_at": [dt.datetime(2026, 1, 1, h, tzinfo=dt.UTC) for h in (1, 2, 3)],
        },
        schema_overrides={"ordered_at": pl.Datetime("us", "UTC")},
    )


def test_decimal_samples_keep_every_digit() -> None:
    writer = Writer()
    events = list(
        wiring.validation_results(
            OrderLines, _order_lines(), valid_key=KEY, quarantine_writer=writer
        )
    )
    checks = _checks(events)
    sample = _records(checks["dy_rule__paid_has_price"].metadata["dy_failed_sample"])
    assert sample[0]["price"] == "0.00"


def test_package_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_ROW_SAMPLE", "1")
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_STATISTICS", "FALSE")
    (table,) = _materializations(wiring.validation_results(Orders, ROWS.head(2), valid_key=KEY))
    assert len(_records((table.metadata or {})["dataframely/valid_sample"])) == 1
    assert not any(k.startswith("dataframely/valid_statistics") for k in table.metadata or {})


def test_anything_but_a_frame_is_refused_before_the_gate() -> None:
    with pytest.raises(dg.DagsterInvariantViolationError, match="dict"):
        wiring.validation_results(Orders, {"a": 1}, valid_key=KEY)  # type: ignore[arg-type]


def test_invalid_setting_raises_on_the_call() -> None:
    with pytest.raises(errors.InvalidSettingError):
        wiring.validation_results(Orders, ROWS, valid_key=KEY, row_sample=True)


class TestCheckResults:
    def test_reports_without_writing_or_raising(self) -> None:
        events = list(
            wiring.check_results(Orders, ROWS, asset_key=KEY, severity=dg.AssetCheckSeverity.WARN)
        )
        assert all(isinstance(e, dg.AssetCheckResult) for e in events)
        checks = _checks(events)
        assert list(checks) == [spec.name for spec in wiring.check_specs(Orders, asset=KEY)]
        assert not checks["dy_rule__amount__min"].passed
        assert checks["dy_rule__amount__min"].severity == dg.AssetCheckSeverity.WARN

    def test_every_row_failing_does_not_raise(self) -> None:
        bad = ROWS.filter(pl.col("amount") < 0).lazy()
        events = list(
            wiring.check_results(Orders, bad, asset_key=KEY, severity=dg.AssetCheckSeverity.ERROR)
        )
        assert _checks(events)["dy_rule__amount__min"].severity == dg.AssetCheckSeverity.ERROR

    def test_column_schema_mismatch_still_raises(self) -> None:
        events = _collect(
            wiring.check_results(
                Orders,
                pl.DataFrame({"order_id": ["a"]}),
                asset_key=KEY,
                severity=dg.AssetCheckSeverity.WARN,
            ),
            errors.ColumnSchemaError,
        )
        assert [e.check_name for e in events] == ["dy_schema__columns"]  # type: ignore[attr-defined]


class TestQuarantineFrame:
    def test_matches_what_the_writer_receives(self) -> None:
        writer = Writer()
        list(wiring.validation_results(Orders, ROWS, valid_key=KEY, quarantine_writer=writer))
        _, failure = Orders.filter(ROWS, cast=False)
        assert_frame_equal(wiring.quarantine_frame(Orders, failure), writer.frames[0])

    def test_rule_columns_spell_out_each_outcome_as_text(self) -> None:
        """Passed, failed and could-not-tell (as after a failed cast) each have their word."""

        class Amounts(dy.Schema):
            amount = dy.Int64(min=0, nullable=True)

        outcomes = pl.DataFrame({"amount": [-1, None, 3], "amount|min": [False, None, True]})
        failure = dy.FailureInfo(outcomes.lazy(), ["amount|min"])
        frame = wiring.quarantine_frame(Amounts, failure)
        assert frame.schema == pl.Schema({"amount": pl.Int64, "dy_rule__amount__min": pl.String})
        assert frame.get_column("dy_rule__amount__min").to_list() == ["invalid", "unknown", "valid"]


def test_statistics_count_distinct_values_exactly_with_and_without_a_key() -> None:
    # `order_id` is Orders' only key, so every valid row has its own; OrderLines' key is
    # composite, so two valid lines of one order share an `order_id`.
    (orders,) = _materializations(wiring.validation_results(Orders, ROWS.head(2), valid_key=KEY))
    (string_stats,) = _records((orders.metadata or {})["dataframely/valid_statistics/string"])
    assert string_stats["n_unique"] == string_stats["count"] == 2
    lines = _order_lines().head(2).with_columns(price=pl.col("price").max())  # both paid for
    (table,) = _materializations(wiring.validation_results(OrderLines, lines, valid_key=KEY))
    by_column = {
        row["column"]: row
        for row in _records((table.metadata or {})["dataframely/valid_statistics/string"])
    }
    assert by_column["order_id"]["count"] == 2
    assert by_column["order_id"]["n_unique"] == 1


def test_a_unique_column_counts_its_values_without_hashing() -> None:
    from dagster_dataframely._run.report.statistics import statistics_tables

    frame = pl.DataFrame({"email": ["a@x", "b@x", None], "tag": ["t", "t", None]})
    table = statistics_tables(frame, distinct={"email"})["string"]
    rows = {row["column"]: row for row in _records(table)}
    assert rows["email"]["n_unique"] == 2
    assert rows["tag"]["n_unique"] == 1

"""Property: validation splits the input rows; it never loses, duplicates or misfiles one.

For random small frames over tiny value domains (so duplicate keys, nulls, out-of-range values and
broken group rules are frequent), `validation_results` must put every input row either in the
table or in the quarantine, exactly as Dataframely's own `Schema.filter` splits them, and pick the
outcome the counts call for. The frame comes as a `DataFrame` or through a plan Polars cannot
share between two outputs: a non-deterministic step, a pyarrow dataset, or an IO plugin source
whose rows change from one read to the next. Whatever the plan, it must run exactly once.

The streamed split (`streaming=True`) must give the very same split of a `LazyFrame`, row for
row, in the same order, with the same outcome of every rule, also reading the plan once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

import dagster as dg
import dataframely as dy
import polars as pl
import pyarrow.dataset
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from dagster_dataframely import errors, wiring
from dagster_dataframely._model.schema import read_schema
from dagster_dataframely._model.shown_values import MASK
from dagster_dataframely._run.split import streaming
from dagster_dataframely._run.split.failures import Failures
from dagster_dataframely._run.split.staging import Staging
from dagster_dataframely._run.split.streaming import streamed_split
from tests.changing_source import ChangingSource

KEY = dg.AssetKey(["mixed"])


class Mixed(dy.Schema):
    """One rule of each kind the package reports."""

    key = dy.Int64(primary_key=True)
    # Sensitive: every report masks it, and the table and the quarantine keep it whole.
    part = dy.String(
        primary_key=True, min_length=1, max_length=3, regex=r"^[ab]+$", metadata={"pii": True}
    )
    qty = dy.Int64(min=0, max=5)
    code = dy.Int16(nullable=True, is_in=[1, 2, 3])
    price = dy.Float64(nullable=True, min=0.0, max=10.0)

    @dy.rule()
    def priced_when_ordered(cls) -> pl.Expr:
        """A line with a positive quantity has a price."""
        return (pl.col("qty") <= 0) | pl.col("price").is_not_null()

    @dy.rule()
    def one_code_per_key(cls) -> pl.Expr:
        """All lines of one key share one code."""
        return pl.col("code").n_unique().over("key") == 1


DTYPES = {
    "key": pl.Int64,
    "part": pl.String,
    "qty": pl.Int64,
    "code": pl.Int16,
    "price": pl.Float64,
}
COLUMNS = list(DTYPES)

ROW = st.tuples(
    st.sampled_from([0, 1, 2, None]),
    st.sampled_from(["a", "b", "ab", "", "abab", "c", None]),
    st.sampled_from([-1, 0, 1, 5, 6, None]),
    st.sampled_from([1, 2, 3, 4, None]),
    st.sampled_from([0.0, 1.5, 10.0, 10.5, -0.5, math.nan, math.inf, None]),
)
FRAMES = st.lists(ROW, max_size=40).map(
    lambda rows: pl.DataFrame(rows, schema=DTYPES, orient="row")
)


class Writer:
    """A quarantine writer that records every frame it receives."""

    def __init__(self) -> None:
        self.frames: list[pl.DataFrame] = []

    def __call__(self, frame: pl.DataFrame) -> str:
        self.frames.append(frame)
        return "memory://mixed_quarantine"


def _more_quantity(rows: pl.DataFrame, reads: int) -> pl.DataFrame:
    """Other quantities, as a table rewritten between two reads has."""
    return rows.with_columns((pl.col("qty") + reads).alias("qty"))


def _changing_source(frame: pl.DataFrame) -> ChangingSource:
    """A source that yields the frame on its first read only: a plan that runs once sees it."""
    return ChangingSource(frame, _more_quantity)


@dataclass(frozen=True)
class Plan:
    """How the asset hands its frame over, and which columns that leaves as they were."""

    name: str
    build: Callable[[pl.DataFrame], pl.DataFrame | pl.LazyFrame | ChangingSource] = field(
        repr=False
    )
    changes: str | None = None
    """The one column whose values the plan draws anew each time it runs, if any."""


PLANS = [
    Plan("DataFrame", lambda frame: frame),
    Plan("LazyFrame", lambda frame: frame.lazy()),
    Plan("shuffled column", lambda f: f.lazy().with_columns(pl.col("qty").shuffle()), "qty"),
    Plan(
        "sampled column",
        lambda f: f.lazy().with_columns(pl.col("code").sample(fraction=1.0, with_replacement=True)),
        "code",
    ),
    Plan(
        "shuffled rows",
        lambda f: f.lazy().select(pl.struct(pl.all()).shuffle().alias("row")).unnest("row"),
    ),
    Plan(
        "pyarrow dataset",
        lambda f: pl.scan_pyarrow_dataset(pyarrow.dataset.dataset(f.to_arrow())),
    ),
    Plan("changing IO plugin source", _changing_source),
]


def _canonical(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows in one order, so two frames compare as multisets of rows."""
    return frame.sort(frame.columns, nulls_last=True)


def _assert_same_rows(actual: pl.DataFrame, expected: pl.DataFrame) -> None:
    assert actual.height == expected.height
    assert_frame_equal(_canonical(actual), _canonical(expected))


def _run(
    frame: pl.DataFrame | pl.LazyFrame, writer: Writer | None, warning_rules: set[str] | None = None
) -> tuple[list[Any], BaseException | None]:
    """Every event yielded, and the error that ended the run, if any."""
    events: list[Any] = []
    try:
        events.extend(
            wiring.validation_results(
                Mixed, frame, valid_key=KEY, quarantine_writer=writer, warning_rules=warning_rules
            )
        )
    except (errors.NoValidRowsError, errors.ValidationAbortError) as raised:
        return events, raised
    return events, None


def _assert_reports_show_no_part_and_exact_counts(events: list[Any]) -> None:
    """No report shows a value of the sensitive `part`; `invalid_by_rules` sums exactly."""
    for yielded in events:
        metadata = yielded.metadata or {}
        for key, value in metadata.items():
            if (
                isinstance(value, dg.TableMetadataValue)
                and value.records
                and "part" in value.records[0].data
            ):
                assert {r.data["part"] for r in value.records} <= {MASK, None}, key
        if "dataframely/invalid_by_rules" in metadata:
            groups = metadata["dataframely/invalid_by_rules"].records
            assert sum(r.data["rows"] for r in groups) == metadata["dataframely/invalid_count"]


def test_the_schema_has_every_rule_kind() -> None:
    rules = [spec.name for spec in wiring.check_specs(Mixed, asset=KEY)]
    for rule in (
        "primary_key",
        "part__min_length",
        "part__regex",
        "qty__nullability",
        "qty__min",
        "qty__max",
        "code__is_in",
        "price__max",
        "priced_when_ordered",
        "one_code_per_key",
    ):
        assert "dy_rule__" + rule in rules
    assert "dy_rule__code__nullability" not in rules


def _quarantine_of(invalid: dy.FailureInfo) -> pl.DataFrame:
    """What the writer must receive for Dataframely's invalid rows: rule columns by check name."""
    details = invalid.details()
    rules = details.columns[len(COLUMNS) :]
    return details.select(
        *COLUMNS,
        *(pl.col(rule).cast(pl.String).alias(wiring.check_name(rule)) for rule in rules),
    )


@settings(max_examples=300, deadline=None)
@given(frame=FRAMES, plan=st.sampled_from(PLANS), with_writer=st.booleans())
def test_every_row_is_written_once_where_dataframely_puts_it(
    frame: pl.DataFrame, plan: Plan, with_writer: bool
) -> None:
    built = plan.build(frame)
    given_frame = built.scan() if isinstance(built, ChangingSource) else built
    writer = Writer() if with_writer else None
    events, raised = _run(given_frame, writer)
    tables = [e.value for e in events if isinstance(e, dg.MaterializeResult)]
    if isinstance(built, ChangingSource):
        assert built.reads == 1
    _assert_reports_show_no_part_and_exact_counts(events)

    if writer is None and raised is not None:
        # No quarantine: any invalid row aborts before the table is written.
        assert isinstance(raised, errors.ValidationAbortError)
        assert raised.invalid_count > 0
        assert tables == []
        if plan.changes is None:
            assert len(Mixed.filter(frame, cast=False).failure) == raised.invalid_count
        return

    quarantined = pl.concat(writer.frames) if writer and writer.frames else None
    assert len(writer.frames if writer else []) == (0 if quarantined is None else 1)
    if isinstance(raised, errors.NoValidRowsError):
        # Every row invalid: all of them reached the writer, then the run failed.
        assert tables == []
        assert quarantined is not None
        valid = frame.clear()
    else:
        assert raised is None
        (valid,) = tables
    # The rows the plan produced, the one time it ran: the table's and the quarantine's.
    produced = valid if quarantined is None else pl.concat([valid, quarantined.select(COLUMNS)])

    # Nothing lost, nothing written twice: every column the plan does not draw anew is the
    # input's, row for row (and every column is, for a plan that changes none).
    kept = [column for column in COLUMNS if column != plan.changes]
    _assert_same_rows(produced.select(kept), frame.select(kept))
    # The split is Dataframely's split of those rows, row for row and rule for rule.
    reference = Mixed.filter(produced, cast=False)
    _assert_same_rows(valid, reference.result)
    if quarantined is None:
        assert len(reference.failure) == 0
    else:
        expected = _quarantine_of(reference.failure)
        _assert_same_rows(quarantined.select(expected.columns), expected)
        assert isinstance(raised, errors.NoValidRowsError) == (valid.height == 0)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_a_frame_of_only_invalid_rows_reaches_the_writer_whole(lazy: bool) -> None:
    frame = pl.DataFrame(
        [(1, "c", 0, 1, 1.0), (1, "c", 0, 1, 1.0), (None, "a", 6, 4, math.nan)],
        schema=DTYPES,
        orient="row",
    )
    writer = Writer()
    events, raised = _run(frame.lazy() if lazy else frame, writer)
    assert isinstance(raised, errors.NoValidRowsError)
    assert not any(isinstance(e, dg.MaterializeResult) for e in events)
    (quarantined,) = writer.frames
    _assert_same_rows(quarantined.select(COLUMNS), frame)


RULES = Mixed.filter(Mixed.create_empty(), cast=False).failure.details().columns[len(COLUMNS) :]
"""Every rule of `Mixed`, as Dataframely names them."""


def _expected_split(
    frame: pl.DataFrame, warnings: set[str]
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The table's rows, the quarantine's and the warned ones, from Dataframely's own outcomes.

    A row is quarantined when a rule that is not a warning failed it or could not decide it;
    the other invalid rows are written after the valid ones.
    """
    reference = Mixed.filter(frame, cast=False)
    details = reference.failure.details()  # Dataframely's own text outcomes, not the package's
    blocking = [rule for rule in RULES if rule not in warnings]
    blocked = (
        pl.any_horizontal(pl.col(rule) != "valid" for rule in blocking)
        if blocking
        else pl.lit(False)
    )
    warned = details.filter(~blocked).select(COLUMNS)
    quarantined = details.filter(blocked).select(COLUMNS)
    return pl.concat([reference.result, warned]), quarantined, warned


@settings(max_examples=150, deadline=None)
@given(
    frame=FRAMES,
    lazy=st.booleans(),
    with_writer=st.booleans(),
    warnings=st.sets(st.sampled_from(RULES)),
)
def test_a_row_is_quarantined_exactly_when_it_fails_a_rule_that_is_not_a_warning(
    frame: pl.DataFrame, lazy: bool, with_writer: bool, warnings: set[str]
) -> None:
    expected_valid, expected_quarantine, warned = _expected_split(frame, warnings)

    writer = Writer() if with_writer else None
    events, raised = _run(frame.lazy() if lazy else frame, writer, warnings)
    tables = [e for e in events if isinstance(e, dg.MaterializeResult)]

    if writer is None and expected_quarantine.height:
        assert isinstance(raised, errors.ValidationAbortError)
        assert raised.invalid_count == expected_quarantine.height
        assert tables == []
        return
    quarantined = pl.concat(writer.frames) if writer and writer.frames else frame.clear()
    assert len(writer.frames if writer else []) == (1 if expected_quarantine.height else 0)
    if expected_quarantine.height == frame.height and frame.height:
        assert isinstance(raised, errors.NoValidRowsError)
        assert tables == []
        valid = frame.clear()
    else:
        assert raised is None
        (table,) = tables
        valid = table.value
        count = (table.metadata or {}).get("dataframely/warning_count")
        assert count == (warned.height or None)

    _assert_same_rows(valid, expected_valid)
    _assert_same_rows(quarantined.select(COLUMNS), expected_quarantine)
    # Valid plus quarantined is the input: nothing lost, nothing written twice.
    _assert_same_rows(pl.concat([valid, quarantined.select(COLUMNS)]), frame)


def _threshold(warn: int | float, fail: int | float | None) -> dd.Threshold:
    """A threshold from drawn bounds, the warn bound not above a fail bound of its kind."""
    if fail is not None and isinstance(warn, int) == isinstance(fail, int) and warn > fail:
        warn, fail = fail, warn
    return dd.Threshold(warn_above=warn, fail_above=fail)


BOUNDS = st.one_of(st.integers(0, 6), st.floats(0.0, 1.0), st.floats(0.0, 0.2))
"""Counts and fractions, small ones often, so runs both within and beyond the bounds are drawn."""
THRESHOLDS = st.builds(_threshold, BOUNDS, st.one_of(st.none(), BOUNDS))


def _above(threshold: dd.Threshold, failed: int, rows: int) -> bool:
    """Whether `failed` of `rows` is beyond the threshold's fail bound (as the docs define it)."""
    bound = threshold.fail_above
    if bound is None:
        return False
    if isinstance(bound, int):
        return failed > bound
    return rows > 0 and failed / rows > bound


@settings(max_examples=200, deadline=None)
@given(
    frame=FRAMES,
    lazy=st.booleans(),
    with_writer=st.sampled_from([True, True, True, False]),
    warnings=st.sets(st.sampled_from(RULES)),
    every_rule=st.one_of(st.none(), THRESHOLDS, THRESHOLDS),
    per_rule=st.dictionaries(st.sampled_from(RULES), THRESHOLDS, max_size=4),
)
def test_thresholds_never_move_a_row(
    frame: pl.DataFrame,
    lazy: bool,
    with_writer: bool,
    warnings: set[str],
    every_rule: dd.Threshold | None,
    per_rule: dict[str, dd.Threshold],
) -> None:
    """Whatever the bounds, a row is in exactly one of the table and the quarantine.

    A threshold decides whether a check passes and whether the run fails, never where a row
    goes: the quarantine gets what it gets without bounds, and a successful run's table too.
    """
    if not with_writer:  # without a quarantine only a warning rule may have a threshold
        every_rule = None
        per_rule = {rule: t for rule, t in per_rule.items() if rule in warnings}
    policy = dd.QualityPolicy(threshold=every_rule, rules=per_rule)
    expected_valid, expected_quarantine, _ = _expected_split(frame, warnings)
    counts = Mixed.filter(frame, cast=False).failure.counts()
    bounds = {rule: per_rule.get(rule, every_rule) for rule in RULES}
    exceeded = [
        rule
        for rule, threshold in bounds.items()
        if threshold is not None and _above(threshold, counts.get(rule, 0), frame.height)
    ]

    writer = Writer() if with_writer else None
    events: list[Any] = []
    raised: BaseException | None = None
    try:
        events.extend(
            wiring.validation_results(
                Mixed,
                frame.lazy() if lazy else frame,
                valid_key=KEY,
                quarantine_writer=writer,
                warning_rules=warnings,
                quality_policy=policy,
            )
        )
    except errors.ValidationFailedError as error:
        raised = error
    tables = [e.value for e in events if isinstance(e, dg.MaterializeResult)]
    quarantined = pl.concat(writer.frames) if writer and writer.frames else frame.clear()
    event(type(raised).__name__ if raised is not None else "written")

    # The failure policy comes first; the bounds only decide among the outcomes that write.
    if writer is None and expected_quarantine.height:
        assert isinstance(raised, errors.ValidationAbortError)
    elif expected_quarantine.height == frame.height and frame.height:
        assert isinstance(raised, errors.NoValidRowsError)
    elif exceeded:
        assert isinstance(raised, errors.ThresholdExceededError)
        assert raised.rule in exceeded
        assert raised.failed_count == counts[raised.rule]
    else:
        assert raised is None
    # Wherever a quarantine was written, it holds exactly the rows it holds without bounds.
    if writer is not None and expected_quarantine.height:
        _assert_same_rows(quarantined.select(COLUMNS), expected_quarantine)
    else:
        assert quarantined.height == 0
    if raised is None:
        (valid,) = tables
        _assert_same_rows(valid, expected_valid)
        # Valid plus quarantined is the input: nothing lost, nothing written twice.
        _assert_same_rows(pl.concat([valid, quarantined.select(COLUMNS)]), frame)
    else:
        assert tables == []


LAZY_PLANS = [
    p for p in PLANS if p.name in {"LazyFrame", "pyarrow dataset", "changing IO plugin source"}
]
"""The plans whose rows are the input's, each time they run: the streamed split is compared with
Dataframely's split of the input itself."""


@pytest.mark.parametrize(
    "window_part_rows",
    [streaming.ROWS_PER_WINDOW_PART, 2],
    ids=["the window rule over all rows", "the window rule over hash parts of 2 rows"],
)
@settings(max_examples=100, deadline=None)
@given(frame=FRAMES, plan=st.sampled_from(LAZY_PLANS))
def test_the_streamed_split_is_dataframelys_split_row_for_row(
    window_part_rows: int, frame: pl.DataFrame, plan: Plan
) -> None:
    built = plan.build(frame)
    lazy = built.scan() if isinstance(built, ChangingSource) else built
    assert isinstance(lazy, pl.LazyFrame)
    info = read_schema(Mixed)
    staging = Staging()
    try:
        with mock.patch.object(streaming, "ROWS_PER_WINDOW_PART", window_part_rows):
            valid, failures = streamed_split(info, lazy, staging, asset="mixed")
        valid_rows = valid.collect()
    finally:
        staging.remove()
    if isinstance(built, ChangingSource):
        assert built.reads == 1

    reference = Mixed.filter(frame, cast=False)
    expected = Failures.from_failure_info(info, reference.failure)
    # The same rows in the same order: the table and the quarantine are the in-memory path's.
    assert_frame_equal(valid_rows, reference.result)
    assert_frame_equal(failures.outcomes, expected.outcomes)
    assert failures.counts == expected.counts
    assert valid_rows.height + failures.invalid_count == frame.height
    assert staging.directory is None

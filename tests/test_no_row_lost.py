"""Property: validation splits the input rows; it never loses, duplicates or misfiles one.

For random small frames over tiny value domains (so duplicate keys, nulls, out-of-range values and
broken group rules are frequent), `validation_results` must put every input row either in the
table or in the quarantine, exactly as Dataframely's own `Schema.filter` splits them, and pick the
outcome the counts call for.
"""

from __future__ import annotations

import math
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from dagster_dataframely import errors, wiring

KEY = dg.AssetKey(["mixed"])


class Mixed(dy.Schema):
    """One rule of each kind the package reports."""

    key = dy.Int64(primary_key=True)
    part = dy.String(primary_key=True, min_length=1, max_length=3, regex=r"^[ab]+$")
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


def _canonical(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows in one order, so two frames compare as multisets of rows."""
    return frame.sort(frame.columns, nulls_last=True)


def _assert_same_rows(actual: pl.DataFrame, expected: pl.DataFrame) -> None:
    assert actual.height == expected.height
    assert_frame_equal(_canonical(actual), _canonical(expected))


def _run(
    frame: pl.DataFrame | pl.LazyFrame, writer: Writer | None
) -> tuple[list[Any], BaseException | None]:
    """Every event yielded, and the error that ended the run, if any."""
    events: list[Any] = []
    try:
        events.extend(
            wiring.validation_results(Mixed, frame, valid_key=KEY, quarantine_writer=writer)
        )
    except (errors.NoValidRowsError, errors.ValidationAbortError) as raised:
        return events, raised
    return events, None


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


@settings(max_examples=150, deadline=None)
@given(frame=FRAMES, lazy=st.booleans(), with_writer=st.booleans())
def test_every_row_is_written_once_where_dataframely_puts_it(
    frame: pl.DataFrame, lazy: bool, with_writer: bool
) -> None:
    reference = Mixed.filter(frame, cast=False)
    expected_valid = reference.result
    expected_invalid = reference.failure.details()
    rules = expected_invalid.columns[len(COLUMNS) :]
    expected_quarantine = expected_invalid.select(
        *COLUMNS,
        *(pl.col(rule).cast(pl.String).alias(wiring.check_name(rule)) for rule in rules),
    )
    invalid = expected_invalid.height

    writer = Writer() if with_writer else None
    events, raised = _run(frame.lazy() if lazy else frame, writer)
    tables = [e.value for e in events if isinstance(e, dg.MaterializeResult)]

    if writer is None:
        # No quarantine: any invalid row aborts before the table is written.
        if invalid:
            assert isinstance(raised, errors.ValidationAbortError)
            assert tables == []
            return
        assert raised is None
        (valid,) = tables
        _assert_same_rows(valid, frame)
        return

    quarantined = pl.concat(writer.frames) if writer.frames else expected_quarantine.clear()
    assert len(writer.frames) == (1 if invalid else 0)
    if invalid and invalid == frame.height:
        # Every row invalid: all of them reached the writer, then the run failed.
        assert isinstance(raised, errors.NoValidRowsError)
        assert tables == []
        valid = expected_valid.clear()
    else:
        assert raised is None
        (valid,) = tables

    # The split is Dataframely's, row for row and rule for rule...
    _assert_same_rows(valid, expected_valid)
    _assert_same_rows(quarantined.select(expected_quarantine.columns), expected_quarantine)
    # ...and together the two sides are the input: nothing lost, nothing written twice.
    assert valid.height + quarantined.height == frame.height
    _assert_same_rows(pl.concat([valid, quarantined.select(COLUMNS)]), frame)


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

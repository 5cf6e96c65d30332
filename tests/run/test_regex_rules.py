"""Property: regex rules evaluated ahead give the split Dataframely's own outcomes, row for row.

The split evaluates each text column's regex rule ahead of its plan, on the streaming engine,
over each morsel's values copied together (`regex_outcomes`); the plan takes those outcomes as
given. For generated text (short values kept in Polars' views and long ones kept in buffers,
empty values, nulls, values with a sign and digits) in rows reordered by a sample, as a join
leaves them, the split must give what `Schema.filter` gives: the same valid rows, the same
invalid rows with every rule's outcome, in the same order; and each rule's outcome ahead must
be the one the rule's own expression gives in memory.
"""

from __future__ import annotations

import dataframely as dy
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal, assert_series_equal

from dagster_dataframely._model.schema import dataframely_rules, read_schema
from dagster_dataframely._run.split.regex_rules import regex_outcomes
from dagster_dataframely._run.split.split import split_rows


class Contacts(dy.Schema):
    """Two regex rules on text, one of them nullable, beside a key and a rule over all rows."""

    key = dy.Int64(primary_key=True)
    email = dy.String(regex=r"^[^@\s]+@[^@\s]+\.[a-z]+$")
    code = dy.String(nullable=True, regex=r"^[+-]?[0-9]{2,14}$", max_length=30)

    @dy.rule()
    def one_domain_per_code(cls) -> pl.Expr:
        """Rows of one code share the email's domain."""
        return pl.col("email").str.extract(r"@(.*)$").n_unique().over("code") == 1


TEXT = st.text(alphabet="ab@.-+0123456789 é", max_size=40)
ROWS = st.lists(
    st.tuples(TEXT, st.none() | TEXT | st.from_regex(r"[+-]?[0-9]{2,20}", fullmatch=True)),
    max_size=60,
)


def reordered(rows: list[tuple[str, str | None]], seed: int) -> pl.DataFrame:
    frame = pl.DataFrame(
        {
            "key": range(len(rows)),
            "email": [email for email, _ in rows],
            "code": [code for _, code in rows],
        },
        schema={"key": pl.Int64, "email": pl.String, "code": pl.String},
    )
    # NOTE: a sample reorders the views and leaves the values where they were in the buffers.
    return frame.sample(fraction=1.0, shuffle=True, seed=seed)


@settings(max_examples=60, deadline=None)
@given(rows=ROWS, seed=st.integers(0, 2**16), lazy=st.booleans())
def test_the_split_with_regex_rules_ahead_is_dataframelys_split(
    rows: list[tuple[str, str | None]], seed: int, lazy: bool
) -> None:
    frame = reordered(rows, seed)
    split = split_rows(read_schema(Contacts), frame.lazy() if lazy else frame)
    reference = Contacts.filter(frame, cast=False)
    assert_frame_equal(split.result, reference.result)
    assert_frame_equal(split.failure.details(), reference.failure.details())
    assert split.failure.counts() == reference.failure.counts()


@settings(max_examples=60, deadline=None)
@given(rows=ROWS, seed=st.integers(0, 2**16))
def test_each_outcome_ahead_is_the_rules_own_in_memory(
    rows: list[tuple[str, str | None]], seed: int
) -> None:
    frame = reordered(rows, seed)
    rules = dataframely_rules(Contacts)
    ahead = regex_outcomes(frame, read_schema(Contacts))
    assert set(ahead) == ({"email|regex", "code|regex"} if len(frame) else set())
    for name, outcome in ahead.items():
        own = frame.select(rules[name].expr.alias(name)).to_series()
        assert_series_equal(outcome, own)


@given(values=st.lists(st.none() | st.text(max_size=30), max_size=30))
def test_copying_values_together_changes_none(values: list[str | None]) -> None:
    series = pl.Series("text", values, dtype=pl.String)
    assert_series_equal(series.str.zfill(0), series)

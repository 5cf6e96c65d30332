"""The keys found in two partitions match a plain Polars reading of the whole stored table."""

import duckdb
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from dagster_dataframely._model.shown_values import ShownValues
from dagster_dataframely._run.keys_across_partitions import repeated_in_frames, repeated_keys_of
from dagster_dataframely._store.stored_keys import repeated_keys_query

SHOWN = ShownValues(rows=True, masked=frozenset())

partitions = st.dictionaries(
    st.from_regex(r"[a-z]{1,4}", fullmatch=True),
    st.lists(st.tuples(st.integers(0, 6), st.sampled_from(["x", "y"])), max_size=12),
    max_size=6,
)


@given(partitions)
@settings(max_examples=150, deadline=None)
def test_repeated_keys_match_the_whole_table(stored: dict[str, list[tuple[int, str]]]) -> None:
    frames = {
        name: pl.LazyFrame(rows, schema={"id": pl.Int64, "kind": pl.String}, orient="row")
        for name, rows in stored.items()
    }
    found = repeated_in_frames(frames, ("id", "kind"), SHOWN, max_samples=100)

    whole = pl.concat(
        [f.collect().with_columns(partition=pl.lit(n)) for n, f in frames.items()]
        or [pl.DataFrame(schema={"id": pl.Int64, "kind": pl.String, "partition": pl.String})]
    )
    spread = whole.unique().group_by("id", "kind").agg(pl.col("partition").n_unique())
    repeated = spread.filter(pl.col("partition") > 1).select("id", "kind")
    holding = whole.join(repeated, on=["id", "kind"]).get_column("partition")
    assert found.count == repeated.height
    assert found.partitions == tuple(sorted(set(holding.to_list())))
    assert {(int(s["id"]), s["kind"]) for s in found.samples} == set(repeated.iter_rows())
    # The same table in DuckDB, grouped by the query the check runs there.
    with duckdb.connect() as connection:
        connection.register("whole", whole.to_arrow())
        query = repeated_keys_query('"whole"', "partition", ("id", "kind"))
        in_database = repeated_keys_of(connection.execute(query).pl(), ("id", "kind"), SHOWN, 100)
    assert in_database == found


def test_masked_and_hidden_samples() -> None:
    frames = {"a": pl.LazyFrame({"email": ["ann"]}), "b": pl.LazyFrame({"email": ["ann"]})}
    masked = ShownValues(rows=True, masked=frozenset({"email"}))
    assert repeated_in_frames(frames, ("email",), masked, 5).samples == (
        {"email": "[sensitive]", "dy_partitions": "a, b"},
    )
    hidden = ShownValues(rows=False, masked=frozenset())
    assert repeated_in_frames(frames, ("email",), hidden, 5).samples == ()

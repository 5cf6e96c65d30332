"""The keys found in two partitions match a plain Polars reading of the whole stored table,
and DuckDB's grouping of the same rows matches the reading partition by partition."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import dagster as dg
import duckdb
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from dagster_dataframely._model.shown_values import ShownValues
from dagster_dataframely._run.keys_across_partitions import repeated_in_frames, repeated_keys_of
from dagster_dataframely._store.stored_keys import (
    PartitionColumn,
    grouped_in_duckdb,
    partition_columns,
)

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
        grouped = grouped_in_duckdb(
            connection, '"whole"', [PartitionColumn("partition")], ("id", "kind")
        )
    assert repeated_keys_of(grouped, ("id", "kind"), SHOWN, 100) == found


DAYS = dg.DailyPartitionsDefinition(
    start_date="2026-03-27", end_date="2026-04-01", timezone="Europe/Berlin"
)
DAYS_BY_REGION = dg.MultiPartitionsDefinition(
    {"day": DAYS, "region": dg.StaticPartitionsDefinition(["east", "west"])}
)
START = datetime(2026, 3, 27)


@given(
    st.lists(
        st.tuples(st.integers(0, 8), st.integers(0, 5 * 24 - 1), st.sampled_from(["east", "west"])),
        max_size=30,
    )
)
@settings(max_examples=100, deadline=None)
def test_time_windows_and_regions_in_duckdb_match_the_frames_per_partition(
    rows: list[tuple[int, int, str]],
) -> None:
    """A table DuckDB's manager stores by a time column and a region: grouped in the database,
    its repeated keys and their partitions are those of the same rows read partition by
    partition (over a daylight saving change, in the definition's timezone)."""
    whole = pl.DataFrame(
        {
            "id": [r[0] for r in rows],
            "placed_at": [START + timedelta(hours=r[1]) for r in rows],
            "region": [r[2] for r in rows],
        },
        schema={"id": pl.Int64, "placed_at": pl.Datetime, "region": pl.String},
    )
    whole = whole.unique(["id", "placed_at", "region"])

    def partition_of(at: datetime, region: str) -> str:
        berlin = at.replace(tzinfo=ZoneInfo("Europe/Berlin"))
        return f"{DAYS.get_partition_key_for_timestamp(berlin.timestamp())}|{region}"

    labelled = whole.with_columns(
        partition=pl.struct("placed_at", "region").map_elements(
            lambda row: partition_of(row["placed_at"], row["region"]), return_dtype=pl.String
        )
    )
    frames = {
        str(name): part.lazy().select("id")
        for (name,), part in labelled.partition_by("partition", as_dict=True).items()
    }
    found = repeated_in_frames(frames, ("id",), SHOWN, max_samples=100)

    with duckdb.connect() as connection:
        connection.register("whole", whole.to_arrow())
        columns = partition_columns(DAYS_BY_REGION, ["placed_at", "region"], None)
        grouped = grouped_in_duckdb(connection, '"whole"', columns, ("id",))
    assert repeated_keys_of(grouped, ("id",), SHOWN, 100) == found


def test_masked_and_hidden_samples() -> None:
    frames = {"a": pl.LazyFrame({"email": ["ann"]}), "b": pl.LazyFrame({"email": ["ann"]})}
    masked = ShownValues(rows=True, masked=frozenset({"email"}))
    assert repeated_in_frames(frames, ("email",), masked, 5).samples == (
        {"email": "[sensitive]", "dy_partitions": "a, b"},
    )
    hidden = ShownValues(rows=False, masked=frozenset())
    assert repeated_in_frames(frames, ("email",), hidden, 5).samples == ()

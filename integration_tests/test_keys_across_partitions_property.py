"""The keys found in two partitions match a plain Polars reading of the whole stored table, on
dagster-polars' parquet files and in DuckDB alike.

Three levels: the grouping over generated partitions (some stored without a key column, some
with nulls, some no longer in the definition) against a whole-table `group_by`; DuckDB's time
windows over a daylight saving change against the frames partition by partition; and whole
runs through both real managers, over generated writes, schema changes and deletions of
dynamic partitions, each check's verdict and keys against the whole table as a run left it.
"""

import tempfile
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import dagster as dg
import dataframely as dy
import duckdb
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely._model.shown_values import ShownValues
from dagster_dataframely._run.checks.keys_across_partitions import (
    repeated_in_frames,
    repeated_keys_of,
)
from dagster_dataframely._store.manager_kinds.duckdb_manager import (
    grouped_in_duckdb,
    partition_columns,
)
from dagster_dataframely._store.manager_kinds.path_manager import _listed_files, _probed_files

pytestmark = pytest.mark.integration

SHOWN = ShownValues(rows=True, masked=frozenset())
KEY = ("id", "kind")


def _whole_table_repeats(
    frames: dict[str, pl.DataFrame], key: tuple[str, ...]
) -> dict[tuple[Any, ...], tuple[str, ...]]:
    """Each key in more than one of `frames`, with its partitions, by a plain whole-table
    reading: a partition without a value in some key column takes no part, and a null equals
    a null (Dataframely's `is_unique`)."""
    taking_part = [
        frame.select(key).with_columns(partition=pl.lit(name))
        for name, frame in frames.items()
        if all(c in frame.columns and frame.get_column(c).is_not_null().any() for c in key)
    ]
    if not taking_part:
        return {}
    whole = pl.concat(taking_part, how="vertical_relaxed").unique()
    spread = whole.group_by(key).agg(pl.col("partition").sort())
    return {
        row[: len(key)]: tuple(row[-1])
        for row in spread.filter(pl.col("partition").list.len() > 1).iter_rows()
    }


partition_names = st.from_regex(r"[a-z]{1,4}", fullmatch=True)
rows = st.lists(
    st.tuples(st.none() | st.integers(0, 6), st.none() | st.sampled_from(["x", "y"])),
    max_size=12,
)
stored_partitions = st.dictionaries(
    partition_names,
    st.tuples(rows, st.booleans()),  # the rows, and whether `kind` was stored at all
    max_size=6,
)


@given(stored_partitions, st.lists(partition_names, max_size=2))
@settings(max_examples=200, deadline=None)
def test_repeated_keys_match_the_whole_table(
    stored: dict[str, tuple[list[tuple[int | None, str | None]], bool]], strays: list[str]
) -> None:
    frames = {
        name: pl.DataFrame(part, schema={"id": pl.Int64, "kind": pl.String}, orient="row").select(
            "id", *(["kind"] if with_kind else [])
        )
        for name, (part, with_kind) in stored.items()
    }
    repeated = _whole_table_repeats(frames, KEY)

    # A path manager: the files holding every key column, each scanned lazily.
    scans = {n: f.lazy() for n, f in frames.items() if set(KEY) <= set(f.columns)}
    found = repeated_in_frames(scans, KEY, SHOWN, max_samples=100)
    assert found.count == len(repeated)
    assert found.partitions == tuple(sorted({p for ps in repeated.values() for p in ps}))
    assert {(s["id"], s["kind"]): s["dy_partitions"] for s in found.samples} == {
        k: ", ".join(ps) for k, ps in repeated.items()
    }

    # DuckDB: one table, NULL where a partition was stored without a column, and rows of
    # partitions the definition no longer holds (strays), which take no part.
    held = dg.StaticPartitionsDefinition(sorted(frames))
    lost = {f"{s}-gone": pl.DataFrame({"id": [0, 1]}) for s in strays}
    whole = pl.concat(
        [f.with_columns(partition=pl.lit(n)) for n, f in {**frames, **lost}.items()]
        or [pl.DataFrame(schema={"id": pl.Int64, "partition": pl.String})],
        how="diagonal_relaxed",
    )
    if "kind" not in whole.columns:
        whole = whole.with_columns(kind=pl.lit(None, pl.String))
    with duckdb.connect() as connection:
        connection.register("whole", whole.to_arrow())
        grouped = grouped_in_duckdb(
            connection, '"whole"', partition_columns(held, ["partition"], None), KEY
        )
    assert repeated_keys_of(grouped, KEY, SHOWN, 100) == found


DAYS = dg.DailyPartitionsDefinition(
    start_date="2026-03-27", end_date="2026-04-01", timezone="Europe/Berlin"
)
DAYS_BY_REGION = dg.MultiPartitionsDefinition(
    {"day": DAYS, "region": dg.StaticPartitionsDefinition(["east", "west"])}
)
START = datetime(2026, 3, 27)


@given(
    st.lists(
        st.tuples(
            st.integers(0, 8),
            st.integers(-2 * 24, 7 * 24 - 1),
            st.sampled_from(["east", "west", "south"]),
        ),
        max_size=30,
    ),
    st.booleans(),
)
@settings(max_examples=100, deadline=None)
def test_time_windows_and_regions_in_duckdb_match_the_frames_per_partition(
    rows: list[tuple[int, int, str]], as_dates: bool
) -> None:
    """A table DuckDB's manager stores by a time column (a `TIMESTAMP` or a `DATE`) and a
    region: grouped in the database, its repeated keys and their partitions are those of the
    same rows read partition by partition (over a daylight saving change, in the definition's
    timezone). A row of no partition (a time before the first window or after the last, a
    region that is no key) takes no part, and names none."""
    times = [START + timedelta(hours=r[1]) for r in rows]
    if as_dates:
        times = [datetime(t.year, t.month, t.day) for t in times]
    whole = pl.DataFrame(
        {"id": [r[0] for r in rows], "placed_at": times, "region": [r[2] for r in rows]},
        schema={"id": pl.Int64, "placed_at": pl.Datetime, "region": pl.String},
    )
    whole = whole.unique(["id", "placed_at", "region"])

    def partition_of(at: datetime, region: str) -> str | None:
        berlin = at.replace(tzinfo=ZoneInfo("Europe/Berlin"))
        day = DAYS.get_partition_key_for_timestamp(berlin.timestamp())
        if region == "south" or not DAYS.has_partition_key(day):
            return None
        return f"{day}|{region}"

    labelled = whole.with_columns(
        partition=pl.struct("placed_at", "region").map_elements(
            lambda row: partition_of(row["placed_at"], row["region"]), return_dtype=pl.String
        )
    ).drop_nulls("partition")
    frames = {
        str(name): part.lazy().select("id")
        for (name,), part in labelled.partition_by("partition", as_dict=True).items()
    }
    found = repeated_in_frames(frames, ("id",), SHOWN, max_samples=100)

    stored = whole.with_columns(pl.col("placed_at").dt.date()) if as_dates else whole
    with duckdb.connect() as connection:
        connection.register("whole", stored.to_arrow())
        columns = partition_columns(DAYS_BY_REGION, ["placed_at", "region"], None)
        grouped = grouped_in_duckdb(connection, '"whole"', columns, ("id",))
    assert repeated_keys_of(grouped, ("id",), SHOWN, 100) == found
    assert set(found.partitions) <= set(labelled.get_column("partition"))


def test_masked_and_hidden_samples() -> None:
    frames = {"a": pl.LazyFrame({"email": ["ann"]}), "b": pl.LazyFrame({"email": ["ann"]})}
    masked = ShownValues(rows=True, masked=frozenset({"email"}))
    assert repeated_in_frames(frames, ("email",), masked, 5).samples == (
        {"email": "[sensitive]", "dy_partitions": "a, b"},
    )
    hidden = ShownValues(rows=False, masked=frozenset())
    assert repeated_in_frames(frames, ("email",), hidden, 5).samples == ()


# --- Whole runs: writes, schema changes and deletions, on both managers --------------------

SHOPS = dg.DynamicPartitionsDefinition(name="shops")
CHECK = "dy_keys_across_partitions"


class Orders(dy.Schema):
    shop = dy.String()
    order_id = dy.Int64(primary_key=True)


class Coupons(Orders):
    """`Orders` with a column added: nullable, and unique as a key of its own."""

    coupon = dy.String(nullable=True, unique=True)


VERSIONS: dict[int, type[dy.Schema]] = {1: Orders, 2: Coupons}


def _frame(shop: str, version: int, ids: list[int], coupons: list[str | None]) -> pl.DataFrame:
    frame = pl.DataFrame(
        {"shop": [shop] * len(ids), "order_id": ids},
        schema={"shop": pl.String, "order_id": pl.Int64},
    )
    if version == 2:
        frame = frame.with_columns(coupon=pl.Series(coupons[: len(ids)], dtype=pl.String))
    return frame


write = st.tuples(
    st.just("write"),
    st.sampled_from(["a", "b", "c", "d"]),
    st.sampled_from([1, 2]),
    st.lists(st.integers(0, 5), max_size=4, unique=True),  # empty: nothing stored, or none left
    # Unique within the partition, one null at most: rows Dataframely's rules keep.
    st.permutations([None, "x", "y", "z"]),
)
delete = st.tuples(st.just("delete"), st.sampled_from(["a", "b", "c", "d"]))


def _asset(version: int, frames: dict[str, pl.DataFrame]) -> dg.AssetsDefinition:
    @dd.asset(
        VERSIONS[version],
        name="orders",
        partitions_def=SHOPS,
        keys_across_partitions=True,
        max_failure_samples=100,
        metadata={"partition_expr": "shop"},
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames[context.partition_key]

    return orders


def _expected(
    frames: dict[str, pl.DataFrame], version: int
) -> tuple[int, list[str], list[dict[str, Any]]]:
    """The whole table's repeated keys as the check reports them: count, partitions, sample."""
    keys = [("order_id",), ("coupon",)] if version == 2 else [("order_id",)]
    repeated = {
        (column, values[0]): partitions
        for key in keys
        for (column,) in [key]
        for values, partitions in _whole_table_repeats(frames, key).items()
    }
    sample = [
        {column: value, "dy_partitions": ", ".join(partitions)}
        for (column, value), partitions in repeated.items()
    ]
    holding = sorted({p for partitions in repeated.values() for p in partitions})
    return len(repeated), holding, sample


def _sorted(sample: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(sample, key=lambda s: str(sorted(s.items())))


@pytest.mark.parametrize("store", ["parquet", "duckdb"])
@given(st.lists(st.one_of(write, write, delete), min_size=1, max_size=8))
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_each_run_s_verdict_matches_the_whole_table(
    store: str, steps: list[tuple[Any, ...]]
) -> None:
    with tempfile.TemporaryDirectory() as folder, dg.DagsterInstance.ephemeral() as instance:
        manager: Any = (
            PolarsParquetIOManager(base_dir=str(Path(folder) / "tables"))
            if store == "parquet"
            else DuckDBPolarsIOManager(database=str(Path(folder) / "warehouse.duckdb"))
        )
        frames: dict[str, pl.DataFrame] = {}  # what each shop's last write stored
        for step in steps:
            shop = step[1]
            held = set(instance.get_dynamic_partitions("shops"))
            if step[0] == "delete":
                if shop in held:
                    instance.delete_dynamic_partition("shops", shop)
                continue
            _, _, version, ids, coupons = step
            if shop not in held:
                instance.add_dynamic_partitions("shops", [shop])
            frames[shop] = _frame(shop, version, ids, coupons)
            result = dg.materialize(
                [_asset(version, frames)],
                resources={"io_manager": manager},
                partition_key=shop,
                instance=instance,
                raise_on_error=True,
            )
            (evaluation,) = [
                e for e in result.get_asset_check_evaluations() if e.check_name == CHECK
            ]
            current = set(instance.get_dynamic_partitions("shops"))
            count, partitions, sample = _expected(
                {n: f for n, f in frames.items() if n in current}, version
            )
            metadata = evaluation.metadata
            assert evaluation.passed == (count == 0)
            assert metadata["dy_repeated_keys"].value == count
            assert metadata["dy_repeated_key_partitions"].data == partitions
            shown = metadata["dy_repeated_key_sample"].data if count else []
            assert _sorted(shown) == _sorted(sample)


# --- Listing the stored files against looking for each defined partition's ----------------


def _path_safe(key: str) -> bool:
    """A key whose file a local path keeps as Dagster joins it: no `.` or `..` segment (which
    would leave the asset's folder) and no doubled `/` (which the path collapses, so that no
    listing can tell `a//b` from `a/b`). Dagster refuses `...` in a key."""
    inner = key.strip("/").split("/")
    return (
        bool(key.strip("/"))
        and "..." not in key
        and "//" not in key
        and not {".", ".."} & set(inner)
    )


partition_keys = st.text(alphabet="ab/.%2F", min_size=1, max_size=6).filter(_path_safe)
FRAMES = dg.DagsterType(lambda _, value: True, name="Frames", typing_type=pl.DataFrame)


@pytest.fixture(scope="module")
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.ephemeral() as instance:
        yield instance


@given(
    st.lists(partition_keys, min_size=1, max_size=6, unique=True),
    st.lists(st.sampled_from(["2026-01-01", "2026-01-02"]), min_size=1, max_size=2, unique=True),
    st.booleans(),
    st.data(),
)
@settings(max_examples=60, deadline=None)
def test_listing_the_stored_files_finds_what_looking_for_each_partition_finds(
    instance: dg.DagsterInstance,
    keys: list[str],
    days: list[str],
    multi: bool,
    data: st.DataObject,
) -> None:
    """`stored_partitions` lists the asset's folder once where the manager lays partitions
    out as Dagster does; over generated keys (a `/` anywhere, an escaped `%2F`, a `.`), some
    stored, some stored and since dropped from the definition, it finds exactly the files
    that looking for every held partition's file finds."""
    shops = dg.StaticPartitionsDefinition(keys)
    days_def = dg.StaticPartitionsDefinition(days)
    defined: dg.PartitionsDefinition = (
        dg.MultiPartitionsDefinition({"shop": shops, "day": days_def}) if multi else shops
    )
    all_keys = defined.get_partition_keys()
    stored = data.draw(st.lists(st.sampled_from(all_keys), unique=True))
    held_shops = data.draw(st.lists(st.sampled_from(keys), min_size=1, unique=True))
    held: dg.PartitionsDefinition = (
        dg.MultiPartitionsDefinition(
            {"shop": dg.StaticPartitionsDefinition(held_shops), "day": days_def}
        )
        if multi
        else dg.StaticPartitionsDefinition(held_shops)
    )
    # NOTE: the resources are built on the module's instance, and each context is given them:
    # built without, each made a Dagster instance of its own, most of what an example cost.
    with (
        tempfile.TemporaryDirectory() as folder,
        dg.build_resources(
            {"io_manager": PolarsParquetIOManager(base_dir=folder)}, instance=instance
        ) as resources,
    ):
        manager = resources.io_manager
        for key in stored:
            context = dg.build_output_context(
                asset_key=["sales", "orders"],
                partition_key=str(key),
                asset_partitions_def=defined,
                dagster_type=FRAMES,
                resources=resources,
            )
            manager.handle_output(context, pl.DataFrame({"order_id": [1]}))
        output = dg.build_output_context(asset_key=["sales", "orders"], resources=resources)
        listed = _listed_files(manager, output, held, instance)
        probed = _probed_files(manager, dg.AssetKey(["sales", "orders"]), held, instance, resources)
    assert {k: p.path for k, p in listed.items()} == {k: p.path for k, p in probed.items()}
    # Every stored partition the definition still holds is found (two keys Dagster writes to
    # one file, `2` and `2/`, are both found there, as looking for each finds them).
    held_keys = {str(k) for k in held.get_partition_keys()}
    assert set(listed) >= {str(k) for k in stored} & held_keys

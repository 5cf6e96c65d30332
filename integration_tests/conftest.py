"""Shared pieces of the integration suite: a small schema, frames with known rows, and readers.

Every reader here opens the stored data directly (`pl.read_parquet`, `duckdb.connect(...,
read_only=True)`), never through the package or an IO manager, so a test sees what a user
would find on disk. `duckdb` is imported by the DuckDB readers only: this conftest is loaded in
environments without it too (see `collectable.py`).

A test module that imports a package this environment lacks is not collected; the summary at
the end of the run names each such module and the packages it needs. `make test` sets
`DAGSTER_DATAFRAMELY_TEST_COLLECT_ALL=1`: the development environment must collect everything,
so there a missing package stops the run instead.
"""

import datetime as dt
import gc
import os
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster._serdes import serialize_value
from polars.testing import assert_frame_equal

import dagster_dataframely as dd

from .collectable import missing_packages

if TYPE_CHECKING:
    import duckdb

QUIET: dict[str, Any] = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
"""Run config that silences the console logger (DuckDB warns on every empty write)."""

UNPARTITIONED = ""
"""The key `orders_asset` looks its frame up under when the asset has no partitions."""

DAY_1 = "2026-01-02"
DAY_2 = "2026-01-03"
DAILY = dg.DailyPartitionsDefinition(start_date=DAY_1, end_date="2026-01-04")
"""Exactly two partitions, so a read of every partition finds every one written."""

MULTI = dg.MultiPartitionsDefinition(
    # Declared region first: Dagster orders dimensions by name (day, then region), so a path
    # such as `2026-01-02/eu.parquet` catches a layout that follows the declaration order.
    {"region": dg.StaticPartitionsDefinition(["eu", "us"]), "day": DAILY}
)

RULE_PREFIX = "dy_rule__"
AMOUNT_MIN = "dy_rule__amount__min"
ADDRESS = "dataframely/quarantine_address"


class Orders(dy.Schema):
    """A small order table: every invalid row in this suite fails `amount|min` only."""

    order_id = dy.String(primary_key=True)
    day = dy.Date(nullable=False)
    placed_at = dy.Datetime(nullable=False)
    region = dy.String(nullable=False)
    amount = dy.Float64(nullable=False, min=0.0)


ORDERS_COLUMNS = ["order_id", "day", "placed_at", "region", "amount"]
ORDERS_DTYPES: dict[str, pl.DataType] = {
    "order_id": pl.String(),
    "day": pl.Date(),
    "placed_at": pl.Datetime("us"),
    "region": pl.String(),
    "amount": pl.Float64(),
}


# Frames with known valid and invalid rows.


def orders_frame(
    day: str, region: str = "eu", *, tag: str = "first", valid: int = 2, invalid: int = 1
) -> pl.DataFrame:
    """`valid` rows with a positive amount, then `invalid` rows with a negative one.

    Every id carries the tag, day and region, so a test can tell which run wrote a row and
    which partition it belongs to.
    """
    date = dt.date.fromisoformat(day)
    ids = [f"{tag}-{day}-{region}-ok{i}" for i in range(valid)]
    ids += [f"{tag}-{day}-{region}-bad{i}" for i in range(invalid)]
    rows = len(ids)
    return pl.DataFrame(
        {
            "order_id": ids,
            "day": [date] * rows,
            "placed_at": [dt.datetime.combine(date, dt.time(10, 30))] * rows,
            "region": [region] * rows,
            "amount": [10.0 + i for i in range(valid)] + [-1.0 - i for i in range(invalid)],
        },
        schema=ORDERS_DTYPES,
    )


def valid_rows(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.filter(pl.col("amount") >= 0)


def valid_ids(frame: pl.DataFrame) -> set[str]:
    return set(valid_rows(frame)["order_id"])


def invalid_ids(frame: pl.DataFrame) -> set[str]:
    return set(frame.filter(pl.col("amount") < 0)["order_id"])


def multi_key(day: str, region: str) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"day": day, "region": region})


# Assets.


def orders_asset(
    frames: Mapping[str, pl.DataFrame | None],
    *,
    name: str = "orders",
    schema: type[dy.Schema] = Orders,
    quarantine: bool = True,
    **asset_kwargs: Any,
) -> dg.AssetsDefinition:
    """`dd.asset(Orders, quarantine=True)` returning `frames[<partition key>]`.

    The test owns `frames` and may change it between runs, to re-run a partition with other data.
    `schema` replaces `Orders`, for a test of a schema that changed between two runs.
    """

    @dd.asset(schema, quarantine=quarantine, name=name, **asset_kwargs)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame | None:
        key = str(context.partition_key) if context.has_partition_key else UNPARTITIONED
        return frames[key]

    return orders


_SHARED_INSTANCE: list[dg.DagsterInstance] = []
"""The session's one ephemeral instance: building one costs more than a run of a small asset."""


def shared_instance() -> dg.DagsterInstance:
    if not _SHARED_INSTANCE:
        _SHARED_INSTANCE.append(dg.DagsterInstance.ephemeral())
    return _SHARED_INSTANCE[0]


def materialize(
    assets: Sequence[dg.AssetsDefinition | dg.AssetSpec],
    io_manager: object,
    *,
    partition_key: str | None = None,
    selection: Sequence[dg.AssetKey] | None = None,
) -> dg.ExecuteInProcessResult:
    """`dg.materialize` with `io_manager` as the `io_manager` resource and a quiet console.

    Every run shares one ephemeral instance; each test writes under its own tmp dirs, so the
    runs of one test never see another's data.
    """
    result = dg.materialize(
        assets,
        resources={"io_manager": io_manager},
        run_config=QUIET,
        partition_key=partition_key,
        instance=shared_instance(),
        selection=selection,
    )
    assert result.success
    return result


def found_in_event_log(entries: Iterable[dg.EventLogEntry], values: Iterable[str]) -> list[str]:
    """Each of `values` found anywhere in `entries`, as the instance stores them, sorted.

    An entry is scanned whole, serialized as the instance stores it: its event, the event's
    metadata and message, or a log line at any level.
    """
    texts = [serialize_value(entry) for entry in entries]
    return sorted({value for value in values for text in texts if value in text})


def materialization_metadata(result: dg.ExecuteInProcessResult, key: dg.AssetKey) -> dict[str, Any]:
    """The raw values of the one materialization of `key` in the run."""
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key == key]
    materialization = event.materialization
    assert materialization is not None
    return {name: value.value for name, value in materialization.metadata.items()}


def rerun_first_partition(
    orders: dg.AssetsDefinition,
    frames: MutableMapping[str, pl.DataFrame],
    io_manager: object,
    *,
    first: tuple[str, pl.DataFrame, pl.DataFrame],
    others: Sequence[tuple[str, pl.DataFrame]],
    assets: Sequence[dg.AssetsDefinition | dg.AssetSpec] = (),
) -> None:
    """Run partition A, then every other partition, then A again with different data.

    `first` is (A, A's first frame, A's second frame).
    """
    key, before, after = first
    frames[key] = before
    materialize([orders, *assets], io_manager, partition_key=key)
    for other, frame in others:
        frames[other] = frame
        materialize([orders, *assets], io_manager, partition_key=other)
    frames[key] = after
    materialize([orders, *assets], io_manager, partition_key=key)


# Independent readers.


def files_under(root: Path) -> set[str]:
    """Every file below `root`, as a `/`-separated path relative to it."""
    if not root.exists():
        return set()
    return {path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file()}


def parquet_ids(path: Path) -> set[str]:
    return set(pl.read_parquet(path)["order_id"])


def duckdb_read_only(database: Path) -> "duckdb.DuckDBPyConnection":
    """A read-only connection to the DuckDB file `database`."""
    import duckdb

    try:
        return duckdb.connect(str(database), read_only=True)
    except duckdb.ConnectionException:
        # NOTE: DuckDbClient leaves its connection open when a write fails, and this process
        # cannot open the file read-only while it is; it closes once collected. Collecting only
        # then: a full collection costs about 0.4 s on the suite's heap, and most reads come
        # after a run that closed its connection.
        gc.collect()
        return duckdb.connect(str(database), read_only=True)


def duckdb_tables(database: Path) -> set[str]:
    """Every table in the database file, as `schema.table`."""
    if not database.exists():
        return set()
    with duckdb_read_only(database) as connection:
        rows = connection.execute(
            "select table_schema, table_name from information_schema.tables"
        ).fetchall()
    return {f"{schema}.{table}" for schema, table in rows}


def duckdb_frame(database: Path, table: str, **equal: object) -> pl.DataFrame:
    """The rows of `table` where each keyword column equals its value, ordered by id."""
    where = " and ".join(f"{column} = ?" for column in equal) or "true"
    with duckdb_read_only(database) as connection:
        return connection.execute(
            f"select * from {table} where {where} order by order_id",
            list(equal.values()),
        ).pl()


def duckdb_stored(
    database: Path, table: str, where: str = "", values: Sequence[object] = ()
) -> pl.DataFrame | None:
    """The rows of `public.<table>` (those matching `where`), None when there is no such table."""
    if not database.exists():
        return None
    with duckdb_read_only(database) as connection:
        found = connection.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = 'public' and table_name = ?",
            [table],
        ).fetchone()
        if not found or not found[0]:
            return None
        return connection.execute(f"select * from public.{table} {where}", list(values)).pl()


def duckdb_ids(database: Path, table: str, **equal: object) -> set[str]:
    return set(duckdb_frame(database, table, **equal)["order_id"])


def assert_table(stored: pl.DataFrame, frame: pl.DataFrame) -> None:
    """The stored table is exactly the valid rows of `frame`, in the schema's columns."""
    assert_frame_equal(
        stored.sort("order_id"), valid_rows(frame).sort("order_id"), check_dtypes=True
    )


def assert_quarantine(stored: pl.DataFrame, frame: pl.DataFrame) -> None:
    """The stored quarantine is exactly the invalid rows of `frame`, plus one column per rule."""
    assert set(stored["order_id"]) == invalid_ids(frame)
    assert stored.columns[: len(ORDERS_COLUMNS)] == ORDERS_COLUMNS
    rules = stored.columns[len(ORDERS_COLUMNS) :]
    assert AMOUNT_MIN in rules
    assert all(rule.startswith(RULE_PREFIX) for rule in rules)
    assert all(stored.schema[rule] == pl.String() for rule in rules)
    assert stored[AMOUNT_MIN].to_list() == ["invalid"] * stored.height
    for rule in set(rules) - {AMOUNT_MIN}:
        assert stored[rule].to_list() == ["valid"] * stored.height, rule
    assert_frame_equal(
        stored.select(ORDERS_COLUMNS).sort("order_id"),
        frame.filter(pl.col("amount") < 0).sort("order_id"),
    )


# Collection: only the modules this environment can import.

COLLECT_ALL = "DAGSTER_DATAFRAMELY_TEST_COLLECT_ALL"
"""When set, a module this environment cannot import is an error, not left out."""

_NOT_COLLECTED: dict[str, list[str]] = {}
"""Each test module or directory left out, relative to the repository, with what it lacks."""


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave out a test module, or a directory whose conftest, needing an uninstalled package."""
    if collection_path.is_dir():
        source = collection_path / "conftest.py"
    elif collection_path.name.startswith("test_") and collection_path.suffix == ".py":
        source = collection_path
    else:
        return None
    if not source.is_file() or not (missing := missing_packages(source)):
        return None
    path = str(collection_path.relative_to(config.rootpath))
    if os.environ.get(COLLECT_ALL):
        raise pytest.UsageError(f"{path} needs {', '.join(missing)}, which is not installed")
    _NOT_COLLECTED[path] = missing
    return True


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In a pytest-xdist worker, hand what it left out to the controller, which prints it."""
    worker_output = getattr(session.config, "workeroutput", None)
    if worker_output is not None:
        worker_output["not_collected"] = _NOT_COLLECTED


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """In the pytest-xdist controller, gather what each worker left out (the workers collect)."""
    _NOT_COLLECTED.update(getattr(node, "workeroutput", {}).get("not_collected", {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _NOT_COLLECTED:
        return
    terminalreporter.section("not collected: this environment lacks a package they import")
    for path, missing in sorted(_NOT_COLLECTED.items()):
        terminalreporter.line(f"{path}: needs {', '.join(missing)}")


# Fixtures.


@pytest.fixture
def quiet() -> dict[str, Any]:
    """Run config that silences the console logger."""
    return QUIET


@pytest.fixture(scope="session", autouse=True)
def _dispose_shared_instance() -> Iterator[None]:
    yield
    while _SHARED_INSTANCE:
        _SHARED_INSTANCE.pop().dispose()


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    """Where the tables go: a parquet base dir, or the folder holding the DuckDB file."""
    path = tmp_path / "warehouse"
    path.mkdir()
    return path


@pytest.fixture
def restricted(tmp_path: Path) -> Path:
    """Where a separate quarantine manager puts the invalid rows."""
    path = tmp_path / "restricted"
    path.mkdir()
    return path


@pytest.fixture
def schema() -> type[dy.Schema]:
    """The suite's schema; tests that build assets at import use `Orders` directly."""
    return Orders


@pytest.fixture
def frame() -> pl.DataFrame:
    """Two valid rows and one that fails `amount|min`, all on `DAY_1` in `eu`."""
    return orders_frame(DAY_1)

"""`QuarantineAwareIOManager(staged_writes=True)`: a failed or killed write keeps the last good one.

Each test writes a first version in this process, then makes the second version's write fail
in one of two ways, and reads what is left with Polars or DuckDB directly:

- killed: a child process runs the second version and stops half way through one write
  (`interrupted_write`); the test sends it SIGKILL there.
- a full disk: the table or quarantine lives on a tmpfs of a few MiB that this test mounts and
  fills, so the second version's write fails with ENOSPC.

The same failures without the opt-in are here too, as evidence for what the Guarantees page says
happens then: the killed or failed write leaves a table that cannot be read, or an empty one.
"""

import contextlib
import datetime as dt
import gc
import json
import os
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager
from polars.testing import assert_frame_equal
from tests.warm_server import Forked, WarmServer
from upath import UPath

import dagster_dataframely as dd
from dagster_dataframely._store.staged_writes import STAGING_PREFIX
from dagster_dataframely.errors import QuarantineIOManagerError

from .conftest import (
    DAILY,
    DAY_1,
    DAY_2,
    QUIET,
    UNPARTITIONED,
    Orders,
    assert_quarantine,
    assert_table,
    duckdb_frame,
    files_under,
    materialization_metadata,
    orders_asset,
    orders_frame,
)
from .interrupted_write import (
    DUCKDB,
    MEMORY,
    PARQUET,
    QUARANTINE,
    TABLE,
    big_version,
    version,
    write_version,
)
from .small_disk import fill, mounted_small_disk

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parent.parent
KINDS = [PARQUET, DUCKDB]
WRITES = [TABLE, QUARANTINE]


def stored(kind: str, write: str, warehouse: Path, restricted: Path) -> pl.DataFrame:
    """The table or the quarantine as a reader finds it, sorted by id."""
    if kind == PARQUET:
        if write == TABLE:
            return pl.read_parquet(warehouse / "orders.parquet").sort("order_id")
        return pl.read_parquet(restricted / "orders_quarantine.parquet").sort("order_id")
    if write == TABLE:
        return duckdb_frame(warehouse / "w.duckdb", "public.orders")
    return duckdb_frame(restricted / "q.duckdb", "public.orders_quarantine")


# NOTE: each child is forked from one warm interpreter per test process (tests/warm_server.py), as
# `python -m integration_tests.interrupted_write` would start: a fresh one spent about 2.5 s of
# CPU importing Dagster, Polars and the managers before its write.
_SERVER = WarmServer(lambda: os.environ, 120)


@pytest.fixture(scope="module", autouse=True)
def _stop_the_warm_server() -> Iterator[None]:
    yield
    _SERVER.stop()


@contextlib.contextmanager
def stopped_mid_write(
    kind: str,
    write: str,
    warehouse: Path,
    restricted: Path,
    tmp_path: Path,
    *,
    staged: bool,
    partition: str | None = None,
    temporary: Path | None = None,
) -> Iterator[Forked]:
    """Run the second version in a child process, stopped alive half way through `write`;
    killed on leaving, if the block has not killed it (`kill`). `temporary` is its `TMPDIR`."""
    marker, output = tmp_path / "stopped", tmp_path / "child"
    output.mkdir()
    arguments = {
        "kind": kind,
        "stop_in": write,
        "warehouse": str(warehouse),
        "restricted": str(restricted),
        "marker": str(marker),
        "staged": staged,
        "partition": partition,
    }
    environment = {**os.environ, **({"TMPDIR": str(temporary)} if temporary else {})}
    child = _SERVER.start(
        str(ROOT),
        str(output),
        environment,
        module="integration_tests.interrupted_write",
        argv=[json.dumps(arguments)],
    )

    def printed() -> str:
        return "".join((output / name).read_text() for name in ("stdout", "stderr"))[-4000:]

    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            if child.poll() is not None:
                pytest.fail(
                    f"the child exited ({child.returncode}) before its write stopped:\n{printed()}"
                )
            if time.monotonic() > deadline:
                pytest.fail(f"the child's write never stopped:\n{printed()}")
            time.sleep(0.05)
        yield child
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=30)


def kill(child: Forked) -> None:
    os.kill(child.pid, signal.SIGKILL)
    assert child.wait(timeout=30) == -signal.SIGKILL


def kill_mid_write(
    kind: str, write: str, warehouse: Path, restricted: Path, tmp_path: Path, *, staged: bool
) -> None:
    """Run the second version in a child process and SIGKILL it half way through `write`."""
    with stopped_mid_write(kind, write, warehouse, restricted, tmp_path, staged=staged) as child:
        kill(child)


def staging_in(directory: Path) -> set[str]:
    """The staging files and directories in `directory`, and their locks."""
    return {path.name for path in directory.glob(f"{STAGING_PREFIX}*")}


# Killed half way through a write.


@pytest.mark.fault_injection
@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_killed_staged_write_leaves_the_last_good_version(
    warehouse: Path, restricted: Path, tmp_path: Path, kind: str, write: str
) -> None:
    first = version("first")
    assert write_version(kind, warehouse, restricted, first, staged=True).success
    before = stored(kind, write, warehouse, restricted)

    kill_mid_write(kind, write, warehouse, restricted, tmp_path, staged=True)

    assert_frame_equal(stored(kind, write, warehouse, restricted), before)
    if write == TABLE:
        assert_table(stored(kind, TABLE, warehouse, restricted), first)
    else:
        assert_quarantine(stored(kind, QUARANTINE, warehouse, restricted), first)


@pytest.mark.fault_injection
@pytest.mark.parametrize("kind", KINDS)
def test_the_next_staged_write_after_a_kill_succeeds_and_leaves_nothing_behind(
    warehouse: Path, restricted: Path, tmp_path: Path, kind: str
) -> None:
    assert write_version(kind, warehouse, restricted, version("first"), staged=True).success
    kill_mid_write(kind, TABLE, warehouse, restricted, tmp_path, staged=True)
    third = version("third", valid=4, invalid=2)

    assert write_version(kind, warehouse, restricted, third, staged=True).success

    assert_table(stored(kind, TABLE, warehouse, restricted), third)
    assert_quarantine(stored(kind, QUARANTINE, warehouse, restricted), third)
    if kind == PARQUET:
        # The killed write's staging file is gone, so a scan of the directory works again.
        assert files_under(warehouse) == {"orders.parquet"}
        assert pl.scan_parquet(warehouse).collect().height == 4
    else:
        assert files_under(warehouse) == {"w.duckdb"}


@pytest.mark.fault_injection
@pytest.mark.parametrize("kind", KINDS)
def test_without_staging_a_killed_write_destroys_the_last_good_table(
    warehouse: Path, restricted: Path, tmp_path: Path, kind: str
) -> None:
    assert write_version(kind, warehouse, restricted, version("first"), staged=False).success

    kill_mid_write(kind, TABLE, warehouse, restricted, tmp_path, staged=False)

    if kind == PARQUET:
        with pytest.raises(pl.exceptions.ComputeError):
            pl.read_parquet(warehouse / "orders.parquet")
    else:
        assert stored(kind, TABLE, warehouse, restricted).height == 0


@pytest.mark.fault_injection
def test_the_next_write_of_a_table_removes_a_killed_writes_staging_and_never_a_live_ones(
    warehouse: Path, restricted: Path, tmp_path: Path
) -> None:
    """Partitioned, as a backfill writes: a write of one partition is stopped alive half way,
    another partition of the table is written meanwhile, then the stopped one is killed."""
    table = warehouse / "orders"
    first, other = version("first"), version("other", valid=4, invalid=2)
    assert write_version(
        PARQUET, warehouse, restricted, first, staged=True, partition=DAY_1
    ).success
    with stopped_mid_write(
        PARQUET, TABLE, warehouse, restricted, tmp_path, staged=True, partition=DAY_1
    ) as child:
        live = staging_in(table)
        assert len(live) == 2, live  # its staging file and that file's lock

        written = write_version(PARQUET, warehouse, restricted, other, staged=True, partition=DAY_2)

        assert written.success
        assert staging_in(table) == live  # a write in progress keeps its staging
        kill(child)
    assert staging_in(table) == live  # what the killed write left, until the next write

    assert write_version(
        PARQUET, warehouse, restricted, other, staged=True, partition=DAY_2
    ).success

    assert staging_in(table) == set()
    assert files_under(table) == {f"{DAY_1}.parquet", f"{DAY_2}.parquet"}
    assert_table(pl.read_parquet(table / f"{DAY_1}.parquet"), first)
    assert_table(pl.read_parquet(table / f"{DAY_2}.parquet"), other)
    assert pl.scan_parquet(table).collect().height == 2 + 4


@pytest.mark.fault_injection
def test_the_next_upload_removes_a_killed_uploads_local_staging_and_never_a_live_ones(
    warehouse: Path, restricted: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an object store (fsspec's memory store, one per process) a staged write dumps to a
    staging directory in `TMPDIR` first: the child's stops alive there, half written."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    with stopped_mid_write(
        MEMORY, TABLE, warehouse, restricted, tmp_path, staged=True, temporary=temporary
    ) as child:
        live = {path.name for path in temporary.iterdir()}
        assert live  # its staging (and the staging's lock)

        written = write_version(MEMORY, warehouse, restricted, version("other"), staged=True)

        assert written.success
        assert {path.name for path in temporary.iterdir()} == live
        kill(child)

    assert write_version(MEMORY, warehouse, restricted, version("third"), staged=True).success

    assert list(temporary.iterdir()) == []


# A full disk.


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted for this test alone, and unmounted after it."""
    with mounted_small_disk(tmp_path) as point:
        yield point


def _disks(kind: str, write: str, small_disk: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(warehouse, restricted): the one `write` goes to is on the small disk."""
    on_small, elsewhere = small_disk / "store", tmp_path / "elsewhere"
    on_small.mkdir()
    elsewhere.mkdir()
    return (on_small, elsewhere) if write == TABLE else (elsewhere, on_small)


@pytest.mark.fault_injection
@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("kind", KINDS)
def test_a_staged_write_to_a_full_disk_leaves_the_last_good_version(
    small_disk: Path, tmp_path: Path, kind: str, write: str
) -> None:
    warehouse, restricted = _disks(kind, write, small_disk, tmp_path)
    first = version("first")
    assert write_version(kind, warehouse, restricted, first, staged=True).success
    before = stored(kind, write, warehouse, restricted)
    fill(small_disk, leave=64 * 1024)

    # Every row invalid as well as valid goes to the quarantine, so both writes are large.
    second = big_version(30_000)
    if write == QUARANTINE:
        second = second.with_columns(amount=-pl.col("amount") - 1)
    result = write_version(kind, warehouse, restricted, second, staged=True)

    assert not result.success
    assert_frame_equal(stored(kind, write, warehouse, restricted), before)
    if kind == PARQUET:
        assert files_under(small_disk / "store") == {
            "orders.parquet" if write == TABLE else "orders_quarantine.parquet"
        }


@pytest.mark.fault_injection
@pytest.mark.parametrize("kind", KINDS)
def test_without_staging_a_full_disk_destroys_the_last_good_table(
    small_disk: Path, tmp_path: Path, kind: str
) -> None:
    warehouse, restricted = _disks(kind, TABLE, small_disk, tmp_path)
    assert write_version(kind, warehouse, restricted, version("first"), staged=False).success
    fill(small_disk, leave=64 * 1024)

    result = write_version(kind, warehouse, restricted, big_version(30_000), staged=False)

    assert not result.success
    if kind == PARQUET:
        with pytest.raises(pl.exceptions.ComputeError):
            pl.read_parquet(warehouse / "orders.parquet")
    else:
        # DuckDbClient leaves its connection open when a write fails; it closes once collected.
        del result
        gc.collect()
        assert stored(kind, TABLE, warehouse, restricted).height == 0


def _daily_orders(schema: type[dy.Schema], frames: dict[str, pl.DataFrame]) -> dg.AssetsDefinition:
    @dd.asset(
        schema,
        quarantine=True,
        name="orders",
        partitions_def=DAILY,
        metadata={"partition_expr": "day"},
    )
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return frames[context.partition_key]

    return orders


def _rows(warehouse: Path, table: str, day: str) -> pl.DataFrame:
    return duckdb_frame(warehouse / "w.duckdb", table, day=dt.date.fromisoformat(day))


# Staged writes store what the manager stores, and refuse what they cannot stage.


@pytest.mark.parametrize("kind", KINDS)
def test_staged_writes_store_and_report_what_the_manager_does(tmp_path: Path, kind: str) -> None:
    """The same files or tables, rows and metadata, partitioned, with and without the opt-in."""
    frames = {DAY_1: orders_frame(DAY_1), DAY_2: orders_frame(DAY_2, invalid=2)}
    seen: dict[bool, tuple[set[str], dict[str, object]]] = {}
    for staged in (False, True):
        root = tmp_path / ("staged" if staged else "plain")
        warehouse, restricted = root / "w", root / "q"
        root.mkdir()
        manager = (
            dd.QuarantineAwareIOManager(
                io_manager=PolarsParquetIOManager(base_dir=str(warehouse)),
                quarantine_io_manager=PolarsParquetIOManager(base_dir=str(restricted)),
                staged_writes=staged,
            )
            if kind == PARQUET
            else dd.QuarantineAwareIOManager(
                io_manager=DuckDBPolarsIOManager(database=str(root / "w.duckdb")),
                staged_writes=staged,
            )
        )
        orders = _daily_orders(Orders, frames)
        for day in (DAY_1, DAY_2):
            result = dg.materialize(
                [orders], resources={"io_manager": manager}, run_config=QUIET, partition_key=day
            )
        metadata = materialization_metadata(result, orders.key)
        metadata = {k: v for k, v in metadata.items() if k not in {"table"}}  # a random sample
        listing = files_under(root)
        seen[staged] = (
            listing,
            {k: str(v).replace(str(root), "<root>") for k, v in metadata.items()},
        )
        if kind == PARQUET:
            for day in (DAY_1, DAY_2):
                assert_table(pl.read_parquet(warehouse / "orders" / f"{day}.parquet"), frames[day])
                quarantine = pl.read_parquet(restricted / "orders_quarantine" / f"{day}.parquet")
                assert_quarantine(quarantine, frames[day])
        else:
            for day in (DAY_1, DAY_2):
                assert_table(_rows(root, "public.orders", day), frames[day])
                assert_quarantine(_rows(root, "public.orders_quarantine", day), frames[day])

    plain_files = {name.replace("plain/", "") for name in seen[False][0]}
    staged_files = {name.replace("staged/", "") for name in seen[True][0]}
    assert staged_files == plain_files  # no staging file left behind
    assert seen[True][1] == seen[False][1]


class MemoryIOManager(dg.IOManager):
    """Stores in a dict: nothing outside it can make its writes atomic."""

    def __init__(self) -> None:
        self.values: dict[str, object] = {}

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        self.values[context.asset_key.to_user_string()] = obj

    def load_input(self, context: dg.InputContext) -> object:
        return self.values[context.asset_key.to_user_string()]


@pytest.mark.parametrize("argument", ["io_manager", "quarantine_io_manager"])
def test_staged_writes_refuse_a_manager_they_cannot_stage(warehouse: Path, argument: str) -> None:
    managers: dict[str, object] = {"io_manager": PolarsParquetIOManager(base_dir=str(warehouse))}
    managers[argument] = MemoryIOManager()
    orders = orders_asset({UNPARTITIONED: version("first")})

    with pytest.raises(dg.DagsterResourceFunctionError) as raised:
        dg.materialize(
            [orders],
            resources={"io_manager": dd.QuarantineAwareIOManager(**managers, staged_writes=True)},
            run_config=QUIET,
        )

    error = raised.value.__cause__
    assert isinstance(error, QuarantineIOManagerError)
    assert error.manager == f"MemoryIOManager (the {argument} argument)"
    assert "staged_writes=True" in error.problem
    assert files_under(warehouse) == set()


class DatasetIOManager(dg.UPathIOManager):
    """Writes each output as a directory of parquet files, as a dataset or Delta table does."""

    extension = ".dataset"

    def dump_to_path(self, context: dg.OutputContext, obj: pl.DataFrame, path: Any) -> None:
        path.mkdir(parents=True, exist_ok=True)
        obj.write_parquet(path / "part-0.parquet")

    def load_from_path(self, context: dg.InputContext, path: Any) -> pl.DataFrame:
        return pl.read_parquet(path / "part-0.parquet")


def test_a_manager_that_writes_a_directory_fails_the_staged_write_and_keeps_the_old_one(
    warehouse: Path,
) -> None:
    frames = {UNPARTITIONED: version("first")}
    orders = orders_asset(frames)

    def run(staged: bool) -> dg.ExecuteInProcessResult:
        manager = DatasetIOManager(base_path=UPath(warehouse))
        wrapper = dd.QuarantineAwareIOManager(io_manager=manager, staged_writes=staged)
        return dg.materialize(
            [orders], resources={"io_manager": wrapper}, run_config=QUIET, raise_on_error=False
        )

    assert run(staged=False).success
    before = files_under(warehouse)
    frames[UNPARTITIONED] = version("second", valid=3)

    result = run(staged=True)

    assert not result.success
    (failure,) = [event for event in result.all_events if event.is_step_failure]
    assert "stages one file per table, but the IO manager wrote a directory" in str(failure)
    assert files_under(warehouse) == before
    assert_table(pl.read_parquet(warehouse / "orders.dataset" / "part-0.parquet"), version("first"))

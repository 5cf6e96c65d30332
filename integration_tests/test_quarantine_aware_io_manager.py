"""`QuarantineAwareIOManager` around real IO managers.

Invisible for every ordinary output and input; a quarantine write or read goes to
`quarantine_io_manager` (else to `io_manager`) under the same partition key, and the table's
`dataframely/quarantine_address` is where the rows really are.
"""

import datetime as dt
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest
from dagster._core.storage.db_io_manager import DbTypeHandler, TableSlice
from dagster_duckdb import DuckDBIOManager, DuckDBResource
from dagster_duckdb_polars import DuckDBPolarsIOManager, duckdb_polars_io_manager
from dagster_polars import PolarsParquetIOManager
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from dagster_dataframely.errors import QuarantineIOManagerError

from .conftest import (
    ADDRESS,
    DAILY,
    DAY_1,
    DAY_2,
    MULTI,
    UNPARTITIONED,
    Orders,
    assert_quarantine,
    assert_table,
    duckdb_frame,
    duckdb_tables,
    files_under,
    materialization_metadata,
    materialize,
    multi_key,
    orders_asset,
    orders_frame,
    rerun_first_partition,
    valid_rows,
)

pytestmark = pytest.mark.integration

BY_CELL = {"day": "day", "region": "region"}


def parquet(base_dir: Path) -> PolarsParquetIOManager:
    return PolarsParquetIOManager(base_dir=str(base_dir))


def duck(database: Path, schema: str | None = None) -> DuckDBPolarsIOManager:
    return DuckDBPolarsIOManager(database=str(database), schema=schema)


def wrap(io_manager: object, quarantine_io_manager: object = None) -> dd.QuarantineAwareIOManager:
    if quarantine_io_manager is None:
        return dd.QuarantineAwareIOManager(io_manager=io_manager)
    return dd.QuarantineAwareIOManager(
        io_manager=io_manager, quarantine_io_manager=quarantine_io_manager
    )


# Ordinary outputs and inputs: the wrapper is invisible.

RAW = orders_frame(DAY_1, "us", tag="raw", invalid=0)


@dg.asset
def raw() -> pl.DataFrame:
    return RAW


@dg.asset
def summary(orders: pl.DataFrame) -> pl.DataFrame:
    return orders.sort("order_id")


PREVIEWS = ("table", "stats")
"""What a dagster-polars manager records of a `DataFrame`'s values."""


def _unshuffled(metadata: dict[str, Any]) -> dict[str, Any]:
    """PolarsParquetIOManager logs a shuffled sample as `table`: compare its rows as a set."""
    sample = metadata.get("table")
    if isinstance(sample, dg.TableMetadataValue):
        rows = sorted(str(sorted(record.data.items())) for record in sample.records)
        metadata["table"] = (sample.schema, rows)
    return metadata


@pytest.mark.parametrize("kind", ["parquet", "duckdb"])
def test_ordinary_outputs_and_inputs_pass_through_unchanged(
    warehouse: Path, restricted: Path, frame: pl.DataFrame, kind: str
) -> None:
    """The same materializations, metadata (but for plain previews) and data, wrapped or not."""
    if kind == "parquet":
        table, quarantine = parquet(warehouse), parquet(restricted)
    else:
        table, quarantine = duck(warehouse / "w.duckdb"), duck(restricted / "q.duckdb")
    orders = orders_asset({UNPARTITIONED: frame})
    assets = [raw, orders, summary]
    keys = [raw.key, orders.key, summary.key]

    plain_run = materialize(assets, table)
    plain = {key: _unshuffled(materialization_metadata(plain_run, key)) for key in keys}
    wrapped_run = materialize(assets, wrap(table, quarantine))
    wrapped = {key: _unshuffled(materialization_metadata(wrapped_run, key)) for key in keys}

    # A plain asset's previews (dagster-polars' `table` and `stats`) are dropped by default;
    # the rest of its metadata is the bare manager's.
    assert ("table" in plain[raw.key]) == (kind == "parquet")
    for key in (raw.key, summary.key):
        assert wrapped[key] == {k: v for k, v in plain[key].items() if k not in PREVIEWS}
    # The address is the one difference: the real location instead of the asset key.
    assert plain[orders.key].pop(ADDRESS) == "orders_quarantine"
    assert wrapped[orders.key].pop(ADDRESS) == (
        str(restricted / "orders_quarantine.parquet")
        if kind == "parquet"
        else "public.orders_quarantine"
    )
    assert wrapped[orders.key] == plain[orders.key]
    # Every table is where the unwrapped run put it, and holds the same rows.
    if kind == "parquet":
        assert files_under(warehouse) == {
            "raw.parquet",
            "orders.parquet",
            "orders_quarantine.parquet",  # from the unwrapped run
            "summary.parquet",
        }
        assert_frame_equal(pl.read_parquet(warehouse / "raw.parquet"), RAW)
        assert_table(pl.read_parquet(warehouse / "summary.parquet"), frame)
        assert files_under(restricted) == {"orders_quarantine.parquet"}
    else:
        database = warehouse / "w.duckdb"
        assert duckdb_tables(database) == {
            "public.raw",
            "public.orders",
            "public.orders_quarantine",  # from the unwrapped run
            "public.summary",
        }
        assert_frame_equal(duckdb_frame(database, "public.raw"), RAW)
        assert_table(duckdb_frame(database, "public.summary"), frame)
        assert duckdb_tables(restricted / "q.duckdb") == {"public.orders_quarantine"}


class Recording(dg.IOManager):
    """Records what each call receives; stores values in memory."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.stored: dict[tuple[tuple[str, ...], str | None], Any] = {}

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        partition = context.partition_key if context.has_partition_key else None
        self.calls.append(
            {
                "call": "output",
                "asset_key": context.asset_key,
                "partition_key": partition,
                "definition_metadata": dict(context.definition_metadata),
                "resource_config": context.resource_config,
                "name": context.name,
                "step_key": context.step_key,
                "type": context.dagster_type.typing_type,
                "value": obj,
            }
        )
        self.stored[(tuple(context.asset_key.path), partition)] = obj
        context.add_output_metadata({"recording/calls": len(self.calls)})

    def load_input(self, context: dg.InputContext) -> Any:
        partition = context.partition_key if context.has_partition_key else None
        upstream = context.upstream_output
        assert upstream is not None
        self.calls.append(
            {
                "call": "input",
                "asset_key": context.asset_key,
                "partition_key": partition,
                "upstream_key": upstream.asset_key,
                "upstream_metadata": dict(upstream.definition_metadata),
                "resource_config": context.resource_config,
                "name": context.name,
                "type": context.dagster_type.typing_type,
            }
        )
        return self.stored[(tuple(context.asset_key.path), partition)]


_RECORDINGS: list[Recording] = []


@dg.io_manager(config_schema={"tag": str})
def registered_recording_io_manager(_: dg.InitResourceContext) -> Recording:
    recording = Recording()
    _RECORDINGS.append(recording)
    return recording


@dg.asset(partitions_def=DAILY, metadata={"owner": "ops"})
def daily_raw() -> pl.DataFrame:
    return RAW


@dg.asset(partitions_def=DAILY)
def daily_copy(daily_raw: pl.DataFrame) -> None:
    assert daily_raw is RAW


def _calls_through(manager: Callable[[], object], wrapped: bool) -> list[dict[str, Any]]:
    """Run daily_raw -> daily_copy for DAY_1 on a fresh manager, and return what it recorded."""
    _RECORDINGS.clear()
    resource = manager()
    materialize(
        [daily_raw, daily_copy], wrap(resource) if wrapped else resource, partition_key=DAY_1
    )
    recording = resource if isinstance(resource, Recording) else _RECORDINGS[-1]
    calls = recording.calls
    for call in calls:
        if "value" in call:
            call["value"] = "RAW itself" if call["value"] is RAW else call["value"]
    return calls


@pytest.mark.parametrize(
    "manager",
    [
        pytest.param(Recording, id="io-manager-instance"),
        pytest.param(
            lambda: registered_recording_io_manager.configured({"tag": "x"}),
            id="configured-io-manager-definition",
        ),
    ],
)
def test_wrapped_manager_receives_the_same_context_and_value(
    manager: Callable[[], object],
) -> None:
    plain = _calls_through(manager, wrapped=False)
    wrapped = _calls_through(manager, wrapped=True)

    assert [call["call"] for call in plain] == ["output", "input"]
    assert plain[0]["value"] == "RAW itself"
    assert plain[0]["partition_key"] == DAY_1
    assert wrapped == plain


def test_io_manager_definition_with_default_config_sees_its_config() -> None:
    @dg.asset
    def one() -> int:
        return 1

    seen: dict[str, Any] = {}

    class Checking(Recording):
        def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
            seen["config"] = context.resource_config

    @dg.io_manager(config_schema={"tag": dg.Field(str, default_value="default")})
    def checking(_: dg.InitResourceContext) -> Checking:
        return Checking()

    materialize([one], wrap(checking))

    assert seen["config"] == {"tag": "default"}


# Quarantine writes: to quarantine_io_manager when set, under the same partition key.


def test_quarantine_write_reaches_the_quarantine_manager_with_the_partition_key(
    warehouse: Path,
) -> None:
    key = multi_key(DAY_2, "us")
    frame = orders_frame(DAY_2, "us", invalid=2)
    orders = orders_asset({key: frame}, partitions_def=MULTI, metadata={"partition_expr": BY_CELL})
    recording = Recording()

    result = materialize([orders], wrap(parquet(warehouse), recording), partition_key=key)

    ((call),) = recording.calls
    assert call["asset_key"] == dg.AssetKey("orders_quarantine")
    assert call["partition_key"] == key
    assert call["definition_metadata"]["partition_expr"] == BY_CELL  # the table's, reused
    assert call["step_key"] == "orders"
    assert_quarantine(call["value"], frame)
    assert files_under(warehouse) == {f"orders/{DAY_2}/us.parquet"}
    metadata = materialization_metadata(result, orders.key)
    # A manager that reports no location leaves the asset key as the address; the metadata
    # it logged for the quarantine write does not reach the table's materialization.
    assert metadata[ADDRESS] == "orders_quarantine"
    assert "recording/calls" not in metadata
    assert metadata["path"] == str(warehouse / "orders" / DAY_2 / "us.parquet")


@pytest.mark.parametrize(
    ("partitions_def", "key_prefix", "partition_key", "table_file", "quarantine_file"),
    [
        (None, None, None, "orders.parquet", "orders_quarantine.parquet"),
        (
            None,
            ["sales", "eu"],
            None,
            "sales/eu/orders.parquet",
            "sales/eu/orders_quarantine.parquet",
        ),
        (
            DAILY,
            "sales",
            DAY_1,
            f"sales/orders/{DAY_1}.parquet",
            f"sales/orders_quarantine/{DAY_1}.parquet",
        ),
        (
            MULTI,
            None,
            multi_key(DAY_1, "eu"),
            f"orders/{DAY_1}/eu.parquet",
            f"orders_quarantine/{DAY_1}/eu.parquet",
        ),
    ],
    ids=["unpartitioned", "key-prefix", "daily-key-prefix", "multi"],
)
def test_parquet_quarantine_goes_to_its_own_base_dir(
    warehouse: Path,
    restricted: Path,
    frame: pl.DataFrame,
    partitions_def: dg.PartitionsDefinition[str] | None,
    key_prefix: str | list[str] | None,
    partition_key: str | None,
    table_file: str,
    quarantine_file: str,
) -> None:
    key = UNPARTITIONED if partition_key is None else partition_key
    orders = orders_asset({key: frame}, partitions_def=partitions_def, key_prefix=key_prefix)

    result = materialize(
        [orders], wrap(parquet(warehouse), parquet(restricted)), partition_key=partition_key
    )

    assert files_under(warehouse) == {table_file}
    assert files_under(restricted) == {quarantine_file}
    assert_table(pl.read_parquet(warehouse / table_file), frame)
    assert_quarantine(pl.read_parquet(restricted / quarantine_file), frame)
    metadata = materialization_metadata(result, orders.key)
    assert metadata[ADDRESS] == str(restricted / quarantine_file)
    assert metadata["path"] == str(warehouse / table_file)


@pytest.mark.parametrize(
    ("separate", "partitions_def", "metadata", "partition_key", "tables", "quarantines", "address"),
    [
        (
            "file",
            None,
            None,
            None,
            {"sales.orders"},
            {"sales.orders_quarantine"},
            "sales.orders_quarantine",
        ),
        (
            "schema",
            DAILY,
            {"partition_expr": "day"},
            DAY_1,
            {"public.orders", "restricted.orders_quarantine"},
            None,
            "restricted.orders_quarantine",
        ),
        (
            "file",
            MULTI,
            {"partition_expr": BY_CELL},
            multi_key(DAY_1, "eu"),
            {"public.orders"},
            {"public.orders_quarantine"},
            "public.orders_quarantine",
        ),
    ],
    ids=["other-file-key-prefix", "other-schema-daily", "other-file-multi"],
)
def test_duckdb_quarantine_goes_to_its_own_database_or_schema(
    warehouse: Path,
    restricted: Path,
    frame: pl.DataFrame,
    separate: str,
    partitions_def: dg.PartitionsDefinition[str] | None,
    metadata: dict[str, Any] | None,
    partition_key: str | None,
    tables: set[str],
    quarantines: set[str] | None,
    address: str,
) -> None:
    database, quarantine_database = warehouse / "w.duckdb", restricted / "q.duckdb"
    quarantine = duck(quarantine_database) if separate == "file" else duck(database, "restricted")
    key = UNPARTITIONED if partition_key is None else partition_key
    orders = orders_asset(
        {key: frame},
        partitions_def=partitions_def,
        key_prefix="sales" if partitions_def is None else None,
        metadata=metadata,
    )

    result = materialize([orders], wrap(duck(database), quarantine), partition_key=partition_key)

    assert duckdb_tables(database) == tables
    assert duckdb_tables(quarantine_database) == (quarantines or set())
    table_name = next(t for t in tables if t.endswith(".orders"))
    assert_table(duckdb_frame(database, table_name), frame)
    stored_in = quarantine_database if separate == "file" else database
    assert_quarantine(duckdb_frame(stored_in, address), frame)
    # `schema.table`: no database path, so nothing about the connection leaks.
    assert materialization_metadata(result, orders.key)[ADDRESS] == address


@pytest.mark.parametrize("kind", ["parquet", "duckdb"])
def test_quarantine_defaults_to_the_wrapped_manager(
    warehouse: Path, frame: pl.DataFrame, kind: str
) -> None:
    database = warehouse / "w.duckdb"
    orders = orders_asset({UNPARTITIONED: frame})

    result = materialize(
        [orders], wrap(parquet(warehouse) if kind == "parquet" else duck(database))
    )

    address = materialization_metadata(result, orders.key)[ADDRESS]
    if kind == "parquet":
        assert files_under(warehouse) == {"orders.parquet", "orders_quarantine.parquet"}
        assert_quarantine(pl.read_parquet(warehouse / "orders_quarantine.parquet"), frame)
        assert address == str(warehouse / "orders_quarantine.parquet")
    else:
        assert duckdb_tables(database) == {"public.orders", "public.orders_quarantine"}
        assert_quarantine(duckdb_frame(database, "public.orders_quarantine"), frame)
        assert address == "public.orders_quarantine"


def test_rerun_of_a_cell_replaces_only_its_files_in_both_base_dirs(
    warehouse: Path, restricted: Path
) -> None:
    a, b = multi_key(DAY_1, "eu"), multi_key(DAY_1, "us")
    first = orders_frame(DAY_1, "eu", tag="first")
    second = orders_frame(DAY_1, "eu", tag="second", valid=1, invalid=2)
    other = orders_frame(DAY_1, "us", tag="other")
    frames: dict[str, pl.DataFrame] = {}
    orders = orders_asset(frames, partitions_def=MULTI)

    rerun_first_partition(
        orders,
        frames,
        wrap(parquet(warehouse), parquet(restricted)),
        first=(a, first, second),
        others=[(b, other)],
    )

    assert files_under(warehouse) == {f"orders/{DAY_1}/eu.parquet", f"orders/{DAY_1}/us.parquet"}
    assert files_under(restricted) == {
        f"orders_quarantine/{DAY_1}/eu.parquet",
        f"orders_quarantine/{DAY_1}/us.parquet",
    }
    assert_table(pl.read_parquet(warehouse / f"orders/{DAY_1}/eu.parquet"), second)
    assert_quarantine(pl.read_parquet(restricted / f"orders_quarantine/{DAY_1}/eu.parquet"), second)
    assert_table(pl.read_parquet(warehouse / f"orders/{DAY_1}/us.parquet"), other)
    assert_quarantine(pl.read_parquet(restricted / f"orders_quarantine/{DAY_1}/us.parquet"), other)


def test_rerun_of_a_day_replaces_only_its_rows_in_both_databases(
    warehouse: Path, restricted: Path
) -> None:
    database, quarantine_database = warehouse / "w.duckdb", restricted / "q.duckdb"
    first = orders_frame(DAY_1, tag="first")
    second = orders_frame(DAY_1, tag="second", valid=1, invalid=2)
    other = orders_frame(DAY_2, tag="other")
    frames: dict[str, pl.DataFrame] = {}
    orders = orders_asset(frames, partitions_def=DAILY, metadata={"partition_expr": "placed_at"})

    rerun_first_partition(
        orders,
        frames,
        wrap(duck(database), duck(quarantine_database, "restricted")),
        first=(DAY_1, first, second),
        others=[(DAY_2, other)],
    )

    assert duckdb_tables(database) == {"public.orders"}
    assert duckdb_tables(quarantine_database) == {"restricted.orders_quarantine"}
    day_1, day_2 = dt.date.fromisoformat(DAY_1), dt.date.fromisoformat(DAY_2)
    assert_table(duckdb_frame(database, "public.orders", day=day_1), second)
    assert_table(duckdb_frame(database, "public.orders", day=day_2), other)
    quarantine = "restricted.orders_quarantine"
    assert_quarantine(duckdb_frame(quarantine_database, quarantine, day=day_1), second)
    assert_quarantine(duckdb_frame(quarantine_database, quarantine, day=day_2), other)
    assert duckdb_frame(quarantine_database, quarantine).height == 3


# Quarantine reads: a `quarantine_spec` input is loaded by quarantine_io_manager.


def test_downstream_assets_read_the_quarantine_from_its_own_base_dir(
    warehouse: Path, restricted: Path
) -> None:
    seen: dict[str, Any] = {}
    frames = {DAY_1: orders_frame(DAY_1), DAY_2: orders_frame(DAY_2, invalid=2)}
    orders = orders_asset(frames, partitions_def=DAILY)

    @dg.asset(partitions_def=DAILY, deps=[orders])
    def triage_eager(orders_quarantine: pl.DataFrame) -> None:
        seen["eager"] = orders_quarantine

    @dg.asset(partitions_def=DAILY, deps=[orders])
    def triage_lazy(orders_quarantine: pl.LazyFrame) -> None:
        seen["lazy"] = orders_quarantine

    @dg.asset(partitions_def=DAILY)
    def table_reader(orders: pl.DataFrame) -> None:
        seen["table"] = orders

    @dg.asset
    def rollup(orders_quarantine: dict[str, pl.LazyFrame]) -> None:
        seen["rollup"] = orders_quarantine

    assets = [orders, dd.quarantine_spec(Orders, orders)]
    assets += [triage_eager, triage_lazy, table_reader, rollup]
    manager = wrap(parquet(warehouse), parquet(restricted))
    partitioned = [orders.key, triage_eager.key, triage_lazy.key, table_reader.key]

    for day in (DAY_1, DAY_2):
        materialize(assets, manager, partition_key=day, selection=partitioned)
        stored = pl.read_parquet(restricted / "orders_quarantine" / f"{day}.parquet")
        assert_quarantine(stored, frames[day])
        assert_frame_equal(seen["eager"], stored)
        assert_frame_equal(seen["lazy"].collect(), stored)
        assert_frame_equal(seen["table"], pl.read_parquet(warehouse / "orders" / f"{day}.parquet"))
    materialize(assets, manager, selection=[rollup.key])

    assert set(seen["rollup"]) == {DAY_1, DAY_2}
    for day, lazy in seen["rollup"].items():
        assert_quarantine(lazy.collect(), frames[day])
    assert not any(name.startswith("orders_quarantine") for name in files_under(warehouse))


def test_downstream_asset_reads_its_partition_from_the_quarantine_database(
    warehouse: Path, restricted: Path
) -> None:
    seen: dict[str, Any] = {}
    database, quarantine_database = warehouse / "w.duckdb", restricted / "q.duckdb"
    frames = {DAY_1: orders_frame(DAY_1), DAY_2: orders_frame(DAY_2, invalid=2)}
    orders = orders_asset(frames, partitions_def=DAILY, metadata={"partition_expr": "day"})

    @dg.asset(partitions_def=DAILY, deps=[orders])
    def triage(
        context: dg.AssetExecutionContext, orders_quarantine: pl.DataFrame, orders: pl.DataFrame
    ) -> None:
        seen[context.partition_key] = (orders_quarantine, orders)

    manager = wrap(duck(database), duck(quarantine_database, "restricted"))
    for day in (DAY_1, DAY_2):
        materialize(
            [orders, dd.quarantine_spec(Orders, orders), triage], manager, partition_key=day
        )

    assert duckdb_tables(database) == {"public.orders"}
    assert duckdb_tables(quarantine_database) == {"restricted.orders_quarantine"}
    for day in (DAY_1, DAY_2):
        date = dt.date.fromisoformat(day)
        stored = duckdb_frame(quarantine_database, "restricted.orders_quarantine", day=date)
        assert_quarantine(stored, frames[day])
        quarantine, table = seen[day]
        assert_frame_equal(quarantine.sort("order_id"), stored)
        assert_table(table, frames[day])


# An asset of the user's own named `foo_quarantine` is ordinary.


@pytest.mark.parametrize("kind", ["parquet", "duckdb"])
def test_own_asset_named_like_a_quarantine_passes_through(
    warehouse: Path, restricted: Path, frame: pl.DataFrame, kind: str
) -> None:
    seen: dict[str, Any] = {}
    clean = valid_rows(frame)

    @dd.asset(Orders)  # no quarantine
    def foo() -> pl.DataFrame:
        return clean

    @dg.asset
    def foo_quarantine(foo: pl.DataFrame) -> pl.DataFrame:
        return foo.sort("order_id").head(1)

    @dg.asset
    def reader(foo_quarantine: pl.DataFrame) -> None:
        seen["read"] = foo_quarantine

    database = warehouse / "w.duckdb"
    if kind == "parquet":
        manager = wrap(parquet(warehouse), parquet(restricted))
    else:
        manager = wrap(duck(database), duck(restricted / "q.duckdb"))

    result = materialize([foo, foo_quarantine, reader], manager)

    expected = clean.sort("order_id").head(1)
    if kind == "parquet":
        assert files_under(warehouse) == {"foo.parquet", "foo_quarantine.parquet"}
        assert_frame_equal(pl.read_parquet(warehouse / "foo_quarantine.parquet"), expected)
    else:
        assert duckdb_tables(database) == {"public.foo", "public.foo_quarantine"}
        assert_frame_equal(duckdb_frame(database, "public.foo_quarantine"), expected)
    assert files_under(restricted) == set()
    assert_frame_equal(seen["read"], expected)
    assert ADDRESS not in materialization_metadata(result, foo_quarantine.key)
    assert ADDRESS not in materialization_metadata(result, foo.key)


# Managers the wrapper takes, and managers it refuses.


class FolderIOManager(dg.IOManager):
    """A plain IO manager: `<root>/<key path>[/<partition>].parquet`, logged as `path`."""

    def __init__(self, root: str) -> None:
        self.root = Path(root)

    def _path(self, context: dg.OutputContext | dg.InputContext) -> Path:
        path = self.root.joinpath(*context.asset_key.path)
        if context.has_partition_key:
            return path / f"{context.partition_key}.parquet"
        return path.with_suffix(".parquet")

    def handle_output(self, context: dg.OutputContext, obj: pl.DataFrame) -> None:
        path = self._path(context)
        path.parent.mkdir(parents=True, exist_ok=True)
        obj.write_parquet(path)
        context.add_output_metadata({"path": dg.MetadataValue.path(str(path))})

    def load_input(self, context: dg.InputContext) -> pl.DataFrame:
        return pl.read_parquet(self._path(context))


@dg.io_manager(config_schema={"root": str})
def folder_io_manager(init_context: dg.InitResourceContext) -> FolderIOManager:
    return FolderIOManager(init_context.resource_config["root"])


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(FolderIOManager, id="io-manager-instance"),
        pytest.param(
            lambda root: folder_io_manager.configured({"root": root}), id="io-manager-definition"
        ),
    ],
)
def test_plain_io_manager_stores_and_loads_the_quarantine(
    warehouse: Path, restricted: Path, make: Callable[[str], object]
) -> None:
    seen: dict[str, Any] = {}
    frame = orders_frame(DAY_2)
    orders = orders_asset({DAY_2: frame}, partitions_def=DAILY)

    @dg.asset(partitions_def=DAILY, deps=[orders])
    def triage(orders_quarantine: pl.DataFrame) -> None:
        seen["read"] = orders_quarantine

    result = materialize(
        [orders, dd.quarantine_spec(Orders, orders), triage],
        wrap(parquet(warehouse), make(str(restricted))),
        partition_key=DAY_2,
    )

    quarantine_file = restricted / "orders_quarantine" / f"{DAY_2}.parquet"
    assert files_under(restricted) == {f"orders_quarantine/{DAY_2}.parquet"}
    assert files_under(warehouse) == {f"orders/{DAY_2}.parquet"}
    assert_quarantine(pl.read_parquet(quarantine_file), frame)
    assert materialization_metadata(result, orders.key)[ADDRESS] == str(quarantine_file)
    assert_frame_equal(seen["read"], pl.read_parquet(quarantine_file))


def test_configured_duckdb_io_manager_definition_is_wrapped(
    warehouse: Path, frame: pl.DataFrame
) -> None:
    database = warehouse / "w.duckdb"
    orders = orders_asset({UNPARTITIONED: frame})
    legacy = duckdb_polars_io_manager.configured({"database": str(database)})

    materialize([orders], wrap(legacy))

    assert duckdb_tables(database) == {"public.orders", "public.orders_quarantine"}


class NotPolars:
    """A frame type no Polars code produces, standing in for a pandas DataFrame."""


class PandasLikeHandler(DbTypeHandler[NotPolars]):
    def handle_output(
        self, context: dg.OutputContext, table_slice: TableSlice, obj: NotPolars, connection: Any
    ) -> None:
        raise AssertionError("never called: the wrapper refuses the manager first")

    def load_input(
        self, context: dg.InputContext, table_slice: TableSlice, connection: Any
    ) -> NotPolars:
        raise AssertionError("never called")

    @property
    def supported_types(self) -> Sequence[type[object]]:
        return [NotPolars]


class PandasLikeDuckDBIOManager(DuckDBIOManager):
    @staticmethod
    def type_handlers() -> Sequence[DbTypeHandler[Any]]:
        return [PandasLikeHandler()]


def _refusal(io_manager: object, database_dir: Path) -> QuarantineIOManagerError:
    """Materialize through `io_manager`; return the error it raised while initializing."""
    orders = orders_asset({UNPARTITIONED: orders_frame(DAY_1)})
    with pytest.raises(dg.DagsterResourceFunctionError) as raised:
        materialize([orders], io_manager)
    assert files_under(database_dir) == set()  # the asset never ran, so nothing was written
    error = raised.value.__cause__
    assert isinstance(error, QuarantineIOManagerError)
    return error


def _pandas_like(warehouse: Path) -> PandasLikeDuckDBIOManager:
    return PandasLikeDuckDBIOManager(database=str(warehouse / "w.duckdb"))


@pytest.mark.parametrize(
    ("arguments", "argument", "names", "problem"),
    [
        (
            lambda w: {"io_manager": dd.QuarantineAwareIOManager(io_manager=parquet(w))},
            "io_manager",
            "QuarantineAwareIOManager",
            "wrapping the wrapper",
        ),
        (
            lambda w: {
                "io_manager": parquet(w),
                "quarantine_io_manager": dd.QuarantineAwareIOManager(io_manager=parquet(w)),
            },
            "quarantine_io_manager",
            "QuarantineAwareIOManager",
            "wrapping the wrapper",
        ),
        (
            lambda w: {"io_manager": DuckDBResource(database=str(w / "w.duckdb"))},
            "io_manager",
            "DuckDBResource",
            "not an IO manager",
        ),
        (
            lambda w: {"io_manager": parquet(w), "quarantine_io_manager": object()},
            "quarantine_io_manager",
            "object",
            "not an IO manager",
        ),
        (
            lambda w: {"io_manager": _pandas_like(w)},
            "io_manager",
            "PandasLikeDuckDBIOManager",
            "cannot store a pl.DataFrame",
        ),
        (
            lambda w: {"io_manager": parquet(w), "quarantine_io_manager": _pandas_like(w)},
            "quarantine_io_manager",
            "PandasLikeDuckDBIOManager",
            "cannot store a pl.DataFrame",
        ),
    ],
    ids=[
        "wrapper-as-io-manager",
        "wrapper-as-quarantine-manager",
        "resource-not-io-manager",
        "object-not-io-manager",
        "no-polars-handler",
        "no-polars-handler-for-quarantine",
    ],
)
def test_unusable_manager_fails_at_resource_init_naming_it(
    warehouse: Path,
    arguments: Callable[[Path], dict[str, object]],
    argument: str,
    names: str,
    problem: str,
) -> None:
    error = _refusal(dd.QuarantineAwareIOManager(**arguments(warehouse)), warehouse)

    # The class the user passed, not the manager a factory builds from it (DbIOManager).
    assert f"{names} (the {argument} argument)" in error.manager
    assert problem in error.problem
    assert error.manager in str(error)

"""`dd.multi_asset` through `PolarsParquetIOManager` and `DuckDBPolarsIOManager`, and both at once.

Each output's table and quarantine go through that output's own IO manager; a failing output
leaves every table of the step exactly as the previous run left it (the bytes of every parquet
file, the rows of every DuckDB table), while every output's checks report and the quarantines
that have rows are written.
"""

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely import errors

from .conftest import QUIET, shared_instance
from .two_managers import KINDS, TwoManagers, checks

pytestmark = pytest.mark.integration


class Customers(dy.Schema):
    """A customer."""

    customer_id = dy.String(primary_key=True)
    age = dy.Int64(min=0, nullable=True)


class Addresses(dy.Schema):
    """One address of a customer."""

    address_id = dy.Int64(primary_key=True)
    customer_id = dy.String(nullable=False)
    zip = dy.String(regex=r"^[0-9]{5}$")


class DatedCustomers(Customers):
    """A customer, on the day it was read: the partition's column."""

    day = dy.String()


class DatedAddresses(Addresses):
    """An address, on the day it was read: the partition's column."""

    day = dy.String()


CUSTOMERS = pl.DataFrame({"customer_id": ["c1", "c2", "c3"], "age": [30, -1, None]})
"""`c2` fails `age|min`."""
ADDRESSES = pl.DataFrame(
    {"address_id": [1, 2, 3], "customer_id": ["c1", "c1", "c3"], "zip": ["12345", "x", "54321"]}
)
"""Address 2 fails `zip|regex`."""
CLEAN_CUSTOMERS = pl.DataFrame({"customer_id": ["c1", "c3"], "age": [30, None]})
CLEAN_ADDRESSES = pl.DataFrame(
    {"address_id": [1, 3], "customer_id": ["c1", "c3"], "zip": ["12345", "54321"]}
)
ALL_INVALID_ADDRESSES = pl.DataFrame({"address_id": [7], "customer_id": ["c1"], "zip": ["no"]})
WRONG_ADDRESSES = pl.DataFrame({"address_id": ["7"], "customer_id": ["c1"], "zip": ["12345"]})


class Storage(TwoManagers):
    """`customers` and `addresses`; with `both`, `customers` on parquet, `addresses` in DuckDB."""

    def __init__(self, kind: str, root: Path) -> None:
        super().__init__(kind, root, ("customers", "addresses"))

    def out(self, schema: type[dy.Schema], name: str, **settings: Any) -> dd.AssetOut:
        return dd.AssetOut(schema, io_manager_key=self.manager_of(name), **settings)


@pytest.fixture(params=KINDS)
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    return Storage(request.param, tmp_path)


def customers_and_addresses(
    storage: Storage,
    frames: Mapping[str, object],
    *,
    customers: Mapping[str, Any] | None = None,
    addresses: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dg.AssetsDefinition:
    @dd.multi_asset(
        outs={
            "customers": storage.out(Customers, "customers", **_or_quarantine(customers)),
            "addresses": storage.out(Addresses, "addresses", **_or_quarantine(addresses)),
        },
        **kwargs,
    )
    def customers_and_addresses() -> Mapping[str, object]:
        return frames

    return customers_and_addresses


def _or_quarantine(settings: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return {"quarantine": True} if settings is None else settings


def run(
    storage: Storage, assets: list[Any], *, expect_success: bool | None = True, **kwargs: Any
) -> dg.ExecuteInProcessResult:
    """Materialize `assets` with both IO managers; `expect_success=None` accepts either end."""
    result = dg.materialize(
        assets,
        resources=storage.resources(),
        run_config=QUIET,
        instance=shared_instance(),
        raise_on_error=False,
        **kwargs,
    )
    if expect_success is not None:
        assert result.success is expect_success
    return result


def sorted_rows(frame: pl.DataFrame | None, columns: list[str]) -> list[tuple[Any, ...]]:
    assert frame is not None
    return sorted(frame.select(columns).rows(), key=repr)


def test_every_output_writes_its_valid_rows_and_its_own_quarantine(storage: Storage) -> None:
    result = run(
        storage,
        [customers_and_addresses(storage, {"customers": CUSTOMERS, "addresses": ADDRESSES})],
    )
    cols = {"customers": list(Customers.columns()), "addresses": list(Addresses.columns())}
    assert sorted_rows(storage.read("customers"), cols["customers"]) == sorted_rows(
        CLEAN_CUSTOMERS, cols["customers"]
    )
    assert sorted_rows(storage.read("addresses"), cols["addresses"]) == sorted_rows(
        CLEAN_ADDRESSES, cols["addresses"]
    )
    customers_quarantine = storage.read("customers_quarantine")
    addresses_quarantine = storage.read("addresses_quarantine")
    assert customers_quarantine is not None
    assert addresses_quarantine is not None
    assert customers_quarantine["customer_id"].to_list() == ["c2"]
    assert customers_quarantine["dy_rule__age__min"].to_list() == ["invalid"]
    assert addresses_quarantine["address_id"].to_list() == [2]
    assert addresses_quarantine["dy_rule__zip__regex"].to_list() == ["invalid"]
    found = checks(result)
    assert found[("customers", "dy_rule__age__min")] is False
    assert found[("addresses", "dy_rule__zip__regex")] is False
    assert found[("addresses", "dy_rule__primary_key")] is True


@pytest.mark.parametrize(
    ("addresses", "settings", "error"),
    [
        (ALL_INVALID_ADDRESSES, {"quarantine": True}, "NoValidRowsError"),
        (ADDRESSES, {}, "ValidationAbortError"),
        (WRONG_ADDRESSES, {"quarantine": True}, "ColumnSchemaError"),
    ],
    ids=["no-valid-rows", "abort", "column-mismatch"],
)
def test_a_failing_output_leaves_every_table_of_the_step_unchanged(
    storage: Storage, addresses: pl.DataFrame, settings: dict[str, Any], error: str
) -> None:
    clean = {"customers": CLEAN_CUSTOMERS, "addresses": CLEAN_ADDRESSES}
    run(storage, [customers_and_addresses(storage, clean, addresses=settings)])
    before = storage.snapshot()
    assert all(value is not None for value in before.values())

    failing = {"customers": CUSTOMERS, "addresses": addresses}
    result = run(
        storage,
        [customers_and_addresses(storage, failing, addresses=settings)],
        expect_success=False,
    )

    assert storage.snapshot() == before
    assert result.get_asset_materialization_events() == []
    quarantined = storage.read("customers_quarantine")
    assert quarantined is not None
    assert quarantined["customer_id"].to_list() == ["c2"]
    found = checks(result)
    assert found[("customers", "dy_rule__age__min")] is False
    assert ("addresses", "dy_schema__columns") in found
    failure = result.failure_data_for_node("customers_and_addresses")
    assert failure is not None
    assert failure.error is not None
    cause = failure.error.cause or failure.error
    assert cause.cls_name == error
    assert "No table of the step was written" in cause.message


def test_a_subset_run_writes_only_the_selected_output(storage: Storage) -> None:
    asset = customers_and_addresses(
        storage,
        {"customers": CUSTOMERS, "addresses": WRONG_ADDRESSES},
        can_subset=True,
    )
    result = run(storage, [asset], selection=[dg.AssetKey("customers")])
    assert storage.read("customers") is not None
    assert storage.read("addresses") is None
    assert storage.read("addresses_quarantine") is None
    assert {asset for asset, _ in checks(result)} == {"customers"}


def test_each_partition_is_written_and_quarantined_on_its_own(storage: Storage) -> None:
    days = dg.StaticPartitionsDefinition(["2026-01-01", "2026-01-02"])
    by_day = {"partition_expr": "day"}

    @dd.multi_asset(
        outs={
            "customers": storage.out(DatedCustomers, "customers", quarantine=True, metadata=by_day),
            "addresses": storage.out(DatedAddresses, "addresses", quarantine=True, metadata=by_day),
        },
        partitions_def=days,
    )
    def customers_and_addresses(context: dg.AssetExecutionContext) -> dict[str, pl.DataFrame]:
        day = pl.lit(context.partition_key).alias("day")
        return {
            "customers": CUSTOMERS.with_columns(day),
            "addresses": ADDRESSES.with_columns(day),
        }

    for day in ("2026-01-01", "2026-01-02"):
        run(storage, [customers_and_addresses], partition_key=day)
    if storage.manager_of("addresses") == "duckdb":
        stored = storage.read("addresses_quarantine")
        assert stored is not None
        assert sorted(stored["day"]) == ["2026-01-01", "2026-01-02"]
    if storage.manager_of("customers") == "parquet":
        assert (storage.parquet / "customers_quarantine" / "2026-01-02.parquet").exists()
        assert (storage.parquet / "customers" / "2026-01-01.parquet").exists()


def test_a_downstream_asset_reads_each_outputs_quarantine(storage: Storage) -> None:
    asset = customers_and_addresses(storage, {"customers": CUSTOMERS, "addresses": ADDRESSES})

    @dg.asset(
        # The quarantine is stored by its output's IO manager, so it is read through it.
        ins={
            "bad_customers": dg.AssetIn(
                "customers_quarantine", input_manager_key=storage.manager_of("customers")
            ),
            "bad_addresses": dg.AssetIn(
                "addresses_quarantine", input_manager_key=storage.manager_of("addresses")
            ),
        },
        deps=[dg.AssetKey("customers"), dg.AssetKey("addresses")],
        io_manager_key="parquet",
    )
    def review(bad_customers: pl.DataFrame, bad_addresses: pl.DataFrame) -> pl.DataFrame:
        return pl.DataFrame({"bad": [bad_customers.height, bad_addresses.height]})

    result = run(
        storage,
        [
            asset,
            dd.quarantine_spec(Customers, asset, asset_key="customers"),
            dd.quarantine_spec(Addresses, asset, asset_key="addresses"),
            review,
        ],
    )
    assert result.output_for_node("review")["bad"].to_list() == [1, 1]


def test_quarantine_aware_io_manager_stores_an_outputs_quarantine_apart(tmp_path: Path) -> None:
    restricted = tmp_path / "restricted"

    @dd.multi_asset(
        outs={
            "customers": dd.AssetOut(Customers, quarantine=True),
            "addresses": dd.AssetOut(Addresses, quarantine=True, io_manager_key="plain"),
        }
    )
    def customers_and_addresses() -> dict[str, pl.DataFrame]:
        return {"customers": CUSTOMERS, "addresses": ADDRESSES}

    result = dg.materialize(
        [customers_and_addresses],
        resources={
            "io_manager": dd.QuarantineAwareIOManager(
                io_manager=PolarsParquetIOManager(base_dir=str(tmp_path / "tables")),
                quarantine_io_manager=PolarsParquetIOManager(base_dir=str(restricted)),
            ),
            "plain": PolarsParquetIOManager(base_dir=str(tmp_path / "tables")),
        },
        run_config=QUIET,
        instance=shared_instance(),
    )
    assert (restricted / "customers_quarantine.parquet").exists()
    assert not (tmp_path / "tables" / "customers_quarantine.parquet").exists()
    assert (tmp_path / "tables" / "addresses_quarantine.parquet").exists()
    (customers,) = [
        e
        for e in result.get_asset_materialization_events()
        if e.asset_key == dg.AssetKey("customers")
    ]
    assert customers.materialization is not None
    address = customers.materialization.metadata["dataframely/quarantine_address"].value
    assert str(restricted) in str(address)


def test_a_direct_call_writes_one_quarantine_file_per_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "quarantine"
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", str(directory))
    storage = Storage("parquet", tmp_path)
    asset = customers_and_addresses(storage, {"customers": CUSTOMERS, "addresses": ADDRESSES})
    events = list(asset(dg.build_asset_context()))
    assert len([e for e in events if isinstance(e, dg.MaterializeResult)]) == 2
    assert sorted(p.name for p in directory.rglob("*.parquet")) == [
        "addresses_quarantine.parquet",
        "customers_quarantine.parquet",
    ]
    assert pl.read_parquet(directory / "addresses_quarantine.parquet")["address_id"].to_list() == [
        2
    ]


def test_a_direct_call_of_a_failing_output_raises_its_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", str(tmp_path / "q"))
    storage = Storage("parquet", tmp_path)
    asset = customers_and_addresses(
        storage, {"customers": CUSTOMERS, "addresses": ALL_INVALID_ADDRESSES}
    )
    with pytest.raises(errors.NoValidRowsError):
        list(asset(dg.build_asset_context()))


# --- no row lost ---------------------------------------------------------------------------

CUSTOMER_ROWS = st.lists(
    st.tuples(st.sampled_from(["c1", "c2", "c3", None]), st.sampled_from([-1, 0, 5, None])),
    max_size=12,
)
ADDRESS_ROWS = st.lists(
    st.tuples(
        st.sampled_from([1, 2, 3, None]),
        st.sampled_from(["c1", None]),
        st.sampled_from(["12345", "x", None]),
    ),
    max_size=12,
)


def _frame(rows: list[tuple[Any, ...]], schema: type[dy.Schema]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=schema.create_empty().schema, orient="row")


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(customer_rows=CUSTOMER_ROWS, address_rows=ADDRESS_ROWS)
def test_no_row_of_any_output_is_lost_or_duplicated(
    tmp_path_factory: pytest.TempPathFactory,
    customer_rows: list[tuple[Any, ...]],
    address_rows: list[tuple[Any, ...]],
) -> None:
    storage = Storage("both", tmp_path_factory.mktemp("no-row-lost"))
    frames = {
        "customers": _frame(customer_rows, Customers),
        "addresses": _frame(address_rows, Addresses),
    }
    asset = customers_and_addresses(storage, frames)
    result = run(storage, [asset], expect_success=None)
    written = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    for name, schema in (("customers", Customers), ("addresses", Addresses)):
        columns = list(schema.columns())
        arrived = Counter(frames[name].select(columns).rows())
        table = storage.read(name)
        quarantine = storage.read(f"{name}_quarantine")
        in_table = Counter(table.select(columns).rows()) if table is not None else Counter()
        in_quarantine = (
            Counter(quarantine.select(columns).rows()) if quarantine is not None else Counter()
        )
        if result.success:
            assert name in written
            assert in_table + in_quarantine == arrived, name
        else:
            # The atomicity rule: no table at all, and a quarantine holds only rows that arrived.
            assert written == set()
            assert table is None
            assert not in_quarantine - arrived, name

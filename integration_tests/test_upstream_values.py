"""The raw rows a `dd.asset` reads: no value of a column it marks sensitive in the event log.

The usual pipeline is a plain `@dg.asset` returning the raw rows and a `dd.asset` reading them,
whose schema marks the personal columns. The plain asset has no schema, so its IO manager
knows nothing of them. The whole stored event log of a run of both (every event, its metadata
and message, every log line at every level) is scanned for each raw name and e-mail address,
in each setup the settings page covers: dagster-polars' `PolarsParquetIOManager` handed a
`LazyFrame` by the plain asset, the same manager inside `QuarantineAwareIOManager` (plain and
staged) handed a `DataFrame`, and dagster-duckdb-polars' `DuckDBPolarsIOManager`, bare and
wrapped. The setups it does not cover are run too: their values are found, and the step that
reads them says so.
"""

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd

from .conftest import QUIET, duckdb_stored, found_in_event_log, shared_instance

pytestmark = pytest.mark.integration


class Contacts(dy.Schema):
    contact_id = dy.String(primary_key=True)
    name = dy.String(metadata={"pii": True})
    email = dy.String(regex=r"^[^@\s]+@[^@\s]+$", metadata={"pii": True})
    city = dy.String()


RAW = pl.DataFrame(
    {
        "contact_id": ["c-1", "c-2", "c-3", "c-4"],
        "name": ["Ann Quillfeather", "Bob Marrowdale", "Cyd Thornwick", "Dee Larkspire"],
        "email": [
            "ann.quill@private.example",
            "bob-at-private",
            "cyd.thorn@private.example",
            "dee.lark@private.example",
        ],
        "city": ["Ravenna", "Trondheim", "Cuzco", "Valparaiso"],
    }
)
"""Row 2's e-mail fails the regex: three valid rows, one quarantined."""

SENSITIVE = [*RAW["name"], *RAW["email"]]


def _pipeline(*, lazy: bool) -> list[Any]:
    """The plain asset of raw rows (a `DataFrame` or a `LazyFrame`), the typed `dd.asset`."""
    if lazy:

        @dg.asset(name="raw_contacts")
        def raw_lazy() -> pl.LazyFrame:
            return RAW.lazy()

        raw = raw_lazy
    else:

        @dg.asset(name="raw_contacts")
        def raw_eager() -> pl.DataFrame:
            return RAW

        raw = raw_eager

    @dd.asset(quarantine=True)
    def contacts(raw_contacts: pl.DataFrame) -> Annotated[pl.DataFrame, Contacts]:
        return raw_contacts

    return [raw, contacts, dd.quarantine_spec(Contacts, contacts)]


def _parquet(root: Path) -> PolarsParquetIOManager:
    return PolarsParquetIOManager(base_dir=str(root / "warehouse"))


def _duckdb(root: Path) -> DuckDBPolarsIOManager:
    return DuckDBPolarsIOManager(database=str(root / "warehouse.duckdb"))


COVERED: dict[str, tuple[Callable[[Path], Any], bool]] = {
    "parquet, raw LazyFrame": (_parquet, True),
    "wrapped parquet": (lambda root: dd.QuarantineAwareIOManager(io_manager=_parquet(root)), False),
    "wrapped parquet, staged": (
        lambda root: dd.QuarantineAwareIOManager(io_manager=_parquet(root), staged_writes=True),
        False,
    ),
    "duckdb": (_duckdb, False),
    "wrapped duckdb": (lambda root: dd.QuarantineAwareIOManager(io_manager=_duckdb(root)), False),
}
"""Each setup the settings page covers: the manager, and whether the plain asset is lazy."""


def _run(root: Path, manager: Any, *, lazy: bool) -> tuple[bool, list[dg.EventLogEntry]]:
    instance = shared_instance()
    result = dg.materialize(
        _pipeline(lazy=lazy),
        resources={"io_manager": manager},
        run_config=QUIET,
        instance=instance,
        raise_on_error=False,
    )
    return result.success, list(instance.all_logs(result.run_id))


def _warnings(entries: list[dg.EventLogEntry]) -> list[str]:
    return [
        e.user_message
        for e in entries
        if e.level >= logging.WARNING and "dagster-dataframely" in e.user_message
    ]


@pytest.mark.parametrize("setup", list(COVERED))
def test_no_raw_sensitive_value_of_a_plain_upstream_asset_reaches_the_event_log(
    tmp_path: Path, setup: str
) -> None:
    manager, lazy = COVERED[setup]
    success, entries = _run(tmp_path, manager(tmp_path), lazy=lazy)
    assert success
    # The scan covers the whole log: both assets' events, the checks, the manager's own lines.
    materialized = {
        e.dagster_event.asset_key
        for e in entries
        if e.dagster_event is not None
        and e.dagster_event_type == dg.DagsterEventType.ASSET_MATERIALIZATION
    }
    assert materialized == {dg.AssetKey("raw_contacts"), dg.AssetKey("contacts")}
    if "parquet" in setup:  # the manager's own "Writing file at" lines
        assert any(e.level == logging.DEBUG and not e.is_dagster_event for e in entries)
    assert found_in_event_log(entries, SENSITIVE) == []
    assert _warnings(entries) == []
    # It is not blind: the samples of the validated asset show the other columns.
    assert found_in_event_log(entries, ["Ravenna", "c-2"]) == ["Ravenna", "c-2"]
    # The raw asset, the table and its quarantine are stored with every value.
    if "duckdb" in setup:
        database = tmp_path / "warehouse.duckdb"
        raw = duckdb_stored(database, "raw_contacts")
        quarantined = duckdb_stored(database, "contacts_quarantine")
        assert raw is not None
        assert quarantined is not None
    else:
        raw = pl.read_parquet(tmp_path / "warehouse" / "raw_contacts.parquet")
        quarantined = pl.read_parquet(tmp_path / "warehouse" / "contacts_quarantine.parquet")
    assert sorted(raw["email"]) == sorted(RAW["email"])
    assert quarantined["name"].to_list() == ["Bob Marrowdale"]


NOT_COVERED: dict[str, Callable[[Path], Any]] = {
    "parquet, raw DataFrame": _parquet,
    "wrapped parquet, plain_asset_previews=True": lambda root: dd.QuarantineAwareIOManager(
        io_manager=_parquet(root), plain_asset_previews=True
    ),
}
"""A bare dagster-polars manager handed a `DataFrame`, and the wrapper told to keep previews."""


@pytest.mark.parametrize("setup", list(NOT_COVERED))
def test_where_a_plain_assets_manager_records_its_rows_the_reading_step_says_so(
    tmp_path: Path, setup: str
) -> None:
    success, entries = _run(tmp_path, NOT_COVERED[setup](tmp_path), lazy=False)
    assert success
    # dagster-polars' `table` (the first rows) and `stats` (min and max) show them.
    assert found_in_event_log(entries, SENSITIVE) == sorted(SENSITIVE)
    (warning,) = _warnings(entries)
    assert "'raw_contacts': `table`, `stats` show 'email', 'name'" in warning
    assert "return a pl.LazyFrame from such an asset" in warning
    assert "dd.QuarantineAwareIOManager(io_manager=...)" in warning
    # The warning itself names keys and columns, never a value.
    assert not [value for value in SENSITIVE if value in warning]

"""What reaches the event log of a real run: no value the settings hide, no cell unbounded.

Every entry of each run's stored event log (events, their metadata, every log line at every
level) is scanned for the rows' values, through dagster-polars' `PolarsParquetIOManager` and
dagster-duckdb-polars' `DuckDBPolarsIOManager`, bare and inside `QuarantineAwareIOManager`.
A bare dagster-polars manager records its own `table` and `stats` on the materialization,
which the package cannot filter: there the scan checks that those two keys are the only place
a value appears, and that the run says so once.
"""

import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster._serdes import serialize_value
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

import dagster_dataframely as dd
from dagster_dataframely._model.shown_values import CELL_LIMIT

from .conftest import QUIET, shared_instance

pytestmark = pytest.mark.integration

MANAGER_VALUE_KEYS = ("table", "stats")
"""What a bare dagster-polars manager records that holds values, and the package cannot drop."""


class People(dy.Schema):
    person_id = dy.String(primary_key=True)
    email = dy.String(regex=r"^[^@]+@[^@]+$", metadata={"pii": True})
    salary = dy.Int64(min=0, metadata={"pii": True})
    city = dy.String()
    age = dy.Int64(min=0)


PEOPLE = pl.DataFrame(
    {
        "person_id": ["pid-alpha", "pid-beta", "pid-gamma", "pid-delta"],
        "email": [
            "ann@private.example",
            "bob-at-private",
            "cy@private.example",
            "dee@private.example",
        ],
        "salary": [918_273_645, 564_738_291, 192_837_465, 746_352_819],
        "city": ["Ravenna", "Trondheim", "Cuzco", "Valparaiso"],
        "age": [314_159_265, 271_828_182, -161_803_398, 141_421_356],
    }
)
"""Row 2 fails the email regex, row 3 a negative age: two valid rows, two invalid ones."""


def _texts(column: str, frame: pl.DataFrame = PEOPLE) -> list[str]:
    return [str(value) for value in frame[column]]


SENSITIVE = [*_texts("email"), *_texts("salary")]
EVERY_VALUE = [text for column in PEOPLE.columns for text in _texts(column)]
TEXT_VALUES = [*_texts("person_id"), *_texts("email"), *_texts("city")]


def _parquet(root: Path) -> PolarsParquetIOManager:
    return PolarsParquetIOManager(base_dir=str(root / "warehouse"))


def _duckdb(root: Path) -> DuckDBPolarsIOManager:
    return DuckDBPolarsIOManager(database=str(root / "warehouse.duckdb"))


MANAGERS: dict[str, Callable[[Path], Any]] = {
    "parquet": _parquet,
    "duckdb": _duckdb,
    "wrapped parquet": lambda root: dd.QuarantineAwareIOManager(io_manager=_parquet(root)),
    "wrapped parquet, staged": lambda root: dd.QuarantineAwareIOManager(
        io_manager=_parquet(root), staged_writes=True
    ),
    "wrapped duckdb": lambda root: dd.QuarantineAwareIOManager(io_manager=_duckdb(root)),
}
BARE_DAGSTER_POLARS = {"parquet"}


def _run(
    root: Path, manager: str, frame: pl.DataFrame = PEOPLE, **settings: Any
) -> tuple[dg.ExecuteInProcessResult, list[dg.EventLogEntry]]:
    """One run of `people` (and its quarantine spec), and its event log as stored."""

    @dd.asset(People, **{"quarantine": True, **settings})
    def people() -> pl.DataFrame:
        return frame

    assets: list[Any] = [people]
    if settings.get("quarantine", True):
        assets.append(dd.quarantine_spec(People, people))  # its writes become observations
    instance = shared_instance()
    result = dg.materialize(
        assets,
        resources={"io_manager": MANAGERS[manager](root)},
        run_config=QUIET,
        instance=instance,
        raise_on_error=False,
    )
    return result, list(instance.all_logs(result.run_id))


def _without_manager_values(entry: dg.EventLogEntry) -> Iterable[str]:
    """The entry as stored, but for the bare manager's `table` and `stats` (see the module)."""
    event = entry.dagster_event
    data = event.event_specific_data if event is not None else None
    metadata = getattr(getattr(data, "materialization", data), "metadata", None)
    if not metadata or not any(key in metadata for key in MANAGER_VALUE_KEYS):
        yield serialize_value(entry)
        return
    yield entry.user_message
    yield from (serialize_value(v) for k, v in metadata.items() if k not in MANAGER_VALUE_KEYS)


def _found(entries: list[dg.EventLogEntry], values: Iterable[str], manager: str) -> list[str]:
    """Each value found anywhere in the log, except in what a bare dagster-polars manager adds."""
    if manager in BARE_DAGSTER_POLARS:
        texts = [text for entry in entries for text in _without_manager_values(entry)]
    else:
        texts = [serialize_value(entry) for entry in entries]
    return sorted({value for value in values for text in texts if value in text})


def _warnings(entries: list[dg.EventLogEntry]) -> list[str]:
    return [
        e.user_message
        for e in entries
        if e.level >= logging.WARNING and "dagster-dataframely" in e.user_message
    ]


def _stored(root: Path, manager: str, name: str) -> pl.DataFrame:
    if "duckdb" in manager:
        import duckdb

        with duckdb.connect(str(root / "warehouse.duckdb"), read_only=True) as connection:
            return connection.execute(f"select * from public.{name} order by person_id").pl()
    return pl.read_parquet(root / "warehouse" / f"{name}.parquet").sort("person_id")


def _assert_manager_named_once(entries: list[dg.EventLogEntry], manager: str) -> None:
    """A bare dagster-polars manager gets exactly one warning naming its keys and the remedy."""
    warnings = _warnings(entries)
    if manager not in BARE_DAGSTER_POLARS:
        assert warnings == []
        return
    (warning,) = warnings
    assert "PolarsParquetIOManager records `table` (its first rows), `stats`" in warning
    assert "dd.QuarantineAwareIOManager(io_manager=...)" in warning


SAMPLES_OFF = {"row_sample": 0, "max_failure_samples": 0, "statistics": False}


@pytest.mark.parametrize("manager", list(MANAGERS))
def test_with_samples_off_no_value_of_a_row_reaches_the_event_log(
    tmp_path: Path, manager: str
) -> None:
    result, entries = _run(tmp_path, manager, **SAMPLES_OFF)
    assert result.success
    # The scan covers the whole log: the quarantine's observation, the debug lines, the checks.
    kinds = {entry.dagster_event_type for entry in entries}
    assert {
        dg.DagsterEventType.ASSET_OBSERVATION,
        dg.DagsterEventType.ASSET_CHECK_EVALUATION,
        dg.DagsterEventType.HANDLED_OUTPUT,
    } <= kinds
    if "parquet" in manager:  # the manager's own "Writing file at" line
        assert any(e.level == logging.DEBUG and not e.is_dagster_event for e in entries)
    assert _found(entries, EVERY_VALUE, manager) == []
    _assert_manager_named_once(entries, manager)
    # Every row is stored, with every value.
    stored = _stored(tmp_path, manager, "people")
    assert stored["salary"].to_list() == [918_273_645, 746_352_819]
    quarantined = _stored(tmp_path, manager, "people_quarantine")
    assert quarantined["email"].to_list() == ["bob-at-private", "cy@private.example"]


def test_a_bare_dagster_polars_manager_still_records_the_values_it_is_named_for(
    tmp_path: Path,
) -> None:
    """The scan above is not blind: the values are in the manager's own two keys."""
    _, entries = _run(tmp_path, "parquet", **SAMPLES_OFF)
    everything = [serialize_value(entry) for entry in entries]
    assert any("ann@private.example" in text for text in everything)


@pytest.mark.parametrize(
    ("manager", "frame", "error"),
    [
        ("parquet", PEOPLE.slice(1, 2), "NoValidRowsError"),
        ("wrapped parquet", PEOPLE.slice(1, 2), "NoValidRowsError"),
        ("duckdb", PEOPLE.slice(1, 2), "NoValidRowsError"),
        ("parquet", PEOPLE, "ValidationAbortError"),
    ],
    ids=["no valid rows, parquet", "no valid rows, wrapped", "no valid rows, duckdb", "abort"],
)
def test_a_failed_run_with_samples_off_shows_no_value_either(
    tmp_path: Path, manager: str, frame: pl.DataFrame, error: str
) -> None:
    quarantine = error == "NoValidRowsError"
    result, entries = _run(tmp_path, manager, frame, quarantine=quarantine, **SAMPLES_OFF)
    assert not result.success
    failure = result.failure_data_for_node("people")
    assert failure is not None
    assert failure.error is not None
    assert failure.error.cause is not None
    assert failure.error.cause.cls_name == error
    assert _found(entries, EVERY_VALUE, manager) == []


@pytest.mark.parametrize("manager", list(MANAGERS))
def test_a_sensitive_column_reaches_no_event_and_the_stored_rows_keep_it(
    tmp_path: Path, manager: str
) -> None:
    result, entries = _run(tmp_path, manager)  # samples and statistics on
    assert result.success
    assert _found(entries, SENSITIVE, manager) == []
    _assert_manager_named_once(entries, manager)
    # The samples still show the other columns.
    assert _found(entries, ["pid-alpha", "Trondheim"], manager) == ["Trondheim", "pid-alpha"]
    assert _stored(tmp_path, manager, "people")["email"].to_list() == [
        "ann@private.example",
        "dee@private.example",
    ]
    assert _stored(tmp_path, manager, "people_quarantine")["salary"].to_list() == [
        564_738_291,
        192_837_465,
    ]


@pytest.mark.parametrize("manager", ["wrapped parquet", "duckdb"])
def test_with_samples_off_and_statistics_on_only_numbers_of_unmarked_columns_show(
    tmp_path: Path, manager: str
) -> None:
    """The statistics show min, median and max of an unmarked numeric column, and nothing else."""
    result, entries = _run(tmp_path, manager, row_sample=0, max_failure_samples=0)
    assert result.success
    assert _found(entries, [*TEXT_VALUES, *SENSITIVE], manager) == []
    assert _found(entries, _texts("age"), manager) == ["141421356", "314159265"]


class Blobs(dy.Schema):
    id = dy.String(primary_key=True)
    text = dy.String(max_length=10)
    raw = dy.Binary()
    parts = dy.List(dy.String())


@pytest.mark.parametrize("manager", ["wrapped parquet", "duckdb", "parquet"])
def test_huge_cells_leave_every_event_under_the_bound_and_the_counts_exact(
    tmp_path: Path, manager: str
) -> None:
    """Two rows of 4 MB cells in a text, a binary and a nested column; the second invalid."""
    huge = "x" * 4_000_000
    frame = pl.DataFrame(
        {"id": ["i-1", "i-2"], "text": ["short", huge], "raw": [huge.encode()] * 2},
        schema={"id": pl.String, "text": pl.String, "raw": pl.Binary},
    ).with_columns(parts=pl.concat_list(pl.col("raw").cast(pl.String)))

    @dd.asset(Blobs, quarantine=True, check_granularity="schema")
    def blobs() -> pl.DataFrame:
        return frame

    instance = shared_instance()
    result = dg.materialize(
        [blobs],
        resources={"io_manager": MANAGERS[manager](tmp_path)},
        run_config=QUIET,
        instance=instance,
    )
    assert result.success
    for entry in instance.all_logs(result.run_id):
        size = sum(len(text) for text in _without_manager_values(entry))
        assert size < 100_000, (entry.dagster_event_type, size)
    (materialization,) = result.asset_materializations_for_node("blobs")
    metadata = materialization.metadata
    assert metadata["dagster/row_count"].value == 1
    assert metadata["dataframely/invalid_count"].value == 1
    (invalid,) = metadata["dataframely/invalid_sample"].value.records
    assert invalid.data["text"].endswith("…[cut: 4000000 characters]")
    if manager == "wrapped parquet":
        # The manager's own tables are kept, with the samples on, and cut as the package's are.
        for key in MANAGER_VALUE_KEYS:
            cells = [c for r in metadata[key].value.records for c in r.data.values()]
            assert max(len(str(cell)) for cell in cells) <= CELL_LIMIT + 40, key

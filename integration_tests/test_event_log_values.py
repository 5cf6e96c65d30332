"""What reaches the event log of a real run: no value the settings hide, no cell unbounded.

Every entry of each run's stored event log (events, their metadata, every log line at every
level) is scanned for the rows' values, through dagster-polars' `PolarsParquetIOManager` and
dagster-duckdb-polars' `DuckDBPolarsIOManager`, bare and inside `QuarantineAwareIOManager`.
A bare dagster-polars manager records its own `table` and `stats` of a `DataFrame`; an output
that hides values hands it a `LazyFrame` instead, of which it records only the path and the
column types, so no exemption is left: the scan covers every entry of every manager.
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
from hypothesis import HealthCheck, given, settings
from polars.testing.parametric import dataframes

import dagster_dataframely as dd
from dagster_dataframely._model.shown_values import CELL_LIMIT

from .conftest import QUIET, found_in_event_log, shared_instance

pytestmark = pytest.mark.integration

MANAGER_VALUE_KEYS = ("table", "stats")
"""What a bare dagster-polars manager records of a `DataFrame` that holds values."""


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


def _run(
    root: Path,
    manager: str,
    frame: pl.DataFrame = PEOPLE,
    *,
    schema: type[dy.Schema] = People,
    **settings: Any,
) -> tuple[dg.ExecuteInProcessResult, list[dg.EventLogEntry]]:
    """One run of `people` (and its quarantine spec), and its event log as stored."""

    @dd.asset(schema, name="people", **{"quarantine": True, **settings})
    def people() -> pl.DataFrame:
        return frame

    assets: list[Any] = [people]
    if settings.get("quarantine", True):
        assets.append(dd.quarantine_spec(schema, people))  # its writes become observations
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
    """The entry as stored, but for a manager's `table` and `stats` (for a size bound alone)."""
    event = entry.dagster_event
    data = event.event_specific_data if event is not None else None
    metadata = getattr(getattr(data, "materialization", data), "metadata", None)
    if not metadata or not any(key in metadata for key in MANAGER_VALUE_KEYS):
        yield serialize_value(entry)
        return
    yield entry.user_message
    yield from (serialize_value(v) for k, v in metadata.items() if k not in MANAGER_VALUE_KEYS)


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
    assert found_in_event_log(entries, EVERY_VALUE) == []
    assert _warnings(entries) == []  # every manager here is kept from showing a value
    # Every row is stored, with every value.
    stored = _stored(tmp_path, manager, "people")
    assert stored["salary"].to_list() == [918_273_645, 746_352_819]
    quarantined = _stored(tmp_path, manager, "people_quarantine")
    assert quarantined["email"].to_list() == ["bob-at-private", "cy@private.example"]


def test_a_bare_dagster_polars_manager_still_records_its_previews_where_nothing_is_hidden(
    tmp_path: Path,
) -> None:
    """The scan is not blind: an output that hides nothing hands the manager a `DataFrame`."""

    class Places(dy.Schema):
        person_id = dy.String(primary_key=True)
        city = dy.String()

    @dd.asset(Places)
    def places() -> pl.DataFrame:
        return PEOPLE.select("person_id", "city")

    instance = shared_instance()
    result = dg.materialize(
        [places], resources={"io_manager": _parquet(tmp_path)}, run_config=QUIET, instance=instance
    )
    (materialization,) = result.asset_materializations_for_node("places")
    assert set(MANAGER_VALUE_KEYS) <= set(materialization.metadata)
    entries = list(instance.all_logs(result.run_id))
    assert found_in_event_log(entries, ["Trondheim"]) == ["Trondheim"]


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
    assert found_in_event_log(entries, EVERY_VALUE) == []


@pytest.mark.parametrize("manager", list(MANAGERS))
def test_a_sensitive_column_reaches_no_event_and_the_stored_rows_keep_it(
    tmp_path: Path, manager: str
) -> None:
    result, entries = _run(tmp_path, manager)  # samples and statistics on
    assert result.success
    assert found_in_event_log(entries, SENSITIVE) == []
    assert _warnings(entries) == []
    # The samples still show the other columns.
    assert found_in_event_log(entries, ["pid-alpha", "Trondheim"]) == ["Trondheim", "pid-alpha"]
    assert _stored(tmp_path, manager, "people")["email"].to_list() == [
        "ann@private.example",
        "dee@private.example",
    ]
    assert _stored(tmp_path, manager, "people_quarantine")["salary"].to_list() == [
        564_738_291,
        192_837_465,
    ]


@pytest.mark.parametrize("manager", ["wrapped parquet", "duckdb", "parquet"])
def test_with_samples_off_and_statistics_on_only_numbers_of_unmarked_columns_show(
    tmp_path: Path, manager: str
) -> None:
    """The statistics show min, median and max of an unmarked numeric column, and nothing else."""
    result, entries = _run(tmp_path, manager, row_sample=0, max_failure_samples=0)
    assert result.success
    assert found_in_event_log(entries, [*TEXT_VALUES, *SENSITIVE]) == []
    assert found_in_event_log(entries, _texts("age")) == ["141421356", "314159265"]


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


# The stored file: a `LazyFrame` handed to the manager writes the same bytes as a `DataFrame`.


class Places(dy.Schema):
    person_id = dy.String(primary_key=True)
    city = dy.String()
    age = dy.Int64(min=0)


def test_the_table_a_bare_manager_sinks_is_the_file_it_writes_from_a_data_frame(
    tmp_path: Path,
) -> None:
    """With the samples off the manager is handed a `LazyFrame`: same file, no preview."""
    frame = PEOPLE.select("person_id", "city", "age")
    eager, _ = _run(tmp_path / "eager", "parquet", frame, schema=Places)
    lazy, entries = _run(tmp_path / "lazy", "parquet", frame, schema=Places, **SAMPLES_OFF)
    written = [tmp_path / run / "warehouse" / "people.parquet" for run in ("eager", "lazy")]
    assert written[0].read_bytes() == written[1].read_bytes()
    assert pl.read_parquet(written[1])["person_id"].to_list() == [
        "pid-alpha",
        "pid-beta",
        "pid-delta",
    ]
    (with_previews,) = eager.asset_materializations_for_node("people")
    assert set(MANAGER_VALUE_KEYS) <= set(with_previews.metadata)
    (without,) = lazy.asset_materializations_for_node("people")
    assert not set(MANAGER_VALUE_KEYS) & set(without.metadata)
    assert without.metadata["dagster/row_count"].value == 3  # the package's own count
    assert found_in_event_log(entries, EVERY_VALUE) == []


EAGER = dg.DagsterType(lambda _, value: True, name="Eager", typing_type=pl.DataFrame)
LAZY = dg.DagsterType(lambda _, value: True, name="Lazy", typing_type=pl.LazyFrame)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(dataframes(max_size=30, excluded_dtypes=[pl.Object]))
def test_the_manager_writes_the_same_file_from_the_rows_and_from_a_lazy_frame_over_them(
    tmp_path: Path, frame: pl.DataFrame
) -> None:
    """The two hand-offs are two paths to one file: compared on generated frames of every dtype."""
    managers = {"eager": _parquet(tmp_path / "eager"), "lazy": _parquet(tmp_path / "lazy")}
    with dg.build_resources(managers) as resources:
        eager = dg.build_output_context(asset_key=dg.AssetKey("t"), dagster_type=EAGER)
        resources.eager.handle_output(eager, frame)
        lazy = dg.build_output_context(asset_key=dg.AssetKey("t"), dagster_type=LAZY)
        resources.lazy.handle_output(lazy, frame.lazy())
    written = [(tmp_path / name / "warehouse" / "t.parquet").read_bytes() for name in managers]
    assert written[0] == written[1]
    # Of a LazyFrame the manager records its path and the column types, and no row.
    assert set(lazy.get_logged_metadata()) == {"path", "dagster/column_schema"}


# A dtype's text: an Enum prints its categories, which are the values of its column.

EMAILS = _texts("email")


@pytest.mark.parametrize(
    ("dtype", "shown"),
    [(pl.Enum(EMAILS), "Enum(categories=[sensitive])"), (pl.Categorical(), "Categorical")],
    ids=["enum", "categorical"],
)
@pytest.mark.parametrize("manager", ["parquet", "duckdb", "wrapped parquet"])
def test_a_sensitive_column_failing_the_column_gate_shows_no_category(
    tmp_path: Path, manager: str, dtype: pl.DataType, shown: str
) -> None:
    frame = PEOPLE.with_columns(pl.col("email").cast(dtype))
    result, entries = _run(tmp_path, manager, frame)
    cause = _cause(result)
    assert cause.cls_name == "ColumnSchemaError"
    assert f"'email': expected String, actual {shown}" in cause.message
    assert found_in_event_log(entries, SENSITIVE) == []


TIERS = ["tier-gold-ann", "tier-lead-bob", "tier-none-cy"]


class Tiers(dy.Schema):
    person_id = dy.String(primary_key=True)
    tier = dy.Enum(TIERS, metadata={"pii": True})
    age = dy.Int64(min=0)


TIERED = PEOPLE.select(
    "person_id", pl.Series("tier", [*TIERS, TIERS[0]], dtype=pl.Enum(TIERS)), "age"
)
"""Rows 1, 2 and 4 valid; row 3 (a negative age) quarantined."""


@pytest.mark.parametrize("manager", ["wrapped parquet", "wrapped duckdb"])
def test_through_the_wrapper_a_sensitive_enums_categories_reach_no_event(
    tmp_path: Path, manager: str
) -> None:
    result, entries = _run(tmp_path, manager, TIERED, schema=Tiers)
    assert result.success
    assert found_in_event_log(entries, TIERS) == []
    assert _warnings(entries) == []
    (materialization,) = result.asset_materializations_for_node("people")
    tab = {c.name: c.type for c in materialization.metadata["dagster/column_schema"].value.columns}
    assert tab["tier"] == "Enum(categories=[sensitive])"
    assert _stored(tmp_path, manager, "people")["tier"].cast(pl.String).to_list() == [
        TIERS[0],
        TIERS[1],
        TIERS[0],
    ]


@pytest.mark.parametrize(
    ("manager", "key"), [("parquet", "dagster/column_schema"), ("duckdb", "dataframe_columns")]
)
def test_a_bare_manager_recording_a_sensitive_enums_type_is_named_once(
    tmp_path: Path, manager: str, key: str
) -> None:
    """The one thing a bare manager can still show: the column types it records as text."""
    result, entries = _run(tmp_path, manager, TIERED, schema=Tiers)
    assert result.success
    (warning,) = _warnings(entries)
    assert f"`{key}` (the column types, whose text shows the categories of 'tier')" in warning
    assert "dd.QuarantineAwareIOManager(io_manager=...)" in warning
    # That key is where they are, and the only place.
    assert found_in_event_log(entries, TIERS) == TIERS
    without_it = [_without_key(entry, key) for entry in entries]
    assert not [tier for tier in TIERS for text in without_it if tier in text]


def _without_key(entry: dg.EventLogEntry, key: str) -> str:
    """The entry as stored, its event's metadata without `key`, when it has metadata."""
    event = entry.dagster_event
    data = event.event_specific_data if event is not None else None
    metadata = getattr(getattr(data, "materialization", data), "metadata", None)
    if not metadata or key not in metadata:
        return serialize_value(entry)
    return entry.user_message + serialize_value({k: v for k, v in metadata.items() if k != key})


def _cause(result: dg.ExecuteInProcessResult) -> Any:
    """The error `people`'s step raised, as the event log stores it (Dagster's wraps it)."""
    failure = result.failure_data_for_node("people")
    assert failure is not None
    assert failure.error is not None
    assert failure.error.cause is not None
    return failure.error.cause


# The package's own DuckDB quarantine write, failing on a column whose dtype changed.


class CodesBefore(dy.Schema):
    person_id = dy.String(primary_key=True)
    code = dy.Int64(min=0)


class CodesAfter(dy.Schema):
    person_id = dy.String(primary_key=True)
    code = dy.String(min_length=12)


class SensitiveCodesBefore(CodesBefore):
    code = dy.Int64(min=0, metadata={"pii": True})


class SensitiveCodesAfter(CodesAfter):
    code = dy.String(min_length=12, metadata={"pii": True})


BEFORE = pl.DataFrame({"person_id": ["pid-a", "pid-b"], "code": [7, -5]})
AFTER = pl.DataFrame({"person_id": ["pid-c", "pid-d"], "code": ["code-long-enough", "zq-short"]})
"""`code` became a text: the quarantine's stored `code` is BIGINT, its new row 'zq-short'."""


@pytest.mark.parametrize("manager", ["duckdb", "wrapped duckdb"])
@pytest.mark.parametrize(
    ("schemas", "settings"),
    [((SensitiveCodesBefore, SensitiveCodesAfter), {}), ((CodesBefore, CodesAfter), SAMPLES_OFF)],
    ids=["sensitive column", "samples off"],
)
def test_a_failed_duckdb_quarantine_write_shows_no_value_it_hides(
    tmp_path: Path,
    manager: str,
    schemas: tuple[type[dy.Schema], type[dy.Schema]],
    settings: dict[str, Any],
) -> None:
    before, after = schemas
    first, _ = _run(tmp_path, manager, BEFORE, schema=before, **settings)
    assert first.success
    result, entries = _run(tmp_path, manager, AFTER, schema=after, **settings)
    cause = _cause(result)
    assert cause.cls_name == "StorageWriteError"
    assert "ConversionException" in cause.message
    assert "could not write the quarantine 'people_quarantine'" in cause.message
    # DuckDB's own error is left out, with its message.
    assert cause.cause is None
    assert cause.context is None
    assert found_in_event_log(entries, ["zq-short", "code-long-enough"]) == []
    # The write failed as a whole: the quarantine and the table keep the first run's rows.
    assert _stored(tmp_path, manager, "people_quarantine")["code"].to_list() == [-5]
    assert _stored(tmp_path, manager, "people")["code"].to_list() == [7]


def test_with_samples_on_and_nothing_sensitive_the_managers_error_is_shown_whole(
    tmp_path: Path,
) -> None:
    """Where the settings hide no value, the user sees DuckDB's own error, value included."""
    first, _ = _run(tmp_path, "duckdb", BEFORE, schema=CodesBefore)
    assert first.success
    result, entries = _run(tmp_path, "duckdb", AFTER, schema=CodesAfter)
    cause = _cause(result)
    assert cause.cls_name == "ConversionException"
    assert "zq-short" in cause.message
    assert found_in_event_log(entries, ["zq-short"]) == ["zq-short"]

"""Two declarations of one asset compared on real managers: one given its schema, one hinted.

What the tests of the return hints share (`test_return_hints.py`, `test_hinted_outputs.py`):
a definition as a code location serves it (specs, checks, metadata, code versions and the
repository snapshot), and a run on dagster-polars' parquet manager or DuckDB's, as its events
(without what differs between two runs) and the rows it stored.
"""

import re
from pathlib import Path
from typing import Any, Literal

import dagster as dg
import polars as pl
from dagster._core.remote_representation.external_data import RepositorySnap
from dagster._serdes import serialize_value
from dagster_polars import PolarsParquetIOManager

from .conftest import QUIET

Manager = Literal["parquet", "duckdb"]
MANAGERS: list[Manager] = ["parquet", "duckdb"]


def definition(asset: dg.AssetsDefinition) -> tuple[object, ...]:
    """What a code location serves of `asset`: its specs, checks, metadata and code versions,
    and the repository snapshot the webserver and the daemon read."""
    defs = dg.Definitions(assets=[asset])
    return (
        list(asset.specs),
        list(asset.check_specs),
        asset.metadata_by_key,
        asset.code_versions_by_key,
        serialize_value(RepositorySnap.from_def(defs.get_repository_def())),
    )


def run(asset: dg.AssetsDefinition, warehouse: Path, manager: Manager) -> tuple[object, ...]:
    """A run's success, its events without what differs between two runs, the rows it stored."""
    warehouse.mkdir(parents=True, exist_ok=True)
    result = dg.materialize(
        [asset],
        resources={"io_manager": _manager(manager, warehouse)},
        run_config=QUIET,
        instance=dg.DagsterInstance.ephemeral(),  # no run of the other declaration in it
        raise_on_error=False,
    )
    stable = [_event(e, result.run_id, warehouse) for e in result.all_events if e.is_step_event]
    return result.success, stable, _stored(warehouse, manager)


def _manager(manager: Manager, warehouse: Path) -> dg.ConfigurableIOManagerFactory[Any]:
    if manager == "parquet":
        return PolarsParquetIOManager(base_dir=str(warehouse))
    from dagster_duckdb_polars import DuckDBPolarsIOManager

    return DuckDBPolarsIOManager(database=str(warehouse / "warehouse.duckdb"))


def _stored(warehouse: Path, manager: Manager) -> dict[str, list[str]]:
    """Every stored table's rows, by file or table name, each a sorted list of reprs."""
    if manager == "parquet":
        return {
            path.relative_to(warehouse).as_posix(): _rows(pl.read_parquet(path))
            for path in sorted(warehouse.rglob("*.parquet"))
        }
    import duckdb

    database = warehouse / "warehouse.duckdb"
    if not database.exists():
        return {}
    with duckdb.connect(str(database), read_only=True) as connection:
        tables = connection.execute(
            "select table_schema || '.' || table_name from information_schema.tables"
        ).fetchall()
        return {
            table: _rows(connection.execute(f"select * from {table}").pl())
            for (table,) in sorted(tables)
        }


def _rows(frame: pl.DataFrame) -> list[str]:
    return sorted(map(repr, frame.to_dicts()))


def _event(event: dg.DagsterEvent, run_id: str, warehouse: Path) -> tuple[object, ...]:
    """What an event says, as equal for two runs as their frames are.

    A LazyFrame's valid rows come out of Polars' streaming engine in no set order, so a table
    of rows in the metadata is compared as a set of rows.
    """
    data = event.event_specific_data
    if isinstance(data, dg.AssetCheckEvaluation):
        said: object = (data.check_name, data.passed, data.severity, _metadata(data.metadata))
    elif event.event_type_value == "ASSET_MATERIALIZATION":
        said = (
            event.asset_key,
            _metadata(event.step_materialization_data.materialization.metadata),
        )
    elif event.event_type_value == "STEP_OUTPUT":
        said = (event.step_output_data.output_name, _metadata(event.step_output_data.metadata))
    elif event.event_type_value == "HANDLED_OUTPUT":  # the manager's own preview of the rows
        said = (data.output_name, data.manager_key, _metadata(data.metadata))
    elif event.event_type_value in ("STEP_START", "STEP_SUCCESS", "ENGINE_EVENT"):
        said = None  # durations and process ids
    elif event.event_type_value == "STEP_FAILURE":
        said = (data.error.cls_name, data.error.message)
    else:
        said = str(data)
    text = str(said).replace(run_id, "<run>").replace(str(warehouse), "<dir>")
    return event.event_type_value, re.sub(r"(timestamp|storage_id)=[0-9.]+", r"\1=<n>", text)


def _metadata(metadata: Any) -> dict[str, object]:
    return {
        key: sorted(map(repr, value.records)) if isinstance(value, dg.TableMetadataValue) else value
        for key, value in metadata.items()
    }

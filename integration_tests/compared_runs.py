"""Runs of two declarations of one asset, as comparable as their results are equal.

A `Warehouse` is one IO manager (dagster-polars' parquet manager, or DuckDB's polars
manager) over its own directory and its own ephemeral instance: each run's step events are
kept without what differs between two runs (run ids, times, the directory), and `stored` reads
every stored row back from the files or tables themselves. Two declarations that are the same
asset leave equal `outcome()`s.

One run may serve several cases: each case's assets under a key prefix of its own (its steps
named `<prefix>__...`), and `outcome(prefix)` is what a run of that case's assets alone would
have left. A run costs Dagster a fixed part (an instance, the run's snapshots and events) beside
each step's; the comparisons run hundreds of small cases.
"""

import re
import tempfile
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import dagster as dg
import polars as pl
from dagster._core.remote_representation.external_data import RepositorySnap
from dagster._serdes import serialize_value
from dagster_duckdb_polars import DuckDBPolarsIOManager
from dagster_polars import PolarsParquetIOManager

from .conftest import DAY_1, QUIET, orders_frame

KINDS = ("parquet", "duckdb")

OUTCOMES: dict[str, tuple[bool, pl.DataFrame | None]] = {
    "columns not the schema's": (True, orders_frame(DAY_1).drop("region")),
    "every row valid": (True, orders_frame(DAY_1, invalid=0)),
    "some rows failed, no quarantine": (False, orders_frame(DAY_1)),
    "some rows failed, quarantine": (True, orders_frame(DAY_1)),
    "every row failed, quarantine": (True, orders_frame(DAY_1, valid=0, invalid=2)),
    "None": (True, None),
}
"""The spec's six outcomes, as (quarantine declared, the frame `orders` returns)."""

OUTCOME_PREFIXES = {outcome: f"outcome_{index}" for index, outcome in enumerate(OUTCOMES)}
"""The key prefix of each outcome's assets in the runs the six outcomes share."""


class Warehouse:
    """One IO manager over `root`, and what the runs through it said and stored."""

    def __init__(self, root: Path, kind: str = "parquet") -> None:
        root.mkdir(parents=True, exist_ok=True)  # DuckDB creates its file, not its folder
        self.root = root
        self.kind = kind
        self.database = root / "warehouse.duckdb"
        self.instance = dg.DagsterInstance.ephemeral()  # no run of the other declaration in it
        self.runs: list[tuple[bool, list[tuple[str | None, tuple[object, ...]]]]] = []
        """Each run's success and its stable step events, each with its step's key."""

    def manager(self) -> object:
        if self.kind == "parquet":
            return PolarsParquetIOManager(base_dir=str(self.root))
        return DuckDBPolarsIOManager(database=str(self.database))

    def materialize(
        self,
        assets: Sequence[dg.AssetsDefinition],
        *,
        partition_key: str | None = None,
        selection: Sequence[dg.AssetKey] | None = None,
    ) -> bool:
        """One run; its stable events are kept, its success returned."""
        result = dg.materialize(
            assets,
            resources={"io_manager": self.manager()},
            run_config=QUIET,
            instance=self.instance,
            partition_key=partition_key,
            selection=selection,
            raise_on_error=False,
        )
        events = [
            (e.step_key, _event(e, result.run_id, self.root))
            for e in result.all_events
            if e.is_step_event
        ]
        self.runs.append((result.success, events))
        return result.success

    @property
    def events(self) -> list[tuple[object, ...]]:
        """Every run's stable step events, in order."""
        return [event for _, events in self.runs for _, event in events]

    def stored(self, prefix: str | None = None) -> dict[str, list[str]]:
        """Every file's or table's rows, each as a sorted list of row reprs (under `prefix`: the
        files in its folder, the tables in its DuckDB schema)."""
        if self.kind == "parquet":
            return {
                path.relative_to(self.root).as_posix(): _rows(pl.read_parquet(path))
                for path in sorted((self.root / (prefix or "")).rglob("*.parquet"))
            }
        import duckdb

        if not self.database.exists():
            return {}
        with duckdb.connect(str(self.database), read_only=True) as connection:
            tables = connection.execute(
                "select table_schema || '.' || table_name from information_schema.tables "
                "where ? is null or table_schema = ? order by 1",
                [prefix, prefix],
            ).fetchall()
            return {
                table: _rows(connection.execute(f"select * from {table}").pl())
                for (table,) in tables
            }

    def outcome(self, prefix: str | None = None) -> tuple[object, ...]:
        """Each run's success, the step events and the stored rows: of the assets under `prefix`
        only when given, as a run of those assets alone would have left them."""
        if prefix is None:
            return [success for success, _ in self.runs], self.events, self.stored()
        mine = f"{prefix}__"
        successes = []
        events: list[tuple[object, ...]] = []
        for success, run_events in self.runs:
            failed = {key for key, (kind, _) in run_events if kind == "STEP_FAILURE"}
            # NOTE: a run that failed with no step failing (its resources, its plan) failed for
            # every case in it.
            successes.append(
                (success or bool(failed)) and not any(key.startswith(mine) for key in failed)
            )
            events += [event for key, event in run_events if key and key.startswith(mine)]
        return successes, events, self.stored(prefix)


def definition(
    asset: dg.AssetsDefinition, upstream: Sequence[dg.AssetsDefinition] = ()
) -> tuple[object, ...]:
    """What a code location serves of `asset`: its specs, checks, metadata and code versions,
    and the repository snapshot the webserver and the daemon read (with `upstream`, the assets
    its inputs load)."""
    defs = dg.Definitions(assets=[*upstream, asset])
    return (
        list(asset.specs),
        list(asset.check_specs),
        asset.metadata_by_key,
        asset.code_versions_by_key,
        serialize_value(RepositorySnap.from_def(defs.get_repository_def())),
    )


def run(asset: dg.AssetsDefinition, warehouse: Path, kind: str = "parquet") -> tuple[object, ...]:
    """One run of `asset` alone: its success, its step events and the rows it stored."""
    store = Warehouse(warehouse, kind)
    success = store.materialize([asset])
    return success, store.events, store.stored()


T = TypeVar("T")


def run_together(
    assets: Mapping[str, dg.AssetsDefinition], warehouse: Path, kind: str = "parquet"
) -> dict[str, tuple[object, ...]]:
    """One run of every asset in `assets`, each under the key prefix it is keyed by: by prefix,
    what `run` of that asset alone leaves."""
    store = Warehouse(warehouse, kind)
    store.materialize(list(assets.values()))
    together = {}
    for prefix in assets:
        (success,), events, stored = store.outcome(prefix)
        together[prefix] = success, events, stored
    return together


_MADE: dict[Hashable, Any] = {}


def made_once(key: Hashable, make: Callable[[], T]) -> T:
    """What `make()` returns, made the first time a test of this process asks for `key`, and
    the same object after."""
    # NOTE: a failing `make` stores nothing and fails again for the next case that asks.
    if key not in _MADE:
        _MADE[key] = make()
    made: T = _MADE[key]
    return made


def run_once(key: Hashable, runs: Callable[[Path], T]) -> T:
    """What `runs(folder)` leaves, made in a folder of its own the first time a test of this
    process asks for `key`, and the same tuple after.

    Several hinted forms are each compared with one declaration given its schema (one plain
    annotation, one returned value): its runs are the same whichever form asks, and an outcome
    holds nothing of its folder (`<dir>`) or of its run ids, so they are made once per process.
    """

    def made() -> T:
        with tempfile.TemporaryDirectory(prefix="dd-compared-") as folder:
            return runs(Path(folder))

    return made_once(("runs", key), made)


def returned(value: object) -> Hashable:
    """What a function returns, as a key two equal values share: each frame's type, schema and
    rows, a `MaterializeResult`'s value and metadata, a tuple's or dict's items."""
    if isinstance(value, pl.LazyFrame):
        return "LazyFrame", returned(value.collect())
    if isinstance(value, pl.DataFrame):
        return "DataFrame", repr(value.schema), tuple(value.rows())
    if isinstance(value, dg.MaterializeResult):
        return (
            "MaterializeResult",
            returned(value.value),
            repr(sorted((value.metadata or {}).items())),
        )
    if isinstance(value, tuple):
        return "tuple", *map(returned, value)
    if isinstance(value, dict):
        return "dict", *((key, returned(item)) for key, item in sorted(value.items()))
    if value is None:
        return None
    raise TypeError(f"no key for a returned {type(value).__name__}")


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
    elif event.event_type_value == "STEP_FAILURE":  # the error, without its stack's lines
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

"""The seam: every use of a private Dagster or Dataframely API, and nothing else.

Dagster and Dataframely keep no promise about their private names (`dagster._*` and
`dataframely._*` modules, attributes and methods starting with `_`, and what they mark
`:meta private:`), so a release may rename any of them. Each one this package needs sits here,
behind one small function whose docstring says what it relies on and since which version; each
has a characterization test in `tests/test_upstream.py` that fails, naming the access, when the
upstream shape changes. Ruff enforces the fence (`TID251` bans the private modules and `SLF001`
private attributes everywhere in `src/` but this file), and `tests/test_upstream.py` also rejects
a private name reached through `getattr`/`setattr`.

"Since" means the oldest release checked. Every access below was read against the declared
floors, Dagster 1.13.6 and Dataframely 3.1.0 (`pyproject.toml`; a test keeps the two in step),
and against the versions locked for development (Dagster 1.13.27, Dataframely 3.1.2).

No module outside this one imports a private upstream module, not even for a type: the types
other modules need (`Rule`, `DagsterInvalidPropertyError`, `Resources`) are re-exported from here.
"""

from __future__ import annotations

import contextlib
import copy
import sys
from collections.abc import Callable, Container, Iterator, Mapping, Sequence, Set
from dataclasses import dataclass
from types import FrameType
from typing import Any, Self, TypeVar

import dagster as dg
import dataframely as dy
import polars as pl
from dagster._check import CheckError
from dagster._config import process_config
from dagster._config.pythonic_config import ConfigurableResourceFactory
from dagster._core.decorator_utils import get_valid_name_permutations
from dagster._core.definitions import op_invocation
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)
from dagster._core.definitions.assets.graph.base_asset_graph import BaseAssetGraph
from dagster._core.definitions.assets.job.asset_job import JobScopedAssetGraph
from dagster._core.definitions.scoped_resources_builder import Resources as Resources
from dagster._core.errors import DagsterInvalidPropertyError as DagsterInvalidPropertyError
from dagster._core.event_api import PartitionKeyFilter
from dagster._core.events import AssetMaterializationPlannedData, EngineEventData
from dagster._core.execution.plan.outputs import StepOutputHandle
from dagster._core.storage.db_io_manager import DbIOManager
from dagster.components.core.defs_module import CompositeYamlComponent
from dagster_shared.yaml_utils.source_position import SourcePositionTree
from dataframely._rule import Rule as Rule
from dataframely._rule import RuleFactory
from dataframely.schema import _COLUMN_VALID
from upath import UPath

# `DagsterInvalidPropertyError` (`dagster._core.errors`, not exported by `dagster`) is what a
# direct invocation's context raises when asked for its step; the spec names it as what
# `delegating_writer` raises there, so callers catch this very class. Since Dagster 1.13.0.

# `Rule` (`dataframely._rule`) is the type of each value `validation_rules` returns; Dataframely
# exports no public name for it. Since Dataframely 3.1.0.

_IOContext = TypeVar("_IOContext", dg.InputContext, dg.OutputContext)
_T = TypeVar("_T")


# --- Dagster: the running step ---------------------------------------------------------------


def current_asset_context() -> dg.AssetExecutionContext | None:
    """The context of the asset step running now, or None outside a step (a direct invocation).

    Relies on `dg.AssetExecutionContext.get()` (not marked `@public`; in Dagster since 1.6),
    which reads the context variable Dagster sets around a step's compute function, and raises
    `DagsterInvariantViolationError` when no step is running. An op step that is no asset gets a
    context too, whose `has_assets_def` is False.
    """
    try:
        return dg.AssetExecutionContext.get()
    except dg.DagsterInvariantViolationError:
        return None


def check_evaluations(
    instance: dg.DagsterInstance,
    check_key: dg.AssetCheckKey,
    partition: str | None,
    limit: int,
    *,
    every_partition: bool = False,
) -> list[tuple[str, str | None, float, Mapping[str, Any]]]:
    """An asset check's latest evaluations, newest first: run id, partition, time, metadata.

    Those of `partition` (None: of no partition), or of every partition with `every_partition`.

    Relies on `EventLogStorage.get_asset_check_execution_history` and `PartitionKeyFilter`
    (not public; in Dagster since 1.7, the filter since 1.12), the storage the UI's check
    history reads; evaluations planned but never reported are skipped.
    """
    records = instance.event_log_storage.get_asset_check_execution_history(
        check_key,
        limit=limit,
        partition_filter=None if every_partition else PartitionKeyFilter(key=partition),
    )
    found = []
    for record in records:
        event = record.event.dagster_event if record.event is not None else None
        evaluation = event.event_specific_data if event is not None else None
        if isinstance(evaluation, dg.AssetCheckEvaluation):
            found.append(
                (record.run_id, record.partition, record.create_timestamp, evaluation.metadata)
            )
    return found


def direct_invocation_context() -> dg.AssetExecutionContext | None:
    """The context a direct invocation bound for the compute function running now, or None.

    Dagster takes the context a caller passes to an asset whose compute function declares
    none (`orders(dg.build_asset_context(partition_key=...))`), binds it, and calls the
    function without it; the context variable `current_asset_context` reads is set in a run
    only. So the partition key of such a call is read from Dagster's own frame: relies on
    `dagster._core.definitions.op_invocation._type_check_output_wrapper`, whose nested
    generator `type_check_gen` iterates the compute function's generator and holds the bound
    context in its local `context`. The nearest such frame is the call's. None in a run and
    for a context of another kind. Since Dagster 1.13.0.
    """
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "type_check_gen" and (
            frame.f_globals.get("__name__") == op_invocation.__name__
        ):
            context = frame.f_locals.get("context")
            return context if isinstance(context, dg.AssetExecutionContext) else None
        frame = frame.f_back
    return None


def is_context_parameter(name: str) -> bool:
    """Whether Dagster passes the context to a compute function's first parameter of this name.

    Relies on `dagster._core.decorator_utils.get_valid_name_permutations("context")`, the set
    `@dg.asset` itself checks (`context`, `_context`, `context_`, `_`), so `dd.asset` sees the
    context exactly where Dagster puts it. Since Dagster 1.13.0.
    """
    return name in get_valid_name_permutations("context")


@dataclass(frozen=True, slots=True)
class StepOutput:
    """One output of the running step, as Dagster's own output handling addresses it."""

    step: dg.StepExecutionContext
    handle: StepOutputHandle


def running_step(context: dg.AssetExecutionContext) -> dg.StepExecutionContext | None:
    """The step an asset's compute function runs in; None under direct invocation, which has none.

    Relies on `OpExecutionContext.get_step_execution_context()` (`:meta private:`), which
    returns the step and raises `DagsterInvalidPropertyError` in a direct invocation.
    Since Dagster 1.13.0.
    """
    try:
        return context.op_execution_context.get_step_execution_context()
    except DagsterInvalidPropertyError:
        return None


def step_output(step: dg.StepExecutionContext, output_name: str) -> StepOutput:
    """The running step's output `output_name`.

    Relies on the step's `.step.key` and on
    `dagster._core.execution.plan.outputs.StepOutputHandle(step_key, output_name)`.
    Since Dagster 1.13.0.
    """
    return StepOutput(step, StepOutputHandle(step.step.key, output_name))


def output_context_for(
    output: StepOutput, asset_key: dg.AssetKey, dagster_type: dg.DagsterType | None = None
) -> dg.OutputContext:
    """A fresh copy of the output's context with only its asset key replaced by `asset_key`.

    An IO manager given this copy stores the value as it would store `asset_key`, with the
    output's partition key, definition metadata and resource config; `asset_spec` stays the
    output's own, which is how `QuarantineAwareIOManager` tells a quarantine write apart. With
    `dagster_type`, the copy also reports that type, which a manager such as dagster-polars'
    chooses how to write by (a `LazyFrame` type is sunk, any other written).

    Relies on `dg.StepExecutionContext.get_output_context(handle)`, and on `OutputContext` being a
    plain object whose `asset_key` and `get_asset_identifier()` read the attribute
    `_asset_key`, whose `asset_spec` reads `_asset_spec` and whose `dagster_type` reads
    `_dagster_type`. If Dagster stopped honouring the swapped key, the invalid rows would be
    written over the table: the characterization test writes through a real IO manager and
    reads both back. Since Dagster 1.13.0.
    """
    output_context = copy.copy(output.step.get_output_context(output.handle))
    output_context._asset_key = asset_key
    if dagster_type is not None:
        output_context._dagster_type = dagster_type
    return output_context


def output_io_manager(output: StepOutput) -> dg.IOManager:
    """The IO manager the running step stores the output with.

    Relies on `dg.StepExecutionContext.get_io_manager(handle)`. Since Dagster 1.13.0.
    """
    return output.step.get_io_manager(output.handle)


def source_graph_materializable_keys(step: dg.StepExecutionContext) -> Set[dg.AssetKey]:
    """Every asset key the graph the running job was selected from materializes.

    A job that runs a selection of assets sees only that selection in its own asset graph, but
    keeps the graph it was selected from: the code location's for a deployed job, the assets
    passed to `dg.materialize` in a test. So a key need not be in the run to be listed.

    Relies on the step's `.job_def.asset_layer.asset_graph`, the private class
    `JobScopedAssetGraph` with its `source_asset_graph`, and
    `AssetGraph.materializable_asset_keys`. Since Dagster 1.13.0.
    """
    return _source_asset_graph(step).materializable_asset_keys


def source_graph_has(step: dg.StepExecutionContext, asset_key: dg.AssetKey) -> bool:
    """Whether the asset graph the running job was selected from has `asset_key` at all.

    Unlike `source_graph_materializable_keys`, it is true for an asset nothing materializes too,
    such as an `AssetSpec` (a quarantine declared with `quarantine_spec`). Relies on the same
    private `JobScopedAssetGraph.source_asset_graph`, and `AssetGraph.has`. Since Dagster 1.13.0.
    """
    return _source_asset_graph(step).has(asset_key)


def _source_asset_graph(step: dg.StepExecutionContext) -> BaseAssetGraph[Any]:
    """The code location's asset graph (the one a selected job was built from), not the run's."""
    graph = step.job_def.asset_layer.asset_graph
    while isinstance(graph, JobScopedAssetGraph):
        graph = graph.source_asset_graph
    return graph


def planned_partitions(
    event: dg.DagsterEvent, asset: dg.AssetKey
) -> tuple[bool, str | None, Container[str] | None]:
    """Whether `event` plans a materialization of `asset`, and for which partitions.

    Returns (planned, partition, partitions): a single-partition plan has `partition`, a
    ranged one (a single-run backfill) `partitions`, and a plan of the whole asset neither.

    Relies on the private class `dagster._core.events.AssetMaterializationPlannedData`, the
    `event_specific_data` of an `ASSET_MATERIALIZATION_PLANNED` event, with its fields
    `asset_key`, `partition` and `partitions_subset` (which supports `in`).
    Since Dagster 1.13.0.
    """
    data = event.event_specific_data
    if not isinstance(data, AssetMaterializationPlannedData) or data.asset_key != asset:
        return False, None, None
    return True, data.partition, data.partitions_subset


def report_step_engine_event(
    instance: dg.DagsterInstance,
    run: dg.DagsterRun,
    step_key: str,
    message: str,
    metadata: Mapping[str, str],
) -> None:
    """Store an engine event of the step `step_key` of `run` now, with text `metadata`.

    The event is written to the instance's event log before this returns, so a process that
    reads the run's events afterwards finds it. Relies on `DagsterInstance.report_engine_event`
    (not marked `@public`) and the private class `dagster._core.events.EngineEventData`, whose
    `metadata` it fills. Since Dagster 1.13.0.
    """
    data = EngineEventData(metadata={key: dg.MetadataValue.text(v) for key, v in metadata.items()})
    instance.report_engine_event(message, run, data, step_key=step_key)


def step_engine_event_text(event: dg.DagsterEvent, key: str) -> str | None:
    """The text metadata value `key` of an engine event, None if it has none or is no such event.

    Reads what `report_step_engine_event` stored: `DagsterEvent.engine_event_data` (an
    `EngineEventData`) and its `metadata`. Since Dagster 1.13.0.
    """
    if event.event_type != dg.DagsterEventType.ENGINE_EVENT:
        return None
    data = event.event_specific_data
    if not isinstance(data, EngineEventData):
        return None
    value = data.metadata.get(key)
    return value.value if isinstance(value, dg.TextMetadataValue) else None


def check_evaluation_target(
    instance: dg.DagsterInstance, asset_key: dg.AssetKey, partition_key: str
) -> AssetCheckEvaluationTargetMaterializationData | None:
    """The latest materialization of one partition, as a check evaluation points at it.

    What `AssetCheckResult` fills in for a run of one partition, for an evaluation built as a
    `dg.AssetCheckEvaluation` of one partition of a range. The lookup is public
    (`instance.fetch_materializations` with `dg.AssetRecordsFilter`); the record it fills,
    `dagster._core.definitions.asset_checks.asset_check_evaluation.
    AssetCheckEvaluationTargetMaterializationData(storage_id, run_id, timestamp)`, is not
    exported. Since Dagster 1.13.0.
    """
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition_key]), limit=1
    ).records
    if not records:
        return None
    latest = records[0]
    return AssetCheckEvaluationTargetMaterializationData(
        storage_id=latest.storage_id,
        run_id=latest.event_log_entry.run_id,
        timestamp=latest.timestamp,
    )


# --- Dagster: IO manager contexts and resources ----------------------------------------------


def context_for_manager(
    context: _IOContext,
    resource_config: Mapping[str, Any] | None,
    *,
    clear_logged_metadata: bool = False,
) -> _IOContext:
    """A copy of an input or output context carrying another manager's resource config.

    For a wrapper that hands the context to the manager it wraps: the copy's
    `resource_config` is `resource_config`, and with `clear_logged_metadata` the copy starts
    with no logged metadata, so what the wrapped manager logs can be read back alone and the
    original context is left untouched.

    Relies on `InputContext` / `OutputContext` reading `resource_config` from the attribute
    `_resource_config`, and on `OutputContext.get_logged_metadata()` reading
    `_user_generated_metadata`, which `add_output_metadata` rebinds rather than mutates.
    Since Dagster 1.13.0.
    """
    forwarded = copy.copy(context)
    forwarded._resource_config = resource_config
    if clear_logged_metadata:
        forwarded._user_generated_metadata = {}
    return forwarded


def resource_config_of(resource: object) -> Mapping[str, Any] | None:
    """The config Dagster would hand `resource` as `context.resource_config`, defaults filled.

    None for an object that carries no config of its own (a plain or already built IO manager).

    Relies on `dagster._config.pythonic_config.ConfigurableResourceFactory` (the base of
    `ConfigurableResource`, `ConfigurableIOManager` and `ConfigurableIOManagerFactory`), its
    attribute `_resolved_config_dict` (the config as passed, with env vars resolved), and
    `dagster._config.process_config(config_type, value)` returning a result with `success`
    and `value`. Since Dagster 1.13.0.
    """
    definition: dg.ResourceDefinition
    if isinstance(resource, ConfigurableResourceFactory):
        definition = resource.get_resource_definition()
        raw: Any = resource._resolved_config_dict
    elif isinstance(resource, dg.ResourceDefinition):
        definition, raw = resource, {}
    else:
        return None
    if definition.config_schema is None:
        return {}
    processed = process_config(definition.config_schema.config_type, raw)
    if not processed.success:
        return {}
    # A `.configured(...)` definition maps its own config onto the one its function reads;
    # Dagster's mapping takes and returns the `{"config": ...}` shape of run config.
    mapped = definition.apply_config_mapping({"config": processed.value})
    return dict((mapped.value or {}).get("config") or {}) if mapped.success else {}


class NestedResourceFactory(dg.ConfigurableIOManagerFactory[dg.IOManager]):
    """An IO manager factory whose private state survives Dagster's rebuild of it.

    At run start Dagster rebuilds a resource with its nested resources resolved, through the
    private `ConfigurableResourceFactory._with_updated_values(values)`, from the public fields
    alone: private attributes set in `__init__` are lost. Subclasses carry them over in
    `carry_over_to`. Relies on Dagster calling `_with_updated_values` for that rebuild, with
    that signature and returning the new instance. Since Dagster 1.13.0.
    """

    def _with_updated_values(self, values: Mapping[str, Any] | None) -> Self:
        """Dagster's rebuild of the resource, with the private state carried over."""
        rebuilt = super()._with_updated_values(values)
        assert isinstance(rebuilt, type(self))
        self.carry_over_to(rebuilt)
        return rebuilt

    def carry_over_to(self, rebuilt: Self) -> None:
        """Copy the state read in `__init__` onto `rebuilt`, Dagster's new instance of `self`."""


def database_handled_types(manager: dg.IOManager) -> tuple[type, ...] | None:
    """The types a database IO manager's type handlers store; None for any other manager.

    Relies on `dagster._core.storage.db_io_manager.DbIOManager` (what `DuckDBIOManager` and
    other database managers build) and its `_handlers_by_type`, a dict keyed by the handled
    types. Since Dagster 1.13.0.
    """
    return tuple(manager._handlers_by_type) if isinstance(manager, DbIOManager) else None


def is_duckdb_io_manager(manager: object) -> bool:
    """Whether `manager` is the `DbIOManager` a `DuckDBIOManager` builds.

    Relies on `DbIOManager` and its `_db_client` attribute, which
    `DuckDBIOManager.create_io_manager` sets to a `dagster_duckdb.io_manager.DuckDbClient`.
    Since Dagster 1.13.0 (dagster-duckdb 0.29.0). False when dagster-duckdb is not installed.
    """
    if not isinstance(manager, DbIOManager):
        return False
    try:
        from dagster_duckdb.io_manager import DuckDbClient
    except ImportError:
        return False
    return isinstance(manager._db_client, DuckDbClient)


def db_io_manager_parts(manager: dg.IOManager) -> tuple[Any, Mapping[type, Any]]:
    """The `DbClient` of a `DbIOManager` and its type handlers by the type each stores.

    Relies on `DbIOManager._db_client` and `DbIOManager._handlers_by_type`, set in its
    `__init__` and read by its `handle_output`. Since Dagster 1.13.0.
    """
    assert isinstance(manager, DbIOManager)
    return manager._db_client, dict(manager._handlers_by_type)


def db_io_manager_with(
    manager: dg.IOManager, *, client: Any, handlers: Mapping[type, Any]
) -> dg.IOManager:
    """A copy of a `DbIOManager` that connects through `client` and stores with `handlers`.

    `handle_output` of the copy connects with `client.connect`, calls
    `client.ensure_schema_exists` and `client.delete_table_slice`, then the handler of the
    output's type, exactly as the original does with its own; staged writes rely on that order.
    Relies on the same two attributes as `db_io_manager_parts`. Since Dagster 1.13.0.
    """
    assert isinstance(manager, DbIOManager)
    writer = copy.copy(manager)
    writer._db_client = client
    writer._handlers_by_type = dict(handlers)
    return writer


def db_table_slice(manager: dg.IOManager, context: dg.OutputContext) -> Any:
    """The `TableSlice` a `DbIOManager` writes `context`'s output to: schema, table, partitions.

    Relies on `DbIOManager._get_table_slice(context, output_context)`, the method its own
    `handle_output` calls to decide where to write (schema from the definition metadata, the
    key prefix or the manager's `schema`; the table from the asset key's last part). Nothing is
    read or written. Since Dagster 1.13.0.
    """
    assert isinstance(manager, DbIOManager)
    return manager._get_table_slice(context, context)


def db_range_slice(manager: dg.IOManager, context: dg.OutputContext) -> Any | None:
    """The one `TableSlice` a `DbIOManager` writes a partition range to; None if it has none.

    A `DbIOManager` stores a multi-partitioned range as one slice: from each dimension's key
    at the range's start to its key at the end, read from the output context's one partition
    key range. Dagster splits a multi-partition subset into one key range per key of the
    dimension with fewer keys, so a range of more than one key in every dimension has several,
    and `OutputContext.asset_partition_key_range` fails with Dagster's `CheckError` (the
    manager's write would fail the same way, after the function ran). Relies on
    `DbIOManager._get_table_slice` (see `db_table_slice`) and on
    `dagster._check.CheckError`. Since Dagster 1.13.0.
    """
    try:
        return db_table_slice(manager, context)
    except CheckError:
        return None


def upath_output_locations(manager: dg.UPathIOManager, context: dg.OutputContext) -> list[UPath]:
    """The files `manager.handle_output(context, ...)` would write, one per partition.

    Relies on `dg.UPathIOManager._get_path` (an unpartitioned output) and
    `dg.UPathIOManager._get_paths_for_partitions` (a partitioned one), the two methods its own
    `handle_output` calls to decide where to write. Nothing is read or written.
    Since Dagster 1.13.0.
    """
    if context.has_asset_partitions:
        return list(manager._get_paths_for_partitions(context).values())
    return [manager._get_path(context)]


def upath_lays_out_partitions_as_dagster(manager: dg.UPathIOManager) -> bool:
    """Whether `manager` places each partition where `dg.UPathIOManager` itself does.

    That is: under the asset's folder, at the partition key (a multi-partition key's parts in
    the order of their dimension names, joined by `/`, as `upath_partition_locations` builds
    it), a leading `/` escaped as `%2F`, then the extension. True when none of
    `_get_paths_for_partitions`, `get_path_for_partition`, `make_safe_partition_path` and
    `_with_extension` is overridden. Since Dagster 1.13.0.
    """
    kind = type(manager)
    return all(
        getattr(kind, name) is getattr(dg.UPathIOManager, name)
        for name in (
            "_get_paths_for_partitions",
            "get_path_for_partition",
            "make_safe_partition_path",
            "_with_extension",
        )
    )


@contextlib.contextmanager
def no_resources(instance: dg.DagsterInstance) -> Iterator[Resources]:
    """No resources, built on `instance`, for the IO contexts the package builds itself.

    Given none (or a mapping), an `OutputContext` or `InputContext` builds its resources on an
    ephemeral instance of its own: about 0.1 s of CPU per context in a user's run. Relies on
    both taking a built `Resources` (of `dagster._core.definitions.scoped_resources_builder`)
    as it is. Since Dagster 1.13.0.
    """
    with dg.build_resources({}, instance=instance) as resources:
        yield resources


def input_context(
    asset_key: dg.AssetKey, instance: dg.DagsterInstance, resources: Resources
) -> dg.InputContext:
    """An input context for reading `asset_key` with a manager, on `resources`.

    `dg.build_input_context` takes resources as a mapping only, and builds them on an
    ephemeral instance; this constructs `dg.InputContext` directly, which Dagster's docs leave
    to Dagster. Since Dagster 1.13.0.
    """
    return dg.InputContext(asset_key=asset_key, instance=instance, resources=resources)


def upath_asset_folder(manager: dg.UPathIOManager, context: dg.OutputContext) -> UPath:
    """The folder `manager` writes the partitions of `context`'s asset under.

    Relies on `dg.UPathIOManager._get_path_without_extension`, which `_get_paths_for_partitions`
    joins each partition onto. Nothing is read or written. Since Dagster 1.13.0.
    """
    folder: UPath = manager._get_path_without_extension(context)
    return folder


def upath_partition_locations(
    manager: dg.UPathIOManager, context: dg.OutputContext, partition_keys: Sequence[str]
) -> dict[str, UPath]:
    """The file `manager` writes each of `partition_keys` of `context`'s asset to.

    What `dg.UPathIOManager._get_paths_for_partitions` computes for a context holding exactly
    these keys, without building one: a `dg.MultiPartitionKey`'s parts in the order of their
    dimension names joined by `/`, then `get_path_for_partition` under
    `_get_path_without_extension` and `_with_extension`, as its loop does. Nothing is read or
    written. Since Dagster 1.13.0.
    """
    folder = upath_asset_folder(manager, context)
    located: dict[str, UPath] = {}
    for key in partition_keys:
        formatted = (
            "/".join(part for _, part in sorted(key.keys_by_dimension.items()))
            if isinstance(key, dg.MultiPartitionKey)
            else key
        )
        located[key] = manager._with_extension(
            manager.get_path_for_partition(context, folder, formatted)
        )
    return located


def upath_base(manager: dg.UPathIOManager) -> UPath:
    """The directory every file of `manager` is meant to be under.

    Relies on `dg.UPathIOManager._base_path`, set by its `__init__`. Since Dagster 1.13.0.
    """
    base: UPath = manager._base_path
    return base


_tuple_new: Callable[..., Any] = tuple.__new__
"""`tuple.__new__`, typed loosely: Dagster's records are tuples at run time, not to mypy."""


def table_record_of_cells(data: dict[str, str | int | float | bool | None]) -> dg.TableRecord:
    """`dg.TableRecord(data)` without Dagster's check of every entry, for cells already checked.

    `dg.TableRecord` checks each key and value as it is built, which costs more than making
    the cells; a failure sample of a wide schema has a million. Relies on `TableRecord` being
    a `NamedTuple` record (`dagster_shared.record`) whose one field is `data`, so
    `tuple.__new__` builds the record the checked constructor would. Since Dagster 1.13.6.
    """
    record: dg.TableRecord = _tuple_new(dg.TableRecord, (data,))
    return record


def table_of_records(
    records: list[dg.TableRecord], schema: dg.TableSchema
) -> dg.TableMetadataValue:
    """`dg.MetadataValue.table(records=records, schema=schema)` without Dagster's checks.

    The constructor checks every record's type and that every record has the same keys (a set
    per record); records cut from one conversion of one frame have them by construction.
    Relies on `TableMetadataValue` being a `NamedTuple` record whose fields are `records`,
    then `schema`. Since Dagster 1.13.6.
    """
    table: dg.TableMetadataValue = _tuple_new(dg.TableMetadataValue, (records, schema))
    return table


def sibling_check_spec(
    template: dg.AssetCheckSpec, *, name: str, description: str, blocking: bool
) -> dg.AssetCheckSpec:
    """A check spec on `template`'s asset and partitions, with its own name, text and blocking.

    `dg.AssetCheckSpec` coerces the asset key, checks the additional dependencies and builds
    a check key for each spec, which costs more than a `dd.asset` spends on anything else of
    its own; an asset of a hundred rules declares a hundred specs that differ only in these
    three fields. The template's empty `additional_deps` and `metadata` are shared, as nothing
    changes them in place. Relies on `AssetCheckSpec` being a `NamedTuple` record whose fields
    are `name, asset_key, description, additional_deps, blocking, metadata,
    automation_condition, partitions_def`, in that order. Since Dagster 1.13.6.
    """
    spec: dg.AssetCheckSpec = _tuple_new(
        dg.AssetCheckSpec,
        (
            name,
            template.asset_key,
            description,
            template.additional_deps,
            blocking,
            template.metadata,
            template.automation_condition,
            template.partitions_def,
        ),
    )
    return spec


def with_sibling_checks(
    asset: dg.AssetsDefinition, siblings: Sequence[dg.AssetCheckSpec]
) -> dg.AssetsDefinition | None:
    """`asset`, built by `@dg.asset` with one check spec, with `siblings` added after it.

    The same definition `@dg.asset` builds from all the specs, for a fraction of its cost:
    Dagster resolves an `Out` and then an `OutputDefinition` for every check, twice the cost of
    everything else an asset of a hundred rules declares, though every check's output is the
    same but for its name. So the one check's output, built and validated by Dagster, is copied
    for each sibling under the name Dagster would give it. None when two specs would share an
    output name: the caller then lets `@dg.asset` build (and refuse) them all.

    Relies on `@dg.asset` naming a check's output `spec.get_python_identifier()`, giving each
    check an `OutputDefinition` that differs from another check's only in `_name`, after the
    asset's own output in the order of the specs; on `NodeDefinition` keeping its outputs in
    `_output_defs` and `_output_dict`, read by nothing at declaration but the asset definition
    built here; and on `AssetsDefinition.dagster_internal_init(**get_attributes_dict())`
    rebuilding an asset, as `AssetsDefinition.with_attributes` does. Since Dagster 1.13.6.
    """
    if not siblings:
        return asset
    op = asset.op
    ((template_name, template_spec),) = asset.check_specs_by_output_name.items()
    template = op.output_dict[template_name]
    specs = {template_name: template_spec}
    outputs = {}
    for spec in siblings:
        name = spec.get_python_identifier()
        if name in specs or name in op.output_dict:
            return None
        specs[name] = spec
        outputs[name] = output = _attribute_copy(template)
        output._name = name
    with_checks = copy.copy(op)
    with_checks._output_defs = [*op.output_defs, *outputs.values()]
    with_checks._output_dict = {**op.output_dict, **outputs}
    return dg.AssetsDefinition.dagster_internal_init(
        **{
            **asset.get_attributes_dict(),
            "node_def": with_checks,
            "check_specs_by_output_name": specs,
            "selected_asset_check_keys": None,
        }
    )


def _attribute_copy(value: _T) -> _T:
    # NOTE: `copy.copy` gives each copy a dict of its own, one more object per check for the
    # cycle collector to walk while a code location loads; set one by one, the attributes stay
    # in the object as Python lays out an instance's own. `setattr`, not `object.__setattr__`,
    # which costs some six times as much a call (the copied class defines no `__setattr__`).
    copied: _T = object.__new__(type(value))
    for attribute, attribute_value in vars(value).items():
        setattr(copied, attribute, attribute_value)
    return copied


# --- Dataframely -----------------------------------------------------------------------------


def validation_rules(schema: type[dy.Schema]) -> dict[str, Rule]:
    """Every rule of `schema` by Dataframely's name, in the order Dataframely reports them.

    Dataframely has no public way to list a schema's rules before validation. Relies on
    `Schema._validation_rules(with_cast=False)` returning a dict of `dataframely._rule.Rule`:
    the `@dy.rule` rules, then `primary_key`, then each column's rules named `column|kind`
    (nested ones `column|inner_...`); and on `Rule.expr`, a property that builds the rule's
    `pl.Expr` when read, so a broken `@dy.rule` raises there and not here. Since Dataframely 3.1.0.
    """
    return schema._validation_rules(with_cast=False)


def rule_function(schema: type[dy.Schema], name: str) -> Callable[..., Any] | None:
    """The function decorated with `@dy.rule` named `name` on `schema`; None if there is none.

    Relies on `@dy.rule()` leaving a `dataframely._rule.RuleFactory` as the class attribute,
    with the decorated function as `validation_fn`. Since Dataframely 3.1.0.
    """
    factory = getattr(schema, name, None)
    return factory.validation_fn if isinstance(factory, RuleFactory) else None


_NO_OUTCOMES: Mapping[str, pl.Series] = {}


def evaluated_rules(
    schema: type[dy.Schema],
    frame: pl.LazyFrame,
    rules: Mapping[str, Rule],
    outcomes: Mapping[str, pl.Series] = _NO_OUTCOMES,
) -> tuple[pl.LazyFrame, list[str], str]:
    """`frame` with one `Boolean` column per rule, their names, and a column of whether all passed.

    The plan `Schema.filter` itself splits with: it keeps the valid rows where the returned
    column is True and drops it from the invalid rows, which then hold each rule's outcome
    under the rule's name. Dataframely builds that plan only inside `filter`, which also picks
    the engine; having the plan lets the split evaluate it once and filter the rows eagerly.
    Relies on `Schema._with_evaluated_rules(lf, rules)` with the rules of `validation_rules`,
    which adds the rule columns (null filled as True) and the column
    `dataframely.schema._COLUMN_VALID`. `rules` are `validation_rules(schema)`, passed in so
    that a run reuses the ones read before (building them again costs about 10 ms at 500
    columns). `frame` must hold the schema's columns only, as
    `filter(cast=False)` selects them. `outcomes` are some rules' outcomes evaluated already, a
    `Boolean` per row of `frame` by rule name: the plan takes them as they are, relying also on
    `dataframely._rule.Rule(expr)` being a rule whose outcome is `expr`. Since Dataframely 3.1.0.
    """
    given = {name: Rule(pl.lit(outcomes[name])) for name in rules if name in outcomes}
    return schema._with_evaluated_rules(frame, {**rules, **given}), list(rules), _COLUMN_VALID


def failure_outcomes(failure: dy.FailureInfo) -> pl.DataFrame | None:
    """The invalid rows with one `Boolean` column per rule, as Dataframely holds them, or None.

    The public `FailureInfo.details()` gives the same frame with each rule column re-encoded
    as an `Enum`, at a cost larger than everything else this package does with the invalid
    rows; callers fall back to it on None. Relies on `FailureInfo._df`: True passed, False
    failed, null unknown. Since Dataframely 3.1.0.
    """
    frame = getattr(failure, "_df", None)
    return frame if isinstance(frame, pl.DataFrame) else None


def collection_filters(collection: type[dy.Collection]) -> dict[str, Callable[[Any], pl.LazyFrame]]:
    """Every `@dy.filter` of `collection` by its name, with the function it decorates.

    Dataframely has no public way to list a Collection's filters. Relies on
    `Collection._filters()` returning a dict, in declaration order (a parent's first), of
    `dataframely._filter.Filter` objects whose `logic` is the decorated function; the dict's
    keys are the names `Collection.filter` gives the filters' columns in each member's
    `FailureInfo`. Since Dataframely 3.1.0 (checked against 3.1.0 and 3.1.2).
    """
    return {name: f.logic for name, f in collection._filters().items()}


def failure_propagation_rule(member: str) -> str:
    """The rule name `Collection.filter` gives the rows it removes for `member`'s failed rows.

    A member declared with `dy.CollectionMember(propagate_row_failures=True)` removes, from
    every member not `ignored_in_filters`, the rows whose common primary key a row of it failed
    a rule with. Relies on `Collection.filter` naming that pseudo-filter's column (and its key
    in `FailureInfo.counts()`) `<member>|failure_propagation`, a name built inside the method
    and exported nowhere. Since Dataframely 3.1.0 (checked against 3.1.0 and 3.1.2).
    """
    return f"{member}|failure_propagation"


def document_type_alias(alias: Any, doc: str) -> None:
    """Give a `typing_extensions.TypeAliasType` its own docstring, for `help()` and the docs.

    A type alias cannot carry a docstring: `TypeAliasType.__setattr__` refuses every attribute
    once the alias is built, so `help(alias)` prints the class's own text (typing_extensions'
    description of the backport). This writes `__doc__` into the instance's `__dict__` past that
    guard, where `pydoc` and `inspect.getdoc` find it first.

    Relies on typing_extensions' pure-Python `TypeAliasType` keeping a per-instance `__dict__`,
    as it does on Python 3.11 to 3.13 (typing_extensions 4.6 and later, 4.16.0 checked). On an
    implementation without one (the C type of Python 3.14's `typing`), the alias keeps the
    class's text and nothing fails.

    Parameters
    ----------
    alias
        The `TypeAliasType` instance to document.
    doc
        Its docstring.
    """
    try:
        object.__setattr__(alias, "__doc__", doc)
    except (AttributeError, TypeError):
        return


# --- Dagster: a component's view of its project ----------------------------------------------


_CONTAINERS = (dg.DefsFolderComponent, CompositeYamlComponent)
"""The components that only hold others: a folder, and a `defs.yaml` of several documents."""


def project_asset_partitions(
    context: dg.ComponentLoadContext, skip: type[dg.Component]
) -> dict[dg.AssetKey, dg.PartitionsDefinition[Any] | None] | None:
    """Every asset key the project's `defs` folder defines, with its partitions; None if unseen.

    Walks the component tree from the defs folder's declaration
    (`ComponentTree.find_decl_at_path`, public, returning a `ComponentDecl` whose
    `iterate_child_component_decls()` and `component_type` Dagster does not export), descends
    into folders and multi-component YAML files, and builds every other leaf with
    `ComponentLoadContext.build_defs(loc)`, Dagster's public way for one component to use
    another's definitions (it records the dependency and caches the build). It never builds the
    calling component, nor another of type `skip`, which would walk the tree again. A tree with
    no defs folder (`ComponentTree.for_test()`) gives None. Since Dagster 1.13.0.
    """
    tree = context.component_tree
    try:
        root = tree.find_decl_at_path(context.defs_module_path)
    except Exception:  # Dagster raises a bare Exception for a tree without that folder
        return None
    # Dagster 1.13.6 names a declaration's place `path` and the caller's `component_path`;
    # later 1.13 releases name them `loc` and `component_loc`.
    own = getattr(context, "component_loc", None) or context.component_path
    found: dict[dg.AssetKey, dg.PartitionsDefinition[Any] | None] = {}
    pending = [root]
    while pending:
        decl = pending.pop()
        children = list(decl.iterate_child_component_decls())
        where = getattr(decl, "loc", None) or getattr(decl, "path")  # noqa: B009
        if where == own or issubclass(decl.component_type, skip):
            continue
        if children and issubclass(decl.component_type, _CONTAINERS):
            pending.extend(children)
            continue
        for asset in context.build_defs(where).assets or []:
            if isinstance(asset, dg.AssetsDefinition):
                found.update(dict.fromkeys(asset.keys, asset.partitions_def))
            elif isinstance(asset, dg.AssetSpec | dg.SourceAsset):
                found[asset.key] = asset.partitions_def
    return found


def component_yaml_positions(context: dg.ComponentLoadContext) -> SourcePositionTree | None:
    """Where each field of the component's `defs.yaml` is written: file, line and column.

    Reads `context.component_decl.source_tree.source_position_tree`: a YAML-backed declaration
    (`YamlDecl`, which Dagster does not export) keeps the source tree it was parsed from, the
    same tree Dagster's own validation errors quote. A component built in Python has none, and
    gives None. Since Dagster 1.13.0.
    """
    source_tree = getattr(context.component_decl, "source_tree", None)
    positions = getattr(source_tree, "source_position_tree", None)
    return positions if isinstance(positions, SourcePositionTree) else None


# NOTE: the seam's names are the classes and functions it defines without `_`, and the upstream
# types it re-exports (each imported `as` itself, the re-export mypy and ruff read). Pydantic
# files the generic it parametrizes here under its printed name, `...Factory[IOManager]`.
__all__ = sorted(
    [
        "DagsterInvalidPropertyError",
        "Resources",
        "Rule",
        *(
            name
            for name, value in list(globals().items())
            if name.isidentifier()
            and not name.startswith("_")
            and getattr(value, "__module__", None) == __name__
        ),
    ]
)

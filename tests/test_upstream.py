"""Characterization of every private Dagster and Dataframely API, through the seam that holds it.

One test (or class) per function of `dagster_dataframely._upstream`. Each asserts the shape the
package relies on, with a message naming the private access and what changed, so an upgrade that
breaks one fails here and not in a user's run. The last tests keep the fence itself: the lint
configuration covers every private upstream module, and no module but the seam reaches a
private name through `getattr`/`setattr`.
"""

# No `from __future__ import annotations`: Dagster reads the resources' and contexts' annotations.
import ast
import importlib
import inspect
import pkgutil
import sys
import tomllib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, Self

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster._core.remote_representation.external_data import RepositorySnap
from dagster._serdes import deserialize_value, serialize_value
from polars.testing import assert_frame_equal
from pydantic import PrivateAttr
from typing_extensions import TypeAliasType
from upath import UPath

import dagster_dataframely as dd
from dagster_dataframely._upstream import (
    DagsterInvalidPropertyError,
    NestedResourceFactory,
    Rule,
    check_evaluation_target,
    check_evaluations,
    collection_filters,
    context_for_manager,
    current_asset_context,
    database_handled_types,
    direct_invocation_context,
    document_type_alias,
    evaluated_rules,
    failure_outcomes,
    failure_propagation_rule,
    input_context,
    is_context_parameter,
    no_resources,
    output_context_for,
    output_io_manager,
    planned_partitions,
    report_step_engine_event,
    resource_config_of,
    rule_function,
    running_step,
    sibling_check_spec,
    source_graph_has,
    source_graph_materializable_keys,
    step_engine_event_text,
    step_output,
    table_of_records,
    table_record_of_cells,
    upath_asset_folder,
    upath_base,
    upath_lays_out_partitions_as_dagster,
    upath_output_locations,
    upath_partition_locations,
    validation_rules,
    with_sibling_checks,
)

from .schemas import EveryDtype, OrderBook, OrderLines, Orders

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "dagster_dataframely"


class ParquetFiles(dg.UPathIOManager):
    """A parquet manager on Dagster's public `UPathIOManager`, recording every file it writes.

    It lays out files by `context.get_asset_identifier()`, as `PolarsParquetIOManager` does.
    """

    extension = ".parquet"

    def __init__(self, base_path: UPath) -> None:
        super().__init__(base_path=base_path)
        self.written: list[tuple[str, pl.DataFrame]] = []

    def dump_to_path(self, context: dg.OutputContext, obj: pl.DataFrame, path: UPath) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        obj.write_parquet(str(path))
        self.written.append((path.name, obj))

    def load_from_path(self, context: dg.InputContext, path: UPath) -> pl.DataFrame:
        return pl.read_parquet(str(path))


class RecordingIOManager(dg.IOManager):
    """Records the output contexts it is handed, and stores nothing."""

    def __init__(self) -> None:
        self.contexts: list[dg.OutputContext] = []

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        self.contexts.append(context)

    def load_input(self, context: dg.InputContext) -> Any:
        raise NotImplementedError


# --- Dagster: the running step ---------------------------------------------------------------


def test_contexts_on_no_resources_build_no_instance_of_their_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`no_resources` / `input_context`: IO contexts that build no ephemeral instance."""
    partitions = dg.StaticPartitionsDefinition(["a", "b"])
    built: list[dg.DagsterInstance] = []
    ephemeral = dg.DagsterInstance.ephemeral

    def counted(*args: Any, **kwargs: Any) -> dg.DagsterInstance:
        built.append(ephemeral(*args, **kwargs))
        return built[-1]

    with dg.DagsterInstance.ephemeral() as instance:
        monkeypatch.setattr(dg.DagsterInstance, "ephemeral", staticmethod(counted))
        # The cost the seam avoids: a context given no resources builds an instance for them.
        with dg.build_input_context(asset_key=dg.AssetKey("orders"), instance=instance):
            pass
        assert len(built) == 1, "build_input_context no longer builds an instance: drop the seam"
        with no_resources(instance) as resources:
            output = dg.build_output_context(
                asset_key=dg.AssetKey("orders"),
                asset_partitions_def=partitions,
                asset_partition_key_range=dg.PartitionKeyRange("a", "b"),
                instance=instance,
                resources=resources,
            )
            reading = input_context(dg.AssetKey("orders"), instance, resources)
        assert len(built) == 1, "a context on a built Resources built an instance of its own"
        assert sorted(output.asset_partition_keys) == ["a", "b"]
        assert isinstance(reading, dg.InputContext)
        assert reading.asset_key == dg.AssetKey("orders"), (
            "InputContext(asset_key=, instance=, resources=) no longer keeps what it was given"
        )
        assert reading.instance is instance


def test_current_asset_context_is_the_running_assets_context_and_none_outside_a_step(
    instance: dg.DagsterInstance,
) -> None:
    seen: dict[str, object] = {}

    @dg.asset
    def probe(context: dg.AssetExecutionContext) -> None:
        current = current_asset_context()
        seen["same"] = current is context
        seen["keys"] = current.assets_def.keys if current is not None else None

    @dg.op
    def plain_op() -> None:
        current = current_asset_context()
        seen["op has an assets_def"] = current is not None and current.has_assets_def

    dg.materialize([probe], instance=instance)
    dg.GraphDefinition(name="plain", node_defs=[plain_op]).to_job().execute_in_process(
        instance=instance
    )

    assert seen == {"same": True, "keys": {probe.key}, "op has an assets_def": False}, (
        "dg.AssetExecutionContext.get() no longer returns the running step's context: "
        "dd.asset cannot keep the Columns tab on the materialization"
    )
    assert current_asset_context() is None, (
        "dg.AssetExecutionContext.get() outside a step no longer raises "
        "DagsterInvariantViolationError"
    )


def test_direct_invocation_context_is_the_context_dagster_took_for_a_function_without_one(
    instance: dg.DagsterInstance,
) -> None:
    """`_type_check_output_wrapper`'s `type_check_gen`, which holds the bound context.

    Dagster takes a context passed to an asset whose function declares none and calls the
    function without it; the partition key of the call is only on that context.
    """
    seen: list[object] = []

    @dg.asset(partitions_def=dg.StaticPartitionsDefinition(["eu", "us"]))
    def probe() -> Iterator[dg.MaterializeResult]:
        seen.append(direct_invocation_context())
        yield dg.MaterializeResult()

    given = dg.build_asset_context(partition_key="eu")
    list(probe(given))
    (found,) = seen
    assert isinstance(found, dg.AssetExecutionContext), (
        "dagster._core.definitions.op_invocation._type_check_output_wrapper no longer iterates "
        "a directly invoked generator from `type_check_gen` holding the bound context as "
        "`context`: a dd.asset without a context cannot name its partition in a direct call"
    )
    assert found is given
    assert found.partition_key == "eu"

    seen.clear()
    dg.materialize([probe], partition_key="us", instance=instance)
    assert seen == [None], "a run is no direct invocation"
    assert direct_invocation_context() is None


@pytest.mark.parametrize("name", ["context", "_context", "context_", "_", "ctx", "orders"])
def test_is_context_parameter_agrees_with_dagster(name: str) -> None:
    """`get_valid_name_permutations("context")`: the first parameters Dagster fills with it."""

    def body(first: Any) -> None:
        del first

    body.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    )
    dagster_passes_context = name not in dg.asset(body, name="probe").keys_by_input_name
    assert is_context_parameter(name) == dagster_passes_context, (
        "dagster._core.decorator_utils.get_valid_name_permutations('context') no longer matches "
        f"the names @dg.asset passes the context to: {name!r} is "
        f"{'' if dagster_passes_context else 'not '}a context parameter for Dagster."
    )


def test_running_step_is_none_under_direct_invocation() -> None:
    """`get_step_execution_context()` on a direct invocation's context raises Dagster's error.

    `running_step` turns that error into None; the spec names the error for `delegating_writer`,
    which raises exactly it.
    """
    context = dg.build_asset_context()
    with pytest.raises(DagsterInvalidPropertyError):
        context.op_execution_context.get_step_execution_context()
    assert running_step(context) is None, (
        "OpExecutionContext.get_step_execution_context() no longer raises "
        "DagsterInvalidPropertyError under direct invocation"
    )


FRAMES = dg.PythonObjectDagsterType(pl.DataFrame, name="Frames")


def test_step_output_addresses_the_output_dagster_stores(tmp_path: Path) -> None:
    """`get_step_execution_context()`, `StepOutputHandle`, `get_output_context`, `get_io_manager`.

    The copy carries everything but the asset key from the output Dagster itself writes.
    """
    manager = RecordingIOManager()
    seen: dict[str, Any] = {}
    target = dg.AssetKey(["elsewhere", "probe"])

    @dg.asset(
        key_prefix="lake",
        metadata={"partition_expr": "day"},
        partitions_def=dg.StaticPartitionsDefinition(["a", "b"]),
    )
    def probe(context: dg.AssetExecutionContext) -> int:
        step = running_step(context)
        handle = step_output(
            step, context.assets_def.get_output_name_for_asset_key(context.asset_key)
        )
        seen["copy"] = output_context_for(handle, target)
        seen["typed"] = output_context_for(handle, target, dagster_type=FRAMES)
        seen["manager"] = output_io_manager(handle)
        return 1

    dg.materialize([probe], resources={"io_manager": manager}, partition_key="b")

    (stored,) = manager.contexts  # the context Dagster gave the manager for the table itself
    copied: dg.OutputContext = seen["copy"]
    assert seen["manager"] is manager, (
        "StepExecutionContext.get_io_manager(StepOutputHandle(step_key, output_name)) no longer "
        "returns the IO manager bound to the output."
    )
    assert stored.asset_key == dg.AssetKey(["lake", "probe"]), "the table's own write moved"
    assert copied.asset_key == target, (
        "OutputContext._asset_key: the copied output context no longer reports the swapped "
        "asset key; a quarantine would be written over the table."
    )
    assert copied.get_asset_identifier() == [*target.path, "b"], (
        "OutputContext.get_asset_identifier() no longer follows the swapped _asset_key; a path "
        "based IO manager would write the quarantine over the table."
    )
    assert copied.asset_spec.key == stored.asset_spec.key == dg.AssetKey(["lake", "probe"]), (
        "OutputContext.asset_spec of the copy is no longer the step's own asset; "
        "QuarantineAwareIOManager can no longer tell a quarantine write apart."
    )
    assert copied.partition_key == "b", "the copied output context lost the partition key"
    assert copied.definition_metadata["partition_expr"] == "day", (
        "the copied output context lost the asset's definition metadata"
    )
    assert copied.dagster_type is stored.dagster_type, "the copy changed the output's type"
    assert seen["typed"].dagster_type is FRAMES, (
        "OutputContext._dagster_type: the copy no longer reports the swapped type; "
        "dagster-polars would sink the quarantine as it sinks a streamed table."
    )


def test_dagster_honours_the_swapped_key_so_invalid_rows_never_reach_the_table(
    tmp_path: Path,
) -> None:
    """The worst case: a quarantine written through the asset's own manager lands beside the table.

    Should Dagster stop honouring `OutputContext._asset_key` on the copy, the invalid rows
    would go to the table's file; this run reads back every file written.
    """
    manager = ParquetFiles(UPath(tmp_path))

    @dd.asset(Orders, quarantine=True)
    def orders() -> pl.DataFrame:
        return pl.DataFrame({"order_id": ["a", "b", "c"], "amount": [1.0, -1.0, 2.0]})

    dg.materialize([orders], resources={"io_manager": manager})

    written = sorted((name, frame["order_id"].to_list()) for name, frame in manager.written)
    assert written == [("orders.parquet", ["a", "c"]), ("orders_quarantine.parquet", ["b"])], (
        "OutputContext._asset_key: a quarantine written through the asset's IO manager did not "
        f"land in its own file beside the table; files written: {written}."
    )
    assert pl.read_parquet(tmp_path / "orders.parquet")["order_id"].to_list() == ["a", "c"]
    assert pl.read_parquet(tmp_path / "orders_quarantine.parquet")["order_id"].to_list() == ["b"]


def test_source_graph_materializable_keys_include_assets_outside_the_selection() -> None:
    """`AssetGraph.materializable_asset_keys` of the graph a selected job was built from."""
    seen: list[set[dg.AssetKey]] = []

    @dg.asset(key=["elsewhere", "other"])
    def other() -> int:
        return 1

    @dg.asset
    def probe(context: dg.AssetExecutionContext) -> int:
        seen.append(set(source_graph_materializable_keys(running_step(context))))
        return 1

    dg.materialize(
        [probe, other, dg.AssetSpec("external")],
        selection=[probe.key],
        resources={"io_manager": RecordingIOManager()},
    )
    assert seen == [{probe.key, other.key}], (
        "AssetGraph.materializable_asset_keys of the source graph no longer lists the code "
        f"location's materializable assets: {seen}."
    )


def test_source_graph_has_sees_specs_past_the_run_selection() -> None:
    """`asset_layer.asset_graph`, `JobScopedAssetGraph.source_asset_graph`, `has`."""
    seen: dict[str, bool] = {}
    external = dg.AssetSpec("external")

    @dg.asset
    def other() -> int:
        return 1

    @dg.asset
    def probe(context: dg.AssetExecutionContext) -> int:
        step = running_step(context)
        for key in ("other", "external", "absent"):
            seen[key] = source_graph_has(step, dg.AssetKey(key))
        return 1

    dg.materialize(
        [probe, other, external],
        selection=[probe.key],
        resources={"io_manager": RecordingIOManager()},
    )
    assert seen == {"other": True, "external": True, "absent": False}, (
        "the asset graph a selected job was built from (JobScopedAssetGraph.source_asset_graph) "
        f"no longer answers which assets the code location declares: {seen}."
    )


def test_planned_partitions_reads_the_planned_event() -> None:
    """`AssetMaterializationPlannedData` with `asset_key`, `partition`, `partitions_subset`."""

    @dg.asset(partitions_def=dg.StaticPartitionsDefinition(["p1", "p2"]))
    def orders() -> int:
        return 1

    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize(
            [orders],
            partition_key="p1",
            instance=instance,
            resources={"io_manager": RecordingIOManager()},
        )
        records = instance.get_records_for_run(
            result.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED
        ).records
    (event,) = [record.event_log_entry.dagster_event for record in records]
    assert event is not None
    assert planned_partitions(event, orders.key) == (True, "p1", None), (
        "an ASSET_MATERIALIZATION_PLANNED event's AssetMaterializationPlannedData changed shape"
    )
    assert planned_partitions(event, dg.AssetKey("returns")) == (False, None, None)


def test_a_step_engine_event_is_stored_at_once_and_read_back() -> None:
    """`DagsterInstance.report_engine_event(message, run, EngineEventData(metadata), step_key=)`."""
    with dg.DagsterInstance.ephemeral() as instance:
        run = dg.DagsterRun(job_name="job", run_id="run-1", status=dg.DagsterRunStatus.STARTED)
        instance.add_run(run)
        report_step_engine_event(instance, run, "orders", "said", {"word": "writes"})
        (record,) = instance.get_records_for_run(
            "run-1", of_type=dg.DagsterEventType.ENGINE_EVENT
        ).records
    event = record.event_log_entry.dagster_event
    assert event is not None
    assert (event.step_key, event.message) == ("orders", "said"), (
        "DagsterInstance.report_engine_event no longer stores the step key and message given"
    )
    assert step_engine_event_text(event, "word") == "writes", (
        "an engine event's EngineEventData.metadata no longer keeps the text metadata given"
    )
    assert step_engine_event_text(event, "other") is None


@pytest.mark.filterwarnings("ignore::dagster.PreviewWarning")
def test_check_evaluation_target_is_what_dagster_fills_in_for_a_check_result() -> None:
    """`AssetCheckEvaluationTargetMaterializationData(storage_id, run_id, timestamp)`."""
    partitions = dg.StaticPartitionsDefinition(["p1", "p2"])
    spec = dg.AssetCheckSpec("positive", asset="orders", partitions_def=partitions)

    @dg.asset(partitions_def=partitions, check_specs=[spec])
    def orders() -> Iterator[dg.Output[int] | dg.AssetCheckResult]:
        yield dg.Output(1)
        yield dg.AssetCheckResult(passed=True)

    with dg.DagsterInstance.ephemeral() as instance:
        for key in ("p1", "p2", "p1"):
            result = dg.materialize(
                [orders],
                partition_key=key,
                instance=instance,
                resources={"io_manager": RecordingIOManager()},
            )
        (evaluation,) = result.get_asset_check_evaluations()
        ours = check_evaluation_target(instance, orders.key, "p1")
        assert ours is not None
        assert ours == evaluation.target_materialization_data, (
            "AssetCheckEvaluationTargetMaterializationData, or the materialization Dagster "
            f"points a partition's check evaluation at, changed: {ours} != "
            f"{evaluation.target_materialization_data}"
        )
        assert ours.run_id == result.run_id
        assert check_evaluation_target(instance, orders.key, "p3") is None


def test_check_evaluations_are_a_checks_reported_results_newest_first_by_partition() -> None:
    """`get_asset_check_execution_history(key, limit=, partition_filter=PartitionKeyFilter(..))`:
    records newest first, each with its run id, partition, time and evaluation event."""
    partitions = dg.StaticPartitionsDefinition(["p1", "p2"])
    spec = dg.AssetCheckSpec("positive", asset="orders", partitions_def=partitions)

    @dg.asset(partitions_def=partitions, check_specs=[spec])
    def orders(context: dg.AssetExecutionContext) -> Iterator[dg.Output[int] | dg.AssetCheckResult]:
        yield dg.Output(1)
        yield dg.AssetCheckResult(passed=True, metadata={"run_partition": context.partition_key})

    with dg.DagsterInstance.ephemeral() as instance:
        runs = [
            (key, dg.materialize([orders], partition_key=key, instance=instance).run_id)
            for key in ("p1", "p2", "p1")
        ]
        found = check_evaluations(instance, spec.key, "p1", limit=10)
        assert [(run_id, partition) for run_id, partition, _, _ in found] == [
            (runs[2][1], "p1"),
            (runs[0][1], "p1"),
        ], "the check history of one partition, newest first, changed shape"
        assert found[0][2] >= found[1][2], "the records' create_timestamp is not newest first"
        assert found[0][3]["run_partition"] == dg.TextMetadataValue("p1"), (
            "an evaluation's metadata is no longer the check result's"
        )
        every = check_evaluations(instance, spec.key, None, limit=2, every_partition=True)
        assert [run_id for run_id, *_ in every] == [runs[2][1], runs[1][1]], (
            "the check history without a partition filter is not every partition's, newest first"
        )
        assert check_evaluations(instance, spec.key, None, limit=10) == [], (
            "a filter on no partition matched a partitioned evaluation"
        )


# --- Dagster: IO manager contexts and resources ----------------------------------------------


class TestContextForManager:
    """`_resource_config` of input and output contexts, `_user_generated_metadata` of outputs."""

    def test_an_output_context_carries_the_given_config_and_its_own_metadata(self) -> None:
        original = dg.build_output_context(resource_config={"base": "wrapper"})
        original.add_output_metadata({"before": 1})
        forwarded = context_for_manager(original, {"base": "wrapped"}, clear_logged_metadata=True)
        assert forwarded.resource_config == {"base": "wrapped"}, (
            "OutputContext.resource_config no longer reads _resource_config."
        )
        assert dict(forwarded.get_logged_metadata()) == {}, (
            "OutputContext.get_logged_metadata() no longer reads _user_generated_metadata."
        )
        forwarded.add_output_metadata({"after": 2})
        assert set(original.get_logged_metadata()) == {"before"}, (
            "OutputContext.add_output_metadata now mutates the metadata a copy shares with the "
            "original, so a wrapped manager's metadata would leak onto the wrapper's context."
        )
        assert original.resource_config == {"base": "wrapper"}

    def test_an_input_context_carries_the_given_config(self) -> None:
        original = dg.build_input_context(resource_config={"base": "wrapper"})
        forwarded = context_for_manager(original, None)
        assert forwarded.resource_config is None, (
            "InputContext.resource_config no longer reads _resource_config."
        )
        assert original.resource_config == {"base": "wrapper"}


class _Configured(dg.ConfigurableIOManager):
    base: str
    level: int = 3

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        _seen_configs.append(context.resource_config)

    def load_input(self, context: dg.InputContext) -> Any:
        raise NotImplementedError


_seen_configs: list[Any] = []


@dg.io_manager(config_schema={"base": str, "level": dg.Field(int, default_value=3)})
def _function_manager(init_context: dg.InitResourceContext) -> dg.IOManager:
    class Recording(dg.IOManager):
        def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
            _seen_configs.append(context.resource_config)

        def load_input(self, context: dg.InputContext) -> Any:
            raise NotImplementedError

    return Recording()


@pytest.mark.parametrize(
    "resource",
    [
        pytest.param(_Configured(base=dg.EnvVar("SEAM_BASE")), id="ConfigurableIOManager"),
        pytest.param(_function_manager.configured({"base": "fixed"}), id="configured-definition"),
    ],
)
def test_resource_config_of_is_what_dagster_hands_the_manager(
    resource: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ConfigurableResourceFactory._resolved_config_dict` and `dagster._config.process_config`."""
    monkeypatch.setenv("SEAM_BASE", "from-env")
    _seen_configs.clear()

    @dg.asset
    def probe() -> int:
        return 1

    dg.materialize([probe], resources={"io_manager": resource})
    assert _seen_configs == [resource_config_of(resource)], (
        "ConfigurableResourceFactory._resolved_config_dict / process_config no longer give the "
        f"config Dagster hands the manager: Dagster gave {_seen_configs}, the seam read "
        f"{resource_config_of(resource)}."
    )
    assert resource_config_of(RecordingIOManager()) is None


class _InnerFactory(dg.ConfigurableIOManagerFactory[dg.IOManager]):
    def create_io_manager(self, context: dg.InitResourceContext) -> dg.IOManager:
        return RecordingIOManager()


class _Keeping(NestedResourceFactory):
    """Reads its nested resource in `__init__`, as `QuarantineAwareIOManager` does."""

    inner: dg.ResourceDependency[Any]
    _kept: str = PrivateAttr(default="lost")

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        # Dagster's rebuild calls this again with `inner` already built: a RecordingIOManager.
        self._kept = type(data["inner"]).__name__

    def carry_over_to(self, rebuilt: Self) -> None:
        rebuilt._kept = self._kept

    def create_io_manager(self, context: dg.InitResourceContext) -> dg.IOManager:
        _seen_configs.append(self._kept)
        return RecordingIOManager()


def test_nested_resource_factory_keeps_its_state_through_dagsters_rebuild() -> None:
    """`ConfigurableResourceFactory._with_updated_values(values)`, called when a run starts."""
    signature = inspect.signature(dg.ConfigurableIOManagerFactory._with_updated_values)
    assert list(signature.parameters) == ["self", "values"], (
        "ConfigurableResourceFactory._with_updated_values changed its signature to "
        f"{signature}; NestedResourceFactory overrides it."
    )
    _seen_configs.clear()

    @dg.asset
    def probe() -> int:
        return 1

    dg.materialize([probe], resources={"io_manager": _Keeping(inner=_InnerFactory())})
    assert _seen_configs == ["_InnerFactory"], (
        "Dagster no longer rebuilds a resource with nested resources through "
        "_with_updated_values, or the rebuild dropped state carry_over_to copies: "
        f"create_io_manager saw {_seen_configs}."
    )


def test_database_handled_types_is_none_for_a_manager_that_is_not_a_database_one() -> None:
    """`DbIOManager` itself: `integration_tests/test_upstream_database.py` (needs DuckDB)."""
    assert database_handled_types(RecordingIOManager()) is None


@pytest.mark.parametrize("partition_key", [None, "p1"], ids=["unpartitioned", "partitioned"])
def test_upath_output_locations_are_where_handle_output_writes(
    tmp_path: Path, partition_key: str | None
) -> None:
    """`UPathIOManager._get_path`, `_get_paths_for_partitions` and `_base_path`."""
    manager = ParquetFiles(UPath(tmp_path))
    partitions = dg.StaticPartitionsDefinition(["p1"]) if partition_key else None
    context = dg.build_output_context(
        asset_key=["sales", "orders"], partition_key=partition_key, asset_partitions_def=partitions
    )

    (location,) = upath_output_locations(manager, context)
    manager.handle_output(context, pl.DataFrame({"rows": [1]}))

    expected = tmp_path / "sales" / ("orders/p1.parquet" if partition_key else "orders.parquet")
    assert Path(location.path) == expected, f"UPathIOManager would write {location}"
    assert expected.is_file()
    assert Path(upath_base(manager).path) == tmp_path


SHOPS_BY_DAY = dg.MultiPartitionsDefinition(
    {
        "shop": dg.StaticPartitionsDefinition(["/north", "a/b"]),
        "day": dg.StaticPartitionsDefinition(["2026-01-01"]),
    }
)


@pytest.mark.parametrize(
    ("partitions_def", "partition_key"),
    [
        (dg.StaticPartitionsDefinition(["v1.2"]), "v1.2"),
        (dg.StaticPartitionsDefinition(["/lead"]), "/lead"),
        (SHOPS_BY_DAY, dg.MultiPartitionKey({"shop": "/north", "day": "2026-01-01"})),
        (SHOPS_BY_DAY, dg.MultiPartitionKey({"shop": "a/b", "day": "2026-01-01"})),
    ],
    ids=["dotted", "leading-slash", "multi-leading-slash", "multi-slash"],
)
def test_upath_partition_locations_are_where_handle_output_writes_each_partition(
    tmp_path: Path, partitions_def: dg.PartitionsDefinition, partition_key: Any
) -> None:
    """`UPathIOManager._get_path_without_extension` and `_with_extension`, and the layout of
    `_get_paths_for_partitions`: parts in the order of the dimension names, joined by `/`."""
    manager = ParquetFiles(UPath(tmp_path))
    context = dg.build_output_context(
        asset_key=["sales", "orders"],
        partition_key=str(partition_key),
        asset_partitions_def=partitions_def,
    )
    assert upath_lays_out_partitions_as_dagster(manager), "ParquetFiles no longer counts as one"

    (location,) = upath_partition_locations(manager, context, [partition_key]).values()
    manager.handle_output(context, pl.DataFrame({"rows": [1]}))

    (written,) = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert Path(location.path) == written, f"UPathIOManager wrote {written}, not {location}"
    assert Path(upath_asset_folder(manager, context).path) == tmp_path / "sales" / "orders"


def test_a_manager_with_a_layout_of_its_own_does_not_count_as_dagster_s() -> None:
    """`UPathIOManager._get_paths_for_partitions` and `_with_extension` are still its own."""

    class ByDay(ParquetFiles):
        def get_path_for_partition(
            self, context: dg.OutputContext, path: UPath, partition: str
        ) -> UPath:
            return path / "day" / partition

    assert not upath_lays_out_partitions_as_dagster(ByDay(UPath("/tmp")))
    assert hasattr(dg.UPathIOManager, "_get_paths_for_partitions")
    assert hasattr(dg.UPathIOManager, "_with_extension")


def test_unchecked_table_records_and_tables_are_what_dagsters_checked_constructors_build() -> None:
    """`tuple.__new__` on `dg.TableRecord` (field `data`) and `dg.TableMetadataValue`."""
    cells: dict[str, str | int | float | bool | None] = {"a": "x", "b": 1, "c": 1.5, "d": None}
    record = table_record_of_cells(cells)
    checked = dg.TableRecord(dict(cells))
    message = "dg.TableRecord is no longer a NamedTuple record whose one field is data."
    assert type(record) is dg.TableRecord, message
    assert record.data is cells, message
    assert record == checked
    schema = dg.TableSchema(columns=[dg.TableColumn(name, "t") for name in cells])
    table = table_of_records([record, record], schema)
    built = dg.MetadataValue.table(records=[checked, checked], schema=schema)
    assert type(table) is dg.TableMetadataValue, "dg.TableMetadataValue is no longer a record."
    assert (table.records, table.schema) == ([record, record], schema), (
        "dg.TableMetadataValue's fields are no longer records, then schema."
    )
    assert table == built
    # What the event log stores: the same bytes, read back as the checked value.
    assert serialize_value(table) == serialize_value(built)
    assert deserialize_value(serialize_value(table), dg.TableMetadataValue) == built


ORDERS_KEY = dg.AssetKey(["sales", "orders"])


@pytest.fixture(params=[False, True], ids=["unpartitioned", "partitioned"])
def partitions(request: pytest.FixtureRequest) -> dg.PartitionsDefinition[str] | None:
    """No partitions, then two static ones: check specs and their outputs carry them."""
    return dg.StaticPartitionsDefinition(["p1", "p2"]) if request.param else None


def _check_spec(
    name: str,
    partitions: dg.PartitionsDefinition[str] | None,
    *,
    description: str,
    blocking: bool = False,
) -> dg.AssetCheckSpec:
    """A check spec on the orders asset, built by Dagster's checked constructor."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)  # partitioned checks: a preview
        return dg.AssetCheckSpec(
            name,
            asset=ORDERS_KEY,
            description=description,
            blocking=blocking,
            partitions_def=partitions,
        )


def test_sibling_check_specs_are_what_dagsters_checked_constructor_builds(
    partitions: dg.PartitionsDefinition[str] | None,
) -> None:
    """`tuple.__new__` on `dg.AssetCheckSpec`, its fields in the order `sibling_check_spec` uses."""
    template = _check_spec("dy_schema__columns", partitions, description="x", blocking=True)
    checked = _check_spec("dy_rule__amount__min", partitions, description="amount >= 0")
    sibling = sibling_check_spec(
        template, name="dy_rule__amount__min", description="amount >= 0", blocking=False
    )
    assert dg.AssetCheckSpec._fields == (
        "name",
        "asset_key",
        "description",
        "additional_deps",
        "blocking",
        "metadata",
        "automation_condition",
        "partitions_def",
    ), "dg.AssetCheckSpec's fields are no longer those sibling_check_spec fills, in its order."
    assert type(sibling) is dg.AssetCheckSpec
    assert sibling == checked
    assert (sibling.key, sibling.partitions_def) == (checked.key, partitions)
    # Dagster accepts it where a user's spec goes, and keeps it as given.
    asset = dg.asset(key=ORDERS_KEY, check_specs=[template, sibling], partitions_def=partitions)(
        lambda: None
    )
    assert asset.get_spec_for_check_key(checked.key) == checked


def _checked_asset(
    check_specs: list[dg.AssetCheckSpec],
    partitions: dg.PartitionsDefinition[str] | None,
    reported: list[dg.AssetCheckSpec],
) -> dg.AssetsDefinition:
    """An asset like `dd.asset`'s: checks, an input, partitions, its own IO manager key.

    Its function reports the checks of `reported`, which may be more than it declares.
    """

    def orders(upstream: int) -> Iterator[dg.Output[int] | dg.AssetCheckResult]:
        yield dg.Output(upstream, "result")
        for spec in reported:
            yield dg.AssetCheckResult(check_name=spec.name, passed=spec.name != "dy_rule__b")

    return dg.asset(
        orders,
        key=ORDERS_KEY,
        ins={"upstream": dg.AssetIn(key="upstream")},
        check_specs=check_specs,
        code_version="v1",
        io_manager_key="orders_io",
        partitions_def=partitions,
        output_required=False,
    )


def test_an_asset_with_sibling_checks_is_the_one_dagster_builds_from_every_spec(
    partitions: dg.PartitionsDefinition[str] | None,
) -> None:
    """Copies of the first check's output under Dagster's names, and the asset rebuilt."""
    specs = [
        _check_spec(name, partitions, description=name, blocking=name == "dy_schema__columns")
        for name in ("dy_schema__columns", "dy_rule__a", "dy_rule__b", "dy_rule__c")
    ]
    dagsters = _checked_asset(specs, partitions, specs)
    ours = with_sibling_checks(_checked_asset(specs[:1], partitions, specs), specs[1:])
    assert ours is not None

    def outputs(asset: dg.AssetsDefinition) -> list[dict[str, Any]]:
        return [vars(output) for output in asset.op.output_defs]

    assert outputs(ours) == outputs(dagsters), (
        "@dg.asset no longer gives every check the same OutputDefinition but for _name, named "
        "spec.get_python_identifier(), after the asset's own output."
    )
    assert ours.op.output_dict.keys() == dagsters.op.output_dict.keys()
    assert ours.check_specs_by_output_name == dagsters.check_specs_by_output_name
    assert ours.check_keys == dagsters.check_keys
    assert list(ours.check_specs) == list(dagsters.check_specs)
    assert list(ours.specs) == list(dagsters.specs)
    assert ours.keys_by_input_name == dagsters.keys_by_input_name
    assert ours.partitions_def == dagsters.partitions_def
    assert ours.op.name == dagsters.op.name
    assert ours.get_resource_requirements() is not None
    assert {r.key for r in ours.get_resource_requirements()} == {
        r.key for r in dagsters.get_resource_requirements()
    }
    upstream = dg.AssetSpec("upstream", partitions_def=partitions)
    assert _repository_snapshot(ours, upstream) == _repository_snapshot(dagsters, upstream), (
        "The webserver and the daemon no longer see the same code location for the two builds."
    )
    # A run reports every check, the copies included, as Dagster's own definition does.
    for asset in (ours, dagsters):
        result = dg.materialize(
            [asset, upstream],
            selection=[asset],
            partition_key="p1" if partitions else None,
            resources={"orders_io": dg.InMemoryIOManager(), "io_manager": _FixedInput(7)},
        )
        evaluations = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
        assert evaluations == {
            "dy_schema__columns": True,
            "dy_rule__a": True,
            "dy_rule__b": False,
            "dy_rule__c": True,
        }


def _repository_snapshot(*assets: dg.AssetsDefinition | dg.AssetSpec) -> str:
    """What a code location serves the webserver and the daemon for `assets`, serialized."""
    defs = dg.Definitions(assets=assets, resources={"orders_io": dg.InMemoryIOManager()})
    return serialize_value(RepositorySnap.from_def(defs.get_repository_def()))


def test_sibling_checks_whose_output_names_collide_are_left_to_dagster() -> None:
    """A spec given twice: None, so `@dg.asset` refuses the duplicate in its own words."""
    spec = _check_spec("dy_schema__columns", None, description="x")
    assert with_sibling_checks(_checked_asset([spec], None, [spec]), [spec]) is None


class _FixedInput(dg.IOManager):
    """Loads `value` for every input; the upstream asset is a spec, never materialized."""

    def __init__(self, value: int) -> None:
        self.value = value

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        raise AssertionError("only the upstream input is loaded")

    def load_input(self, context: dg.InputContext) -> int:
        return self.value


# --- Dataframely -----------------------------------------------------------------------------


class TestDataframelyRules:
    """`Schema._validation_rules(with_cast=False)`, `Rule.expr`, `RuleFactory.validation_fn`."""

    def test_validation_rules_lists_schema_rules_then_primary_key_then_column_rules(self) -> None:
        rules = validation_rules(OrderLines)
        names = list(rules)
        assert names[:3] == ["paid_has_price", "plausible_quantity", "primary_key"], (
            f"Schema._validation_rules changed its order: {names[:3]}."
        )
        assert {"order_id|regex", "line_no|min", "line_no|max_exclusive"} <= set(names), (
            f"Schema._validation_rules no longer names column rules `column|kind`: {names}."
        )
        assert all(isinstance(rule, Rule) for rule in rules.values())
        assert all(isinstance(rule.expr, pl.Expr) for rule in rules.values()), (
            "dataframely._rule.Rule.expr no longer gives the rule's pl.Expr."
        )

    def test_nested_rule_names(self) -> None:
        names = set(validation_rules(EveryDtype))
        expected = {
            "address|inner_city_nullability",
            "address|inner_city_max_length",
            "address|inner_zip_min",
            "tags|inner_min_length",
            "tags|max_length",
            "vec|inner_min",
        }
        assert expected <= names, (
            f"Schema._validation_rules renamed nested rules; missing {expected - names}."
        )

    def test_a_rule_expression_is_built_only_when_read(self) -> None:
        class Broken(dy.Schema):
            a = dy.Int64()

            @dy.rule()
            def no_cls() -> pl.Expr:  # type: ignore[misc]
                return pl.col("a") > 0

        rules = validation_rules(Broken)  # listing the rules must not build them
        with pytest.raises(TypeError):
            _ = rules["no_cls"].expr

    def test_rule_function_is_the_decorated_function(self) -> None:
        function = rule_function(OrderLines, "paid_has_price")
        assert function is not None, (
            "@dy.rule() no longer leaves a dataframely._rule.RuleFactory with validation_fn."
        )
        assert function.__doc__ == "Require a positive price on a paid line."
        assert rule_function(OrderLines, "primary_key") is None


def test_evaluated_rules_is_the_plan_schema_filter_splits_with() -> None:
    """`Schema._with_evaluated_rules` and `dataframely.schema._COLUMN_VALID`."""

    class Lines(dy.Schema):
        key = dy.Int64(primary_key=True)
        code = dy.Int16(nullable=True, is_in=[1, 2])

        @dy.rule()
        def one_code_per_key(cls) -> pl.Expr:
            return pl.col("code").n_unique().over("key") == 1

    frame = pl.DataFrame(
        {"key": [1, 1, 2, 3, None, 4], "code": [1, 2, 1, None, 1, 5]},
        schema={"key": pl.Int64, "code": pl.Int16},
    )
    plan, rules, passed = evaluated_rules(Lines, frame.lazy(), validation_rules(Lines))
    evaluated = plan.collect()
    assert rules == list(validation_rules(Lines)), "evaluated_rules lists other rules."
    assert evaluated.columns == ["key", "code", *rules, passed], (
        "Schema._with_evaluated_rules no longer adds one column per rule, then "
        f"dataframely.schema._COLUMN_VALID: {evaluated.columns}."
    )
    valid, failure = Lines.filter(frame, cast=False)
    assert_frame_equal(evaluated.filter(pl.col(passed)).select("key", "code"), valid)
    outcomes = failure.details().with_columns(pl.col(rules) == "valid")
    assert_frame_equal(evaluated.filter(~pl.col(passed)).drop(passed), outcomes)


def test_evaluated_rules_take_an_outcome_given_as_it_is() -> None:
    """`dataframely._rule.Rule(expr)`: a rule whose outcome is `expr`, in the evaluated plan."""

    class Codes(dy.Schema):
        code = dy.String(nullable=True, regex=r"^[0-9]+$")
        size = dy.Int64(min=0)

    frame = pl.DataFrame({"code": ["1", "x", None, "22"], "size": [1, 2, -3, 4]})
    # Not what the regex gives, so the plan is seen taking it rather than evaluating the rule.
    given = pl.Series("code|regex", [False, True, None, True])
    rules = validation_rules(Codes)
    plan, names, passed = evaluated_rules(Codes, frame.lazy(), rules, {"code|regex": given})
    evaluated = plan.collect()
    assert evaluated.columns == ["code", "size", *names, passed], (
        f"A rule given as evaluated moved the plan's columns: {evaluated.columns}."
    )
    assert evaluated.get_column("code|regex").to_list() == [False, True, True, True], (
        "Schema._with_evaluated_rules no longer takes a Rule(expr)'s outcome as `expr` (nulls "
        "filled as True)."
    )
    assert evaluated.get_column(passed).to_list() == [False, True, False, True]


def test_failure_outcomes_keep_each_rule_outcome_as_a_boolean() -> None:
    """`FailureInfo._df`: the invalid rows, then a Boolean column per rule."""

    class Small(dy.Schema):
        a = dy.Int64(min=0)

    _, failure = Small.filter(pl.DataFrame({"a": [1, -1, 2]}), cast=False)
    frame = failure_outcomes(failure)
    assert frame is not None, "dataframely.FailureInfo._df is gone or no longer a pl.DataFrame."
    expected = {"a": [-1], "a|nullability": [True], "a|min": [False]}
    assert frame.to_dict(as_series=False) == expected, (
        f"dataframely.FailureInfo._df changed shape: {frame.to_dict(as_series=False)}."
    )


def test_collection_filters_are_the_decorated_functions_by_name() -> None:
    """`Collection._filters()`: each `@dy.filter` by name, the function as `Filter.logic`."""
    filters = collection_filters(OrderBook)
    assert list(filters) == ["has_order", "positive_total"], (
        "dataframely.Collection._filters() no longer lists the filters by name in order."
    )
    assert filters["has_order"].__doc__ == "Every line has an order.", (
        "dataframely._filter.Filter.logic is no longer the decorated function."
    )
    _, failure = OrderBook.filter(
        {
            "orders": pl.DataFrame({"order_id": ["o-1"], "amount": [1.0]}),
            "lines": pl.DataFrame({"order_id": ["o-2"], "line_no": [1], "quantity": [1]}),
        },
        cast=False,
    )
    assert "has_order" in failure["lines"].counts(), (
        "Collection.filter no longer names a filter's failures by the filter's name."
    )


def test_failure_propagation_rule_is_the_name_collection_filter_gives() -> None:
    """`Collection.filter` names the propagated failures `<member>|failure_propagation`."""

    class Parent(dy.Schema):
        key = dy.Int64(primary_key=True)
        value = dy.Int64(min=0)

    class Child(dy.Schema):
        key = dy.Int64(primary_key=True)

    class Family(dy.Collection):
        parent: Annotated[dy.LazyFrame[Parent], dy.CollectionMember(propagate_row_failures=True)]
        child: dy.LazyFrame[Child]

    _, failure = Family.filter(
        {
            "parent": pl.DataFrame({"key": [1, 2], "value": [1, -1]}),
            "child": pl.DataFrame({"key": [1, 2]}),
        },
        cast=False,
    )
    assert failure["child"].counts() == {failure_propagation_rule("parent"): 1}, (
        "Collection.filter no longer names a propagated failure '<member>|failure_propagation': "
        f"{failure['child'].counts()}."
    )


# --- The fence -------------------------------------------------------------------------------


@pytest.mark.parametrize("package", [dg, dy], ids=["dagster", "dataframely"])
def test_every_private_upstream_module_is_banned_outside_the_seam(package: Any) -> None:
    """Ruff's `TID251` list names each private top-level module; a new one must be added."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    lint = config["tool"]["ruff"]["lint"]
    banned = set(lint["flake8-tidy-imports"]["banned-api"])
    private = {
        f"{package.__name__}.{module.name}"
        for module in pkgutil.iter_modules(package.__path__)
        if module.name.startswith("_") and not module.name.startswith("__")
    }
    assert private <= banned, (
        f"{package.__name__} has private modules ruff does not ban yet: "
        f"{sorted(private - banned)}; add them to pyproject.toml's "
        "[tool.ruff.lint.flake8-tidy-imports.banned-api]."
    )
    assert "SLF" in lint["select"]
    ignored_in_src = {
        pattern
        for pattern, rules in lint["per-file-ignores"].items()
        if pattern.startswith("src") and {"TID251", "SLF001"} & set(rules)
    }
    assert ignored_in_src == {"src/dagster_dataframely/_upstream.py"}


def test_no_module_but_the_seam_reaches_a_private_name_by_string() -> None:
    """`getattr(obj, "_x")` and friends escape ruff's `SLF001`; only the seam may use them."""
    reflective = {"getattr", "setattr", "hasattr", "delattr"}
    found = []
    for path in sorted(SOURCE.glob("*.py")):
        if path.name == "_upstream.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in reflective or len(node.args) < 2:
                continue
            name = node.args[1]
            if (
                isinstance(name, ast.Constant)
                and isinstance(name.value, str)
                and name.value.startswith("_")
                and not name.value.startswith("__")
            ):
                found.append(f"{path.name}:{node.lineno} {node.func.id}(..., {name.value!r})")
    assert not found, f"private names reached outside _upstream.py: {found}"


def test_a_type_alias_refuses_a_docstring_the_ordinary_way() -> None:
    """The reason for `document_type_alias`: `alias.__doc__ = ...` raises on the backport."""
    alias = TypeAliasType("Alias", Literal["a", "b"])
    with pytest.raises(AttributeError):
        alias.__doc__ = "mine"  # type: ignore[misc]


def test_document_type_alias_gives_the_alias_its_own_docstring() -> None:
    alias = TypeAliasType("Alias", Literal["a", "b"])
    document_type_alias(alias, "Pick a or b.")
    assert inspect.getdoc(alias) == "Pick a or b."
    # Still a working alias: its value and name are untouched, and it still forms a union.
    assert alias.__value__ == Literal["a", "b"]
    assert alias.__name__ == "Alias"
    assert alias | None == alias | None


# --- Dagster: a component's view of its project ----------------------------------------------

PROBE = """
import dagster as dg

from dagster_dataframely import TableChecksComponent
from dagster_dataframely._upstream import component_yaml_positions, project_asset_partitions

SEEN = {}


class Probe(dg.Component, dg.Resolvable, dg.Model):
    marker: str = ""

    def build_defs(self, context):
        SEEN["assets"] = project_asset_partitions(context, skip=TableChecksComponent)
        positions = component_yaml_positions(context)
        SEEN["marker"] = positions.lookup(["attributes", "marker"]) if positions else None
        return dg.Definitions(assets=[dg.AssetSpec("probe_own")])
"""


@pytest.fixture
def probed_project(tmp_path: Path) -> Iterator[Any]:
    """A scratch dg project with a probe component beside a plain and a partitioned asset."""
    from tests.dg_project import COMPONENT, ROOT_MODULE, write_component, write_project

    root = write_project(tmp_path / "scratch", storage=False)
    source = root / "src" / ROOT_MODULE
    (source / "probe.py").write_text(PROBE)
    (source / "defs" / "daily.py").write_text(
        "import dagster as dg\n\n"
        "daily = dg.AssetSpec('daily', partitions_def="
        "dg.DailyPartitionsDefinition(start_date='2026-01-01'))\n"
    )
    write_component(root, "probe", f"type: {ROOT_MODULE}.probe.Probe\nattributes:\n  marker: x\n")
    # Another TableChecksComponent, which the walk must not build (it would walk again).
    write_component(
        root,
        "other_checks",
        f"type: {COMPONENT}\nattributes:\n  dataframely_schema: {ROOT_MODULE}.schemas:Orders\n"
        "  assets: [orders]\n  severity: WARN\n",
    )
    sys.path.insert(0, str(root / "src"))
    try:
        dg.load_from_defs_folder(path_within_project=source)
        yield importlib.import_module(f"{ROOT_MODULE}.probe")
    finally:
        sys.path.remove(str(root / "src"))
        for name in [m for m in sys.modules if m.split(".")[0] == ROOT_MODULE]:
            del sys.modules[name]


def test_project_asset_partitions_sees_every_other_components_assets(probed_project: Any) -> None:
    seen = probed_project.SEEN["assets"]

    assert seen == {
        dg.AssetKey("orders"): None,
        dg.AssetKey("daily"): dg.DailyPartitionsDefinition(start_date="2026-01-01"),
    }  # not the probe's own asset, and nothing of the other checks component


def test_component_yaml_positions_locate_each_field_of_the_defs_yaml(probed_project: Any) -> None:
    marker = probed_project.SEEN["marker"]

    assert marker is not None
    assert marker.filename.endswith("defs/probe/defs.yaml")
    assert marker.start.line == 3

"""Frames and readers shared by the `dd.asset` tests: what a run or a call produced."""

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd

from .schemas import Orders as SmallOrders

__all__ = [
    "ALL_INVALID",
    "CLEAN",
    "MIXED",
    "QUARANTINE_DIR",
    "QUIET",
    "WRONG_COLUMNS",
    "AssetContext",
    "Materialize",
    "SmallOrders",
    "call_checks",
    "call_tables",
    "catalog_column_schema",
    "collect",
    "run_checks",
    "run_tables",
    "step_error",
    "value",
]

QUARANTINE_DIR = "DAGSTER_DATAFRAMELY_QUARANTINE_DIR"
COLUMN_SCHEMA = "dagster/column_schema"
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def range_tags(first: str, last: str) -> dict[str, str]:
    """The run tags that make one run cover the partitions `first` to `last`, as a backfill's."""
    return {
        "dagster/asset_partition_range_start": first,
        "dagster/asset_partition_range_end": last,
    }


"""Run config that keeps Dagster's per-event debug lines out of a failing test's output."""


class AssetContext(Protocol):
    """`dg.build_asset_context` on the shared instance."""

    def __call__(self, **kwargs: Any) -> dg.AssetExecutionContext: ...


class Materialize(Protocol):
    """`dg.materialize` with the warehouse's `ParquetIOManager` and the shared instance."""

    def __call__(
        self,
        assets: Sequence[dg.AssetsDefinition | dg.AssetSpec],
        *,
        raise_on_error: bool = True,
        **kwargs: Any,
    ) -> dg.ExecuteInProcessResult: ...


# Frames for `SmallOrders` (`order_id` primary key, `amount` not null and >= 0).
CLEAN = pl.DataFrame({"order_id": ["a", "b", "c"], "amount": [1.0, 2.0, 3.0]})
MIXED = pl.DataFrame({"order_id": ["a", "b", "c", "d"], "amount": [1.0, -1.0, 3.0, None]})
"""`a` and `c` are valid; `b` fails `amount|min` and `d` fails `amount|nullability`."""
ALL_INVALID = pl.DataFrame({"order_id": ["x", "y"], "amount": [-1.0, -2.0]})
WRONG_COLUMNS = pl.DataFrame({"order_id": [1, 2], "note": ["x", "y"]})
"""`order_id` has the wrong dtype and `amount` is missing."""


def value(metadata_value: object) -> Any:
    """The plain value of a metadata entry, whether a run or a call produced it."""
    return getattr(metadata_value, "value", metadata_value)


def catalog_column_schema(
    instance: dg.DagsterInstance, asset: dg.AssetsDefinition
) -> dg.TableSchema:
    """What the catalog's Columns tab shows for `asset`, read as the Dagster UI reads it.

    The latest materialization's `dagster/column_schema` in the instance's event log, else the
    asset definition's.
    """
    event = instance.get_latest_materialization_event(asset.key)
    materialization = event.asset_materialization if event is not None else None
    entry = materialization.metadata.get(COLUMN_SCHEMA) if materialization is not None else None
    if entry is None:
        entry = asset.metadata_by_key[asset.key][COLUMN_SCHEMA]
    schema = value(entry)
    assert isinstance(schema, dg.TableSchema), schema
    return schema


def run_checks(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetCheckEvaluation]:
    """Every check evaluation of a run, by check name."""
    return {check.check_name: check for check in result.get_asset_check_evaluations()}


def run_tables(
    result: dg.ExecuteInProcessResult, key: dg.AssetKey | str | list[str]
) -> list[dg.AssetMaterialization]:
    """The materializations a run recorded for one asset key."""
    wanted = dg.AssetKey.from_coercible(key)
    return [
        event.materialization
        for event in result.get_asset_materialization_events()
        if event.asset_key == wanted
    ]


def call_checks(events: Iterable[object]) -> dict[str, dg.AssetCheckResult]:
    """Every check result a direct invocation yielded, by check name."""
    return {
        event.check_name: event
        for event in events
        if isinstance(event, dg.AssetCheckResult) and event.check_name is not None
    }


def call_tables(events: Iterable[object]) -> list[dg.MaterializeResult[Any]]:
    """The materializations a direct invocation yielded."""
    return [event for event in events if isinstance(event, dg.MaterializeResult)]


def step_error(result: dg.ExecuteInProcessResult, step: str = "orders") -> str:
    """The class name of the user-code error that failed a step."""
    failure = result.failure_data_for_node(step)
    assert failure is not None, f"step {step!r} did not fail"
    error = failure.error
    assert error is not None
    cause = error.cause or error
    return cause.cls_name or ""


def first_failure(result: dg.ExecuteInProcessResult) -> str | None:
    """The class name of the error that failed the run's first failed step; None if none failed.

    Only a package error may fail a step here: anything else is a defect the test names.
    """
    failures = result.get_step_failure_events()
    if not failures:
        return None
    data = failures[0].step_failure_data.error
    assert data is not None
    cause = data.cause or data
    assert cause.cls_name in dd.errors.__all__, cause.to_string()
    return cause.cls_name


def collect(events: Iterable[object], error: type[Exception] | None = None) -> list[object]:
    """Everything a direct invocation yielded before it raised `error` (or all, when None)."""
    seen: list[object] = []
    if error is None:
        seen.extend(events)
        return seen
    with pytest.raises(error):
        seen.extend(events)  # keeps what was yielded before the error
    return seen

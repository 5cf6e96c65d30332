"""The columns a frame brought that its schema does not declare, and their check.

`Schema.filter` drops them, as the spec says, so a source that gained or lost a column changes
nothing a rule can see. The quality policy can name them on each materialization
(`dataframely/undeclared_columns`) and check that they stay those of the latest one
(`dy_undeclared_columns`). They are read from the frame's schema alone, so no plan runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model import names
from dagster_dataframely._model.schema import SchemaInfo
from dagster_dataframely._run.returned import Frame

from .history import History


def undeclared_columns(info: SchemaInfo, frame: Frame) -> tuple[str, ...]:
    """The frame's columns the schema does not declare, in the frame's order."""
    schema = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
    return tuple(name for name in schema if name not in info.columns)


@dataclass(frozen=True, slots=True)
class ColumnsVerdict:
    """This run's undeclared columns against the latest materialization's."""

    columns: tuple[str, ...]
    previous: tuple[str, ...] | None
    """None when no earlier materialization recorded them: nothing to compare with."""

    @property
    def passed(self) -> bool:
        return self.previous is None or set(self.previous) == set(self.columns)


def judge_columns(columns: tuple[str, ...], history: History | None) -> ColumnsVerdict:
    return ColumnsVerdict(columns, history.undeclared_columns if history is not None else None)


def columns_result(
    verdict: ColumnsVerdict | None, asset_key: dg.AssetKey, extra_metadata: Mapping[str, Any]
) -> dg.AssetCheckResult:
    """The undeclared-columns check's result, at `WARN`; a skipped run (no verdict) passes."""
    metadata: dict[str, Any] = {}
    description = "Nothing was written (the function returned None)."
    if verdict is not None:
        metadata[names.COLUMNS] = dg.MetadataValue.json(list(verdict.columns))
        description = "No earlier materialization recorded its undeclared columns."
        if verdict.previous is not None:
            metadata[names.PREVIOUS_COLUMNS] = dg.MetadataValue.json(list(verdict.previous))
            added = [c for c in verdict.columns if c not in verdict.previous]
            removed = [c for c in verdict.previous if c not in verdict.columns]
            description = (
                f"Added: {', '.join(added) or 'none'}; removed: {', '.join(removed) or 'none'}."
            )
    return dg.AssetCheckResult(
        check_name=names.UNDECLARED_COLUMNS_CHECK,
        asset_key=asset_key,
        passed=verdict is None or verdict.passed,
        severity=dg.AssetCheckSeverity.WARN,
        description=description,
        metadata={**metadata, **extra_metadata},
    )

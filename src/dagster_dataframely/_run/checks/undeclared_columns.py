"""The columns a frame brought that its schema does not declare, and their check.

`Schema.filter` drops them, as the spec says, so a source that gained or lost a column changes
nothing a rule can see. The quality policy can name them on each materialization
(`dataframely/undeclared_columns`) and check that they stay those of the latest one
(`dy_undeclared_columns`). They are read from the frame's schema alone, so no plan runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import dagster as dg

from dagster_dataframely._model import names
from dagster_dataframely._run.returned import Frame
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely.errors import ValidationFailedError

from .history import Series
from .kind import NOTHING_WRITTEN, DeclaredCheck, Judged, Reported, Target, When


def undeclared_columns(output: ValidatedOutput, frame: Frame) -> tuple[str, ...] | None:
    """The frame's columns the schema does not declare, in the frame's order, when the
    output's quality policy looks at them."""
    policy = output.settings.policy
    if policy is None or policy.undeclared_columns is None:
        return None
    return tuple(name for name in frame.collect_schema() if name not in output.info.columns)


@dataclass(frozen=True, slots=True)
class ColumnsVerdict:
    """This run's undeclared columns against the latest materialization's."""

    columns: tuple[str, ...]
    previous: tuple[str, ...] | None
    """None when no earlier materialization recorded them: nothing to compare with."""

    fails_run: ClassVar[bool] = False

    @property
    def passed(self) -> bool:
        return self.previous is None or set(self.previous) == set(self.columns)

    def error(self, output: ValidatedOutput, address: str | None) -> ValidationFailedError | None:
        return None


class UndeclaredColumns:
    """The undeclared-columns check, `dy_undeclared_columns`, where the quality policy asks."""

    name = "undeclared_columns"
    when = When.BEFORE_WRITE

    def declare(self, target: Target) -> list[DeclaredCheck]:
        policy = target.policy
        if policy is None or policy.undeclared_columns != "check":
            return []
        return [
            DeclaredCheck(names.UNDECLARED_COLUMNS_CHECK, DESCRIPTION, policy.blocks_own_checks)
        ]

    def series(self, output: ValidatedOutput) -> tuple[Series, ...]:
        return (_LATEST,) if _checked(output) else ()

    def judge(self, judged: Judged) -> ColumnsVerdict | None:
        if not _checked(judged.output):
            return None
        latest = judged.history.get(_LATEST, ())
        listed = latest[0].value if latest else None
        previous = tuple(str(name) for name in listed) if isinstance(listed, list) else None
        return ColumnsVerdict(judged.undeclared or (), previous)

    def results(
        self, verdict: ColumnsVerdict | None, reported: Reported
    ) -> list[dg.AssetCheckResult]:
        if not _checked(reported.output):
            return []
        metadata: dict[str, Any] = {}
        description = NOTHING_WRITTEN
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
        return [
            dg.AssetCheckResult(
                check_name=names.UNDECLARED_COLUMNS_CHECK,
                asset_key=reported.output.key,
                passed=verdict is None or verdict.passed,
                severity=dg.AssetCheckSeverity.WARN,
                description=description,
                metadata={**metadata, **reported.metadata},
            )
        ]


DESCRIPTION = (
    "The columns the frame has that the schema does not declare (dropped before the write) are "
    "those of the latest materialization; a change warns."
)

_LATEST = Series(names.UNDECLARED_COLUMNS, 1)
"""The partition's latest materialization's list; an older one is not looked at."""


def _checked(output: ValidatedOutput) -> bool:
    policy = output.settings.policy
    return policy is not None and policy.undeclared_columns == "check"


UNDECLARED_COLUMNS = UndeclaredColumns()

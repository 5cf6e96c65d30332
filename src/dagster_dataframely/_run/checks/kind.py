"""A check kind, the one plug point of an output's checks: what it declares, reads, judges, reports.

Every check but the column-schema gate's mismatch is one kind's: the schema's rules, the volume,
the undeclared columns, the keys across partitions. A kind runs before the write, judging the
split rows (its verdict can fail the run), or after it, reading the stored table. `registry`
lists the kinds in the order their checks are declared and reported; a new kind is a module with
one object that has this protocol's members, and one entry there (or `registry.register`).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeVar

import dagster as dg

from dagster_dataframely._model.quality_policy import ResolvedPolicy
from dagster_dataframely._model.schema import SchemaInfo
from dagster_dataframely._model.setting_model import Granularity, SchemaRules
from dagster_dataframely._run.split.failures import Failures
from dagster_dataframely._run.split.valid_rows import ValidRows
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely.errors import ValidationFailedError

from .history import History, Series

Measure = Callable[[ValidRows, Sequence[str], SchemaInfo], Mapping[str, float]]
"""The metrics of some columns of the rows, by materialization metadata key."""


class When(enum.Enum):
    """When a kind runs."""

    BEFORE_WRITE = "before the write, judging the split rows: its verdict can fail the run"
    AFTER_WRITE = "after the write, reading the stored table"


# NOTE: a named tuple, as `RuleInfo` is: each declaration builds one per check.
class DeclaredCheck(NamedTuple):
    """One check a kind declares, as its `dg.AssetCheckSpec` says."""

    name: str
    description: str
    blocking: bool = False
    per_partition: bool = True
    """Evaluated for each partition of a partitioned asset; False for one check of the table."""


@dataclass(frozen=True, slots=True)
class Target:
    """One output as its checks are declared, when the code location loads."""

    info: SchemaInfo
    key: dg.AssetKey
    granularity: Granularity
    schema_rules: SchemaRules
    warning_rules: frozenset[str]
    policy: ResolvedPolicy | None
    partitions_def: dg.PartitionsDefinition[str] | None
    keys_across_partitions: bool = False


@dataclass(frozen=True, slots=True)
class Judged:
    """What a kind judges of one output: before the write the split's counts, after it the
    stored table (through `context`, the step's, None in a direct call)."""

    output: ValidatedOutput
    history: History = field(default_factory=dict)
    """The series the kind asked for (`CheckKind.series`), of the run's partition."""
    counts: Mapping[str, int] = field(default_factory=dict)
    """Failed rows per rule, for the rules that failed at least once."""
    rows: int = 0
    """The rows the function returned."""
    written: int = 0
    """The rows the table gets (those failing only warning rules included)."""
    undeclared: tuple[str, ...] | None = None
    """The frame's undeclared columns, when the quality policy looks at them."""
    context: Any = None
    partitions_def: dg.PartitionsDefinition[str] | None = None
    table: ValidRows | None = None
    """Before the write, the rows the table gets, for a kind that measures them."""
    partition_key: str | None = None
    """The run's partition, None for an unpartitioned asset."""
    measure: Measure | None = None
    """Measures columns of `table` as the materialization records them (`report.metrics`)."""


@dataclass(frozen=True, slots=True)
class Reported:
    """What a kind's results are reported with, once the outcome is known."""

    output: ValidatedOutput
    failures: Failures | None = None
    """Every rule's failures, warning rules included (None after the write)."""
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR
    """The outcome's severity for a failing check that has none of its own."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """On every result: the partition, and where the quarantine went when no table says it."""
    sample_tables: Mapping[str, dg.TableMetadataValue] | None = None
    """Each rule check's failure sample, made already while the quarantine was written."""


NOTHING_WRITTEN = "Nothing was written (the function returned None)."
"""A check's description where nothing was judged: the run was skipped."""


class Verdict(Protocol):
    """What a kind concluded of one run."""

    @property
    def fails_run(self) -> bool:
        """Whether the run fails, and writes no table."""
        ...

    def error(self, output: ValidatedOutput, address: str | None) -> ValidationFailedError | None:
        """The run's error when the verdict fails it (`address`: where the quarantine went)."""
        ...


V = TypeVar("V", bound=Verdict)


class CheckKind(Protocol[V]):
    """One kind of check of an output: its declaration, history, judgement and results."""

    name: str
    """Unique among the kinds: its verdict's key in an evaluation."""
    when: When

    def declare(self, target: Target) -> Sequence[DeclaredCheck]:
        """The checks this kind declares on `target`, none where it does not apply."""
        ...

    def series(self, output: ValidatedOutput) -> Sequence[Series]:
        """The metric series a run of `output` reads for it (`history.read_history`)."""
        ...

    def judge(self, judged: Judged) -> V | None:
        """Its verdict on one output's run; None where it declares no check."""
        ...

    def results(self, verdict: V | None, reported: Reported) -> list[dg.AssetCheckResult]:
        """Its checks' results; `verdict` None where nothing was judged (a skipped run)."""
        ...

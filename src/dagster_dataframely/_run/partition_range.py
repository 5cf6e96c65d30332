"""A run over a partition range: each partition's rows validated as a run of it alone would.

A single-run backfill (`dg.BackfillPolicy.single_run()`) materializes several partitions in one
step, and a manager that stores a range in one write (a `DbIOManager`, such as DuckDB's) stores
them together. The package still validates each partition's rows on their own: each row's partition
is read from the asset's `partition_expr` (the entry that manager stores the range by), and each
partition's rows get their own outcome, so a primary key or a `.over()` rule never spans two
partitions, and the quality policy's checks that remember compare each partition with what a run of
it alone would (`history.RangeHistory`). It is one of a step's scopes (`scope.Scope`): `emit`
reports the partitions one at a time, laid out by `range_emit`, and writes the table and the
quarantine once each. Before the function runs, a manager that would store the range as several
writes (or, for a multi-partitioned asset, not as one rectangle of keys), or an asset without a
`partition_expr`, is refused.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model.keys import quarantine_key
from dagster_dataframely._store.quarantine_writer import QuarantineWriter
from dagster_dataframely._store.storage_slots import (
    PARTITION_EXPR,
    check_range_storage,
    partition_expr_gaps,
)
from dagster_dataframely._upstream import (
    current_asset_context,
    output_context_for,
    output_io_manager,
    running_step,
    step_output,
)
from dagster_dataframely.errors import PartitionRangeError

from .policy.history import read_range_history
from .policy.outcome import Classified, Clean, Outcome, Partial, Split
from .range_emit import RangeLayout
from .split.split import Frame, collect_once, column_problems
from .split.valid_rows import row_count
from .validated_output import OutputRun, ValidatedOutput

_EPOCH = dt.datetime(1970, 1, 1)
_MICROSECOND = dt.timedelta(microseconds=1)


@dataclass(frozen=True, eq=False)
class PartitionRange:
    """The partitions one run materializes together, and the step that reports them."""

    context: dg.AssetExecutionContext
    keys: tuple[str, ...]
    """The range's partition keys in order, as Dagster gives them (a multi-partition's are
    `dg.MultiPartitionKey`s)."""
    partitions_def: dg.PartitionsDefinition[str]

    @classmethod
    def of_run(
        cls, context: Any, partitions_def: dg.PartitionsDefinition[str] | None
    ) -> PartitionRange | None:
        """The range the running step materializes; None for one partition, or outside a run.

        A direct invocation has no step to report partitions on, and keeps the behaviour of a
        call without a partition key.
        """
        if partitions_def is None:
            return None
        if context is None:
            context = current_asset_context()
        if context is None or running_step(context) is None:
            return None
        if context.has_partition_key or not context.has_partition_key_range:
            return None
        return cls(context, tuple(context.partition_keys), partitions_def)

    @property
    def shown(self) -> str:
        """The range as `first...last`, for messages."""
        return f"{self.keys[0]}...{self.keys[-1]}"

    def check(self, output: ValidatedOutput) -> None:
        """Refuse, before the function runs, an output whose range cannot be stored or split.

        Raises
        ------
        PartitionRangeError
            The output has no usable `partition_expr`, or its IO manager (or its quarantine's)
            stores each partition in a place of its own.
        """
        self._partition_expr(output)
        step = running_step(self.context)
        assert step is not None  # `of_run` made this range inside a step
        handle = step_output(
            step, self.context.assets_def.get_output_name_for_asset_key(output.key)
        )
        check_range_storage(
            output.key,
            self.shown,
            output_io_manager(handle),
            output_context_for(handle, output.key),
            output_context_for(handle, quarantine_key(output.key)) if output.quarantine else None,
        )

    def decide(
        self,
        split: Split,
        frames: Mapping[str, Frame | None],
        runs: Mapping[str, OutputRun],
    ) -> list[Outcome]:
        """Every output's outcome in every partition, each partition's rows split on their own.

        By output (in the order of `runs`), then by partition in the range's order, as
        `layout` regroups them.
        `split` is the step's own (a Collection's members split jointly in each partition).
        Each partition's run keeps the output's settings, names its partition, writes its
        invalid rows through the output's one quarantine of the whole range, and compares with
        the history a run of that partition alone would read: its own, or with
        `compare_with="asset"` the asset's, after the partitions before it in the range that
        such runs would have written.
        """
        quarantines = {
            name: _RangeQuarantine(run.writer) for name, run in runs.items() if run.writer
        }
        # The rows each output's earlier partitions would have written, each in a run of its
        # own: a history of the whole asset has them before the next partition's run.
        written: dict[str, list[int]] = {name: [] for name in runs}
        by_key: dict[str, Mapping[str, Outcome]] = {}
        for key, sliced in self._sliced(frames, runs).items():
            partition_runs = {
                name: dataclasses.replace(
                    run,
                    partition_key=key,
                    writer=quarantines[name].write if name in quarantines else None,
                    history=(
                        run.range_history.of(key, written[name])
                        if run.range_history is not None
                        else run.history
                    ),
                )
                for name, run in runs.items()
            }
            outcomes = by_key[key] = split(sliced, partition_runs)
            if not any(outcome.fails_step for outcome in outcomes.values()):
                for name, outcome in outcomes.items():
                    if isinstance(outcome, Clean | Partial):
                        written[name].append(row_count(outcome.rows.valid))
        for name, quarantine in quarantines.items():
            quarantine.frames = [
                outcome.rows.quarantined.quarantine_frame
                for outcome in (by_key[key][name] for key in self.keys)
                if isinstance(outcome, Classified)
            ]
        return [by_key[key][name] for name in runs for key in self.keys]

    def with_history(self, run: OutputRun) -> OutputRun:
        """`run` with what a run of each partition alone would remember (`decide` picks)."""
        policy = run.output.settings.policy
        history = read_range_history(self.context, run.output.key, self.keys, policy)
        return dataclasses.replace(run, range_history=history)

    @property
    def layout(self) -> RangeLayout:
        """Per output, one table of the range and each partition's check evaluations."""
        return RangeLayout(self.context)

    def _sliced(
        self, frames: Mapping[str, Frame | None], runs: Mapping[str, OutputRun]
    ) -> dict[str, dict[str, Frame | None]]:
        """Each partition's frames, by partition key then output name.

        A frame whose columns do not match goes to every partition whole, unread: the split
        refuses it on its columns before any plan runs. Otherwise each row's partition is
        worked out from the frame's columns first (so a `partition_expr` that cannot be read
        stops the run before any plan runs), then every plan runs once and its rows are split.
        """
        mismatched = any(
            frame is not None and column_problems(runs[name].output.info, frame)
            for name, frame in frames.items()
        )
        if mismatched:
            return {key: dict(frames) for key in self.keys}
        present = {name: frame for name, frame in frames.items() if frame is not None}
        assignments = {name: self._assignment(runs[name].output, f) for name, f in present.items()}
        rows = collect_once(present)
        parts = {
            name: self._by_partition(runs[name].output, frame, assignments[name])
            for name, frame in rows.items()
        }
        return {
            key: {name: parts[name][key] if name in parts else None for name in frames}
            for key in self.keys
        }

    def _by_partition(
        self, output: ValidatedOutput, rows: pl.DataFrame, assignment: pl.Expr
    ) -> dict[str, Frame]:
        """`rows` split by partition key, a frame (empty when it has no rows) for every key.

        Raises
        ------
        PartitionRangeError
            Some rows belong to no partition of the range.
        """
        label = _unused_name(rows.columns)
        keyed = rows.with_columns(assignment.alias(label))
        outside = keyed.get_column(label).null_count()
        if outside:
            raise PartitionRangeError(
                output.key.to_user_string(),
                self.shown,
                f"{outside} of the {rows.height} rows it returned belong to no partition of "
                f"the range by its `partition_expr` {self._partition_expr(output)!r} (a null "
                f"value counts as none), and the IO manager would store them beside the rows "
                f"of partitions this run does not replace",
                "Return only rows of the partitions in `context.partition_keys`.",
            )
        parts = keyed.partition_by(label, as_dict=True, maintain_order=True, include_key=False)
        return {key: parts.get((str(key),), rows.clear()) for key in self.keys}

    def _assignment(self, output: ValidatedOutput, frame: Frame) -> pl.Expr:
        """Each row's partition key as text, null for a row of no partition of the range.

        Raises
        ------
        PartitionRangeError
            `partition_expr` names no column of the frame, or gives values no time window
            can hold.
        """
        expr = self._partition_expr(output)
        definition = self.partitions_def
        schema = frame.collect_schema() if isinstance(frame, pl.LazyFrame) else frame.schema
        if not isinstance(definition, dg.MultiPartitionsDefinition):
            assert isinstance(expr, str)  # checked by `_partition_expr`
            return self._key_in(output, definition, self.keys, expr, schema)
        assert isinstance(expr, Mapping)
        keys = [k for k in self.keys if isinstance(k, dg.MultiPartitionKey)]
        dimensions = sorted(definition.partitions_defs, key=lambda d: d.name)
        cell = pl.concat_str(
            [
                self._key_in(
                    output,
                    dimension.partitions_def,
                    sorted({k.keys_by_dimension[dimension.name] for k in keys}),
                    expr[dimension.name],
                    schema,
                )
                for dimension in dimensions
            ],
            separator="|",
        )
        return pl.when(cell.is_in([str(k) for k in self.keys])).then(cell)

    def _key_in(
        self,
        output: ValidatedOutput,
        definition: dg.PartitionsDefinition[str],
        keys: Sequence[str],
        sql: str,
        schema: pl.Schema,
    ) -> pl.Expr:
        """Each row's key in one partitions definition, as text; null outside `keys`.

        A time window holds a row whose value falls in it, as the database's own `>= start
        AND < end` does: a time-zone-aware value is compared as an instant, a naive one or a
        date as wall-clock time in the definition's time zone. Any other definition's key is
        the value itself, as text.
        """
        try:
            value = pl.sql_expr(sql)
            dtype = pl.LazyFrame(schema=schema).select(value).collect_schema().dtypes()[0]
        except pl.exceptions.PolarsError as error:
            raise PartitionRangeError(
                output.key.to_user_string(),
                self.shown,
                f"its `partition_expr` {sql!r} does not evaluate on the returned frame "
                f"({type(error).__name__}: {error})",
                "Set `partition_expr` to a column of the frame, as the IO manager stores it.",
            ) from error
        if not isinstance(definition, dg.TimeWindowPartitionsDefinition):
            text = value.cast(pl.String)
            return pl.when(text.is_in(list(keys))).then(text)
        if isinstance(dtype, pl.Datetime) and dtype.time_zone is not None:
            micros, aware = value.dt.epoch("us"), True
        elif isinstance(dtype, pl.Datetime | pl.Date):
            micros, aware = value.cast(pl.Datetime("us")).dt.epoch("us"), False
        else:
            raise PartitionRangeError(
                output.key.to_user_string(),
                self.shown,
                f"its `partition_expr` {sql!r} gives {dtype} values, and a time-window "
                "partition holds a Date or a Datetime",
                "Set `partition_expr` to the Date or Datetime column the partitions are by.",
            )
        windows = [definition.time_window_for_partition_key(key) for key in keys]
        starts = pl.Series([_micros(w.start, aware) for w in windows], dtype=pl.Int64)
        ends = pl.Series([_micros(w.end, aware) for w in windows], dtype=pl.Int64)
        at = pl.lit(starts).search_sorted(micros, side="right").cast(pl.Int64) - 1
        index = at.clip(lower_bound=0)
        inside = micros.is_not_null() & (at >= 0) & (micros < pl.lit(ends).gather(index))
        return pl.when(inside).then(pl.lit(pl.Series(list(keys), dtype=pl.String)).gather(index))

    def _partition_expr(self, output: ValidatedOutput) -> str | Mapping[str, str]:
        """The output's `partition_expr`: text, or one text per dimension of a multi-partition."""
        metadata = self.context.assets_def.metadata_by_key[output.key]
        gaps = partition_expr_gaps(metadata, self.partitions_def)
        if gaps is not None:
            multi = isinstance(self.partitions_def, dg.MultiPartitionsDefinition)
            raise PartitionRangeError(
                output.key.to_user_string(),
                self.shown,
                (
                    f"its definition metadata has no `partition_expr` with an entry for the "
                    f"dimension{'s' if len(gaps) > 1 else ''} {', '.join(gaps)}"
                    if multi
                    else "its definition metadata has no `partition_expr`"
                )
                + ", so nothing says which partition each row belongs to",
                "Add `metadata={'partition_expr': ...}` to the asset, naming the column that "
                "holds each row's partition (the entry a database IO manager stores partitions "
                "by; one per dimension for a multi-partition), or launch one run per partition.",
            )
        expr = metadata[PARTITION_EXPR]
        if isinstance(expr, Mapping):
            return {str(name): str(value) for name, value in expr.items()}
        return str(expr)


@dataclass(eq=False)
class _RangeQuarantine:
    """One output's quarantine of the whole range, written once for all of its partitions.

    The manager stores the range in one write, so the first partition to write its invalid
    rows writes every partition's (`frames`, set once every partition is decided), and the
    others get the same address.
    """

    writer: QuarantineWriter
    frames: list[pl.DataFrame] = field(default_factory=list)
    address: str | None = None

    def write(self, frame: pl.DataFrame) -> str:
        """Write the range's invalid rows, `frame`'s among them, on the first call only."""
        if self.address is None:
            rows = pl.concat(self.frames, how="vertical") if self.frames else frame
            self.address = self.writer(rows)
        return self.address


def _micros(moment: dt.datetime, aware: bool) -> int:
    """Microseconds since 1970: of the instant, or of the wall-clock time without its zone."""
    if aware:
        return (moment - _EPOCH.replace(tzinfo=dt.UTC)) // _MICROSECOND
    return (moment.replace(tzinfo=None) - _EPOCH) // _MICROSECOND


def _unused_name(columns: Sequence[str]) -> str:
    """A column name for each row's partition key that no returned column has."""
    name = "dy_partition"
    while name in columns:
        name += "_"
    return name

"""Each returned row's partition by the asset's `partition_expr`, among those a run stores.

A database IO manager replaces a run's partitions by that column (a delete of their rows, then
an insert of every row it is given): a row of no partition of the run would be stored beside
rows the run does not replace, and again by every rerun. So a range, and one partition on such
a manager, read each row's partition here and refuse a row outside them before any write.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._run.decide.output_run import OutputRun
from dagster_dataframely._run.returned import Frame
from dagster_dataframely._run.split.split import collect_once, column_problems
from dagster_dataframely._run.split.staging import scan_staged
from dagster_dataframely._run.validated_output import ValidatedOutput
from dagster_dataframely._store.storage_slots import PARTITION_EXPR, partition_expr_gaps
from dagster_dataframely.errors import PartitionRangeError

_EPOCH = dt.datetime(1970, 1, 1)
_MICROSECOND = dt.timedelta(microseconds=1)


@dataclass(frozen=True, eq=False)
class RowPartitions:
    """The partitions one run stores, and which of them each row its function returned is in."""

    metadata_by_key: Mapping[dg.AssetKey, Mapping[str, Any]]
    """The definition metadata of each asset of the step's definition, `partition_expr` in it."""
    keys: tuple[str, ...]
    """The run's partition keys in order, as Dagster gives them (a multi-partition's are
    `dg.MultiPartitionKey`s): one for a run of one partition."""
    partitions_def: dg.PartitionsDefinition[str]

    @property
    def shown(self) -> str:
        """The partitions as `first...last` (a range), or the one key, for messages."""
        return self.keys[0] if len(self.keys) == 1 else f"{self.keys[0]}...{self.keys[-1]}"

    def sliced(
        self, frames: Mapping[str, Frame | None], runs: Mapping[str, OutputRun]
    ) -> dict[str, dict[str, Frame | None]]:
        """Each partition's frames, by partition key then output name.

        A frame whose columns do not match goes to every partition whole, unread: the split
        refuses it on its columns before any plan runs. Otherwise each row's partition is
        worked out from the frame's columns first (so a `partition_expr` that cannot be read
        stops the run before any plan runs), then every plan runs once and its rows are split.

        Raises
        ------
        PartitionRangeError
            `partition_expr` is missing or cannot be evaluated on a frame, or some rows belong
            to none of the partitions.
        """
        mismatched = any(
            frame is not None and column_problems(runs[name].output.info, frame)
            for name, frame in frames.items()
        )
        if mismatched:
            return {key: dict(frames) for key in self.keys}
        present = {name: frame for name, frame in frames.items() if frame is not None}
        assignments = {name: self._assignment(runs[name].output, f) for name, f in present.items()}
        # NOTE: a streamed output's rows are staged (its manager sinks the table), not held:
        # its plan runs once into the staging file, which is read to count and then to split.
        streamed = {
            name: frame
            for name, frame in present.items()
            if isinstance(frame, pl.LazyFrame) and runs[name].staging is not None
        }
        rows: dict[str, Frame] = {
            **collect_once({n: f for n, f in present.items() if n not in streamed}),
            **{name: self._staged(runs[name], frame) for name, frame in streamed.items()},
        }
        parts = {
            name: self._by_partition(runs[name].output, frame, assignments[name])
            for name, frame in rows.items()
        }
        return {
            key: {name: parts[name][key] if name in parts else None for name in frames}
            for key in self.keys
        }

    def partition_expr(self, output: ValidatedOutput) -> str | Mapping[str, str]:
        """The output's `partition_expr`: text, or one text per dimension of a multi-partition.

        Raises
        ------
        PartitionRangeError
            The asset has none, or a multi-partition's lacks a dimension.
        """
        metadata = self.metadata_by_key[output.key]
        gaps = partition_expr_gaps(metadata, self.partitions_def)
        if gaps is not None:
            multi = isinstance(self.partitions_def, dg.MultiPartitionsDefinition)
            raise _refused(
                self,
                output,
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

    def _staged(self, run: OutputRun, frame: pl.LazyFrame) -> pl.LazyFrame:
        assert run.staging is not None  # only a streamed output's rows are staged
        asset = run.output.key.to_user_string()
        return scan_staged(run.staging.sink(frame, "partition", asset=asset))

    def _by_partition(
        self, output: ValidatedOutput, rows: Frame, assignment: pl.Expr
    ) -> dict[str, Frame]:
        # NOTE: the rows outside the range are counted without a copy of the rows keyed by
        # partition (streamed when staged): one partition then takes every row there is.
        counts = (
            rows.lazy()
            .select(outside=assignment.is_null().sum(), height=pl.len())
            .collect(engine="streaming")
        )
        outside, height = counts.row(0)
        if outside:
            raise _refused(self, output, *self._outside(output, outside, height))
        if len(self.keys) == 1:
            return {self.keys[0]: rows}
        assert isinstance(rows, pl.DataFrame)  # a range's rows are collected, never staged
        label = _unused_name(rows.columns)
        keyed = rows.with_columns(assignment.alias(label))
        parts = keyed.partition_by(label, as_dict=True, maintain_order=True, include_key=False)
        return {key: parts.get((str(key),), rows.clear()) for key in self.keys}

    def _outside(self, output: ValidatedOutput, outside: int, height: int) -> tuple[str, str]:
        # NOTE: counts and the `partition_expr`, never a value: a row's value may be one the event
        # log must not show.
        expr = self.partition_expr(output)
        if len(self.keys) > 1:
            return (
                f"{outside} of the {height} rows it returned belong to no partition of the "
                f"range by its `partition_expr` {expr!r} (a null value counts as none), and the "
                f"IO manager would store them beside the rows of partitions this run does not "
                f"replace",
                "Return only rows of the partitions in `context.partition_keys`.",
            )
        return (
            f"{outside} of the {height} rows it returned fall outside the partition by its "
            f"`partition_expr` {expr!r} (a null value counts as outside). The database IO "
            f"manager replaces only the partition's rows, so it would store those rows beside "
            f"rows this run does not replace, and store them again on every run of the partition",
            f"Return only the rows {self._of_the_partition(expr)}; a row of another partition "
            "belongs in a run of that partition.",
        )

    def _of_the_partition(self, expr: str | Mapping[str, str]) -> str:
        definition = self.partitions_def
        if isinstance(expr, Mapping) and isinstance(definition, dg.MultiPartitionsDefinition):
            return (
                "whose `partition_expr` columns hold, per dimension, the key in "
                "`context.partition_key.keys_by_dimension` (a time dimension's window holding "
                "the value)"
            )
        if isinstance(definition, dg.TimeWindowPartitionsDefinition):
            return f"whose {expr!r} falls in `context.partition_time_window` (start included)"
        return f"whose {expr!r} is `context.partition_key`"

    def _assignment(self, output: ValidatedOutput, frame: Frame) -> pl.Expr:
        expr = self.partition_expr(output)
        definition = self.partitions_def
        schema = frame.collect_schema()
        if not isinstance(definition, dg.MultiPartitionsDefinition):
            assert isinstance(expr, str)  # checked by `partition_expr`
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
        try:
            value = pl.sql_expr(sql)
            dtype = pl.LazyFrame(schema=schema).select(value).collect_schema().dtypes()[0]
        except pl.exceptions.PolarsError as error:
            raise _refused(
                self,
                output,
                f"its `partition_expr` {sql!r} does not evaluate on the returned frame "
                f"({type(error).__name__}: {error})",
                "Set `partition_expr` to a column of the frame, as the IO manager stores it.",
            ) from error
        if not isinstance(definition, dg.TimeWindowPartitionsDefinition):
            text = value.cast(pl.String)
            return pl.when(text.is_in(list(keys))).then(text)
        # NOTE: a time window holds a row whose value falls in it, as the database's `>= start AND <
        # end`: an aware value compared as an instant, a naive one or a date as wall-clock time in
        # the definition's time zone.
        if isinstance(dtype, pl.Datetime) and dtype.time_zone is not None:
            micros, aware = value.dt.epoch("us"), True
        elif isinstance(dtype, pl.Datetime | pl.Date):
            micros, aware = value.cast(pl.Datetime("us")).dt.epoch("us"), False
        else:
            raise _refused(
                self,
                output,
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


def _refused(
    rows: RowPartitions, output: ValidatedOutput, problem: str, fix: str
) -> PartitionRangeError:
    return PartitionRangeError(output.key.to_user_string(), rows.shown, problem, fix)


def _micros(moment: dt.datetime, aware: bool) -> int:
    if aware:
        return (moment - _EPOCH.replace(tzinfo=dt.UTC)) // _MICROSECOND
    return (moment.replace(tzinfo=None) - _EPOCH) // _MICROSECOND


def _unused_name(columns: Sequence[str]) -> str:
    name = "dy_partition"
    while name in columns:
        name += "_"
    return name

"""A range's `emit.Layout`: one write, and a report per partition.

Each output yields one materialization of every partition's valid rows; each partition's own
metadata goes on that partition's event (`add_asset_metadata(partition_key=...)`), and the
range's carries only what every partition replaces with its own (`range_leading_metadata`). A
check result cannot name a partition, so each partition's results are yielded as
`dg.AssetCheckEvaluation`s of it, after the check's output.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby

import dagster as dg
import polars as pl

from dagster_dataframely._run.emit.emit import Emission, first_error
from dagster_dataframely._run.report.report import range_leading_metadata
from dagster_dataframely._run.split.valid_rows import ValidRows
from dagster_dataframely._upstream import check_evaluation_target
from dagster_dataframely.errors import ValidationFailedError

RangeYield = Iterator[dg.MaterializeResult[ValidRows] | dg.AssetCheckEvaluation | dg.Output[None]]
"""What a step over a partition range yields: per output its one materialization, then each
check's output and its evaluation in every partition."""


@dataclass(frozen=True, slots=True)
class RangeLayout:
    """`emit`'s layout for a range: the outcomes (by output, then partition) regrouped by output.

    The quarantines, metadata, check results and quarantine notice are `emit`'s own; this
    says only how a range yields them and which error it raises.
    """

    context: dg.AssetExecutionContext

    def yields(self, emissions: Sequence[Emission]) -> RangeYield:
        """Per output, its one materialization of the range, then its checks in each partition."""
        for _, group in groupby(emissions, key=lambda e: e.outcome.run.output.name):
            partitions = list(group)
            table = _table(self.context, partitions)
            if table is not None:
                yield table
            yield from _evaluations(self.context, partitions)

    def error(
        self, failed: Sequence[Emission], emissions: Sequence[Emission]
    ) -> ValidationFailedError:
        """The first failing partition's error, noting every partition and output that failed."""
        shown = ", ".join(
            f"{e.outcome.run.partition_key} of {e.outcome.run.output.key.to_user_string()!r}"
            for e in failed
        )
        return first_error(
            failed,
            f"the run validated each partition of its range on its own, and these failed it: "
            f"{shown}. The range is stored in one write, so no partition's table was written "
            "(each keeps its previous contents); every partition's checks were reported, and an "
            "asset with a quarantine wrote the range's invalid rows to it.",
        )


def _table(
    context: dg.AssetExecutionContext, partitions: list[Emission]
) -> dg.MaterializeResult[ValidRows] | None:
    tables = [e.table for e in partitions if e.table is not None]
    if not tables:
        return None
    for emission, table in zip(partitions, tables, strict=True):
        context.add_asset_metadata(
            dict(table.metadata or {}),
            asset_key=table.asset_key,
            partition_key=emission.outcome.run.partition_key,
        )
    first = tables[0]
    values = [t.value for t in tables]
    frames = [v for v in values if isinstance(v, pl.DataFrame)]
    rows: ValidRows = (
        pl.concat(frames, how="vertical", rechunk=False)
        if len(frames) == len(values)
        else pl.concat([v.lazy() for v in values if v is not None], how="vertical")
    )
    return dg.MaterializeResult(
        asset_key=first.asset_key,
        value=rows,
        metadata=range_leading_metadata([t.metadata or {} for t in tables]),
        tags=first.tags,
        data_version=first.data_version,
    )


def _evaluations(
    context: dg.AssetExecutionContext, partitions: list[Emission]
) -> Iterator[dg.AssetCheckEvaluation | dg.Output[None]]:
    # NOTE: as Dagster does for a check result: the check's output once, for a selected check only,
    # then one evaluation per partition with the spec's blocking flag and the partition's latest
    # materialization as its target.
    announced: set[dg.AssetCheckKey] = set()
    for emission in partitions:
        partition = emission.outcome.run.partition_key
        assert partition is not None  # `PartitionRange.decide` gives each run its partition
        for result in emission.checks:
            assert result.asset_key is not None
            assert result.check_name is not None
            key = dg.AssetCheckKey(result.asset_key, result.check_name)
            spec = context.assets_def.get_spec_for_check_key(key)
            if key not in announced:
                announced.add(key)
                if key in context.selected_asset_check_keys:
                    name = context.assets_def.get_output_name_for_asset_check_key(key)
                    yield dg.Output(None, output_name=name)
            yield dg.AssetCheckEvaluation(
                asset_key=key.asset_key,
                check_name=key.name,
                passed=result.passed,
                metadata=result.metadata,
                target_materialization_data=check_evaluation_target(
                    context.instance, key.asset_key, partition
                ),
                severity=result.severity,
                description=result.description,
                blocking=spec.blocking,
                partition=partition if spec.partitions_def is not None else None,
            )

"""`dd.testing.call_asset`: one direct call of an asset, everything it produced in one object.

A direct invocation of a `dd.asset` yields its materialization and one result per check, and
writes the quarantine to a file. A unit test wants all three as values: this helper calls the
asset with a context it builds (so no Dagster instance is needed), keeps the quarantine in
memory (so no quarantine directory is needed), and sorts what was yielded.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model.keys import definition_asset_key, run_partition_key
from dagster_dataframely._run.context import check_call_names_partition
from dagster_dataframely._store.capture import CapturedQuarantine, capturing_quarantine
from dagster_dataframely.errors import InvalidArgumentsError, ValidationFailedError


@dataclass(frozen=True, slots=True)
class AssetCall:
    """Everything one call of an asset produced.

    Attributes
    ----------
    materialization
        The table's `dg.MaterializeResult` (its `value` is the frame of valid rows), or None
        when nothing was written: the function returned None, or the call failed.
    checks
        Every check result the call yielded, by check name. A failed call holds the results
        yielded before it failed, such as the failing `dy_schema__columns`.
    quarantine
        The invalid rows as a writer receives them (the schema's columns, then one rule
        column per rule), or None when nothing was quarantined. An empty frame when the asset
        has `clear_quarantine=True` and every row was valid: what a run writes to replace
        the old quarantine.
    error
        The `ColumnSchemaError`, `ValidationAbortError` or `NoValidRowsError` the call
        raised, or None when it succeeded.
    """

    materialization: dg.MaterializeResult[Any] | None
    checks: Mapping[str, dg.AssetCheckResult]
    quarantine: pl.DataFrame | None
    error: ValidationFailedError | None

    @property
    def table(self) -> pl.DataFrame | None:
        """The valid rows the call would have written, or None when it wrote nothing."""
        if self.materialization is None:
            return None
        value: pl.DataFrame = self.materialization.value
        return value

    @property
    def failed_checks(self) -> list[str]:
        """The names of the checks that did not pass, in the order they were yielded."""
        return [name for name, result in self.checks.items() if not result.passed]


def call_asset(
    asset: dg.AssetsDefinition,
    inputs: Mapping[str, Any] | None = None,
    /,
    *,
    partition_key: str | None = None,
    resources: Mapping[str, Any] | None = None,
    asset_key: dg.AssetKey | str | Sequence[str] | None = None,
) -> AssetCall:
    """Call a `dd.asset` definition (or a `dd.multi_asset`) directly and return what it produced.

    The call needs no Dagster instance and no `DAGSTER_DATAFRAMELY_QUARANTINE_DIR`: its
    quarantine is kept in memory (reported at a `memory://` address) and nothing is written
    anywhere. The outcomes of the data are recorded, not raised: a column-schema mismatch, an
    abort or a run with no valid rows sets `error` and keeps every check result yielded before
    it, so a test asserts on the checks and the quarantine of a failing call as of a passing
    one. Any other exception (an error in the asset's function, a wrong input name, a bad
    `MaterializeResult`) propagates, because it is a bug in the asset or in the test.

    Parameters
    ----------
    asset
        A `dd.asset` definition, or a hand-wired asset that yields `dd.wiring.validation_results`.
    inputs
        The asset's inputs by parameter name, as its IO manager would load them.
    partition_key
        The partition to run, required for a partitioned asset (as a run is launched for one);
        a multi-partition key as `"2026-01-01|eu"`, which the function receives as the
        `dg.MultiPartitionKey` a run gives it.
    resources
        Resources the asset requires, by key.
    asset_key
        For a `dd.multi_asset`, the output whose table, checks and quarantine the result
        holds: the call runs the whole function and every output, and `error` is the call's
        error, whichever output raised it (under the atomicity rule, a failing output leaves
        every `table` None). A key, or its string as Dagster prints it (`"fleet/flights"`).
        `None` for a definition of one asset.

    Returns
    -------
    An `AssetCall` holding the materialization, the check results and the quarantine.

    Raises
    ------
    MultiAssetKeyError
        `asset` has several assets and `asset_key` is None, or is not one of them.
    InvalidArgumentsError
        `asset` returns its value instead of yielding results, as a plain `@dg.asset` does,
        `partition_key` has not one key per dimension of a multi-partitioned asset, or `asset`
        is partitioned and `partition_key` is None.
    """
    key = definition_asset_key(asset, asset_key)
    if partition_key is not None:
        partition_key = run_partition_key(
            asset.partitions_def, partition_key, function="call_asset"
        )
    else:
        check_call_names_partition(
            asset.partitions_def, key.to_user_string(), function="call_asset"
        )
    materialization: dg.MaterializeResult[Any] | None = None
    checks: dict[str, dg.AssetCheckResult] = {}
    error: ValidationFailedError | None = None
    with (
        dg.build_asset_context(partition_key=partition_key, resources=resources) as context,
        capturing_quarantine() as captured,
    ):
        events = asset(context, **dict(inputs or {}))
        if not isinstance(events, Iterator):
            raise InvalidArgumentsError(
                "call_asset",
                f"it calls an asset that yields its results, as a dd.asset does, and "
                f"{key.to_user_string()!r} returned a {type(events).__name__}",
                "Call a plain @dg.asset directly instead.",
            )
        try:
            for event in events:
                if isinstance(event, dg.MaterializeResult) and event.asset_key in (None, key):
                    materialization = event
                elif (
                    isinstance(event, dg.AssetCheckResult)
                    and event.check_name is not None
                    and event.asset_key in (None, key)
                ):
                    checks[event.check_name] = event
        except ValidationFailedError as raised:  # the data's verdict: recorded, not raised
            error = raised
    return AssetCall(
        materialization=materialization,
        checks=checks,
        quarantine=_quarantine_of(captured, key, several=len(asset.keys) > 1),
        error=error,
    )


def _quarantine_of(
    captured: CapturedQuarantine, key: dg.AssetKey, *, several: bool
) -> pl.DataFrame | None:
    """The last quarantine written for `key`; for a one-asset definition, the last one written."""
    frames = captured.by_key.get(key, []) if several else captured.frames
    return frames[-1] if frames else None

"""The pipeline for hand-wired assets: `validation_results` and `check_results`.

`validation_results` runs the same decision and emission as every decorator, for one output:
the column gate without running the plan, the plan run once and split by `Schema.filter`, at
most one quarantine write before the table's materialization is yielded. `check_results` only
reports, for checks that run apart from the write.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from typing import cast

import dagster as dg
import dataframely as dy
import polars as pl
from typing_extensions import Unpack

from dagster_dataframely._model.asset_settings import OutputSettings
from dagster_dataframely._model.keys import coerce_asset_key
from dagster_dataframely._model.schema import read_schema
from dagster_dataframely._model.setting_keywords import (
    WIRING_RAISES,
    checked_settings,
    with_setting_keywords,
)
from dagster_dataframely._model.setting_model import CheckKeywords, EntryPoint, ValidationKeywords
from dagster_dataframely._run.checks.history import read_history
from dagster_dataframely._run.checks.registry import series_of
from dagster_dataframely._run.decide.outcome import decide
from dagster_dataframely._run.decide.output_run import OutputRun
from dagster_dataframely._run.emit.emit import EACH_OUTCOME, AssetYield, emit_as
from dagster_dataframely._run.report.metrics import column_metrics
from dagster_dataframely._store.quarantine_writer import QuarantineWriter
from dagster_dataframely._upstream import current_asset_context
from dagster_dataframely.errors import (
    ClearQuarantineError,
    InvalidArgumentsError,
    ThresholdNotApplicableError,
)

from .returned import Frame, type_name
from .stored_tables import stored_table_results
from .validated_output import ValidatedOutput

__all__ = ["AssetYield", "check_results", "validation_results"]


_SAME_AS_SPECS = (
    "Pass the value `check_specs` received, or the results name checks the asset does not declare."
)


@with_setting_keywords(
    EntryPoint.WIRING_VALIDATION_RESULTS,
    raises=WIRING_RAISES,
    order=(
        "valid_key",
        "quarantine_writer",
        "check_granularity",
        "schema_rules",
        "max_failure_samples",
        "statistics",
        "row_sample",
        "partition_key",
        "clear_quarantine",
        "warning_rules",
        "quality_policy",
    ),
    notes={
        "check_granularity": _SAME_AS_SPECS,
        "schema_rules": _SAME_AS_SPECS,
        "clear_quarantine": "Needs a `quarantine_writer`, which a clean run calls with no rows.",
        "quality_policy": "Pass the same policy to `check_specs`. Its thresholds need a "
        "`quarantine_writer` (except a warning rule's); in a direct call its volume and "
        "undeclared-columns checks compare with no history.",
    },
)
def validation_results(
    schema: type[dy.Schema],
    frame: pl.DataFrame | pl.LazyFrame | None,
    *,
    valid_key: dg.AssetKey,
    quarantine_writer: QuarantineWriter | None = None,
    partition_key: str | None = None,
    **settings: Unpack[ValidationKeywords],
) -> AssetYield:
    """Validate a frame and yield the asset's materialization and check results.

    The data decides the outcome: a skip (`frame` is None), a column-schema failure, a clean
    table, an abort (invalid rows and no writer), a partial write (valid rows to the table,
    invalid rows through `quarantine_writer`), or every row quarantined and the run failed.
    Settings, names and the frame's type are checked on the call, before anything is yielded.

    Parameters
    ----------
    schema
        The schema to validate against.
    frame
        The frame to validate, or `None` to skip. A `LazyFrame` is collected exactly once.
    valid_key
        The key the run materializes the valid rows under: the asset's own key, such as
        `context.asset_key`. A key the asset does not have fails the step with
        `DagsterInvariantViolationError` on the first yield, and the asset writes nothing.
    quarantine_writer
        The writer for the invalid rows, called at most once, with the frame
        `quarantine_frame` returns, before the table is written. With `None`, any invalid row
        fails the run with `ValidationAbortError`, and the asset writes nothing.
    partition_key
        The partition `frame` holds (`context.partition_key` of a partitioned asset), named on
        every check result under `dy_partition`. `None` adds nothing.

    Yields
    ------
    dg.MaterializeResult | dg.AssetCheckResult
        The asset's `dg.MaterializeResult`, if the run writes its table, then one
        `dg.AssetCheckResult` per check. On a skip, only the check results, and every check
        passes. The quarantine is written, not yielded.

    Raises
    ------
    ClearQuarantineError
        `clear_quarantine=True` without a `quarantine_writer`.
    DagsterInvariantViolationError
        `frame` is neither a Polars frame nor `None` (Dagster's own class, as the spec names).
    ColumnSchemaError
        The frame's columns or dtypes do not match the schema. It yields the column-schema
        check's failing result first, and writes nothing.
    ValidationAbortError
        Rows failed validation and `quarantine_writer` is `None`, so nothing is written.
    NoValidRowsError
        Every row failed validation. The quarantine is written, and not the asset's table.
    UnknownPolicyRuleError, ThresholdNotApplicableError
        `quality_policy` names a rule the schema lacks, or a threshold that cannot apply
        without a `quarantine_writer`.
    ThresholdExceededError, RowCountOutOfBoundsError
        More rows failed a rule than its `fail_above` tolerates, or a volume check at `ERROR`
        failed: the quarantine is written, and not the asset's table.

    Examples
    --------
    ```python
    import dagster as dg
    import dataframely as dy
    import polars as pl

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        amount = dy.Float64(min=0.0)


    written = []
    events = list(
        dd.wiring.validation_results(
            Orders,
            pl.DataFrame({"amount": [12.5, -3.0]}),
            valid_key=dg.AssetKey("orders"),
            quarantine_writer=lambda invalid: written.append(invalid) or "in memory",
        )
    )
    table = events[0]
    assert table.value.height == 1 and written[0].height == 1
    print(table.metadata["dataframely/quarantine_address"])
    ```
    """
    info = read_schema(schema)
    given = checked_settings(EntryPoint.WIRING_VALIDATION_RESULTS, settings)
    clear_quarantine = bool(given.pop("clear_quarantine", False))
    resolved = OutputSettings.of(
        **given,
        quarantine=quarantine_writer is not None,
        streaming=False,  # a hand-wired asset has no staging; its frame is collected
    ).resolve(info)
    if not (frame is None or isinstance(frame, Frame)):
        # The spec names Dagster's own class for this one.
        raise dg.DagsterInvariantViolationError(
            f"`frame` must be a pl.DataFrame, a pl.LazyFrame or None (to skip), got "
            f"{type_name(frame)}."
        )
    if clear_quarantine and quarantine_writer is None:
        raise ClearQuarantineError(valid_key.to_user_string())
    output = ValidatedOutput(
        name=valid_key.to_python_identifier(),
        key=valid_key,
        info=info,
        settings=resolved,
        quarantine=quarantine_writer is not None,
        clear_quarantine=clear_quarantine,
    )
    run = OutputRun(
        output,
        partition_key,
        quarantine_writer,
        clear_quarantine=clear_quarantine,
        measure=column_metrics,
    )
    return _emitted(run, frame)


def _emitted(run: OutputRun, frame: Frame | None) -> AssetYield:
    # NOTE: a generator, so nothing runs before the first result is asked for. The history and the
    # log are the running step's (Dagster's own logger outside a step).
    output = run.output
    history = read_history(None, output.key, run.partition_key, series_of(output))
    context = current_asset_context()
    outcome = decide(dataclasses.replace(run, history=history), frame)
    log = context.log if context is not None else None
    yield from cast(AssetYield, emit_as(EACH_OUTCOME, [outcome], log=log))


@with_setting_keywords(
    EntryPoint.WIRING_CHECK_RESULTS,
    raises=WIRING_RAISES,
    order=(
        "asset_key",
        "severity",
        "check_granularity",
        "schema_rules",
        "max_failure_samples",
        "partition_key",
        "warning_rules",
        "quality_policy",
    ),
    notes={
        "check_granularity": _SAME_AS_SPECS,
        "schema_rules": _SAME_AS_SPECS,
        "quality_policy": "Thresholds judge the checks (one above its `fail_above` fails at "
        "`ERROR`; nothing is raised), with no volume or undeclared-columns check.",
    },
)
def check_results(
    schema: type[dy.Schema],
    frame: pl.DataFrame | pl.LazyFrame,
    *,
    asset_key: dg.AssetKey | str | Sequence[str],
    severity: dg.AssetCheckSeverity,
    partition_key: str | None = None,
    **settings: Unpack[CheckKeywords],
) -> Iterator[dg.AssetCheckResult]:
    """Yield a result for each check `check_specs` declares, without writing any rows.

    For checks that run apart from the write (say in a `@dg.multi_asset_check` over the stored
    table): no materialization, no quarantine, never an abort.

    Parameters
    ----------
    schema
        The schema to validate against.
    frame
        The frame to check, such as the stored table read back by the IO manager.
    asset_key
        The key of the asset the checks belong to, as given to `check_specs`: a key, or its
        string as Dagster prints it (`"sales/orders"`).
    severity
        The severity of every failing check except the column-schema check, which is always
        `ERROR`.
    partition_key
        As for `validation_results`: the partition `frame` holds.

    Yields
    ------
    dg.AssetCheckResult
        The column-schema check's result, then one result per check, in the order of
        `check_specs`.

    Raises
    ------
    UnknownPolicyRuleError, ThresholdNotApplicableError
        `quality_policy` names a rule the schema lacks, or has a volume, undeclared-columns
        or anomaly check (`dd.table_checks` takes an anomaly check).
    InvalidArgumentsError
        `frame` is not a Polars frame.
    ColumnSchemaError
        The frame's columns or dtypes do not match the schema, after the column-schema check's
        failing result: no rule can run on such a frame.
    """
    info = read_schema(schema)
    resolved = OutputSettings.of(
        **checked_settings(EntryPoint.WIRING_CHECK_RESULTS, settings)
    ).resolve(info, writes=False)
    if resolved.policy is not None and resolved.policy.anomaly is not None:
        # NOTE: its history is its own past evaluations, read through the check's context,
        # which a call from inside the user's own check does not hand over.
        raise ThresholdNotApplicableError(
            info.name,
            "`anomaly=` judges each evaluation against the check's past ones, which "
            "check_results cannot read",
            "Declare it in dd.table_checks (or on the dd.asset that writes the table), and "
            "leave it out here.",
        )
    if not isinstance(frame, Frame):
        raise InvalidArgumentsError(
            "check_results",
            f"`frame` must be a pl.DataFrame or a pl.LazyFrame, got {type_name(frame)}",
            "Pass the table to check, such as the stored table the IO manager loads.",
        )
    key = coerce_asset_key(asset_key)
    return stored_table_results(info, resolved, frame, key, severity, partition_key)

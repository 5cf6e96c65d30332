"""`validation_results`: a frame in, the six outcomes of the failure policy out.

One gate (the column schema, read from `collect_schema()` so the plan does not run), the
user's plan run once, one `Schema.filter` over its rows collected in one streaming
`collect_all`, then at most one quarantine write before the table's materialization is yielded.
Everything reported afterwards is computed from what that single collect returned.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl

from ._checks import (
    check_groups,
    check_results_for,
    column_schema_failure,
    partition_metadata,
)
from ._failures import Failures
from ._outcome import AssetYield, Frame, column_problems, decide, emit
from ._quarantine_files import QuarantineWriter
from ._schema import SchemaInfo, read_schema
from ._settings import Granularity, SchemaRules, Settings, resolve_settings
from ._warnings import with_warning_rules
from .errors import ClearQuarantineError, ColumnSchemaError

__all__ = [
    "AssetYield",
    "Frame",
    "check_results",
    "column_problems",
    "require_frame",
    "resolved_check_results",
    "run_validation",
    "type_name",
    "validation_results",
]


def validation_results(
    schema: type[dy.Schema],
    frame: pl.DataFrame | pl.LazyFrame | None,
    *,
    valid_key: dg.AssetKey,
    quarantine_writer: QuarantineWriter | None = None,
    check_granularity: Granularity | None = None,
    schema_rules: SchemaRules | None = None,
    max_failure_samples: int | None = None,
    statistics: bool | None = None,
    row_sample: int | None = None,
    partition_key: str | None = None,
    clear_quarantine: bool = False,
    warning_rules: Iterable[str] | None = None,
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
    check_granularity
        Pass the value `check_specs` received, or the results name checks the asset does not
        declare. `None` uses `DAGSTER_DATAFRAMELY_CHECK_GRANULARITY` if set, else `rule`.
    schema_rules
        Pass the value `check_specs` received, as for `check_granularity`. `None` uses
        `DAGSTER_DATAFRAMELY_SCHEMA_RULES` if set, else `collapsed`.
    max_failure_samples
        A rule's check metadata has at most this many rows that failed it. `None` uses
        `DAGSTER_DATAFRAMELY_MAX_FAILURE_SAMPLES` if set, else `5`.
    statistics
        Whether the materialization metadata has statistics of the written rows. `None` uses
        `DAGSTER_DATAFRAMELY_STATISTICS` if set, else `True`.
    row_sample
        The materialization metadata has at most this many valid rows, and this many invalid
        rows. `None` uses `DAGSTER_DATAFRAMELY_ROW_SAMPLE` if set, else `5`.
    partition_key
        The partition `frame` holds (`context.partition_key` of a partitioned asset), named on
        every check result under `dy_partition`. `None` adds nothing.
    clear_quarantine
        With `True`, a run whose rows are all valid also calls `quarantine_writer`, with no
        rows, so it replaces the quarantine an earlier run (of this partition) left instead of
        leaving stale rows there. Needs a `quarantine_writer`.

    warning_rules
        Rules whose failures only warn, named as Dataframely names them (`amount|max`, a
        `@dy.rule` method's name, `primary_key`); a single string names one rule. A row that
        fails only these is valid, and their checks fail at `WARN`. See docs/warning-rules.md.

    Yields
    ------
    dg.MaterializeResult | dg.AssetCheckResult
        The asset's `dg.MaterializeResult`, if the run writes its table, then one
        `dg.AssetCheckResult` per check. On a skip, only the check results, and every check
        passes. The quarantine is written, not yielded.

    Raises
    ------
    UnknownWarningRuleError
        A name in `warning_rules` is not one of the schema's rules.
    InvalidSettingError
        A setting's argument or environment variable has a value the setting does not allow.
    ReservedColumnError
        A column name is in the reserved `dy_` namespace.
    InvalidColumnNameError
        A column name has a character Dagster does not allow in an asset check name.
    InvalidRuleNameError
        A `check=` key has a character Dagster does not allow in an asset check name.
    CheckNameCollisionError
        Two rules produce the same asset check name.
    ClearQuarantineError
        `clear_quarantine=True` without a `quarantine_writer`.
    DagsterInvariantViolationError
        `frame` is neither a Polars frame nor `None`.
    ColumnSchemaError
        The frame's columns or dtypes do not match the schema. It yields the column-schema
        check's failing result first, and writes nothing.
    ValidationAbortError
        Rows failed validation and `quarantine_writer` is `None`, so nothing is written.
    NoValidRowsError
        Every row failed validation. The quarantine is written, and not the asset's table.

    Examples
    --------
    ```python
    import dagster as dg
    import dataframely as dy
    import polars as pl

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        order_id = dy.String(primary_key=True)
        amount = dy.Float64(min=0.0)


    written = []
    events = list(
        dd.wiring.validation_results(
            Orders,
            pl.DataFrame({"order_id": ["A-1", "A-2"], "amount": [12.5, -3.0]}),
            valid_key=dg.AssetKey("orders"),
            quarantine_writer=lambda invalid: written.append(invalid) or "in memory",
        )
    )
    table = events[0]
    assert table.value.height == 1 and written[0].height == 1
    print(table.metadata["dataframely/quarantine_address"])
    ```
    """
    settings = resolve_settings(
        check_granularity=check_granularity,
        schema_rules=schema_rules,
        max_failure_samples=max_failure_samples,
        statistics=statistics,
        row_sample=row_sample,
    )
    info = read_schema(schema)
    settings = with_warning_rules(settings, info, warning_rules)
    require_frame(frame, none_skips=True)
    if clear_quarantine and quarantine_writer is None:
        raise ClearQuarantineError(valid_key.to_user_string())
    return run_validation(
        info,
        settings,
        frame,
        valid_key=valid_key,
        writer=quarantine_writer,
        partition_key=partition_key,
        clear_quarantine=clear_quarantine,
    )


def require_frame(value: object, *, none_skips: bool) -> None:
    """Refuse anything but a Polars frame (or None, where None means skip), before the gate."""
    if isinstance(value, Frame) or (value is None and none_skips):
        return
    expected = (
        "a pl.DataFrame, a pl.LazyFrame or None (to skip)"
        if none_skips
        else "a pl.DataFrame or a pl.LazyFrame"
    )
    raise dg.DagsterInvariantViolationError(f"`frame` must be {expected}, got {type_name(value)}.")


def type_name(value: object) -> str:
    """Name a value's type with its top-level package: `pandas.DataFrame`, not `DataFrame`.

    The bare class name cannot tell a pandas or Arrow frame from a Polars one, which is the
    very mistake the message reports; a builtin keeps its plain name (`dict`).
    """
    cls = type(value)
    package = cls.__module__.partition(".")[0]
    return cls.__qualname__ if package == "builtins" else f"{package}.{cls.__qualname__}"


def _column_schema_gate(
    info: SchemaInfo, frame: Frame, asset_key: dg.AssetKey, partition_key: str | None
) -> Iterator[dg.AssetCheckResult]:
    """On a column mismatch, yield the failing column-schema result, then raise; else nothing."""
    problems = column_problems(info, frame)
    if problems:
        yield column_schema_failure(asset_key, problems, partition_metadata(partition_key))
        raise ColumnSchemaError(info.name, problems)


def run_validation(
    info: SchemaInfo,
    settings: Settings,
    frame: Frame | None,
    *,
    valid_key: dg.AssetKey,
    writer: QuarantineWriter | None,
    returned: dg.MaterializeResult[Any] | None = None,
    partition_key: str | None = None,
    clear_quarantine: bool = False,
) -> AssetYield:
    """The six outcomes, with settings already resolved (at declaration, for `dd.asset`).

    `decide` then `emit`: one asset has no other output whose outcome could stop its table.
    `returned` is the user's own `MaterializeResult`, whose metadata, tags and data version
    are copied onto the table's materialization; this package's keys win over the user's.
    """
    outcome = decide(
        info,
        settings,
        frame,
        key=valid_key,
        has_writer=writer is not None,
        partition_key=partition_key,
    )
    yield from emit(outcome, writer=writer, returned=returned, clear_quarantine=clear_quarantine)


def check_results(
    schema: type[dy.Schema],
    frame: pl.DataFrame | pl.LazyFrame,
    *,
    asset_key: dg.AssetKey,
    severity: dg.AssetCheckSeverity,
    check_granularity: Granularity | None = None,
    schema_rules: SchemaRules | None = None,
    max_failure_samples: int | None = None,
    partition_key: str | None = None,
    warning_rules: Iterable[str] | None = None,
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
        The key of the asset the checks belong to, as given to `check_specs`.
    severity
        The severity of every failing check except the column-schema check, which is always
        `ERROR`.
    check_granularity
        Pass the value `check_specs` received, or the results name checks the asset does not
        declare. `None` uses `DAGSTER_DATAFRAMELY_CHECK_GRANULARITY` if set, else `rule`.
    schema_rules
        Pass the value `check_specs` received, as for `check_granularity`. `None` uses
        `DAGSTER_DATAFRAMELY_SCHEMA_RULES` if set, else `collapsed`.
    max_failure_samples
        A rule's check metadata has at most this many rows that failed it. `None` uses
        `DAGSTER_DATAFRAMELY_MAX_FAILURE_SAMPLES` if set, else `5`.
    partition_key
        The partition `frame` holds, named on every result under `dy_partition`. `None` adds
        nothing.

    warning_rules
        Rules whose failures only warn, named as Dataframely names them (`amount|max`, a
        `@dy.rule` method's name, `primary_key`); a single string names one rule. A row that
        fails only these is valid, and their checks fail at `WARN`. See docs/warning-rules.md.

    Yields
    ------
    dg.AssetCheckResult
        The column-schema check's result, then one result per check, in the order of
        `check_specs`.

    Raises
    ------
    UnknownWarningRuleError
        A name in `warning_rules` is not one of the schema's rules.
    InvalidSettingError
        A setting's argument or environment variable has a value the setting does not allow.
    ReservedColumnError
        A column name is in the reserved `dy_` namespace.
    InvalidColumnNameError
        A column name has a character Dagster does not allow in an asset check name.
    InvalidRuleNameError
        A `check=` key has a character Dagster does not allow in an asset check name.
    CheckNameCollisionError
        Two rules produce the same asset check name.
    ColumnSchemaError
        The frame's columns or dtypes do not match the schema, after the column-schema check's
        failing result: no rule can run on such a frame.
    """
    settings = resolve_settings(
        check_granularity=check_granularity,
        schema_rules=schema_rules,
        max_failure_samples=max_failure_samples,
    )
    info = read_schema(schema)
    settings = with_warning_rules(settings, info, warning_rules)
    require_frame(frame, none_skips=False)
    return resolved_check_results(info, settings, frame, asset_key, severity, partition_key)


def resolved_check_results(
    info: SchemaInfo,
    settings: Settings,
    frame: Frame,
    asset_key: dg.AssetKey,
    severity: dg.AssetCheckSeverity,
    partition_key: str | None,
) -> Iterator[dg.AssetCheckResult]:
    """`check_results` with the schema read and the settings resolved (at declaration)."""
    yield from _column_schema_gate(info, frame, asset_key, partition_key)
    # Only the failure side is collected, in one query over a plan that holds the input once,
    # so the user's plan runs once without the rows being collected first: a check over a
    # large stored table holds only the invalid rows in memory.
    _, failure = info.schema.filter(frame.lazy(), cast=False)
    yield from check_results_for(
        check_groups(
            info, settings.check_granularity, settings.schema_rules, settings.warning_rules
        ),
        Failures.from_failure_info(info, failure),
        asset_key=asset_key,
        severity=severity,
        max_failure_samples=settings.max_failure_samples,
        extra_metadata=partition_metadata(partition_key),
    )

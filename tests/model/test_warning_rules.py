"""Warning rules: declared once, checked at declaration, reported at `WARN`, never blocking a row.

Runs go through `dg.materialize` with `PolarsParquetIOManager` and the files are read back with
`pl.read_parquet`; calls and the wiring functions are tested beside them.
"""

from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from dagster_dataframely import errors, wiring
from tests.asset_support import (
    AssetContext,
    Materialize,
    call_checks,
    call_tables,
    catalog_column_schema,
    collect,
    run_checks,
    run_tables,
    step_error,
    value,
)

WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR
KEY = dg.AssetKey(["payments"])


class Payments(dy.Schema):
    """A payment."""

    payment_id = dy.String(primary_key=True)
    amount = dy.Float64(min=0.0, max=1000.0)
    method = dy.String(nullable=True, regex=r"^(card|cash)$")

    @dy.rule()
    def card_has_amount(cls) -> pl.Expr:
        """A card payment has a positive amount."""
        return (pl.col("method") != "card") | (pl.col("amount") > 0)


WARNINGS = ["amount|max", "card_has_amount"]

FRAME = pl.DataFrame(
    {
        "payment_id": ["p1", "p2", "p3", "p4", "p5", "p6"],
        "amount": [10.0, 2000.0, 0.0, -1.0, -5.0, 5.0],
        "method": ["card", "card", "card", "cash", "card", "wire"],
    }
)
"""p1 valid; p2 fails `amount|max` and p3 `card_has_amount` (warnings only: written); p4 fails
`amount|min`, p5 `amount|min` and `card_has_amount`, p6 `method|regex` (quarantined)."""
WRITTEN = ["p1", "p2", "p3"]
QUARANTINED = ["p4", "p5", "p6"]
ONLY_WARNINGS = FRAME.filter(pl.col("payment_id").is_in(WRITTEN))


def _ids(frame: pl.DataFrame) -> list[str]:
    return sorted(frame["payment_id"].to_list())


def _failing(checks: dict[str, Any]) -> dict[str, dg.AssetCheckSeverity]:
    """The severity of every failing check, by name."""
    return {name: check.severity for name, check in checks.items() if not check.passed}


# --- declaration ------------------------------------------------------------------------------


DECLARATIONS = {
    "dd.asset": lambda names: dd.asset(Payments, warning_rules=names),
    "check_specs": lambda names: wiring.check_specs(Payments, asset=KEY, warning_rules=names),
    "validation_results": lambda names: wiring.validation_results(
        Payments, FRAME, valid_key=KEY, warning_rules=names
    ),
    "check_results": lambda names: wiring.check_results(
        Payments, FRAME, asset_key=KEY, severity=ERROR, warning_rules=names
    ),
    "table_schema": lambda names: wiring.table_schema(Payments, warning_rules=names),
    "schema_metadata": lambda names: wiring.schema_metadata(Payments, warning_rules=names),
}


@pytest.mark.parametrize("declare", DECLARATIONS.values(), ids=DECLARATIONS.keys())
@pytest.mark.parametrize(
    "typo", ["amount|mxa", "dy_rule__amount__max", "card_has_ammount", "amount"]
)
def test_an_unknown_rule_name_fails_at_declaration_naming_it_and_the_rules(
    declare: Any, typo: str
) -> None:
    with pytest.raises(errors.UnknownWarningRuleError) as raised:
        declare(["amount|max", typo])
    assert raised.value.rules == [typo]
    assert raised.value.schema_name == "Payments"
    assert raised.value.valid_rules == [r.name for r in _rules()]
    message = str(raised.value)
    assert repr(typo) in message
    for rule in ("'amount|max'", "'amount|min'", "'card_has_amount'", "'primary_key'"):
        assert rule in message


def _rules() -> list[Any]:
    from dagster_dataframely._model.schema import read_schema

    return list(read_schema(Payments).rules)


def test_a_single_string_names_one_rule() -> None:
    specs = {s.name: s for s in wiring.check_specs(Payments, asset=KEY, warning_rules="amount|max")}
    assert specs["dy_rule__amount__max"].description.startswith("Warning")
    assert not specs["dy_rule__card_has_amount"].description.startswith("Warning")


# --- the catalog, before any run ---------------------------------------------------------------


def test_a_warning_rules_check_says_so_and_the_others_are_unchanged() -> None:
    plain = {s.name: s.description for s in wiring.check_specs(Payments, asset=KEY)}
    specs = {
        s.name: s.description
        for s in wiring.check_specs(Payments, asset=KEY, warning_rules=WARNINGS)
    }
    assert list(specs) == list(plain)
    for name in ("dy_rule__amount__max", "dy_rule__card_has_amount"):
        assert specs[name] == "Warning, rows that fail it are still written: " + plain[name]
    assert specs["dy_rule__card_has_amount"].endswith("A card payment has a positive amount.")
    changed = {name for name in specs if specs[name] != plain[name]}
    assert changed == {"dy_rule__amount__max", "dy_rule__card_has_amount"}


@pytest.mark.parametrize(
    ("granularity", "check"),
    [("column", "dy_col__amount"), ("schema", "dy_schema__rules")],
)
def test_a_collapsed_check_marks_each_warning_rule(granularity: str, check: str) -> None:
    specs = {
        s.name: s.description
        for s in wiring.check_specs(
            Payments,
            asset=KEY,
            check_granularity=granularity,  # type: ignore[arg-type]
            warning_rules=WARNINGS,
        )
    }
    parts = specs[check].split("; ")
    assert "amount <= 1000.0 (warning)" in parts
    assert "amount >= 0.0" in parts
    if granularity == "schema":
        assert "card_has_amount (warning)" in parts


def test_the_columns_tab_marks_each_warning_rule() -> None:
    table = wiring.table_schema(Payments, warning_rules=WARNINGS)
    amount = next(c for c in table.columns if c.name == "amount")
    assert amount.constraints.other == [">= 0.0", "<= 1000.0 (warning)"]
    assert table.constraints is not None
    assert table.constraints.other == ["primary key (payment_id)", "card_has_amount (warning)"]
    plain = wiring.table_schema(Payments)
    assert next(c for c in plain.columns if c.name == "amount").constraints.other == [
        ">= 0.0",
        "<= 1000.0",
    ]


def test_a_declared_asset_shows_its_warnings_before_any_run(
    materialize: Materialize, instance: dg.DagsterInstance
) -> None:
    @dd.asset(Payments, warning_rules=WARNINGS, quarantine=True)
    def payments() -> pl.DataFrame:
        return FRAME

    specs = {s.name: s for s in payments.check_specs}
    assert specs["dy_rule__amount__max"].description.startswith("Warning")
    expected = wiring.table_schema(Payments, warning_rules=WARNINGS)
    assert payments.metadata_by_key[KEY]["dagster/column_schema"] == expected
    materialize([payments])
    assert catalog_column_schema(instance, payments) == expected  # and after a run


# --- runs -------------------------------------------------------------------------------------


def test_a_run_writes_rows_failing_only_warnings_and_quarantines_the_rest(
    materialize: Materialize, warehouse: Path
) -> None:
    @dd.asset(Payments, quarantine=True, warning_rules=WARNINGS)
    def payments() -> pl.DataFrame:
        return FRAME

    result = materialize([payments])

    assert _ids(pl.read_parquet(warehouse / "payments.parquet")) == WRITTEN
    quarantine = pl.read_parquet(warehouse / "payments_quarantine.parquet")
    assert _ids(quarantine) == QUARANTINED
    (table,) = run_tables(result, "payments")
    assert value(table.metadata["dagster/row_count"]) == 3
    assert value(table.metadata["dataframely/warning_count"]) == 2
    assert value(table.metadata["dataframely/invalid_count"]) == 3
    checks = run_checks(result)
    assert _failing(checks) == {
        "dy_rule__amount__min": WARN,
        "dy_rule__amount__max": WARN,
        "dy_rule__method__regex": WARN,
        "dy_rule__card_has_amount": WARN,
    }
    # The usual metadata: the warning rule failed p3 and p5, whether written or quarantined.
    card = checks["dy_rule__card_has_amount"].metadata
    assert value(card["dy_failed_count"]) == 2
    sample = value(card["dy_failed_sample"])
    assert sorted(record.data["payment_id"] for record in sample.records) == ["p3", "p5"]


def test_without_a_quarantine_rows_failing_only_warnings_are_written(
    materialize: Materialize, warehouse: Path
) -> None:
    @dd.asset(Payments, warning_rules=WARNINGS)
    def payments() -> pl.LazyFrame:
        return ONLY_WARNINGS.lazy()

    result = materialize([payments])

    assert result.success
    assert _ids(pl.read_parquet(warehouse / "payments.parquet")) == WRITTEN
    assert not (warehouse / "payments_quarantine.parquet").exists()
    (table,) = run_tables(result, "payments")
    assert value(table.metadata["dagster/row_count"]) == 3
    assert value(table.metadata["dataframely/warning_count"]) == 2
    assert "dataframely/invalid_count" not in table.metadata
    assert _failing(run_checks(result)) == {
        "dy_rule__amount__max": WARN,
        "dy_rule__card_has_amount": WARN,
    }


def test_without_a_quarantine_a_blocking_failure_aborts_at_error_counting_only_it(
    materialize: Materialize, warehouse: Path
) -> None:
    @dd.asset(Payments, warning_rules=WARNINGS)
    def payments() -> pl.DataFrame:
        return FRAME

    result = materialize([payments], raise_on_error=False)

    assert step_error(result, "payments") == "ValidationAbortError"
    assert not (warehouse / "payments.parquet").exists()
    assert _failing(run_checks(result)) == {
        "dy_rule__amount__min": ERROR,
        "dy_rule__method__regex": ERROR,
        "dy_rule__amount__max": WARN,
        "dy_rule__card_has_amount": WARN,
    }


def test_the_abort_error_counts_only_the_rows_and_rules_that_block() -> None:
    events = wiring.validation_results(Payments, FRAME, valid_key=KEY, warning_rules=WARNINGS)
    with pytest.raises(errors.ValidationAbortError) as raised:
        list(events)
    assert raised.value.invalid_count == 3
    assert raised.value.counts == {"amount|min": 2, "method|regex": 1}


def test_rows_failing_only_warnings_never_raise_no_valid_rows(tmp_path: Path) -> None:
    failing_everything = FRAME.filter(pl.col("payment_id").is_in(["p2", "p3", "p4", "p6"]))
    written: list[pl.DataFrame] = []

    def writer(frame: pl.DataFrame) -> str:
        written.append(frame)
        return "memory://payments_quarantine"

    events = list(
        wiring.validation_results(
            Payments,
            failing_everything,
            valid_key=KEY,
            quarantine_writer=writer,
            warning_rules=WARNINGS,
        )
    )
    (table,) = call_tables(events)
    assert _ids(table.value) == ["p2", "p3"]
    (quarantined,) = written
    assert _ids(quarantined) == ["p4", "p6"]


def test_every_row_failing_a_blocking_rule_still_raises_no_valid_rows() -> None:
    blocked = FRAME.filter(pl.col("payment_id").is_in(QUARANTINED))
    events = wiring.validation_results(
        Payments, blocked, valid_key=KEY, quarantine_writer=lambda _: "here", warning_rules=WARNINGS
    )
    seen = collect(events, errors.NoValidRowsError)
    assert _failing(call_checks(seen)) == {
        "dy_rule__amount__min": ERROR,
        "dy_rule__method__regex": ERROR,
        "dy_rule__card_has_amount": WARN,
    }


def test_no_warning_count_when_no_written_row_failed_a_warning_rule() -> None:
    events = list(
        wiring.validation_results(
            Payments,
            FRAME.filter(pl.col("payment_id").is_in(["p1", "p4"])),
            valid_key=KEY,
            quarantine_writer=lambda _: "here",
            warning_rules=WARNINGS,
        )
    )
    (table,) = call_tables(events)
    assert "dataframely/warning_count" not in table.metadata
    assert table.metadata["dataframely/invalid_count"] == 1


# --- severities at every granularity ----------------------------------------------------------


# For FRAME without a quarantine, every failing check: ERROR when a blocking rule in it failed.
ABORT_SEVERITIES = {
    "rule": {
        "dy_rule__amount__min": ERROR,
        "dy_rule__amount__max": WARN,
        "dy_rule__method__regex": ERROR,
        "dy_rule__card_has_amount": WARN,
    },
    "column": {
        "dy_col__amount": ERROR,  # `amount|min` blocks, beside the warning `amount|max`
        "dy_col__method": ERROR,
        "dy_schema__rules": WARN,  # only `card_has_amount`, a warning, failed there
    },
    "schema": {"dy_schema__rules": ERROR},
}
# For ONLY_WARNINGS, only warning rules failed: every failing check is a WARN.
WARN_ONLY_SEVERITIES = {
    "rule": {"dy_rule__amount__max": WARN, "dy_rule__card_has_amount": WARN},
    "column": {"dy_col__amount": WARN, "dy_schema__rules": WARN},
    "schema": {"dy_schema__rules": WARN},
}


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("granularity", ["rule", "column", "schema"])
def test_severities_in_a_call_at_every_granularity(
    granularity: str, lazy: bool, asset_context: AssetContext
) -> None:
    source = {"frame": FRAME}

    @dd.asset(
        Payments,
        warning_rules=WARNINGS,
        check_granularity=granularity,  # type: ignore[arg-type]
    )
    def payments() -> pl.DataFrame | pl.LazyFrame:
        return source["frame"].lazy() if lazy else source["frame"]

    aborted = collect(payments(asset_context()), errors.ValidationAbortError)
    assert _failing(call_checks(aborted)) == ABORT_SEVERITIES[granularity]

    source["frame"] = ONLY_WARNINGS
    events = collect(payments(asset_context()))
    assert _failing(call_checks(events)) == WARN_ONLY_SEVERITIES[granularity]
    (table,) = call_tables(events)
    assert_frame_equal(table.value.sort("payment_id"), ONLY_WARNINGS.sort("payment_id"))
    assert table.metadata["dataframely/warning_count"] == 2


@pytest.mark.parametrize("granularity", ["rule", "column", "schema"])
def test_severities_in_a_run_with_a_quarantine_are_warn(
    granularity: str, materialize: Materialize
) -> None:
    @dd.asset(
        Payments,
        quarantine=True,
        warning_rules=WARNINGS,
        check_granularity=granularity,  # type: ignore[arg-type]
    )
    def payments() -> pl.DataFrame:
        return FRAME

    failing = _failing(run_checks(materialize([payments])))
    assert failing == dict.fromkeys(ABORT_SEVERITIES[granularity], WARN)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("granularity", ["rule", "column", "schema"])
def test_check_results_report_warning_rules_at_warn(granularity: str, lazy: bool) -> None:
    results = wiring.check_results(
        Payments,
        FRAME.lazy() if lazy else FRAME,
        asset_key=KEY,
        severity=ERROR,
        check_granularity=granularity,  # type: ignore[arg-type]
        warning_rules=WARNINGS,
    )
    assert _failing(call_checks(results)) == ABORT_SEVERITIES[granularity]


def test_a_call_with_a_quarantine_writes_only_the_blocked_rows(
    quarantine_dir: Path, asset_context: AssetContext
) -> None:
    @dd.asset(Payments, quarantine=True, warning_rules=WARNINGS)
    def payments(context: dg.AssetExecutionContext) -> pl.DataFrame:
        return FRAME

    events = collect(payments(asset_context()))
    (table,) = call_tables(events)
    assert _ids(table.value) == WRITTEN
    assert _ids(pl.read_parquet(quarantine_dir / "payments_quarantine.parquet")) == QUARANTINED


def test_clear_quarantine_empties_it_when_only_warning_rules_failed() -> None:
    written: list[pl.DataFrame] = []

    def writer(frame: pl.DataFrame) -> str:
        written.append(frame)
        return "memory://payments_quarantine"

    events = list(
        wiring.validation_results(
            Payments,
            ONLY_WARNINGS,
            valid_key=KEY,
            quarantine_writer=writer,
            clear_quarantine=True,
            warning_rules=WARNINGS,
        )
    )
    (table,) = call_tables(events)
    assert _ids(table.value) == WRITTEN
    (cleared,) = written  # the stale quarantine is replaced by no rows
    assert cleared.height == 0

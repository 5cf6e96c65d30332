"""`dd.table_checks` over a stored table reports what a `dd.asset` run over the same rows does.

The read-only checks and a run are two ways to the same check results: generated schemas,
rules, warning rules, thresholds and frames (`rule_grammar`), and a Collection's generated
members, checked both ways. A run's checks fail at `ERROR` when the step fails and at `WARN`
otherwise; the read-only checks are asked for that severity, and everything else (which checks,
passed, severity, every metadata key but the quarantine's address, which only a run has) must
be the same.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely._model import names
from dagster_dataframely._model.schema import dataframely_rules
from dagster_dataframely._upstream import evaluated_rules
from tests.changing_source import ChangingSource
from tests.rule_grammar import FRAMES, examples, schemas
from tests.schemas import OrderBook

WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR

THRESHOLDS = st.sampled_from(
    [
        None,
        dd.Threshold(warn_above=1),
        dd.Threshold(warn_above=0.5, fail_above=0.75),
        dd.Threshold(warn_above=0, fail_above=2),
    ]
)

PROPERTY = settings(
    max_examples=examples(25, 300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def _reported(result: dg.AssetCheckResult) -> tuple[Any, ...]:
    """What a check says, without the quarantine's address (a read-only check writes none)."""
    metadata = {k: v for k, v in result.metadata.items() if k != names.QUARANTINE_ADDRESS}
    return result.passed, result.severity, metadata


def _read_only(
    checks: dg.AssetChecksDefinition, **tables: pl.DataFrame | pl.LazyFrame
) -> dict[str, Any]:
    """The read-only checks' results, by asset and check name, as a direct invocation gives them."""
    results = checks(dg.build_asset_check_context(), **tables)
    return {(r.asset_key, r.check_name): _reported(r) for r in results}


def _rules_decide(schema: type[dy.Schema], frame: pl.DataFrame) -> bool:
    """Whether Dataframely itself splits `frame` (a generated rule may raise or not be Boolean),
    and polars' in-memory engine evaluates the rules' plan over it, as the split does.

    The two differ on polars 2.1 for a rule of another length than an empty frame
    (`pl.lit(None).head(2)`): Dataframely's `filter` returns no rows, the in-memory engine
    refuses the plan, and the package refuses the rule with that engine's error, as
    `tests/run/test_streamed_rules.py` pins for every rule of another length.
    """
    try:
        schema.filter(frame, cast=False)
        columns = frame.lazy().select(schema.column_names())
        evaluated_rules(schema, columns, dataframely_rules(schema))[0].collect(engine="in-memory")
    except Exception:
        return False
    return True


@PROPERTY
@given(data=st.data(), schema=schemas(), frame=FRAMES)
def test_table_checks_of_a_schema_report_what_a_run_reports(
    data: st.DataObject, schema: type[dy.Schema], frame: pl.DataFrame
) -> None:
    assume(_rules_decide(schema, frame))
    rules = [name for name in dir(schema) if name.startswith("rule_")]
    warning_rules = data.draw(st.lists(st.sampled_from(rules), unique=True, max_size=1))
    threshold = data.draw(THRESHOLDS)
    blocking = [rule for rule in rules if rule not in warning_rules]
    policy = dd.QualityPolicy(rules={blocking[0]: threshold}) if threshold and blocking else None
    setting: dict[str, Any] = {
        "check_granularity": data.draw(st.sampled_from(["rule", "column", "schema"])),
        "warning_rules": warning_rules,
        "quality_policy": policy,
    }

    @dd.asset(schema, name="orders", quarantine=True, **setting)
    def orders() -> pl.DataFrame:
        return frame

    run = dd.testing.call_asset(orders)
    severity = WARN if run.error is None else ERROR
    checks = dd.table_checks(schema, "orders", severity=severity, **setting)

    expected = {(orders.key, name): _reported(r) for name, r in run.checks.items()}
    if threshold is not None:
        # A stored table's checks never fail a run: their threshold says the check fails at
        # ERROR where a run's says the run fails, and nothing else differs.
        expected = _as_table_checks_say(expected, threshold)
    assert _read_only(checks, table=frame) == expected


def _as_table_checks_say(
    reported: dict[Any, tuple[Any, ...]], threshold: dd.Threshold
) -> dict[Any, tuple[Any, ...]]:
    """A run's check results with its threshold's text as the checks of a stored table say it."""
    run_text, table_text = threshold.describe(), threshold.describe(fails_run=False)
    said: dict[Any, tuple[Any, ...]] = {}
    for key, (passed, severity, metadata) in reported.items():
        metadata = dict(metadata)
        one = metadata.get(names.THRESHOLD)
        if one is not None and one.value == run_text:
            metadata[names.THRESHOLD] = dg.MetadataValue.text(table_text)
        several = metadata.get(names.THRESHOLDS)
        if several is not None:
            records = [
                dg.TableRecord(
                    {
                        **r.data,
                        "threshold": table_text
                        if r.data["threshold"] == run_text
                        else r.data["threshold"],
                    }
                )
                for r in several.records
            ]
            metadata[names.THRESHOLDS] = dg.MetadataValue.table(records, several.schema)
        said[key] = (passed, severity, metadata)
    return said


@PROPERTY
@given(data=st.data(), schema=schemas(), frame=FRAMES)
def test_table_checks_of_a_lazy_table_report_what_they_report_of_its_rows(
    data: st.DataObject, schema: type[dy.Schema], frame: pl.DataFrame
) -> None:
    """A lazy stored table is split counting its valid rows, never collecting them (a scan's
    memory holds only its invalid rows): the results are those of the same rows in memory,
    the count of rows a threshold's fraction reads included."""
    assume(_rules_decide(schema, frame))
    rules = [name for name in dir(schema) if name.startswith("rule_")]
    warning_rules = data.draw(st.lists(st.sampled_from(rules), unique=True, max_size=1))
    threshold = data.draw(THRESHOLDS)
    policy = dd.QualityPolicy(threshold=threshold) if threshold else None
    checks = dd.table_checks(
        schema,
        "orders",
        severity=data.draw(st.sampled_from([WARN, ERROR])),
        check_granularity=data.draw(st.sampled_from(["rule", "column", "schema"])),
        warning_rules=warning_rules,
        quality_policy=policy,
    )

    in_memory = _read_only(checks, table=frame)
    assert _read_only(checks, table=frame.lazy()) == in_memory
    # A plan over the table, not a bare frame: the rows it gives are the same.
    assert _read_only(checks, table=frame.lazy().select(pl.all().reverse()).reverse()) == in_memory


class _Amounts(dy.Schema):
    amount = dy.Int64(min=0)


def test_read_only_checks_read_a_lazy_table_once() -> None:
    """The invalid rows and the number of rows (a threshold's fraction) come from one read:
    a source whose rows turn invalid on a second read reports its first read's counts."""
    source = ChangingSource(
        pl.DataFrame({"amount": [1, -1, 2, 3]}), lambda frame, _: frame.with_columns(amount=-5)
    )
    results = dd.wiring.check_results(
        _Amounts,
        source.scan(),
        asset_key="amounts",
        severity=WARN,
        quality_policy=dd.QualityPolicy(threshold=dd.Threshold(warn_above=0.5)),
    )
    (rule,) = [r for r in results if names.FAILED_COUNT in r.metadata]
    assert source.reads == 1
    assert rule.metadata[names.FAILED_COUNT].value == 1
    assert rule.metadata[names.FAILED_FRACTION].value == 0.25
    assert rule.passed


_ORDER_IDS = ["a", "b", "c", None]
BOOK_ORDERS = st.lists(
    st.tuples(st.sampled_from(_ORDER_IDS), st.sampled_from([-1.0, 0.0, 2.0, None])), max_size=6
).map(
    lambda rows: pl.DataFrame(
        rows, schema={"order_id": pl.String, "amount": pl.Float64}, orient="row"
    )
)
BOOK_LINES = st.lists(
    st.tuples(
        st.sampled_from(_ORDER_IDS),
        st.sampled_from([0, 1, 2, None]),
        st.sampled_from([-1, 0, 1, None]),
    ),
    max_size=6,
).map(
    lambda rows: pl.DataFrame(
        rows,
        schema={"order_id": pl.String, "line_no": pl.Int64, "quantity": pl.Int64},
        orient="row",
    )
)


@PROPERTY
@given(
    book_orders=BOOK_ORDERS,
    lines=BOOK_LINES,
    granularity=st.sampled_from(["rule", "column", "schema"]),
)
def test_table_checks_of_a_collection_report_what_a_run_reports(
    book_orders: pl.DataFrame, lines: pl.DataFrame, granularity: str
) -> None:
    @dd.collection_asset(OrderBook, quarantine=True, check_granularity=granularity)
    def book() -> dict[str, pl.DataFrame]:
        return {"orders": book_orders, "lines": lines}

    keys = {member: dg.AssetKey(member) for member in ("orders", "lines")}
    # Each member's outcome: every row invalid fails the step, and its checks are at `ERROR`.
    valid, failure = OrderBook.filter({"orders": book_orders, "lines": lines}, cast=False)
    expected = {}
    for member, key in keys.items():
        call = dd.testing.call_asset(book, asset_key=key)
        no_row_valid = getattr(valid, member).collect().height == 0
        severity = ERROR if no_row_valid and failure[member].counts() else WARN
        checks = dd.table_checks(OrderBook, keys, severity=severity, check_granularity=granularity)
        found = _read_only(checks, orders=book_orders, lines=lines)
        expected = {(key, name): _reported(r) for name, r in call.checks.items()}
        assert {k: v for k, v in found.items() if k[0] == key} == expected

"""Each column's metrics, recorded as numbers on every materialization for plots and checks.

A materialization's statistics tables are what a person reads; its metrics are the same figures
as numbers Dagster plots over time and a check reads back as a series. They follow the schema
(a fixed set per declared column), never the data, and a sensitive column has none that shows a
value.
"""

from __future__ import annotations

import math
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely._model import names
from dagster_dataframely._run.report.metrics import METRICS, metric_values
from dagster_dataframely._run.report.statistics import staged_statistics, statistics_tables
from tests.asset_support import QUIET
from tests.parquet_io_manager import ParquetIOManager


class Readings(dy.Schema):
    reading_id = dy.String(primary_key=True)
    amount = dy.Float64(nullable=True)
    label = dy.String(nullable=True)
    flag = dy.Bool(nullable=True)
    email = dy.String(nullable=True, metadata={"pii": True})
    seen = dy.Datetime(nullable=True)


def _frame(rows: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "reading_id": [f"r{i}" for i in range(rows)],
            "amount": [None if i % 4 == 0 else float(i) for i in range(rows)],
            "label": ["" if i % 3 == 0 else f"label{i % 5}" for i in range(rows)],
            "flag": [i % 2 == 0 for i in range(rows)],
            "email": [None if i % 5 == 0 else f"person{i}@example.com" for i in range(rows)],
            "seen": [None] * rows,
        },
        schema_overrides={"seen": pl.Datetime("us")},
    )


def _materialize(frame: pl.DataFrame, tmp_path: Any, **arguments: Any) -> dict[str, Any]:
    @dd.asset(Readings, name="readings", **arguments)
    def readings() -> pl.DataFrame:
        return frame

    with dg.DagsterInstance.ephemeral() as instance:
        result = dg.materialize(
            [readings],
            resources={"io_manager": ParquetIOManager(base_dir=str(tmp_path))},
            instance=instance,
            run_config=QUIET,
        )
        (event,) = result.asset_materializations_for_node("readings")
        return {key: value.value for key, value in event.metadata.items()}


def test_a_materialization_records_each_columns_metrics_as_numbers(tmp_path: Any) -> None:
    metadata = _materialize(_frame(20), tmp_path)
    metrics = {k: v for k, v in metadata.items() if k.startswith(names.METRIC_PREFIX)}
    amounts = [float(i) for i in range(20) if i % 4]
    assert metrics[names.metric_key("amount", "null_fraction")] == 5 / 20
    assert metrics[names.metric_key("amount", "mean")] == round(sum(amounts) / len(amounts), 4)
    assert metrics[names.metric_key("amount", "min")] == 1.0
    assert metrics[names.metric_key("amount", "max")] == 19.0
    assert metrics[names.metric_key("label", "distinct_count")] == 6  # "" and label0..label4
    assert metrics[names.metric_key("label", "empty_fraction")] == 7 / 20
    assert metrics[names.metric_key("amount", "zero_fraction")] == 0.0  # 0.0 is a null row
    lengths = [0 if i % 3 == 0 else 6 for i in range(20)]
    assert metrics[names.metric_key("label", "mean_length")] == sum(lengths) / 20
    assert metrics[names.metric_key("flag", "true_fraction")] == 0.5
    assert metrics[names.metric_key("reading_id", "distinct_count")] == 20
    # A sensitive column: its null fraction, nothing that reveals a value.
    assert [k for k in metrics if "/email/" in k] == [names.metric_key("email", "null_fraction")]
    assert metrics[names.metric_key("email", "null_fraction")] == 4 / 20
    # A column of nulls only: a null fraction, no false zero for the rest.
    assert metrics[names.metric_key("seen", "null_fraction")] == 1.0
    assert all(isinstance(v, float) for v in metrics.values())


def test_metrics_are_off_with_the_statistics(tmp_path: Any) -> None:
    metadata = _materialize(_frame(5), tmp_path, statistics=False)
    assert not [k for k in metadata if k.startswith(names.METRIC_PREFIX)]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6)), max_size=30),
    st.lists(st.one_of(st.none(), st.text(max_size=4)), min_size=30, max_size=30),
)
def test_metrics_are_bounded_by_the_schema_and_agree_with_the_tables(
    amounts: list[float | None], labels: list[str | None]
) -> None:
    frame = pl.DataFrame(
        {"amount": amounts, "label": labels[: len(amounts)], "secret": labels[: len(amounts)]},
        schema={"amount": pl.Float64, "label": pl.String, "secret": pl.String},
    )
    tables = statistics_tables(frame, masked=["secret"])
    metrics = metric_values(tables)
    allowed = {names.metric_key("amount", m) for m in METRICS["numeric"]}
    allowed |= {names.metric_key("label", m) for m in METRICS["string"]}
    allowed |= {names.metric_key("secret", "null_fraction")}
    assert set(metrics) <= allowed
    rows = len(amounts)
    values = [a for a in amounts if a is not None]
    if rows:
        assert metrics[names.metric_key("amount", "null_fraction")] == (rows - len(values)) / rows
        assert (
            metrics[names.metric_key("secret", "null_fraction")]
            == sum(label is None for label in labels[:rows]) / rows
        )
    if values:
        assert metrics[names.metric_key("amount", "min")] == min(values)
        assert metrics[names.metric_key("amount", "max")] == max(values)
        assert math.isclose(
            metrics[names.metric_key("amount", "mean")],
            sum(values) / len(values),
            rel_tol=1e-3,
            abs_tol=1e-3,
        )
    else:
        assert names.metric_key("amount", "mean") not in metrics


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.one_of(st.none(), st.floats(-1e3, 1e3)), st.one_of(st.none(), st.text())),
        max_size=25,
    ),
    st.sampled_from([["amount"], ["label"], ["label", "amount"], ["email"]]),
)
def test_a_checks_measure_of_some_columns_is_what_the_materialization_records(
    rows: list[tuple[float | None, str | None]], columns: list[str]
) -> None:
    # The anomaly check measures its watched columns before the write, in memory or staged;
    # the next runs learn from what the materialization records of the whole frame.
    from dagster_dataframely._model.schema import read_schema
    from dagster_dataframely._run.report.metrics import column_metrics

    class Measured(dy.Schema):
        amount = dy.Float64(nullable=True)
        label = dy.String(nullable=True)
        email = dy.String(nullable=True, metadata={"pii": True})

    info = read_schema(Measured)
    frame = pl.DataFrame(
        {
            "amount": [a for a, _ in rows],
            "label": [b for _, b in rows],
            "email": [b for _, b in rows],
        },
        schema={"amount": pl.Float64, "label": pl.String, "email": pl.String},
    )
    recorded = metric_values(statistics_tables(frame, info.distinct_columns, info.sensitive))
    watched = {k: v for k, v in recorded.items() if k.split("/")[2] in columns}
    assert column_metrics(frame, columns, info) == watched
    assert column_metrics(frame.lazy(), columns, info) == watched


_NUMBERS = {
    "int": (pl.Int64, st.integers(-3, 3)),
    "float": (pl.Float64, st.one_of(st.sampled_from([0.0, -0.0, 1.5]), st.floats(-9, 9))),
    "decimal": (pl.Decimal(10, 2), st.decimals(-9, 9, places=2, allow_nan=False)),
}


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(sorted(_NUMBERS)).flatmap(
        lambda kind: st.tuples(
            st.just(kind),
            st.lists(
                st.tuples(
                    st.one_of(st.none(), _NUMBERS[kind][1]),
                    st.one_of(st.none(), st.text(max_size=6)),
                ),
                min_size=1,
                max_size=30,
            ),
        )
    ),
    st.sampled_from(["String", "Categorical", "Binary"]),
    st.booleans(),
)
def test_a_numbers_zero_fraction_and_a_texts_mean_length_agree_with_polars(
    rows: tuple[str, list[tuple[Any, str | None]]], text_dtype: str, staged: bool
) -> None:
    kind, pairs = rows
    values = [number for number, _ in pairs]
    texts = [text for _, text in pairs]
    dtype = {"String": pl.String, "Categorical": pl.Categorical, "Binary": pl.Binary}[text_dtype]
    frame = pl.DataFrame(
        {
            "number": pl.Series(values, dtype=_NUMBERS[kind][0]),
            "text": pl.Series(texts, dtype=pl.String).cast(dtype),
            "secret_number": pl.Series(values, dtype=_NUMBERS[kind][0]),
            "secret_text": pl.Series(texts, dtype=pl.String),
        }
    )
    masked = ["secret_number", "secret_text"]
    if staged:
        tables = staged_statistics(frame.lazy(), masked=masked)
    else:
        tables = statistics_tables(frame, masked=masked)
    metrics = metric_values(tables)
    # Independent: plain Polars over the non-null values.
    numbers = frame["number"].drop_nulls()
    lengths = pl.Series(texts, dtype=pl.String).drop_nulls().str.len_bytes()
    zero_key = names.metric_key("number", "zero_fraction")
    length_key = names.metric_key("text", "mean_length")
    if len(numbers):
        assert metrics[zero_key] == (numbers == 0).sum() / len(numbers)
    else:
        assert zero_key not in metrics
    if len(lengths):
        assert metrics[length_key] == pytest.approx(lengths.mean())
    else:
        assert length_key not in metrics
    # A sensitive column: its null fraction only, neither of these.
    assert {k for k in metrics if "/secret_" in k} == {
        names.metric_key("secret_number", "null_fraction"),
        names.metric_key("secret_text", "null_fraction"),
    }
    # And the tables a person reads keep the spec's columns only.
    for table in tables.values():
        assert not {"n_zero", "sum_len"} & {c.name for c in table.schema.columns}

"""Property: a `streaming=True` run is the in-memory run, outcome for outcome, for generated rules.

The same `dd.asset` is materialized twice with dagster-polars' `PolarsParquetIOManager` (which
sinks a `LazyFrame`, so `streaming=True` stages and streams), once with `streaming=False` and
once with `streaming=True`, over one parquet file of a generated frame, its schema's rules drawn
from the grammar of `tests/rule_grammar.py`. The runs must agree on everything a user sees:
whether the run succeeded, the stored table and quarantine, the package's metadata of the
materialization, every check's result and metadata, and the error that failed the step.
`tests/run/test_streamed_rules.py` compares the two splits on many more examples.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster_polars import PolarsParquetIOManager
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.rule_grammar import (
    FRAMES,
    examples,
    in_memory_error_without_shared_subexpressions,
    schemas,
)

import dagster_dataframely as dd

from .conftest import QUIET, shared_instance

pytestmark = pytest.mark.integration

SUNK: list[type] = []
"""What `RecordingParquet` was asked to sink, by type."""


class RecordingParquet(PolarsParquetIOManager):
    """dagster-polars' parquet manager, noting each frame it sinks rather than writes."""

    def sink_df_to_path(self, context: dg.OutputContext, df: pl.LazyFrame, path: Any) -> None:
        SUNK.append(type(df))
        super().sink_df_to_path(context, df, path)


def _asset(schema: type[dy.Schema], source: Path, *, streaming: bool, quarantine: bool) -> Any:
    @dd.asset(schema, name="generated", quarantine=quarantine, streaming=streaming)
    def generated() -> pl.LazyFrame:
        return pl.scan_parquet(source)

    return generated


def _stored(path: Path) -> pl.DataFrame | None:
    return pl.read_parquet(path) if path.exists() else None


def _error(result: dg.ExecuteInProcessResult) -> tuple[str, str] | None:
    """The exception the step raised (under Dagster's wrapper), by class name and message."""
    failures = [event.step_failure_data for event in result.get_step_failure_events()]
    if not failures:
        return None
    error = failures[0].error
    assert error is not None
    assert error.cause is not None
    return error.cause.cls_name or "", error.cause.message


def _run(
    schema: type[dy.Schema], source: Path, base: Path, *, streaming: bool, quarantine: bool
) -> dict[str, Any]:
    """Everything a user sees of one run; a streamed run's table is sunk from a `LazyFrame`."""
    SUNK.clear()
    result = dg.materialize(
        [_asset(schema, source, streaming=streaming, quarantine=quarantine)],
        resources={"io_manager": RecordingParquet(base_dir=str(base))},
        run_config=QUIET,
        instance=shared_instance(),
        raise_on_error=False,
    )
    table = _stored(base / "generated.parquet")
    assert ([pl.LazyFrame] if streaming and table is not None else []) == SUNK
    materializations = [
        event.materialization
        for event in result.get_asset_materialization_events()
        if event.materialization is not None
    ]
    return {
        "success": result.success,
        "table": table,
        "quarantine": _stored(base / "generated_quarantine.parquet"),
        "metadata": [
            {
                key: value.value
                for key, value in m.metadata.items()
                if key.startswith(("dataframely/", "dagster/row"))
            }
            for m in materializations
        ],
        "checks": sorted(
            (e.check_name, e.passed, e.severity.value, {k: v.value for k, v in e.metadata.items()})
            for e in result.get_asset_check_evaluations()
        ),
        "error": _error(result),
    }


def _same(
    streamed: dict[str, Any],
    in_memory: dict[str, Any],
    schema: type[dy.Schema],
    frame: pl.DataFrame,
) -> None:
    for name in ("table", "quarantine"):
        left, right = streamed.pop(name), in_memory.pop(name)
        assert (left is None) == (right is None), name
        if left is not None:
            assert left.equals(right, null_equal=True), name
    if streamed["error"] != in_memory["error"]:
        # Only the name Polars gives a subexpression rules share may differ (rule_grammar.py).
        expected = in_memory_error_without_shared_subexpressions(schema, frame)
        assert expected is not None
        assert in_memory["error"] is not None
        assert streamed["error"][0] == in_memory["error"][0] == expected[0].__name__
        assert expected[1] in streamed["error"][1]
        streamed["error"] = in_memory["error"]
    assert streamed == in_memory


@pytest.mark.timeout(examples(normal=300, thorough=0))  # 0: the long profile has no limit
@settings(max_examples=examples(normal=12, thorough=400))
@given(schema=schemas(), frame=FRAMES, quarantine=st.booleans())
def test_a_streamed_run_is_the_in_memory_run_for_generated_rules(
    tmp_path_factory: pytest.TempPathFactory,
    schema: type[dy.Schema],
    frame: pl.DataFrame,
    quarantine: bool,
) -> None:
    folder = tmp_path_factory.mktemp("generated")
    source = folder / "source.parquet"
    frame.write_parquet(source)
    in_memory = _run(schema, source, folder / "in-memory", streaming=False, quarantine=quarantine)
    streamed = _run(schema, source, folder / "streamed", streaming=True, quarantine=quarantine)
    _same(streamed, in_memory, schema, frame)


class Counted(dy.Schema):
    v = dy.Int64(nullable=True)

    @dy.rule()
    def fewer_than_three(cls) -> pl.Expr:
        return pl.len() < 3


class Headed(dy.Schema):
    v = dy.Int64(nullable=True)

    @dy.rule()
    def first_three_positive(cls) -> pl.Expr:
        return pl.col("v").head(3) > 0


@pytest.mark.parametrize("schema", [Counted, Headed], ids=lambda s: s.__name__)
def test_the_issues_rules_give_the_in_memory_run(tmp_path: Path, schema: type[dy.Schema]) -> None:
    """Seven rows: every row fails `pl.len() < 3` (no table), `head(3)` is a ShapeError."""
    source = tmp_path / "source.parquet"
    frame = pl.DataFrame({"v": [1, 2, 3, 4, 5, 6, 7]})
    frame.write_parquet(source)
    in_memory = _run(schema, source, tmp_path / "a", streaming=False, quarantine=True)
    streamed = _run(schema, source, tmp_path / "b", streaming=True, quarantine=True)
    assert not streamed["success"]
    assert streamed["table"] is None
    if schema is Counted:
        assert streamed["error"][0] == "NoValidRowsError"
        assert streamed["quarantine"] is not None
        assert streamed["quarantine"].height == 7
    else:
        assert streamed["error"][0] == "ShapeError"
        assert streamed["quarantine"] is None
    _same(streamed, in_memory, schema, frame)

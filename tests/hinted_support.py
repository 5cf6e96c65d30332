"""Two declarations of one asset compared: one given its schema, one reading its return hint.

What `tests/api/test_hinted_asset.py` and `tests/api/test_hinted_multi_asset.py` share: the
frame a drawn outcome returns, a function declared with a given hint, and what a definition and
a run leave, without what differs between two runs; and Dagster's refusal of a hint on a plain
`@dg.asset` beside the docs' quote of it.
"""

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from tests.asset_support import QUIET
from tests.parquet_io_manager import ParquetIOManager
from tests.rule_grammar import examples

PROPERTY = settings(
    max_examples=examples(15, 200),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

TIME_LIMIT = pytest.mark.timeout(examples(normal=300, thorough=0))  # 0: no limit
"""The long profile's properties run for minutes, so they have no time limit: pytest-timeout's
alarm, raised inside a Dagster step, becomes that run's STEP_FAILURE, which the comparison
reports as a difference and Hypothesis, the replayed example passing, as an unreliable test."""

OUTCOMES = st.sampled_from(["as drawn", "all valid", "column missing", "wrong dtype", "lazy"])
"""What the asset returns of the drawn frame: the rules decide 'as drawn' (valid, some or all
invalid); 'all valid' keeps only the rows the schema keeps."""


def returned(schema: type[dy.Schema], frame: pl.DataFrame, outcome: str) -> object:
    if outcome == "column missing":
        return frame.drop("b")
    if outcome == "wrong dtype":
        return frame.with_columns(pl.col("v").cast(pl.String))
    if outcome == "lazy":
        return frame.lazy()
    if outcome == "all valid":
        try:
            return schema.filter(frame, cast=False)[0]
        except Exception:  # a generated rule Dataframely refuses: the run says so both ways
            return frame
    return frame


def declared(
    decorator: Callable[..., Any], value: object, hint: object, *, name: str = "orders"
) -> dg.AssetsDefinition | str:
    """The asset `decorator` makes of a function `name` returning `value`, or the error raised."""

    def orders() -> Any:
        return value

    orders.__name__ = orders.__qualname__ = name
    orders.__annotations__ = {"return": hint}
    try:
        return decorator(orders)  # type: ignore[no-any-return]
    except Exception as error:
        return f"{type(error).__name__}: {error}"


def definition(asset: dg.AssetsDefinition | str) -> object:
    if isinstance(asset, str):
        return asset
    return (list(asset.specs), list(asset.check_specs), asset.code_versions_by_key)


def run(asset: dg.AssetsDefinition | str, warehouse: Path) -> object:
    """What a run leaves: events with the warehouse path removed, the stored rows, the error."""
    if isinstance(asset, str):
        return asset
    result = dg.materialize(
        [asset],
        resources={"io_manager": ParquetIOManager(base_dir=str(warehouse))},
        run_config=QUIET,
        raise_on_error=False,
    )
    events = [_event(e, result.run_id, warehouse) for e in result.all_events if e.is_step_event]
    stored = {
        path.relative_to(warehouse).as_posix(): sorted(map(repr, pl.read_parquet(path).to_dicts()))
        for path in sorted(warehouse.rglob("*.parquet"))
    }
    return result.success, events, stored


def _event(event: dg.DagsterEvent, run_id: str, warehouse: Path) -> tuple[str, str]:
    """What an event says, without what differs between two runs: the run, its time, its folder.

    A LazyFrame's rows come out of Polars' streaming engine in no set order, so a table of rows
    in the metadata is compared as a set of rows.
    """
    data = event.event_specific_data
    if event.event_type_value in ("STEP_START", "STEP_SUCCESS"):
        data = None  # a duration
    elif isinstance(getattr(data, "metadata", None), dict):
        data = (str(data).split("metadata=")[0], _metadata(data.metadata))  # type: ignore[union-attr]
    elif event.event_type_value == "ASSET_MATERIALIZATION":
        data = (
            event.asset_key,
            _metadata(event.step_materialization_data.materialization.metadata),
        )
    text = str(data).replace(run_id, "<run>").replace(str(warehouse), "<warehouse>")
    return event.event_type_value, re.sub(r"(timestamp|storage_id)=[0-9.]+", r"\1=<n>", text)


def _metadata(metadata: Any) -> dict[str, object]:
    return {
        key: sorted(map(repr, value.records)) if isinstance(value, dg.TableMetadataValue) else value
        for key, value in metadata.items()
    }


DECLARING_PAGE = Path(__file__).parents[1] / "docs" / "guide" / "declaring-an-asset.md"


def dagsters_refusal_as_quoted(function: Callable[..., object], where: str) -> tuple[str, str]:
    """Dagster's refusal of `function` on a plain `@dg.asset`, and the docs' quote of it.

    The quote is the page's one `DagsterInvalidDefinitionError` line containing `where`
    ("from return type annotation", "for argument"). Dagster names the schema by its module,
    which the page shows as `shop`.
    """
    (quoted,) = [
        line
        for line in DECLARING_PAGE.read_text().splitlines()
        if line.startswith("DagsterInvalidDefinitionError: ") and where in line
    ]
    with pytest.raises(dg.DagsterInvalidDefinitionError) as raised:
        dg.asset(function)
    shown = f"{type(raised.value).__name__}: {raised.value}".replace("tests.schemas.", "shop.")
    return shown, quoted

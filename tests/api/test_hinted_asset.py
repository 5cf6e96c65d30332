"""`dd.asset` reading its schema from `-> dy.DataFrame[S]` declares and runs as `dd.asset(S)`.

The hinted declaration and the one given its schema are two ways to the same asset: a property
draws schemas and rules (`rule_grammar`), a frame and an outcome (all valid, some or all
invalid into the quarantine, a column missing, a frame of the wrong dtype), declares the asset
both ways and compares the definitions and the runs. The refusals: a hint naming another schema
than the argument, and a bare decorator with no hint.
"""

import re
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely.errors import SchemaHintMismatchError, UnexpectedArgumentError
from tests.asset_support import QUIET
from tests.parquet_io_manager import ParquetIOManager
from tests.rule_grammar import FRAMES, examples, schemas
from tests.schemas import OrderLines, Orders

PROPERTY = settings(
    max_examples=examples(15, 200),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

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


def declared(decorator: Any, value: object, hint: object) -> dg.AssetsDefinition | str:
    """The asset `decorator` makes of a function returning `value`, or the error it raised."""

    def orders() -> Any:
        return value

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


@PROPERTY
@given(data=st.data(), schema=schemas(), frame=FRAMES, outcome=OUTCOMES)
def test_the_hinted_asset_is_the_asset_given_its_schema(
    tmp_path_factory: pytest.TempPathFactory,
    data: st.DataObject,
    schema: type[dy.Schema],
    frame: pl.DataFrame,
    outcome: str,
) -> None:
    value = returned(schema, frame, outcome)
    hint = data.draw(
        st.sampled_from(
            [dy.DataFrame[schema], dy.LazyFrame[schema] | None]  # type: ignore[valid-type]
        )
    )
    given_schema = declared(dd.asset(schema, quarantine=True), value, pl.DataFrame)
    hinted = declared(dd.asset(quarantine=True), value, hint)

    assert definition(hinted) == definition(given_schema)
    assert run(hinted, tmp_path_factory.mktemp("hinted")) == run(
        given_schema, tmp_path_factory.mktemp("given")
    )


def test_a_bare_decorator_on_a_hinted_function_declares_the_asset() -> None:
    @dd.asset
    def orders() -> dy.DataFrame[Orders]:
        return pl.DataFrame()

    @dd.asset(Orders)
    def given() -> pl.DataFrame:
        return pl.DataFrame()

    assert isinstance(orders, dg.AssetsDefinition)
    assert list(orders.check_specs) == [
        spec._replace(asset_key=orders.key) for spec in given.check_specs
    ]


def test_a_hint_naming_another_schema_than_the_argument_is_refused() -> None:
    def orders() -> dy.DataFrame[OrderLines]:
        return pl.DataFrame()

    with pytest.raises(SchemaHintMismatchError) as raised:
        dd.asset(Orders, quarantine=True)(orders)

    assert str(raised.value) == (
        "'orders' is declared with the schema Orders but its return hint names OrderLines. "
        "Name one schema: drop the decorator's schema argument to use the hint's, or change "
        "the hint to name Orders."
    )


def test_the_same_schema_as_argument_and_hint_is_accepted() -> None:
    @dd.asset(Orders)
    def orders() -> dy.DataFrame[Orders]:
        return pl.DataFrame()

    assert orders.code_versions_by_key[orders.key] == dd.wiring.schema_version(Orders)


def test_settings_checked_against_the_schema_fail_when_the_hint_is_read() -> None:
    def orders() -> dy.DataFrame[Orders]:
        return pl.DataFrame()

    decorator = dd.asset(
        quality_policy=dd.QualityPolicy(rules={"no_such_rule": dd.Threshold(fail_above=0.1)})
    )

    with pytest.raises(dd.errors.UnknownPolicyRuleError):
        decorator(orders)


def test_a_bare_decorator_without_a_hint_keeps_its_error() -> None:
    def orders() -> pl.DataFrame:
        return pl.DataFrame()

    with pytest.raises(UnexpectedArgumentError, match="where its schema should be"):
        dd.asset(orders)  # type: ignore[arg-type]

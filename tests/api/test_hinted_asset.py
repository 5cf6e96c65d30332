"""`dd.asset` reading its schema from `-> dy.DataFrame[S]` declares and runs as `dd.asset(S)`.

The hinted declaration and the one given its schema are two ways to the same asset: a property
draws schemas and rules (`rule_grammar`), a frame and an outcome (all valid, some or all
invalid into the quarantine, a column missing, a frame of the wrong dtype), declares the asset
both ways and compares the definitions and the runs. The refusals: a hint naming another schema
than the argument, and a bare decorator with no hint.
"""

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely.errors import SchemaHintMismatchError, UnexpectedArgumentError
from tests.hinted_support import OUTCOMES, PROPERTY, TIME_LIMIT, declared, definition, returned, run
from tests.rule_grammar import FRAMES, schemas
from tests.schemas import OrderLines, Orders


@TIME_LIMIT
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

"""`dd.asset` reading its schema from `-> dy.DataFrame[S]` declares and runs as `dd.asset(S)`.

The hinted declaration and the one given its schema are two ways to the same asset: a property
draws schemas and rules (`rule_grammar`), a frame and an outcome (all valid, some or all
invalid into the quarantine, a column missing, a frame of the wrong dtype), declares the asset
both ways and compares the definitions and the runs. The refusals: a hint naming another schema
than the argument, a hint the package cannot read on a bare decorator, and a bare decorator
with no hint; given its schema, the decorator leaves a hint it cannot read unread.
"""

from typing import Annotated, Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely.errors import (
    SchemaHintMismatchError,
    UnexpectedArgumentError,
    UnreadableReturnHintError,
)
from tests.hinted_support import (
    OUTCOMES,
    PROPERTY,
    TIME_LIMIT,
    dagsters_refusal_as_quoted,
    declared,
    definition,
    returned,
    run,
)
from tests.rule_grammar import FRAMES, schemas
from tests.schemas import OrderBook, OrderLines, Orders


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


def _list_of_frames() -> list[dy.DataFrame[Orders]]:
    return []


def _two_schemas() -> dy.DataFrame[Orders] | dy.DataFrame[OrderLines]:
    return pl.DataFrame()  # type: ignore[return-value]


def _collection() -> OrderBook:
    raise NotImplementedError


def _annotated_two_schemas() -> Annotated[pl.DataFrame, Orders, OrderLines]:
    return pl.DataFrame()


def _schema_class() -> Orders:
    raise NotImplementedError


def _unresolved() -> "dy.DataFrame[Missing]":  # type: ignore[name-defined]  # noqa: F821
    return pl.DataFrame()


UNREADABLE = [
    (_list_of_frames, "list[dy.DataFrame[Orders]]", "names a schema in a form the package"),
    (
        _two_schemas,
        "dy.DataFrame[Orders] | dy.DataFrame[OrderLines]",
        "names more than one schema",
    ),
    (_collection, "OrderBook", "names a dy.Collection, which is several tables"),
    (
        _annotated_two_schemas,
        "Annotated[pl.DataFrame, Orders, OrderLines]",
        "names more than one schema",
    ),
    (_schema_class, "Orders", "names a schema in a form the package cannot read"),
    (_unresolved, "dy.DataFrame[Missing]", "does not resolve in its module (name 'Missing'"),
]


@pytest.mark.parametrize(("function", "hint", "problem"), UNREADABLE)
def test_a_bare_decorator_refuses_a_hint_it_cannot_read_and_lists_the_forms(
    function: Any, hint: str, problem: str
) -> None:
    with pytest.raises(UnreadableReturnHintError) as raised:
        dd.asset(quarantine=True)(function)

    message = str(raised.value)
    assert message.startswith(f"The return hint of {function.__name__!r}, `{hint}`, {problem}")
    assert message.endswith(
        "Annotate the function with one schema: `-> dy.DataFrame[Orders]`, "
        "`-> dy.LazyFrame[Orders]`, `-> Annotated[pl.DataFrame, Orders]`, "
        "`-> Annotated[pl.LazyFrame, Orders]` or "
        "`-> dg.MaterializeResult[dy.DataFrame[Orders]]` (or of `dy.LazyFrame[Orders]`), "
        "each optionally `| None`; or pass the schema: `@dd.asset(Orders)`."
    )
    with pytest.raises(UnreadableReturnHintError):
        dd.asset(function)


@pytest.mark.parametrize(("function", "hint", "problem"), UNREADABLE)
def test_given_its_schema_the_decorator_leaves_a_hint_it_cannot_read_unread(
    function: Any, hint: str, problem: str
) -> None:
    """As the refusal's own fix says, and as before hints were read: the frame decides."""
    hinted = dd.asset(Orders, quarantine=True)(function)

    @dd.asset(Orders, quarantine=True)
    def plain() -> pl.DataFrame:
        return pl.DataFrame()

    assert [spec.name for spec in hinted.check_specs] == [spec.name for spec in plain.check_specs]
    assert hinted.code_versions_by_key[hinted.key] == dd.wiring.schema_version(Orders)


def test_the_docs_quote_dagsters_refusal_of_a_return_hint() -> None:
    """Why the package's decorator is needed: the page quotes a plain `@dg.asset`'s error."""

    def orders() -> dy.DataFrame[Orders]:
        raise NotImplementedError

    shown, quoted = dagsters_refusal_as_quoted(orders, "from return type annotation")

    assert shown == quoted

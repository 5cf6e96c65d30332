"""Which checks run without their asset, as docs/launching.md ("Which checks run alone") says.

Run through Dagster's own selection, as the UI launches checks: a `dd.asset`'s checks come only
with the asset; `dd.table_checks`' run on the stored table, all together and never some of
them. The UI's Execute button follows the same rule (its `canExecuteIndividually` is true only
for a check whose definition can be subset or has no other key), read here from the public
`can_subset` and the definition's keys.
"""

# No `from __future__ import annotations`: Dataframely reads a Collection's annotations.
from collections.abc import Iterator
from typing import Any

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from tests.asset_support import CLEAN, MIXED, QUIET, SmallOrders
from tests.schemas import OrderBook

AMOUNT_MIN = "dy_rule__amount__min"


@dd.asset(SmallOrders, name="orders")
def orders() -> pl.DataFrame:
    return CLEAN


@dg.asset
def legacy_orders() -> pl.DataFrame:
    return MIXED.drop_nulls()


legacy_checks = dd.table_checks(SmallOrders, legacy_orders, severity=dg.AssetCheckSeverity.WARN)


@dd.multi_asset(outs={"left": dd.AssetOut(SmallOrders), "right": dd.AssetOut(SmallOrders)})
def both() -> dict[str, pl.DataFrame]:
    return {"left": CLEAN, "right": CLEAN}


@dd.collection_asset(OrderBook, key_prefix="book")
def book() -> None:
    return None


EVERYTHING: list[Any] = [orders, legacy_orders, legacy_checks, both, book]


@pytest.fixture(scope="module")
def instance() -> Iterator[dg.DagsterInstance]:
    """One instance where every asset was materialized once, so every table is stored."""
    with dg.DagsterInstance.ephemeral() as shared:
        dg.materialize(EVERYTHING, instance=shared, run_config=QUIET)
        yield shared


def launch(instance: dg.DagsterInstance, selection: dg.AssetSelection) -> dg.ExecuteInProcessResult:
    return dg.materialize(EVERYTHING, instance=instance, run_config=QUIET, selection=selection)


@pytest.mark.parametrize(
    "selection",
    [
        dg.AssetSelection.checks_for_assets(orders),
        dg.AssetSelection.checks(dg.AssetCheckKey(orders.key, AMOUNT_MIN)),
        dg.AssetSelection.checks_for_assets(*both.keys),
        dg.AssetSelection.checks_for_assets(*book.keys),
    ],
    ids=["dd.asset", "one check of dd.asset", "dd.multi_asset", "dd.collection_asset"],
)
def test_a_validating_asset_s_checks_run_only_with_it(
    instance: dg.DagsterInstance, selection: dg.AssetSelection
) -> None:
    with pytest.raises(dg.DagsterInvalidDefinitionError) as refused:
        launch(instance, selection)
    assert isinstance(refused.value.__cause__, dg.DagsterInvalidSubsetError)
    assert "does not support subsetting" in str(refused.value.__cause__)


def test_table_checks_run_alone_all_together_on_the_stored_table(
    instance: dg.DagsterInstance,
) -> None:
    result = launch(instance, dg.AssetSelection.checks(legacy_checks))

    assert result.success
    assert not result.get_asset_materialization_events()  # the table is read, not rebuilt
    evaluations = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert set(evaluations) == {key.name for key in legacy_checks.check_keys}
    assert [name for name, passed in evaluations.items() if not passed] == [AMOUNT_MIN]


def test_some_of_the_table_checks_alone_are_refused(instance: dg.DagsterInstance) -> None:
    with pytest.raises(dg.DagsterInvalidDefinitionError) as refused:
        launch(instance, dg.AssetSelection.checks(dg.AssetCheckKey(legacy_orders.key, AMOUNT_MIN)))
    assert isinstance(refused.value.__cause__, dg.DagsterInvalidSubsetError)


@pytest.mark.parametrize(
    "definition", [orders, legacy_checks, both, book], ids=["asset", "table", "multi", "collection"]
)
def test_no_check_of_the_package_is_a_unit_the_ui_can_execute_alone(definition: Any) -> None:
    """The UI enables Execute for a check whose definition can be subset or holds it alone."""
    assert not definition.can_subset
    assert len(definition.check_keys) + len(definition.keys) > 1

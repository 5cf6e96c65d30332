"""Check specs at every granularity."""

from __future__ import annotations

import dataframely as dy
import pytest

from dagster_dataframely import errors, wiring
from tests.schemas import NoRules, OrderLines, Orders, wide_schema


def _names(schema: type[dy.Schema], **settings: str) -> list[str]:
    return [spec.name for spec in wiring.check_specs(schema, asset="orders", **settings)]  # type: ignore[arg-type]


def test_spec_example_at_rule_granularity() -> None:
    assert _names(Orders) == [
        "dy_schema__columns",
        "dy_rule__primary_key",
        "dy_rule__order_id__nullability",
        "dy_rule__amount__nullability",
        "dy_rule__amount__min",
        "dy_rule__amount__inf",
        "dy_rule__amount__nan",
    ]


def test_column_schema_check_is_first_and_blocking() -> None:
    specs = wiring.check_specs(Orders, asset="orders")
    assert specs[0].name == "dy_schema__columns"
    assert specs[0].blocking is True
    assert not any(spec.blocking for spec in specs[1:])
    assert {spec.asset_key.path[-1] for spec in specs} == {"orders"}


def test_asset_may_be_a_key_with_a_prefix() -> None:
    import dagster as dg

    specs = wiring.check_specs(Orders, asset=dg.AssetKey(["sales", "orders"]))
    assert {spec.asset_key for spec in specs} == {dg.AssetKey(["sales", "orders"])}


def test_descriptions_follow_the_naming_ladder() -> None:
    specs = {s.name: s for s in wiring.check_specs(OrderLines, asset="order_lines")}
    assert (
        specs["dy_rule__paid_has_price"].description == "Require a positive price on a paid line."
    )
    assert specs["dy_rule__line_no__min"].description == "line_no >= 1"
    assert specs["dy_rule__plausible_quantity"].description == "plausible_quantity"
    assert specs["dy_rule__primary_key"].description == "primary key (order_id, line_no)"


def test_column_granularity_collapses_per_column_and_schema_rules() -> None:
    assert _names(OrderLines, check_granularity="column") == [
        "dy_schema__columns",
        "dy_schema__rules",
        "dy_col__order_id",
        "dy_col__line_no",
        "dy_col__sku",
        "dy_col__quantity",
        "dy_col__price",
        "dy_col__status",
        "dy_col__channel",
        "dy_col__ordered_at",
    ]
    specs = {s.name: s for s in wiring.check_specs(Orders, asset="o", check_granularity="column")}
    assert specs["dy_col__amount"].description == (
        "amount is not null; amount >= 0.0; amount is not infinite; amount is not NaN"
    )


def test_column_granularity_per_rule_schema_rules() -> None:
    assert _names(OrderLines, check_granularity="column", schema_rules="per_rule")[:5] == [
        "dy_schema__columns",
        "dy_rule__paid_has_price",
        "dy_rule__plausible_quantity",
        "dy_rule__primary_key",
        "dy_col__order_id",
    ]


def test_schema_rules_has_no_effect_outside_column_granularity() -> None:
    for granularity in ("rule", "schema"):
        assert _names(OrderLines, check_granularity=granularity, schema_rules="per_rule") == (
            _names(OrderLines, check_granularity=granularity)
        )


def test_schema_granularity_is_one_check() -> None:
    specs = wiring.check_specs(OrderLines, asset="o", check_granularity="schema")
    assert [s.name for s in specs] == ["dy_schema__columns", "dy_schema__rules"]
    assert "primary key (order_id, line_no)" in (specs[1].description or "")
    assert "Require a positive price" not in (specs[1].description or "")


@pytest.mark.parametrize("granularity", ["rule", "column", "schema"])
def test_a_schema_without_rules_has_only_the_column_schema_check(granularity: str) -> None:
    assert _names(NoRules, check_granularity=granularity) == ["dy_schema__columns"]


def test_bounds_never_appear_in_check_names() -> None:
    class Low(dy.Schema):
        amount = dy.Float64(min=0.0)

    class High(dy.Schema):
        amount = dy.Float64(min=10.0)

    assert _names(Low) == _names(High)


def test_forty_columns_at_column_granularity() -> None:
    names = _names(wide_schema(40), check_granularity="column")
    assert names[0] == "dy_schema__columns"
    assert names[1:] == [f"dy_col__c{i:02d}" for i in range(40)]


def test_environment_sets_the_granularity(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_CHECK_GRANULARITY", "schema")
    assert _names(Orders) == ["dy_schema__columns", "dy_schema__rules"]
    assert _names(Orders, check_granularity="rule")[1] == "dy_rule__primary_key"


def test_invalid_granularity_raises() -> None:
    with pytest.raises(errors.InvalidSettingError, match="columns"):
        _names(Orders, check_granularity="columns")


def test_check_name() -> None:
    assert wiring.check_name("amount|min") == "dy_rule__amount__min"
    assert wiring.check_name("primary_key") == "dy_rule__primary_key"
    assert wiring.check_name("address|inner_city_nullability") == (
        "dy_rule__address__inner_city_nullability"
    )

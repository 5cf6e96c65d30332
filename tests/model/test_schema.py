"""Reading a schema: rules, labels, descriptions, and the three name validations."""

from __future__ import annotations

import dataframely as dy
import polars as pl
import pytest

from dagster_dataframely import errors
from dagster_dataframely._model.schema import own_docstring, read_schema
from dagster_dataframely._run.split.failures import rule_outcomes
from tests.schemas import EveryDtype, OrderLines, Orders, Shop


class _Small(dy.Schema):
    a = dy.Int64(min=0)


def test_rule_outcomes_without_the_private_frame_come_from_details() -> None:
    """A Dataframely that moved its frame still gets the same outcomes, null for unknown."""
    frame = pl.DataFrame({"a": [-1, 5], "a|nullability": [True, True], "a|min": [False, None]})
    failure = dy.FailureInfo(frame.lazy(), ["a|nullability", "a|min"])

    class PublicOnly:
        details = failure.details

    info = read_schema(_Small)
    assert rule_outcomes(info, failure).equals(frame)
    assert rule_outcomes(info, PublicOnly()).equals(frame)  # type: ignore[arg-type]


def test_rules_carry_check_names_labels_and_descriptions() -> None:
    info = read_schema(OrderLines)
    by_name = {rule.name: rule for rule in info.rules}
    assert [r.name for r in info.rules][:3] == [
        "paid_has_price",
        "plausible_quantity",
        "primary_key",
    ]
    assert by_name["line_no|min"].check_name == "dy_rule__line_no__min"
    assert by_name["line_no|min"].column == "line_no"
    assert by_name["line_no|min"].label == "line_no >= 1"
    assert by_name["line_no|max_exclusive"].label == "line_no < 1000"
    assert by_name["sku|max_length"].label == "sku length <= 64 bytes"
    assert by_name["order_id|regex"].label == "order_id matches ^o-[0-9]+$"
    assert by_name["channel|is_in"].label == "channel in (1, 2)"
    assert by_name["ordered_at|resolution"].label == "ordered_at aligned to 1h"
    assert by_name["primary_key"].label == "primary key (order_id, line_no)"
    assert by_name["primary_key"].column is None
    # The docstring wins, then the rendered constraint, then the rule's whole name.
    assert by_name["paid_has_price"].description == "Require a positive price on a paid line."
    assert by_name["plausible_quantity"].description == "plausible_quantity"
    assert by_name["sku|nullability"].description == "sku is not null"


def test_a_rule_without_cls_reads_fine_at_definition_time() -> None:
    class Broken(dy.Schema):
        a = dy.Int64()

        @dy.rule()
        def no_cls() -> pl.Expr:  # type: ignore[misc]
            return pl.col("a") > 0

    assert [r.name for r in read_schema(Broken).rules] == ["no_cls", "a|nullability"]


def test_custom_checks_are_named_by_key_or_function() -> None:
    def lowercase(col: pl.Expr) -> pl.Expr:
        """Only lowercase letters."""
        return col == col.str.to_lowercase()

    class Checks(dy.Schema):
        by_key = dy.String(check={"short": lambda c: c.str.len_bytes() < 5})
        by_lambda = dy.String(check=lambda c: c != "x")
        by_function = dy.String(check=lowercase)
        by_list = dy.String(check=[lambda c: c != "a", lambda c: c != "b"])

    by_name = {rule.name: rule for rule in read_schema(Checks).rules}
    assert by_name["by_key|check__short"].label == "by_key short"
    assert by_name["by_lambda|check"].label == "by_lambda custom check"
    assert by_name["by_function|check__lowercase"].label == "by_function lowercase"
    assert by_name["by_function|check__lowercase"].description == "Only lowercase letters."
    assert by_name["by_list|check__0"].label == "by_list custom check"
    assert by_name["by_list|check__1"].check_name == "dy_rule__by_list__check__1"


def test_nested_labels() -> None:
    by_name = {rule.name: rule for rule in read_schema(EveryDtype).rules}
    assert by_name["address|inner_city_max_length"].label == (
        "address field city length <= 10 bytes"
    )
    assert by_name["address|inner_city_nullability"].label == "address field city is not null"
    assert by_name["address|inner_zip_min"].label == "address field zip >= 1"
    assert by_name["tags|inner_min_length"].label == "tags each element length >= 1 bytes"
    assert by_name["tags|max_length"].label == "tags length <= 3 elements"
    assert by_name["vec|inner_min"].label == "vec each element >= 0.0"
    assert by_name["day|min"].label == "day >= 2026-01-01"
    assert by_name["clock|max"].label == "clock <= 18:00:00"
    assert by_name["took|max"].label == "took <= 1h 30m"


def test_schema_info_is_cached_per_class() -> None:
    assert read_schema(OrderLines) is read_schema(OrderLines)


def test_a_rules_expression_is_its_schemas_own_after_many_other_schemas_were_read() -> None:
    """The rules are not kept per schema: read again once others pushed them out, unchanged."""
    info = read_schema(OrderLines)
    before = {rule.name: rule.expression() for rule in info.rules}
    others = [type(f"Other{i}", (dy.Schema,), {"a": dy.Int64(min=i)}) for i in range(100)]
    for other in others:
        (rule,) = [r for r in read_schema(other).rules if r.name == "a|min"]
        assert rule.expression() == str(pl.col("a") >= others.index(other))
    assert {rule.name: rule.expression() for rule in info.rules} == before
    assert before["line_no|min"] == str(pl.col("line_no") >= 1)
    assert before.keys() == {
        name for name, _ in OrderLines._validation_rules(with_cast=False).items()
    }


def test_own_docstring_ignores_inherited_ones() -> None:
    class Child(Orders):
        pass

    class Bare(dy.Schema):
        a = dy.Int64()

    assert own_docstring(Orders) == "A customer order line: one row per product on one order."
    assert own_docstring(Child) is None
    assert own_docstring(Bare) is None


def test_reserved_column_raises_naming_the_column() -> None:
    class Reserved(dy.Schema):
        dy_rule__amount__min = dy.Int64()
        fine = dy.Int64()

    with pytest.raises(errors.ReservedColumnError, match="dy_rule__amount__min") as info:
        read_schema(Reserved)
    assert info.value.columns == ["dy_rule__amount__min"]
    assert info.value.schema_name == "Reserved"


def test_aliased_column_with_a_bad_character_raises() -> None:
    class Aliased(dy.Schema):
        unit_price = dy.Float64(alias="unit price")
        ratio = dy.Float64(alias="a|b")

    with pytest.raises(errors.InvalidColumnNameError, match="unit price") as info:
        read_schema(Aliased)
    assert info.value.columns == ["unit price", "a|b"]


def test_two_rules_with_one_check_name_raise() -> None:
    class Colliding(dy.Schema):
        amount = dy.Float64(min=0.0)

        @dy.rule()
        def amount__min(cls) -> pl.Expr:
            return pl.col("amount") < 100

    with pytest.raises(errors.CheckNameCollisionError, match="dy_rule__amount__min") as info:
        read_schema(Colliding)
    assert {info.value.first, info.value.second} == {"amount__min", "amount|min"}
    assert info.value.name == "dy_rule__amount__min"


def test_a_check_key_with_a_bad_character_raises() -> None:
    class BadKey(dy.Schema):
        sku = dy.String(check={"is-lower": lambda c: c == c.str.to_lowercase()})

    with pytest.raises(errors.InvalidRuleNameError, match="is-lower"):
        read_schema(BadKey)


def test_a_name_ending_in_a_newline_is_refused() -> None:
    # `$` matches before a trailing newline, so an anchored `re.match` let these through.
    class TrailingNewline(dy.Schema):
        sku = dy.String(check={"is_lower\n": lambda c: c == c.str.to_lowercase()})

    with pytest.raises(errors.InvalidRuleNameError) as rule_info:
        read_schema(TrailingNewline)
    assert rule_info.value.rules == ["sku|check__is_lower\n"]

    class AliasedNewline(dy.Schema):
        amount = dy.Float64(alias="amount\n")

    with pytest.raises(errors.InvalidColumnNameError) as column_info:
        read_schema(AliasedNewline)
    assert column_info.value.columns == ["amount\n"]


def test_a_dtype_polars_cannot_hold_is_refused_naming_each_column() -> None:
    # Dataframely declares these; Polars refuses any frame with them, so no run could pass.
    class TooWide(dy.Schema):
        amount = dy.Decimal(76)
        prices = dy.List(dy.Decimal(40, 2))
        widest = dy.Decimal(38, 2)

    with pytest.raises(errors.UnsupportedDtypeError) as info:
        read_schema(TooWide)
    assert [problem["column"] for problem in info.value.problems] == ["amount", "prices"]
    assert "'amount': Decimal(precision=76, scale=0)" in str(info.value)
    assert "38" in str(info.value)


def test_a_too_wide_decimal_is_refused_at_any_depth_with_polars_reason() -> None:
    # Inside a struct field, an array and a list of structs: Polars refuses each, so must we.
    class NestedTooWide(dy.Schema):
        order_id = dy.String(primary_key=True)
        address = dy.Struct({"city": dy.String(), "balance": dy.Decimal(76, 2)})
        readings = dy.Array(dy.Decimal(39, 2), 3)
        lines = dy.List(dy.Struct({"price": dy.Decimal(50)}))
        fine = dy.List(dy.Struct({"price": dy.Decimal(38, 2)}))

    with pytest.raises(errors.UnsupportedDtypeError) as info:
        read_schema(NestedTooWide)
    problems = info.value.problems
    assert [problem["column"] for problem in problems] == ["address", "readings", "lines"]
    assert problems[0]["dtype"] == str(pl.Struct({"city": pl.String, "balance": pl.Decimal(76, 2)}))
    for problem in problems:
        assert problem["reason"].startswith("precision must be between 1 and 38")
    assert str(info.value).startswith("Schema 'NestedTooWide' declares columns with a dtype")


def test_a_time_zone_polars_does_not_know_is_refused() -> None:
    class Unzoned(dy.Schema):
        at = dy.Datetime(time_zone="Not/AZone")
        naive = dy.Datetime()
        utc = dy.Datetime(time_zone="UTC")

    with pytest.raises(errors.UnsupportedDtypeError) as info:
        read_schema(Unzoned)
    assert [problem["column"] for problem in info.value.problems] == ["at"]
    assert "Not/AZone" in info.value.problems[0]["reason"]


def test_every_dtype_polars_can_hold_is_accepted() -> None:
    # One column of every Dataframely dtype, parameterised ones included: none is refused.
    info = read_schema(EveryDtype)
    assert list(info.columns) == list(EveryDtype.columns())


def test_collection_is_refused() -> None:
    with pytest.raises(errors.CollectionNotSupportedError, match="Shop"):
        read_schema(Shop)


def test_anything_but_a_schema_class_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"dy\.Schema"):
        read_schema(pl.DataFrame())

"""The Columns tab of the asset and of its quarantine."""

from __future__ import annotations

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely import errors, wiring
from dagster_dataframely._model.columns_tab import quarantine_table_schema
from dagster_dataframely._model.schema import read_schema
from tests.schemas import EveryDtype, NoRules, OrderLines, Orders


def _columns(schema: type[dy.Schema]) -> dict[str, dg.TableColumn]:
    return {column.name: column for column in wiring.table_schema(schema).columns}


def test_spec_example_columns() -> None:
    table = wiring.table_schema(Orders)
    assert [c.name for c in table.columns] == ["order_id", "amount"]
    order_id, amount = table.columns
    assert order_id.type == "String"
    assert order_id.description == "The order's id."
    assert amount.type == "Float64"
    # Nullability and uniqueness have their own fields; inf and nan are noise.
    assert amount.constraints.nullable is False
    assert amount.constraints.unique is False
    assert amount.constraints.other == [">= 0.0"]
    # The primary key is a table constraint, never a column's `unique` flag.
    assert order_id.constraints.unique is False
    assert table.constraints == dg.TableConstraints(other=["primary key (order_id)"])


def test_composite_key_and_every_constraint_kind() -> None:
    columns = _columns(OrderLines)
    assert list(columns) == [
        "order_id",
        "line_no",
        "sku",
        "quantity",
        "price",
        "status",
        "channel",
        "ordered_at",
    ]
    assert columns["order_id"].constraints.other == ["matches ^o-[0-9]+$"]
    assert columns["line_no"].constraints.other == [">= 1", "< 1000"]
    assert columns["sku"].constraints.other == ["length >= 3 bytes", "length <= 64 bytes"]
    assert columns["quantity"].constraints.other == ["> 0"]
    assert columns["price"].constraints.other == [">= 0.00"]
    assert columns["price"].type == "Decimal(precision=10, scale=2)"
    assert columns["status"].constraints.other == []
    assert columns["channel"].constraints.other == ["in (1, 2)"]
    assert columns["channel"].constraints.nullable is True
    assert columns["ordered_at"].constraints.other == ["aligned to 1h"]
    assert columns["ordered_at"].type == "Datetime(time_unit='us', time_zone='UTC')"
    table = wiring.table_schema(OrderLines)
    assert table.constraints == dg.TableConstraints(
        other=["primary key (order_id, line_no)", "paid_has_price", "plausible_quantity"]
    )


def test_tags_become_strings() -> None:
    assert _columns(OrderLines)["sku"].tags == {"pii": "False", "owner": "catalog"}
    assert _columns(OrderLines)["order_id"].tags == {}


def test_unique_comes_from_the_columns_own_flag() -> None:
    class Users(dy.Schema):
        email = dy.String(unique=True)
        user_id = dy.Int64(primary_key=True)

    columns = _columns(Users)
    assert columns["email"].constraints.unique is True
    assert columns["user_id"].constraints.unique is False


def test_every_dtype() -> None:
    columns = _columns(EveryDtype)
    assert columns["at"].type == "Datetime(time_unit='ns', time_zone='Europe/Berlin')"
    assert columns["tags"].type == "List(String)"
    assert columns["vec"].type == "Array(Float64, shape=(3,))"
    assert columns["address"].type == "Struct({'city': String, 'zip': Int64})"
    assert columns["blob"].type == "Binary"
    assert columns["kind"].type == "Enum(categories=['a', 'b'])"
    assert columns["f64"].constraints.other == []
    assert columns["day"].constraints.other == [">= 2026-01-01"]
    assert columns["took"].constraints.other == ["<= 1h 30m"]
    assert columns["tags"].constraints.other == [
        "length <= 3 elements",
        "each element is not null",
        "each element length >= 1 bytes",
    ]
    assert columns["vec"].constraints.other == ["each element is not null", "each element >= 0.0"]
    assert columns["address"].constraints.other == [
        "field city is not null",
        "field city length <= 10 bytes",
        "field zip >= 1",
    ]


class Parcels(dy.Schema):
    """Parcel lines with no primary key, and rules across columns and across groups of rows."""

    parcel = dy.String(nullable=False)
    carrier = dy.String(nullable=True)
    weight = dy.Float64(nullable=False, min=0.0)

    @dy.rule()
    def one_weight_per_parcel(cls) -> pl.Expr:
        """Every line of one parcel reports the same weight."""
        return pl.col("weight").n_unique().over("parcel") == 1

    @dy.rule()
    def heavy_parcels_have_a_carrier(cls) -> pl.Expr:
        """A parcel over 30 kg names the carrier that takes it."""
        return (pl.col("weight") <= 30) | pl.col("carrier").is_not_null()


PARCEL_RULES = ["one_weight_per_parcel", "heavy_parcels_have_a_carrier"]


def test_schema_rules_are_table_constraints_by_name_even_without_a_primary_key() -> None:
    table = wiring.table_schema(Parcels)
    # A group rule (`.over()`) is listed like any other `@dy.rule`, in declaration order.
    assert table.constraints == dg.TableConstraints(other=PARCEL_RULES)
    # Never the docstring: that is the check's description, not a constraint.
    shown = [*table.constraints.other, *(c for col in table.columns for c in col.constraints.other)]
    assert not any("parcel reports" in text or "carrier that" in text for text in shown)
    # The rules sit at table level only, beside no column.
    assert {col.name: col.constraints.other for col in table.columns} == {
        "parcel": [],
        "carrier": [],
        "weight": [">= 0.0"],
    }


@pytest.mark.parametrize("schema", [Parcels, OrderLines])
def test_the_asset_definition_and_schema_metadata_carry_the_schema_rules(
    schema: type[dy.Schema],
) -> None:
    @dd.asset(schema)
    def parcels() -> pl.DataFrame: ...

    expected = wiring.table_schema(schema)
    assert expected.constraints.other[-2:] == (
        PARCEL_RULES if schema is Parcels else ["paid_has_price", "plausible_quantity"]
    )
    definition = parcels.metadata_by_key[parcels.key]["dagster/column_schema"]
    assert getattr(definition, "value", definition) == expected
    assert wiring.schema_metadata(schema) == {"dagster/column_schema": expected}


def test_the_quarantine_spec_claims_no_table_constraint() -> None:
    spec = dd.quarantine_spec(OrderLines, "order_lines")
    table = spec.metadata["dagster/column_schema"]
    assert getattr(table, "value", table).constraints.other == []


def test_schema_without_rules_has_plain_columns() -> None:
    table = wiring.table_schema(NoRules)
    assert [c.constraints.other for c in table.columns] == [[], []]
    assert table.constraints.other == []


def test_schema_metadata_is_one_entry() -> None:
    assert wiring.schema_metadata(Orders) == {"dagster/column_schema": wiring.table_schema(Orders)}


def test_quarantine_columns_have_no_constraints_and_a_string_per_rule() -> None:
    table = quarantine_table_schema(read_schema(Orders))
    assert [c.name for c in table.columns] == [
        "order_id",
        "amount",
        "dy_rule__primary_key",
        "dy_rule__order_id__nullability",
        "dy_rule__amount__nullability",
        "dy_rule__amount__min",
        "dy_rule__amount__inf",
        "dy_rule__amount__nan",
    ]
    assert table.constraints.other == []
    assert all(c.constraints.other == [] and c.constraints.nullable for c in table.columns)
    assert {c.type for c in table.columns[2:]} == {"String"}


@pytest.mark.parametrize("function", [wiring.table_schema, wiring.schema_metadata])
def test_bad_names_raise_from_every_function(function: object) -> None:
    class Reserved(dy.Schema):
        dy_x = dy.Int64()

    with pytest.raises(errors.ReservedColumnError):
        function(Reserved)  # type: ignore[operator]

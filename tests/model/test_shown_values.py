"""The sensitive mark, read once from a schema, and what an output lets the event log show."""

from __future__ import annotations

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely import errors
from dagster_dataframely._model.schema import read_schema
from dagster_dataframely._model.settings import resolve_settings
from dagster_dataframely._model.shown_values import (
    CELL_LIMIT,
    ShownValues,
    cut_text,
    dtype_text,
    types_show_values,
)


class People(dy.Schema):
    person_id = dy.String(primary_key=True)
    email = dy.String(metadata={"pii": True, "owner": "crm"})
    phone = dy.String(nullable=True, metadata={"pii": True})
    city = dy.String(metadata={"pii": False})
    age = dy.Int64(min=0, metadata={"owner": "crm"})


def test_a_column_marked_pii_true_is_sensitive_and_nothing_else_is() -> None:
    assert read_schema(People).sensitive == {"email", "phone"}


@pytest.mark.parametrize("mark", ["yes", "True", 1, None, ["x"]], ids=repr)
def test_a_mark_that_is_not_a_boolean_is_refused_where_the_asset_is_declared(
    mark: object,
) -> None:
    class Guessing(dy.Schema):
        person_id = dy.String(primary_key=True)
        email = dy.String(metadata={"pii": mark})

    with pytest.raises(errors.SensitiveMarkError) as raised:

        @dd.asset(Guessing)
        def guessing() -> pl.DataFrame:
            return Guessing.create_empty()

    assert raised.value.columns == {"email": type(mark).__name__}
    assert "'email'" in str(raised.value)


def test_the_columns_tab_shows_the_mark() -> None:
    @dd.asset(People)
    def people() -> pl.DataFrame:
        return People.create_empty()

    tab = people.metadata_by_key[people.key]["dagster/column_schema"]
    tags = {column.name: column.tags for column in tab.columns}
    assert tags["email"] == {"pii": "True", "owner": "crm"}
    assert tags["city"] == {"pii": "False"}


@pytest.mark.parametrize(("row_sample", "rows"), [(0, False), (1, True), (5, True)])
def test_an_output_shows_rows_unless_its_row_sample_is_zero(row_sample: int, rows: bool) -> None:
    settings = resolve_settings(row_sample=row_sample)
    shown = ShownValues.of(read_schema(People), settings)
    assert shown == ShownValues(rows=rows, masked=frozenset({"email", "phone"}))
    assert shown.hides_values


def test_an_output_with_samples_and_no_sensitive_column_hides_nothing() -> None:
    class Plain(dy.Schema):
        a = dy.Int64()

    assert not ShownValues.of(read_schema(Plain), resolve_settings()).hides_values


def test_every_declared_output_says_what_it_shows_in_its_definition_metadata() -> None:
    @dd.asset(People, row_sample=0)
    def people() -> pl.DataFrame:
        return People.create_empty()

    metadata = people.metadata_by_key[people.key]
    entry = metadata["dataframely/event_log_values"]
    assert entry == dg.MetadataValue.json({"rows": False, "masked_columns": ["email", "phone"]})
    assert ShownValues.from_definition_metadata(metadata) == ShownValues(
        rows=False, masked=frozenset({"email", "phone"})
    )


def test_an_output_the_package_did_not_declare_has_no_policy() -> None:
    assert ShownValues.from_definition_metadata({}) is None
    assert ShownValues.from_definition_metadata({"owner": "crm"}) is None


@given(st.text(max_size=3 * CELL_LIMIT))
def test_a_text_is_cut_to_the_limit_with_its_whole_length(text: str) -> None:
    shown = cut_text(text)
    if len(text) <= CELL_LIMIT:
        assert shown == text
    else:
        assert shown == f"{text[:CELL_LIMIT]}…[cut: {len(text)} characters]"


# A dtype's text holds values: an Enum prints its categories, which are its column's values.

MARK = "zq"
"""Every generated category and Categories name starts with it; no dtype's own text holds it."""

_LEAVES = st.one_of(
    st.sampled_from(
        [pl.Int64(), pl.String(), pl.Boolean(), pl.Date(), pl.Datetime("us", "UTC"), pl.Null()]
    ),
    st.just(pl.Categorical()),
    st.lists(st.text(max_size=6).map(MARK.__add__), min_size=1, max_size=4, unique=True).map(
        pl.Enum
    ),
    st.text("abc", min_size=1, max_size=4).map(
        lambda name: pl.Categorical(pl.Categories(MARK + name))
    ),
)
DTYPES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        inner.map(pl.List),
        st.tuples(inner, st.integers(1, 3)).map(lambda pair: pl.Array(*pair)),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, min_size=1).map(pl.Struct),
    ),
    max_leaves=6,
)


@given(DTYPES)
def test_a_sensitive_columns_dtype_shows_no_category_and_anothers_is_polars_text(
    dtype: pl.DataType,
) -> None:
    shown = dtype_text(dtype, sensitive=True)
    assert MARK not in shown
    assert dtype_text(dtype, sensitive=False) == str(dtype)
    if MARK not in str(dtype):  # nothing to hide: Polars' own text
        assert shown == str(dtype)
    # What stays is the dtype's shape: every Enum is there, masked.
    assert shown.count("Enum(categories=[sensitive])") == str(dtype).count("Enum(")


def test_a_masked_dtype_reads_as_its_shape() -> None:
    tiers = pl.Enum(["gold-ann@example.com", "lead-bob@example.com"])
    assert dtype_text(tiers, sensitive=True) == "Enum(categories=[sensitive])"
    nested = pl.Struct({"tier": tiers, "tags": pl.List(pl.Categorical(pl.Categories("crm")))})
    assert dtype_text(nested, sensitive=True) == (
        "Struct({'tier': Enum(categories=[sensitive]), 'tags': List(Categorical)})"
    )
    assert dtype_text(pl.Array(tiers, (2, 3)), sensitive=True) == (
        "Array(Enum(categories=[sensitive]), shape=(2, 3))"
    )


@pytest.mark.parametrize(
    ("column", "shows"),
    [
        (dy.Enum(["a", "b"]), True),
        (dy.List(dy.Enum(["a"])), True),
        (dy.Struct({"x": dy.Enum(["a"])}), True),
        (dy.Any(), True),  # it accepts an Enum it did not declare
        (dy.String(), False),
        (dy.Categorical(), False),
        (dy.List(dy.Int64()), False),
    ],
    ids=repr,
)
def test_which_columns_dtypes_can_print_values(column: dy.Column, shows: bool) -> None:
    assert types_show_values(column) is shows


def test_an_outputs_typed_columns_are_its_sensitive_ones_whose_dtype_can_print_values() -> None:
    class Tiers(dy.Schema):
        person_id = dy.String(primary_key=True)
        tier = dy.Enum(["gold", "lead"], metadata={"pii": True})
        email = dy.String(metadata={"pii": True})
        kind = dy.Enum(["a", "b"])

    shown = ShownValues.of(read_schema(Tiers), resolve_settings())
    assert shown.masked == {"tier", "email"}
    assert shown.typed == {"tier"}


def test_the_columns_tab_masks_a_sensitive_enums_categories_and_shows_anothers() -> None:
    class Tiers(dy.Schema):
        person_id = dy.String(primary_key=True)
        tier = dy.Enum(["gold-ann", "lead-bob"], metadata={"pii": True})
        kind = dy.Enum(["a", "b"])

    @dd.asset(Tiers, quarantine=True)
    def tiers() -> pl.DataFrame:
        return Tiers.create_empty()

    tabs = {
        "table": tiers.metadata_by_key[tiers.key]["dagster/column_schema"],
        "quarantine": dd.quarantine_spec(Tiers, tiers).metadata["dagster/column_schema"],
    }
    for name, tab in tabs.items():
        types = {column.name: column.type for column in tab.columns}
        assert types["tier"] == "Enum(categories=[sensitive])", name
        assert types["kind"] == "Enum(categories=['a', 'b'])", name

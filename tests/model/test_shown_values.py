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
from dagster_dataframely._model.shown_values import CELL_LIMIT, ShownValues, cut_text


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

"""Filtering what an IO manager records beside a validated output, as the output allows."""

from __future__ import annotations

from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model.shown_values import CELL_LIMIT, ShownValues
from dagster_dataframely._store.manager_metadata import shown_manager_metadata


def _table(rows: list[dict[str, Any]]) -> dg.TableMetadataValue:
    return dg.MetadataValue.table(
        records=[dg.TableRecord(row) for row in rows],
        schema=dg.TableSchema(columns=[dg.TableColumn(name) for name in rows[0]]),
    )


RECORDED = {
    "path": dg.MetadataValue.path("/w/people.parquet"),
    "dagster/row_count": dg.MetadataValue.int(2),
    "table": _table([{"id": "a", "email": "ann@x", "note": "n" * (CELL_LIMIT + 10)}]),
    "preview": dg.MetadataValue.md("| id | email |"),
}


def test_an_output_the_package_did_not_declare_keeps_what_its_manager_recorded() -> None:
    assert shown_manager_metadata(RECORDED, {"owner": "crm"}, {}) == RECORDED


def test_without_plain_previews_an_undeclared_output_loses_its_tables_and_markdown() -> None:
    """A plain asset has no schema to say which columns are sensitive: no preview is kept."""
    schema = dg.MetadataValue.table_schema(
        dg.TableSchema(columns=[dg.TableColumn("tier", str(TIERS))])
    )
    recorded = {**RECORDED, "dagster/column_schema": schema}
    shown = shown_manager_metadata(
        recorded, {"owner": "crm"}, {"tier": TIERS}, plain_previews=False
    )
    assert shown == {
        "path": RECORDED["path"],
        "dagster/row_count": RECORDED["dagster/row_count"],
        "dagster/column_schema": schema,  # the types as recorded: no column is marked
    }


def test_samples_off_drop_every_table_and_markdown_value_and_keep_the_rest() -> None:
    definition = ShownValues(rows=False, masked=frozenset()).definition_metadata()
    assert shown_manager_metadata(RECORDED, definition, {}) == {
        "path": RECORDED["path"],
        "dagster/row_count": RECORDED["dagster/row_count"],
    }


def test_a_sensitive_column_leaves_the_tables_and_the_markdown_goes() -> None:
    definition = ShownValues(rows=True, masked=frozenset({"email"})).definition_metadata()
    shown = shown_manager_metadata(RECORDED, definition, {})
    assert set(shown) == {"path", "dagster/row_count", "table"}
    (record,) = shown["table"].records
    assert record.data == {
        "id": "a",
        "note": f"{'n' * CELL_LIMIT}…[cut: {CELL_LIMIT + 10} characters]",
    }
    assert [column.name for column in shown["table"].schema.columns] == ["id", "note"]


def test_with_samples_on_the_tables_stay_with_their_cells_cut() -> None:
    definition = ShownValues(rows=True, masked=frozenset()).definition_metadata()
    shown = shown_manager_metadata(RECORDED, definition, {})
    assert shown["preview"] == RECORDED["preview"]
    (record,) = shown["table"].records
    assert record.data["email"] == "ann@x"
    assert record.data["note"].endswith(f"…[cut: {CELL_LIMIT + 10} characters]")


TIERS = pl.Enum(["tier-gold-ann", "tier-lead-bob"])
"""A sensitive column's dtype whose text prints its values."""


def test_a_sensitive_columns_type_is_masked_in_a_recorded_table_schema() -> None:
    recorded = {
        "dagster/column_schema": dg.MetadataValue.table_schema(
            dg.TableSchema(
                columns=[
                    dg.TableColumn("id", "String"),
                    dg.TableColumn("tier", str(TIERS), description="kept"),
                    dg.TableColumn("kind", str(TIERS)),
                ]
            )
        )
    }
    dtypes = {"id": pl.String(), "tier": TIERS, "kind": TIERS}
    definition = ShownValues(rows=True, masked=frozenset({"tier"})).definition_metadata()
    (schema,) = shown_manager_metadata(recorded, definition, dtypes).values()
    assert [(c.name, c.type) for c in schema.schema.columns] == [
        ("id", "String"),
        ("tier", "Enum(categories=[sensitive])"),
        ("kind", str(TIERS)),  # not sensitive: as the manager recorded it
    ]
    assert schema.schema.columns[1].description == "kept"
    # An output with nothing sensitive keeps the types as recorded.
    plain = ShownValues(rows=False, masked=frozenset()).definition_metadata()
    assert shown_manager_metadata(recorded, plain, dtypes) == recorded

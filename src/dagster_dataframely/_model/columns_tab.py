"""The Columns tab: the schema as the `dg.TableSchema` of an asset and of its quarantine."""

from __future__ import annotations

import functools
from collections.abc import Iterable

import dagster as dg
import dataframely as dy

from . import names, render
from .schema import PRIMARY_KEY_RULE, SchemaInfo, read_schema
from .setting_keywords import with_raises
from .shown_values import dtype_text
from .warning_rules import WARNING_SUFFIX, resolve_warning_rules


@with_raises("warning_rules", "names")
def table_schema(
    schema: type[dy.Schema], *, warning_rules: Iterable[str] | None = None
) -> dg.TableSchema:
    """Return the schema as the `dg.TableSchema` Dagster's Columns tab shows.

    Each column carries its dtype, description, nullability, its own `unique` flag, its other
    constraints as operator text and its `metadata=` as string tags. The primary key is a table
    constraint: Dataframely checks it as one schema-level rule, so marking each key column unique
    would claim a constraint that nothing checks for a composite key. Each `@dy.rule` is a table
    constraint beside it, by its rule name. A column marked `metadata={"pii": True}` shows an
    `Enum`'s categories as `[sensitive]`, since they are its values.

    Parameters
    ----------
    schema
        The schema to show.
    warning_rules
        As for `dd.asset`: the rules whose failures only warn, by Dataframely's names.

    Returns
    -------
    dg.TableSchema
        A table schema with the columns in the schema's order.

    Raises
    ------
    """
    info = read_schema(schema)
    return columns_tab(info, resolve_warning_rules(info, warning_rules))


@functools.lru_cache(maxsize=1024)
def columns_tab(info: SchemaInfo, warnings: frozenset[str] = frozenset()) -> dg.TableSchema:
    """`table_schema` of a schema already read; a Collection member's shows its filters too.

    Cached: a code location declares many assets on one schema, and a run adds it again.
    """
    # NOTE: each column's rule kinds (the part of the rule name after `|`), in Dataframely's order.
    kinds: dict[str, list[str]] = {}
    for rule in info.rules:
        if rule.column is not None:
            separated = rule.column + names.COLUMN_RULE_SEPARATOR
            kinds.setdefault(rule.column, []).append(rule.name.removeprefix(separated))
    columns = [
        dg.TableColumn(
            name=name,
            type=dtype_text(column.dtype, sensitive=name in info.sensitive),
            description=column.description,
            constraints=dg.TableColumnConstraints(
                nullable=column.nullable,
                unique=column.unique,
                other=_column_constraints(name, column, kinds.get(name, []), warnings),
            ),
            tags=_tags(column),
        )
        for name, column in info.columns.items()
    ]
    return dg.TableSchema(columns=columns, constraints=_table_constraints(info, warnings))


def _column_constraints(
    name: str, column: dy.Column, kinds: list[str], warnings: frozenset[str]
) -> list[str]:
    if not warnings:
        return render.columns_tab_constraints(column, kinds)
    return [
        text + (WARNING_SUFFIX if name + names.COLUMN_RULE_SEPARATOR + kind in warnings else "")
        for kind in kinds
        for text in render.columns_tab_constraints(column, [kind])
    ]


def _table_constraints(info: SchemaInfo, warnings: frozenset[str]) -> dg.TableConstraints:
    # NOTE: a rule over several columns or groups of rows has no column to sit beside: it is
    # listed by its name, what its check and quarantine column are called (its docstring, the
    # check's description, is too long for a constraint). A Collection member's filters follow,
    # each by its label, which names the Collection.
    def marked(text: str, rule: str) -> str:
        return text + WARNING_SUFFIX if rule in warnings else text

    key = (
        [marked(render.primary_key_text(info.primary_key), PRIMARY_KEY_RULE)]
        if info.primary_key
        else []
    )
    return dg.TableConstraints(
        other=key
        + [marked(rule.name, rule.name) for rule in info.schema_level_rules]
        + [rule.label for rule in info.filters]
    )


@with_raises("warning_rules", "names")
def schema_metadata(
    schema: type[dy.Schema], *, warning_rules: Iterable[str] | None = None
) -> dict[str, dg.TableSchema]:
    """Return the definition metadata that fills an asset's Columns tab from the schema.

    Pass it to `dg.asset(metadata=...)` for the tab before the first run. The catalog shows the
    latest materialization's column schema after a run, and an IO manager may record its own
    (`PolarsParquetIOManager` does, from the frame), so a hand-wired asset also passes it to
    `context.add_asset_metadata(...)` as the first line of its function, as `dd.asset` does.

    Parameters
    ----------
    schema, warning_rules
        As for `table_schema`: the schema to show, and the rules that only warn.

    Returns
    -------
    dict[str, dg.TableSchema]
        A one-entry mapping from `dagster/column_schema` to `table_schema(schema)`, to merge
        into `@dg.asset(metadata=...)` and to pass to `context.add_asset_metadata`.

    Raises
    ------

    Examples
    --------
    ```python
    import dagster as dg
    import dataframely as dy
    import polars as pl

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        order_id = dy.String(primary_key=True, description="The order's public id.")
        amount = dy.Float64(min=0.0)


    @dg.asset(metadata={"owner": "sales", **dd.wiring.schema_metadata(Orders)})
    def orders() -> pl.DataFrame:
        return Orders.create_empty()


    for column in orders.metadata_by_key[orders.key]["dagster/column_schema"].columns:
        print(column.name, column.type, column.constraints.other)
    ```
    """
    return {names.COLUMN_SCHEMA: table_schema(schema, warning_rules=warning_rules)}


def quarantine_table_schema(info: SchemaInfo) -> dg.TableSchema:
    """The quarantine's columns: the schema's, without constraints, then a `String` per rule.

    Invalid rows break the constraints by definition (a `not null` column full of nulls, a
    duplicate key), so the quarantine's tab claims none of them.
    """
    columns = [
        dg.TableColumn(name=c.name, type=c.type, description=c.description, tags=c.tags)
        for c in columns_tab(info).columns
    ]
    columns += [
        dg.TableColumn(
            name=rule.check_name,
            type="String",
            description=f"`valid`, `invalid` or `unknown`: {rule.description}",
        )
        for rule in info.rules
    ]
    return dg.TableSchema(columns=columns)


def _tags(column: dy.Column) -> dict[str, str] | None:
    # NOTE: `dg.TableColumn.tags` takes strings only.
    if not column.metadata:
        return None
    return {str(key): str(value) for key, value in column.metadata.items()}

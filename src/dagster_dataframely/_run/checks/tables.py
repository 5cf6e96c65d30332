"""Polars rows as a Dagster table value, so the UI shows a sortable table rather than markdown.

A Dagster table cell holds only a str, int, float, bool or None. Every other dtype becomes text in
one Polars `select`, column by column, because this runs on every materialization. In the same
`select`, every text is cut to `CELL_LIMIT` characters and a sensitive column's values become
`MASK`, so neither a huge value nor a sensitive one reaches the event log; a column that needs
none of it (numbers, short texts) is left out of the `select`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping

import dagster as dg
import polars as pl
from polars.datatypes import DataTypeClass

from dagster_dataframely._model.shown_values import CELL_LIMIT, CUT, MASK, dtype_text
from dagster_dataframely._upstream import table_of_records, table_record_of_cells

Cell = str | int | float | bool | None

AnyDtype = pl.DataType | DataTypeClass
"""A dtype as a frame's schema holds it, or as a nested dtype's field names it."""


def table_value(frame: pl.DataFrame, masked: Collection[str] = ()) -> dg.TableMetadataValue:
    """Return `frame` as a Dagster table value, with its columns in the frame's order.

    Each column's `type` is its Polars dtype as text (`Int64`, `Datetime(time_unit='us', ...)`),
    as on the Columns tab, a `masked` column's without its categories (`dtype_text`). Every
    cell is shown as `_shown_cell` shows it; a column named in `masked` shows `MASK` for each
    value (a null stays null). An empty frame gives a table with no records; callers decide
    whether to emit it.
    """
    records, schema = table_records(frame, masked)
    return table_of_records(records, schema)


def table_records(
    frame: pl.DataFrame, masked: Collection[str] = ()
) -> tuple[list[dg.TableRecord], dg.TableSchema]:
    """`frame`'s rows as the records of `table_value` and its columns as that value's schema.

    For a caller that shows the rows of one frame in several tables: each table takes its
    records from one conversion, and every table shares the schema. Records of one conversion
    have the same keys, so `table_of_records` builds each table without Dagster's checks.
    """
    schema = dg.TableSchema(
        columns=[
            dg.TableColumn(name, dtype_text(dtype, sensitive=name in masked))
            for name, dtype in frame.schema.items()
        ]
    )
    return _records(_shown_frame(frame, masked)), schema


def _shown_frame(frame: pl.DataFrame, masked: Collection[str]) -> pl.DataFrame:
    # NOTE: a wide frame is mostly numbers and short texts, shown as they are: only the other
    # columns get an expression, and a frame with none is not copied.
    long_texts = _long_text_columns(frame)
    changed = {
        position: pl.when(pl.nth(position).is_not_null()).then(pl.lit(MASK))
        if name in masked
        else _shown_cell(pl.nth(position), dtype)
        for position, (name, dtype) in enumerate(frame.schema.items())
        if name in masked or position in long_texts or not _is_cell_dtype(dtype)
    }
    if not changed:
        return frame
    # One chunk per column: Polars 1.x panics on `when` over a struct split into several chunks.
    # `pl.nth`, not `pl.col`: a column named `*` or `^a.*$` would select other columns.
    return frame.rechunk().select(
        changed.get(position, pl.nth(position)).alias(name)
        for position, name in enumerate(frame.columns)
    )


def _long_text_columns(frame: pl.DataFrame) -> set[int]:
    # NOTE: bytes, not characters: the byte length is stored beside a string, and a text of at most
    # CELL_LIMIT bytes has at most as many characters.
    texts = [p for p, dtype in enumerate(frame.dtypes) if isinstance(dtype, pl.String)]
    if not texts:
        return set()
    longest = frame.select(pl.nth(p).str.len_bytes().max() for p in texts).row(0)
    return {p for p, size in zip(texts, longest, strict=True) if (size or 0) > CELL_LIMIT}


def _records(shown: pl.DataFrame) -> list[dg.TableRecord]:
    # NOTE: a wide sample has a million cells: each column becomes Python values at once, then each
    # row's dict is built whole (0.6x to 0.8x the time of filling the dicts a column at a time,
    # `benchmarks/wide.py`); cells of a Dagster cell dtype skip Dagster's check of every entry.
    names = shown.columns
    floats = [position for position, dtype in enumerate(shown.dtypes) if dtype.is_float()]
    # One select for every float column: True where it holds no NaN or infinity.
    finite = shown.select(pl.nth(p).is_finite().all() for p in floats).row(0) if floats else ()
    non_finite = {p for p, whole in zip(floats, finite, strict=True) if not whole}
    columns: list[list[Cell]] = [column.to_list() for column in shown.get_columns()]
    for position in non_finite:
        columns[position] = [_finite(value) for value in columns[position]]
    cells_by_dtype = all(_is_cell_dtype(dtype) for dtype in shown.dtypes)
    make = table_record_of_cells if cells_by_dtype else dg.TableRecord
    # Every column has the frame's height; zip() of no column would give no rows at all.
    rows = zip(*columns, strict=True) if columns else ((),) * shown.height
    return [make(dict(zip(names, values, strict=True))) for values in rows]


def _is_cell_dtype(dtype: pl.DataType) -> bool:
    return (
        dtype.is_integer()
        or dtype.is_float()
        or isinstance(dtype, pl.String | pl.Boolean | pl.Null)
    )


def records_value(
    rows: Iterable[Mapping[str, Cell]], types: Mapping[str, str]
) -> dg.TableMetadataValue:
    """Return rows of cells as a table value whose columns are `types` (column name to type)."""
    return dg.MetadataValue.table(
        records=[
            dg.TableRecord({name: _finite(value) for name, value in row.items()}) for row in rows
        ],
        schema=dg.TableSchema(
            columns=[dg.TableColumn(name, type_) for name, type_ in types.items()]
        ),
    )


def _shown_cell(expr: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    # NOTE: a binary value is cut before it becomes hex, so a 20 MB value is never copied whole; a
    # nested one after it becomes JSON.
    if isinstance(dtype, pl.Binary):
        whole = expr.bin.size()
        kept = CELL_LIMIT // 2
        head = expr.bin.slice(0, kept).bin.encode("hex")
        return pl.when(whole > kept).then(_cut(head, whole, "bytes")).otherwise(head)
    if isinstance(dtype, pl.String):
        return _cut_text(expr)
    if isinstance(dtype, pl.Categorical | pl.Enum):
        return _cut_text(expr.cast(pl.String))
    if isinstance(dtype, pl.List | pl.Array | pl.Struct | pl.Object):
        return _cut_text(cell_expr(expr, dtype))
    return cell_expr(expr, dtype)


def _cut_text(text: pl.Expr) -> pl.Expr:
    length = text.str.len_chars()
    return (
        pl.when(length > CELL_LIMIT)
        .then(_cut(text.str.slice(0, CELL_LIMIT), length, "characters"))
        .otherwise(text)
    )


def _cut(head: pl.Expr, length: pl.Expr, unit: str) -> pl.Expr:
    return pl.format(CUT, head, length, pl.lit(unit))


def cell_expr(expr: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """`expr` as values a table cell holds: numbers, booleans and strings stay, the rest is text.

    `Decimal` becomes its exact digits; dates and times ISO 8601 at the column's precision;
    `Duration` Polars' own form (`8d`, `1m 30s`); `Binary` lowercase hex; `List`, `Array` and
    `Struct` compact JSON.
    """
    if isinstance(dtype, pl.List | pl.Array | pl.Struct):
        encoded = pl.struct(_json_ready(expr, dtype).alias("v")).struct.json_encode()
        return pl.when(expr.is_not_null()).then(
            encoded.str.strip_prefix('{"v":').str.strip_suffix("}")
        )
    return _scalar(expr, dtype)


def _scalar(expr: pl.Expr, dtype: AnyDtype) -> pl.Expr:
    if isinstance(dtype, pl.Decimal):
        return expr.cast(pl.String)
    if isinstance(dtype, pl.Duration):
        return expr.dt.to_string("polars")
    if dtype.is_temporal():
        return expr.dt.to_string("iso:strict")
    if isinstance(dtype, pl.Binary):
        return expr.bin.encode("hex")
    if isinstance(dtype, pl.Object):
        return expr.map_batches(_object_text, return_dtype=pl.String)
    return expr


def _object_text(series: pl.Series) -> pl.Series:
    return pl.Series([None if value is None else str(value) for value in series], dtype=pl.String)


def _json_ready(expr: pl.Expr, dtype: AnyDtype) -> pl.Expr:
    if isinstance(dtype, pl.Struct):
        fields = [
            _json_ready(expr.struct.field(f.name), f.dtype).alias(f.name) for f in dtype.fields
        ]
        return pl.when(expr.is_not_null()).then(pl.struct(fields))
    if isinstance(dtype, pl.Array):
        return _json_ready(expr.arr.to_list(), pl.List(dtype.inner))
    if isinstance(dtype, pl.List):
        return expr.list.eval(_json_ready(pl.element(), dtype.inner))
    return _scalar(expr, dtype)


def _finite(value: Cell) -> Cell:
    # NOTE: the UI parses each record as strict JSON, which has no NaN or infinity.
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value

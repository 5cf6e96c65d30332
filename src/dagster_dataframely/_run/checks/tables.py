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
    """`frame` with every cell as a table shows it; a column already shown that way is kept.

    A wide frame's columns are mostly numbers and short texts, which a table shows as they
    are: only the others (masked, another dtype, a text that can be longer than `CELL_LIMIT`)
    get an expression, and a frame with none is not copied at all.
    """
    long_texts = _long_text_columns(frame)
    changed = {
        position: _masked(pl.nth(position))
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
    """The positions of the `String` columns with a value of more than `CELL_LIMIT` bytes.

    Bytes, not characters: a string's byte length is stored beside it, and a text of at most
    `CELL_LIMIT` bytes has at most as many characters, so only these columns can need a cut.
    """
    texts = [p for p, dtype in enumerate(frame.dtypes) if isinstance(dtype, pl.String)]
    if not texts:
        return set()
    longest = frame.select(pl.nth(p).str.len_bytes().max() for p in texts).row(0)
    return {p for p, size in zip(texts, longest, strict=True) if (size or 0) > CELL_LIMIT}


def _records(shown: pl.DataFrame) -> list[dg.TableRecord]:
    """The rows of a frame of cells as table records, each row's dict built whole.

    A wide sample has a million cells. Each column becomes Python values at once
    (`Series.to_list`), and each row's dict is then made in one step from that row's values:
    at 2,500 rows of 500 columns this takes 0.6x to 0.8x the time of filling every row's dict a
    column at a time, which touches all 2,500 dicts once per column (`benchmarks/wide.py`).
    The cells are a Dagster cell type by their dtype, so the records skip Dagster's check of
    every entry; a frame with any other dtype gets it.
    """
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
    """Whether every value of a column of `dtype` is a `Cell` in Python."""
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


def _masked(expr: pl.Expr) -> pl.Expr:
    """`MASK` where `expr` has a value, null where it has none: a sensitive column's cells."""
    return pl.when(expr.is_not_null()).then(pl.lit(MASK))


def _shown_cell(expr: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """`cell_expr`, with every text longer than `CELL_LIMIT` characters cut, marked `CUT`.

    Numbers, booleans, dates and times are short already and stay as they are. A binary value
    is cut before it becomes hex (to `CELL_LIMIT // 2` bytes, its size given in bytes), so a
    20 MB value is never copied whole; a nested value is cut after it becomes JSON.
    """
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
    """A text cut to `CELL_LIMIT` characters when longer, in the `CUT` form."""
    length = text.str.len_chars()
    return (
        pl.when(length > CELL_LIMIT)
        .then(_cut(text.str.slice(0, CELL_LIMIT), length, "characters"))
        .otherwise(text)
    )


def _cut(head: pl.Expr, length: pl.Expr, unit: str) -> pl.Expr:
    """The `CUT` form of a value: its head, then its whole length in `unit`."""
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
    """A leaf value as the text a Dagster table cell holds, where Polars has no JSON for it."""
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
    """Python objects have no Polars cast to text, so each becomes its `str`."""
    return pl.Series([None if value is None else str(value) for value in series], dtype=pl.String)


def _json_ready(expr: pl.Expr, dtype: AnyDtype) -> pl.Expr:
    """Turn the leaves of a nested value into what Polars' JSON encoder writes as we show them."""
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
    """NaN and infinities as text: the UI parses each record as strict JSON, which has neither."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value

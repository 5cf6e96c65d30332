"""Which of an asset's values its run may show in the event log, and how a shown cell is cut.

The event log is shared by a deployment, exported at will and never pruned, so what reaches it
is decided once per output from its settings and its schema: rows at all (`row_sample` above
0), and which columns never (the sensitive ones). Every cell that is shown is cut to
`CELL_LIMIT` characters, so no value, however large, makes an event large. A dtype's text can
hold values too (an `Enum` prints its categories): a sensitive column's is shown masked
(`dtype_text`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl

from . import names
from .schema import SchemaInfo
from .settings import Settings

CELL_LIMIT = 256
"""The most characters of one value a table cell shows; a longer one is cut, with `CUT`."""

CUT = "{}…[cut: {} {}]"
"""A cut cell: its first `CELL_LIMIT` characters, then how long the whole value was, and in
what (`characters`, or `bytes` for a binary value). One template for Polars' `pl.format` and
Python's `str.format`, so every cut cell reads the same."""

MASK = "[sensitive]"
"""What a cell of a sensitive column shows instead of its value, in a sample or a statistic."""


@dataclass(frozen=True, slots=True)
class ShownValues:
    """What the event log may show of one output's values."""

    rows: bool
    """Whether any row is shown: False when `row_sample` is 0, which turns the samples off."""
    masked: frozenset[str]
    """The sensitive columns, whose values are never shown."""
    typed: frozenset[str] = frozenset()
    """The sensitive columns whose dtype in a frame can print values (`types_show_values`):
    a manager that records the frame's column types as text shows them."""

    @classmethod
    def of(cls, info: SchemaInfo, settings: Settings) -> ShownValues:
        typed = frozenset(c for c in info.sensitive if types_show_values(info.columns[c]))
        return cls(rows=settings.row_sample > 0, masked=info.sensitive, typed=typed)

    @property
    def hides_values(self) -> bool:
        """Whether the user asked for any value to stay out of the event log."""
        return not self.rows or bool(self.masked)

    def definition_metadata(self) -> dict[str, dg.JsonMetadataValue]:
        """The output's definition metadata saying this, for the IO manager wrapper to read.

        Definition metadata is what Dagster hands every IO manager with each output, in the
        step's process and in any other, so the wrapper needs nothing else to filter.
        """
        value = {"rows": self.rows, "masked_columns": sorted(self.masked)}
        return {names.EVENT_LOG_VALUES: dg.MetadataValue.json(value)}

    @classmethod
    def from_definition_metadata(cls, metadata: Mapping[str, Any]) -> ShownValues | None:
        """What `definition_metadata` wrote; None for an output this package did not declare."""
        entry = metadata.get(names.EVENT_LOG_VALUES)
        value = getattr(entry, "data", entry)
        if not isinstance(value, Mapping):
            return None
        return cls(
            rows=value.get("rows") is not False,
            masked=frozenset(str(c) for c in value.get("masked_columns") or ()),
        )


def cut_text(text: str) -> str:
    """`text` as a table cell shows it: whole up to `CELL_LIMIT` characters, else cut."""
    if len(text) <= CELL_LIMIT:
        return text
    return CUT.format(text[:CELL_LIMIT], len(text), "characters")


def dtype_text(dtype: pl.DataType, *, sensitive: bool) -> str:
    """A column's dtype as the event log shows it: Polars' text, a sensitive column's masked.

    An `Enum` prints its categories, which are the values of its column, so in a sensitive
    column's dtype each `Enum` shows `Enum(categories=[sensitive])` and each `Categorical` no
    `Categories` of its own, at any depth of a `List`, `Array` or `Struct`. The text is built
    from the dtype with those parts replaced, so no category can survive in it.
    """
    if not sensitive:
        return str(dtype)
    return str(_without_categories(dtype)).replace(_EMPTY_ENUM, _MASKED_ENUM)


_EMPTY_ENUM = str(pl.Enum([]))
_MASKED_ENUM = _EMPTY_ENUM.replace("[]", MASK)


def _without_categories(dtype: pl.DataType) -> pl.DataType:
    if isinstance(dtype, pl.Enum):
        return pl.Enum([])
    if isinstance(dtype, pl.Categorical):
        return pl.Categorical()
    if isinstance(dtype, pl.List):
        return pl.List(_without_categories(_instance(dtype.inner)))
    if isinstance(dtype, pl.Array):
        return pl.Array(_without_categories(_instance(dtype.inner)), dtype.shape[0])
    if isinstance(dtype, pl.Struct):
        return pl.Struct(
            {field.name: _without_categories(_instance(field.dtype)) for field in dtype.fields}
        )
    return dtype


def _instance(dtype: Any) -> pl.DataType:
    # NOTE: Polars may hold a nested dtype's inner dtype as a bare class, `pl.Int64`.
    instance: pl.DataType = dtype() if isinstance(dtype, type) else dtype
    return instance


_ENUM_PROBE = pl.Enum(["dy_probe"])


def types_show_values(column: dy.Column) -> bool:
    """Whether a frame's dtype for `column` can print values: an `Enum` in it, at any depth.

    A declared `dy.Enum` (or a nested column holding one) always has one; a column that
    accepts an `Enum` it did not declare (`dy.Any`) may.
    """
    return _has_enum(column.dtype) or column.validate_dtype(_ENUM_PROBE)


def _has_enum(dtype: Any) -> bool:
    dtype = _instance(dtype)
    if isinstance(dtype, pl.Enum):
        return True
    if isinstance(dtype, pl.List | pl.Array):
        return _has_enum(dtype.inner)
    if isinstance(dtype, pl.Struct):
        return any(_has_enum(field.dtype) for field in dtype.fields)
    return False

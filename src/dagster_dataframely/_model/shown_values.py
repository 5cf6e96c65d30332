"""Which of an asset's values its run may show in the event log, and how a shown cell is cut.

The event log is shared by a deployment, exported at will and never pruned, so what reaches it
is decided once per output from its settings and its schema: rows at all (`row_sample` above
0), and which columns never (the sensitive ones). Every cell that is shown is cut to
`CELL_LIMIT` characters, so no value, however large, makes an event large.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg

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

    @classmethod
    def of(cls, info: SchemaInfo, settings: Settings) -> ShownValues:
        return cls(rows=settings.row_sample > 0, masked=info.sensitive)

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

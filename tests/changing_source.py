"""An IO plugin source that counts its reads and whose rows change after the first one.

Polars evaluates an IO plugin anew for every plan that reads it, as it would a table rewritten
between two reads. A test that builds a frame from one gets the first read's rows only if the
package read the source once, and the count says how often it did.
"""

from collections.abc import Callable, Iterator

import polars as pl
from polars.io.plugins import register_io_source


class ChangingSource:
    """The frame on the first read; `rewrite(frame, reads)` on every later one."""

    def __init__(
        self, frame: pl.DataFrame, rewrite: Callable[[pl.DataFrame, int], pl.DataFrame]
    ) -> None:
        self.frame = frame
        self.rewrite = rewrite
        self.reads = 0

    def scan(self) -> pl.LazyFrame:
        return register_io_source(self._read, schema=self.frame.schema)

    def _read(
        self,
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        self.reads += 1
        rows = self.rewrite(self.frame, self.reads) if self.reads > 1 else self.frame
        if with_columns is not None:
            rows = rows.select(with_columns)
        if predicate is not None:
            rows = rows.filter(predicate)
        if n_rows is not None:
            rows = rows.head(n_rows)
        yield from rows.iter_slices(batch_size or 7)

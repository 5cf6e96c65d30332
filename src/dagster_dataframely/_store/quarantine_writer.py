"""`QuarantineWriter`: the one shape every place invalid rows can go to has.

A run hands the rows to the asset's IO manager, a direct call to a parquet file or to memory,
a hand-wired asset to any callable of this shape; the pipeline sees only this type.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
from typing_extensions import TypeAliasType

from dagster_dataframely._upstream import document_type_alias

QuarantineWriter = TypeAliasType("QuarantineWriter", Callable[[pl.DataFrame], str])
document_type_alias(
    QuarantineWriter,
    """A function that stores an asset's invalid rows and returns where they went.

`validation_results` calls it at most once per run, with the frame `quarantine_frame`
returns, before the table is written. It returns the quarantine address, a string rather than
a path because it may name a database table. `delegating_writer` (in a run) and `file_writer`
(in a direct call) make one; any callable of this shape will do.""",
)

"""A parquet IO manager for the unit suite, so that suite needs no third-party IO manager.

`dagster-polars` cannot read on polars 2, and the unit suite runs on the newest polars too
(`make test-lowest` / `make test-newest`). This manager has the shape the package meets in
`PolarsParquetIOManager`: a `ConfigurableIOManager` with a `base_dir`, laid out by Dagster's
`UPathIOManager` (`<base_dir>/<key>/<partition>.parquet`), storing a DataFrame or a LazyFrame and
loading either one, as the input's annotation asks. The integration suite runs the same package
against `PolarsParquetIOManager` itself.
"""

from typing import Any, ClassVar, get_args

import dagster as dg
import polars as pl
from pydantic import PrivateAttr
from upath import UPath


def _wants_lazy(annotation: object) -> bool:
    """Whether an input annotation asks for LazyFrames, as `dict[str, pl.LazyFrame]` does."""
    return annotation is pl.LazyFrame or any(_wants_lazy(arg) for arg in get_args(annotation))


class ParquetIOManager(dg.ConfigurableIOManager, dg.UPathIOManager):
    """Stores each output as `<base_dir>/<asset key>[/<partition>].parquet`."""

    base_dir: str
    extension: ClassVar[str] = ".parquet"
    _base_path: UPath = PrivateAttr()

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._base_path = UPath(self.base_dir)

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        frame = obj.collect() if isinstance(obj, pl.LazyFrame) else obj
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(str(path))

    def load_from_path(self, context: dg.InputContext, path: UPath) -> Any:
        frame = pl.scan_parquet(str(path))
        return frame if _wants_lazy(context.dagster_type.typing_type) else frame.collect()

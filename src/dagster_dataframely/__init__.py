"""Attach a Dataframely schema to a Dagster asset.

`dd.asset(Schema)` fills the asset's Columns tab, declares one asset check per rule, validates
the returned frame and writes the invalid rows to a quarantine beside the table.
"""

from . import errors, testing, wiring
from ._asset import asset
from ._collection_asset import collection_asset
from ._io_manager import QuarantineAwareIOManager
from ._multi_asset import AssetOut, multi_asset
from ._quarantine import quarantine_spec
from ._settings import Granularity, SchemaRules
from ._table_checks import table_checks
from ._version import __version__ as __version__

__all__ = [
    "AssetOut",
    "Granularity",
    "QuarantineAwareIOManager",
    "SchemaRules",
    "asset",
    "collection_asset",
    "errors",
    "multi_asset",
    "quarantine_spec",
    "table_checks",
    "testing",
    "wiring",
]

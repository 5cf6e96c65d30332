"""Attach a Dataframely schema to a Dagster asset.

`dd.asset(Schema)` fills the asset's Columns tab, declares one asset check per rule, validates
the returned frame and writes the invalid rows to a quarantine beside the table.
"""

from dagster_shared.libraries import DagsterLibraryRegistry

from . import errors, testing, wiring
from ._api.asset import asset
from ._api.asset_out import AssetOut
from ._api.collection_asset import collection_asset
from ._api.mark_incident import mark_incident
from ._api.multi_asset import multi_asset
from ._api.table_checks import table_checks
from ._api.table_checks_component import TableChecksComponent
from ._declare.quarantine_spec import quarantine_spec
from ._model.anomaly_check import AnomalyCheck
from ._model.quality_policy import QualityPolicy
from ._model.row_threshold import Threshold
from ._model.setting_model import Granularity, SchemaRules
from ._model.volume_check import VolumeCheck
from ._store.io_manager import QuarantineAwareIOManager
from ._suggest.held_out import SuggestionReport, evaluate_suggestion
from ._suggest.suggest_schema import suggest_schema
from ._version import __version__ as __version__

# Dagster lists the integration libraries a code location uses (as `dagster-polars` registers).
DagsterLibraryRegistry.register("dataframely-dagster", __version__, is_dagster_package=False)

__all__ = [
    "AnomalyCheck",
    "AssetOut",
    "Granularity",
    "QualityPolicy",
    "QuarantineAwareIOManager",
    "SchemaRules",
    "SuggestionReport",
    "TableChecksComponent",
    "Threshold",
    "VolumeCheck",
    "asset",
    "collection_asset",
    "errors",
    "evaluate_suggestion",
    "mark_incident",
    "multi_asset",
    "quarantine_spec",
    "suggest_schema",
    "table_checks",
    "testing",
    "wiring",
]

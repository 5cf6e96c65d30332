"""Attach a Dataframely schema to a Dagster asset.

`dd.asset(Schema)` fills the asset's Columns tab, declares one asset check per rule, validates
the returned frame and writes the invalid rows to a quarantine beside the table.
"""

# NOTE: every name here without a leading `_` is public and listed once, as these imports (each
# imported `as` itself, the explicit re-export mypy and ruff read): `__all__` below is computed
# from them, so a helper this module needs is imported under a `_` name.
from dagster_shared.libraries import DagsterLibraryRegistry as _LibraryRegistry

from . import errors as errors
from . import testing as testing
from . import wiring as wiring
from ._api.asset import asset as asset
from ._api.asset_out import AssetOut as AssetOut
from ._api.collection_asset import collection_asset as collection_asset
from ._api.mark_incident import mark_incident as mark_incident
from ._api.multi_asset import multi_asset as multi_asset
from ._api.table_checks import table_checks as table_checks
from ._api.table_checks_component import TableChecksComponent as TableChecksComponent
from ._declare.quarantine_spec import quarantine_spec as quarantine_spec
from ._model.anomaly_check import AnomalyCheck as AnomalyCheck
from ._model.quality_policy import QualityPolicy as QualityPolicy
from ._model.row_threshold import Threshold as Threshold
from ._model.setting_model import Granularity as Granularity
from ._model.setting_model import SchemaRules as SchemaRules
from ._model.volume_check import VolumeCheck as VolumeCheck
from ._store.io_manager import QuarantineAwareIOManager as QuarantineAwareIOManager
from ._suggest.held_out import SuggestionReport as SuggestionReport
from ._suggest.held_out import evaluate_suggestion as evaluate_suggestion
from ._suggest.suggest_schema import suggest_schema as suggest_schema
from ._version import __version__ as __version__

# Dagster lists the integration libraries a code location uses (as `dagster-polars` registers).
_LibraryRegistry.register("dataframely-dagster", __version__, is_dagster_package=False)

__all__ = sorted(name for name in globals() if not name.startswith("_"))

"""The parts `dd.asset` is assembled from, for wiring a schema into an asset by hand."""

from ._declare.check_specs import check_specs
from ._model.code_version import schema_version
from ._model.columns_tab import schema_metadata, table_schema
from ._model.names import check_name
from ._run.split.failures import quarantine_frame
from ._run.validation import AssetYield, check_results, validation_results
from ._store.delegating import delegating_writer, validate_quarantine_key
from ._store.files import file_writer, quarantine_path
from ._store.quarantine_writer import QuarantineWriter

__all__ = [
    "AssetYield",
    "QuarantineWriter",
    "check_name",
    "check_results",
    "check_specs",
    "delegating_writer",
    "file_writer",
    "quarantine_frame",
    "quarantine_path",
    "schema_metadata",
    "schema_version",
    "table_schema",
    "validate_quarantine_key",
    "validation_results",
]

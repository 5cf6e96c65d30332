"""The parts `dd.asset` is assembled from, for wiring a schema into an asset by hand."""

# NOTE: each name is imported `as` itself, the explicit re-export mypy and ruff read, and these
# imports are the one list of public names: `__all__` below is computed from them.
from ._declare.check_specs import check_specs as check_specs
from ._model.code_version import schema_version as schema_version
from ._model.columns_tab import schema_metadata as schema_metadata
from ._model.columns_tab import table_schema as table_schema
from ._model.names import check_name as check_name
from ._run.split.failures import quarantine_frame as quarantine_frame
from ._run.validation import AssetYield as AssetYield
from ._run.validation import check_results as check_results
from ._run.validation import validation_results as validation_results
from ._store.delegating import delegating_writer as delegating_writer
from ._store.delegating import validate_quarantine_key as validate_quarantine_key
from ._store.files import file_writer as file_writer
from ._store.files import quarantine_path as quarantine_path
from ._store.quarantine_writer import QuarantineWriter as QuarantineWriter

__all__ = sorted(name for name in globals() if not name.startswith("_"))

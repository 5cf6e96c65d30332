"""The parts `dd.asset` is assembled from, for wiring a schema into an asset by hand."""

from ._checks import check_specs
from ._code_version import schema_version
from ._columns import schema_metadata, table_schema
from ._names import check_name
from ._quarantine import (
    delegating_writer,
    quarantine_frame,
    validate_quarantine_key,
)
from ._quarantine_files import QuarantineWriter, file_writer, quarantine_path
from ._validate import AssetYield, check_results, validation_results

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

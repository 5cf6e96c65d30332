"""The exceptions dagster-dataframely raises.

They live under one base class so that a caller can catch a single error by
name, or every error from this package at once, and so that each message says both what
went wrong and what to change. Four categories sit between the base and most errors: the
refusals of a declaration (`InvalidDefinitionError`), of what a function returned
(`InvalidReturnError`), the data's verdict (`ValidationFailedError`) and the refusals to
store rows unsafely (`StorageRefusedError`). Every class, under the first of its bases from
here::

    DagsterDataframelyError
        InvalidDefinitionError
            CheckNameCollisionError
            ClearQuarantineError
            CollectionNotSupportedError
            CollectionWithoutMembersError
            ComponentFieldError
            InvalidArgumentsError
                UnexpectedArgumentError
            InvalidColumnNameError
            InvalidRuleNameError
            InvalidSettingError
            InvalidThresholdError
            MultiAssetKeyError
            OutputHintError
            ReservedColumnError
            SchemaHintMismatchError
            SchemaTypeError
            SensitiveMarkError
            ThresholdNotApplicableError
            UnknownCollectionMemberError
            UnknownPartitionKeyError
            UnknownPolicyRuleError
            UnknownWarningRuleError
            UnreadableInputHintError
            UnreadableReturnHintError
            UnresolvedAnnotationError
            UnsupportedDtypeError
        InvalidReturnError
            CollectionFilterDuplicatesError
            CollectionMemberMissingError
            MaterializeResultFieldError
            MaterializeResultValueError
            MultiAssetReturnError
        NoRunningStepError
        StorageRefusedError
            ConcurrentRunError
            CredentialsInUrlError
            MissingPartitionExprError
            PartitionKeyTooLongError
            PartitionRangeError
            QuarantineDirError
            QuarantineDirProtocolError
            QuarantineFrameTypeError
            QuarantineIOManagerError
            QuarantineKeyCollisionError
                QuarantineStorageCollisionError
            QuarantineStorageError
            StagedWriteError
            StorageWriteError
            StreamingStagingError
            UnsafePathKeyError
        ValidationFailedError
            ColumnSchemaError
            MetricAnomalyError
            NoValidRowsError
            RowCountOutOfBoundsError
            ThresholdExceededError
            ValidationAbortError
"""

import inspect

from dagster_dataframely.errors.definition_errors import (
    CheckNameCollisionError,
    CollectionNotSupportedError,
    CollectionWithoutMembersError,
    ComponentFieldError,
    InvalidArgumentsError,
    InvalidColumnNameError,
    InvalidRuleNameError,
    OutputHintError,
    ReservedColumnError,
    SchemaHintMismatchError,
    SchemaTypeError,
    SensitiveMarkError,
    UnexpectedArgumentError,
    UnknownCollectionMemberError,
    UnreadableInputHintError,
    UnreadableReturnHintError,
    UnresolvedAnnotationError,
    UnsupportedDtypeError,
)
from dagster_dataframely.errors.error_base import (
    DagsterDataframelyError,
    InvalidDefinitionError,
    InvalidReturnError,
    StorageRefusedError,
    ValidationFailedError,
)
from dagster_dataframely.errors.quarantine_errors import (
    ConcurrentRunError,
    QuarantineDirError,
    QuarantineIOManagerError,
    QuarantineKeyCollisionError,
    QuarantineStorageCollisionError,
    QuarantineStorageError,
    UnsafePathKeyError,
)
from dagster_dataframely.errors.return_errors import (
    CollectionFilterDuplicatesError,
    CollectionMemberMissingError,
    MaterializeResultFieldError,
    MaterializeResultValueError,
    MultiAssetReturnError,
)
from dagster_dataframely.errors.setting_errors import (
    ClearQuarantineError,
    InvalidSettingError,
    InvalidThresholdError,
    MultiAssetKeyError,
    ThresholdNotApplicableError,
    UnknownPartitionKeyError,
    UnknownPolicyRuleError,
    UnknownWarningRuleError,
)
from dagster_dataframely.errors.storage_errors import (
    CredentialsInUrlError,
    MissingPartitionExprError,
    NoRunningStepError,
    PartitionKeyTooLongError,
    PartitionRangeError,
    QuarantineDirProtocolError,
    QuarantineFrameTypeError,
    StagedWriteError,
    StorageWriteError,
    StreamingStagingError,
)
from dagster_dataframely.errors.validation_errors import (
    ColumnSchemaError,
    MetricAnomalyError,
    NoValidRowsError,
    RowCountOutOfBoundsError,
    ThresholdExceededError,
    ValidationAbortError,
)

__all__ = [
    "CheckNameCollisionError",
    "ClearQuarantineError",
    "CollectionFilterDuplicatesError",
    "CollectionMemberMissingError",
    "CollectionNotSupportedError",
    "CollectionWithoutMembersError",
    "ColumnSchemaError",
    "ComponentFieldError",
    "ConcurrentRunError",
    "CredentialsInUrlError",
    "DagsterDataframelyError",
    "InvalidArgumentsError",
    "InvalidColumnNameError",
    "InvalidDefinitionError",
    "InvalidReturnError",
    "InvalidRuleNameError",
    "InvalidSettingError",
    "InvalidThresholdError",
    "MaterializeResultFieldError",
    "MaterializeResultValueError",
    "MetricAnomalyError",
    "MissingPartitionExprError",
    "MultiAssetKeyError",
    "MultiAssetReturnError",
    "NoRunningStepError",
    "NoValidRowsError",
    "OutputHintError",
    "PartitionKeyTooLongError",
    "PartitionRangeError",
    "QuarantineDirError",
    "QuarantineDirProtocolError",
    "QuarantineFrameTypeError",
    "QuarantineIOManagerError",
    "QuarantineKeyCollisionError",
    "QuarantineStorageCollisionError",
    "QuarantineStorageError",
    "ReservedColumnError",
    "RowCountOutOfBoundsError",
    "SchemaHintMismatchError",
    "SchemaTypeError",
    "SensitiveMarkError",
    "StagedWriteError",
    "StorageRefusedError",
    "StorageWriteError",
    "StreamingStagingError",
    "ThresholdExceededError",
    "ThresholdNotApplicableError",
    "UnexpectedArgumentError",
    "UnknownCollectionMemberError",
    "UnknownPartitionKeyError",
    "UnknownPolicyRuleError",
    "UnknownWarningRuleError",
    "UnreadableInputHintError",
    "UnreadableReturnHintError",
    "UnresolvedAnnotationError",
    "UnsafePathKeyError",
    "UnsupportedDtypeError",
    "ValidationAbortError",
    "ValidationFailedError",
]

# The classes are written in one module per category (checked against the tree above by
# `tests/test_errors.py`), but each class keeps the public module as its home, so its repr,
# its pickled reference (errors cross process boundaries in Dagster's multiprocess executor)
# and the docs stay as they were before the split. Its methods move with it: a method still
# naming its category module would send the API docs' reader from the class to that module
# and back.
for _name in __all__:
    _class = globals()[_name]
    _class.__module__ = __name__
    for _member in vars(_class).values():
        if inspect.isfunction(_member):
            _member.__module__ = __name__

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

# NOTE: each class is imported `as` itself, the explicit re-export mypy and ruff read, and
# these imports are the one list of public names: `__all__` below is computed from them. isort
# would split an `as` import into one statement per class, so the block is kept sorted by hand.
# isort: off
from dagster_dataframely.errors.definition_errors import (
    CheckNameCollisionError as CheckNameCollisionError,
    CollectionNotSupportedError as CollectionNotSupportedError,
    CollectionWithoutMembersError as CollectionWithoutMembersError,
    ComponentFieldError as ComponentFieldError,
    InvalidArgumentsError as InvalidArgumentsError,
    InvalidColumnNameError as InvalidColumnNameError,
    InvalidRuleNameError as InvalidRuleNameError,
    OutputHintError as OutputHintError,
    ReservedColumnError as ReservedColumnError,
    SchemaHintMismatchError as SchemaHintMismatchError,
    SchemaTypeError as SchemaTypeError,
    SensitiveMarkError as SensitiveMarkError,
    UnexpectedArgumentError as UnexpectedArgumentError,
    UnknownCollectionMemberError as UnknownCollectionMemberError,
    UnreadableInputHintError as UnreadableInputHintError,
    UnreadableReturnHintError as UnreadableReturnHintError,
    UnresolvedAnnotationError as UnresolvedAnnotationError,
    UnsupportedDtypeError as UnsupportedDtypeError,
)
from dagster_dataframely.errors.error_base import (
    DagsterDataframelyError as DagsterDataframelyError,
    InvalidDefinitionError as InvalidDefinitionError,
    InvalidReturnError as InvalidReturnError,
    StorageRefusedError as StorageRefusedError,
    ValidationFailedError as ValidationFailedError,
)
from dagster_dataframely.errors.quarantine_errors import (
    ConcurrentRunError as ConcurrentRunError,
    QuarantineDirError as QuarantineDirError,
    QuarantineIOManagerError as QuarantineIOManagerError,
    QuarantineKeyCollisionError as QuarantineKeyCollisionError,
    QuarantineStorageCollisionError as QuarantineStorageCollisionError,
    QuarantineStorageError as QuarantineStorageError,
    UnsafePathKeyError as UnsafePathKeyError,
)
from dagster_dataframely.errors.return_errors import (
    CollectionFilterDuplicatesError as CollectionFilterDuplicatesError,
    CollectionMemberMissingError as CollectionMemberMissingError,
    MaterializeResultFieldError as MaterializeResultFieldError,
    MaterializeResultValueError as MaterializeResultValueError,
    MultiAssetReturnError as MultiAssetReturnError,
)
from dagster_dataframely.errors.setting_errors import (
    ClearQuarantineError as ClearQuarantineError,
    InvalidSettingError as InvalidSettingError,
    InvalidThresholdError as InvalidThresholdError,
    MultiAssetKeyError as MultiAssetKeyError,
    ThresholdNotApplicableError as ThresholdNotApplicableError,
    UnknownPartitionKeyError as UnknownPartitionKeyError,
    UnknownPolicyRuleError as UnknownPolicyRuleError,
    UnknownWarningRuleError as UnknownWarningRuleError,
)
from dagster_dataframely.errors.storage_errors import (
    CredentialsInUrlError as CredentialsInUrlError,
    MissingPartitionExprError as MissingPartitionExprError,
    NoRunningStepError as NoRunningStepError,
    PartitionKeyTooLongError as PartitionKeyTooLongError,
    PartitionRangeError as PartitionRangeError,
    QuarantineDirProtocolError as QuarantineDirProtocolError,
    QuarantineFrameTypeError as QuarantineFrameTypeError,
    StagedWriteError as StagedWriteError,
    StorageWriteError as StorageWriteError,
    StreamingStagingError as StreamingStagingError,
)
from dagster_dataframely.errors.validation_errors import (
    ColumnSchemaError as ColumnSchemaError,
    MetricAnomalyError as MetricAnomalyError,
    NoValidRowsError as NoValidRowsError,
    RowCountOutOfBoundsError as RowCountOutOfBoundsError,
    ThresholdExceededError as ThresholdExceededError,
    ValidationAbortError as ValidationAbortError,
)

# isort: on

__all__ = sorted(
    name
    for name, value in globals().items()
    if isinstance(value, type) and issubclass(value, DagsterDataframelyError)
)

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

"""The error classes: constructor shapes, attributes, messages and pickling."""

import copy
import inspect
import pickle
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import dagster as dg
import pytest

import dagster_dataframely as dd
from dagster_dataframely import errors
from dagster_dataframely._upstream import DagsterInvalidPropertyError
from dagster_dataframely.errors import (
    CheckNameCollisionError,
    ClearQuarantineError,
    CollectionFilterDuplicatesError,
    CollectionMemberMissingError,
    CollectionNotSupportedError,
    CollectionWithoutMembersError,
    ColumnSchemaError,
    ComponentFieldError,
    ConcurrentRunError,
    CredentialsInUrlError,
    DagsterDataframelyError,
    InvalidArgumentsError,
    InvalidColumnNameError,
    InvalidDefinitionError,
    InvalidReturnError,
    InvalidRuleNameError,
    InvalidSettingError,
    InvalidThresholdError,
    MaterializeResultFieldError,
    MaterializeResultValueError,
    MetricAnomalyError,
    MissingPartitionExprError,
    MultiAssetKeyError,
    MultiAssetReturnError,
    NoRunningStepError,
    NoValidRowsError,
    OutputHintError,
    PartitionKeyTooLongError,
    PartitionRangeError,
    QuarantineDirError,
    QuarantineDirProtocolError,
    QuarantineFrameTypeError,
    QuarantineIOManagerError,
    QuarantineKeyCollisionError,
    QuarantineStorageCollisionError,
    QuarantineStorageError,
    ReservedColumnError,
    RowCountOutOfBoundsError,
    SchemaHintMismatchError,
    SchemaTypeError,
    SensitiveMarkError,
    StagedWriteError,
    StorageRefusedError,
    StorageWriteError,
    StreamingStagingError,
    ThresholdExceededError,
    ThresholdNotApplicableError,
    UnexpectedArgumentError,
    UnknownCollectionMemberError,
    UnknownPartitionKeyError,
    UnknownPolicyRuleError,
    UnknownWarningRuleError,
    UnreadableInputHintError,
    UnreadableReturnHintError,
    UnresolvedAnnotationError,
    UnsafePathKeyError,
    UnsupportedDtypeError,
    ValidationAbortError,
    ValidationFailedError,
)

POS = inspect.Parameter.POSITIONAL_OR_KEYWORD
KW = inspect.Parameter.KEYWORD_ONLY


@dataclass
class Case:
    """One error built with the spec's argument shape, and what its message must contain."""

    cls: type[DagsterDataframelyError]
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    # Attribute name -> expected value after construction.
    attributes: dict[str, Any] = field(default_factory=dict)
    # Substrings the message must contain: the names of what failed, and the fix.
    fragments: tuple[str, ...] = ()

    def build(self) -> DagsterDataframelyError:
        return self.cls(*self.args, **self.kwargs)


CASES = [
    Case(
        UnexpectedArgumentError,
        ("dd.asset", "`key=` is not one of its keywords", "Write key_prefix= and name=."),
        attributes={
            "function": "dd.asset",
            "problem": "`key=` is not one of its keywords",
            "fix": "Write key_prefix= and name=.",
        },
        fragments=("dd.asset: `key=` is not one of its keywords", "key_prefix= and name="),
    ),
    Case(
        ComponentFieldError,
        ("defs/checks/defs.yaml:4", "assets[0]", "no asset has the key 'ordres'", "Fix it."),
        attributes={
            "file": "defs/checks/defs.yaml:4",
            "field": "assets[0]",
            "problem": "no asset has the key 'ordres'",
            "fix": "Fix it.",
        },
        fragments=(
            "defs/checks/defs.yaml:4: attributes.assets[0]: no asset",
            "'ordres'",
            "Fix it.",
        ),
    ),
    Case(
        ClearQuarantineError,
        ("sales/orders",),
        attributes={"asset": "sales/orders"},
        fragments=(
            "'sales/orders'",
            "clear_quarantine=True",
            "quarantine=True",
            "quarantine_writer",
        ),
    ),
    Case(
        CollectionNotSupportedError,
        ("OrdersCollection",),
        attributes={"collection_name": "OrdersCollection"},
        fragments=("'OrdersCollection'", "dy.Schema", "each member"),
    ),
    Case(
        CollectionWithoutMembersError,
        ("OrderBook",),
        attributes={"collection_name": "OrderBook"},
        fragments=("'OrderBook'", "no members", "dy.LazyFrame[Orders]"),
    ),
    Case(
        UnknownCollectionMemberError,
        ("OrderBook", ["order"], ["orders", "lines"]),
        attributes={
            "collection_name": "OrderBook",
            "unknown": ["order"],
            "members": ["orders", "lines"],
        },
        fragments=("'OrderBook'", "'order'", "is not a member", "'orders', 'lines'"),
    ),
    Case(
        CollectionMemberMissingError,
        ("OrderBook", ["lines"]),
        attributes={"collection_name": "OrderBook", "missing": ["lines"]},
        fragments=("'OrderBook'", "member 'lines'", "dy.LazyFrame[Schema] | None", "skip"),
    ),
    Case(
        CollectionFilterDuplicatesError,
        ("OrderBook", "lines", 3, 4, ("order_id", "day"), ["has_order"]),
        attributes={
            "collection_name": "OrderBook",
            "member": "lines",
            "input_count": 3,
            "output_count": 4,
            "primary_key": ["order_id", "day"],
            "filters": ["has_order"],
        },
        fragments=(
            "'OrderBook'",
            "'lines'",
            "3 rows",
            "4 rows",
            "the filter 'has_order' returned the same (order_id, day) on more than one row",
            "keeps only the common primary key (order_id, day)",
            "End the filter with `.select('order_id', 'day').unique()`",
        ),
    ),
    Case(
        ReservedColumnError,
        ("Orders", ["dy_rule", "dy_extra"]),
        attributes={"schema_name": "Orders", "columns": ["dy_rule", "dy_extra"]},
        fragments=("'Orders'", "'dy_rule'", "'dy_extra'", "Rename"),
    ),
    Case(
        InvalidColumnNameError,
        ("Orders", ["order-id", "a|b"]),
        attributes={"schema_name": "Orders", "columns": ["order-id", "a|b"]},
        fragments=("'Orders'", "'order-id'", "'a|b'", "A-Za-z0-9_", "alias="),
    ),
    Case(
        InvalidRuleNameError,
        ("Orders", ["sku|is-lower"]),
        attributes={"schema_name": "Orders", "rules": ["sku|is-lower"]},
        fragments=("'Orders'", "'sku|is-lower'", "A-Za-z0-9_", "Rename", "check="),
    ),
    Case(
        CheckNameCollisionError,
        ("Orders", "amount|min", "amount__min", "dy_rule__amount__min"),
        attributes={
            "schema_name": "Orders",
            "first": "amount|min",
            "second": "amount__min",
            "name": "dy_rule__amount__min",
        },
        fragments=("'Orders'", "'amount|min'", "'amount__min'", "'dy_rule__amount__min'", "Rename"),
    ),
    Case(
        InvalidSettingError,
        ("statistics", "'yes'", ["true", "false"]),
        {"source": "the environment variable DAGSTER_DATAFRAMELY_STATISTICS", "env_var": "X"},
        attributes={
            "setting": "statistics",
            "value": "'yes'",
            "allowed": ("true", "false"),
            "source": "the environment variable DAGSTER_DATAFRAMELY_STATISTICS",
            "env_var": "X",
            "takes_argument": True,
        },
        fragments=(
            "'statistics'",
            "'yes'",
            "'true', 'false'",
            "from the environment variable DAGSTER_DATAFRAMELY_STATISTICS",
            "Change the environment variable DAGSTER_DATAFRAMELY_STATISTICS",
            "`statistics=`",
        ),
    ),
    Case(
        UnknownWarningRuleError,
        ("Orders", ["amount|mni"], ["amount|min", "primary_key"]),
        attributes={
            "schema_name": "Orders",
            "rules": ["amount|mni"],
            "valid_rules": ["amount|min", "primary_key"],
        },
        fragments=("'Orders'", "'amount|mni'", "'amount|min', 'primary_key'", "@dy.rule()"),
    ),
    # Not in the reference: the errors of the quality policy (issue 20).
    Case(
        UnknownPolicyRuleError,
        ("Orders", "blocking", ["amount|mni"], ["amount|min", "primary_key"]),
        attributes={
            "schema_name": "Orders",
            "parameter": "blocking",
            "rules": ["amount|mni"],
            "valid_rules": ["amount|min", "primary_key"],
        },
        fragments=("'Orders'", "`blocking=`", "'amount|mni'", "'amount|min', 'primary_key'"),
    ),
    Case(
        InvalidThresholdError,
        ("warn_above", "1.5", "a float is a fraction of the rows between 0 and 1"),
        attributes={
            "parameter": "warn_above",
            "value": "1.5",
            "problem": "a float is a fraction of the rows between 0 and 1",
        },
        fragments=("`warn_above=1.5`", "An int counts rows", "0.05 means 5%"),
    ),
    Case(
        ThresholdNotApplicableError,
        ("Orders", "no quarantine takes the rows", "Declare quarantine=True."),
        attributes={
            "schema_name": "Orders",
            "problem": "no quarantine takes the rows",
            "fix": "Declare quarantine=True.",
        },
        fragments=("'Orders'", "no quarantine takes the rows", "Declare quarantine=True."),
    ),
    Case(
        ThresholdExceededError,
        ("Orders", "amount|min", 120, 1000, 0.05),
        kwargs={"address": "mem://orders_quarantine", "other_rules": ["primary_key"]},
        attributes={
            "schema_name": "Orders",
            "rule": "amount|min",
            "failed_count": 120,
            "row_count": 1000,
            "bound": 0.05,
            "address": "mem://orders_quarantine",
            "other_rules": ["primary_key"],
        },
        fragments=(
            "'amount|min'",
            "'Orders'",
            "120 of 1000 rows (12%)",
            "5% of the rows",
            "kept its previous contents",
            "'mem://orders_quarantine'",
            "'primary_key'",
            "fail_above",
        ),
    ),
    Case(
        MetricAnomalyError,
        ("sales/orders", ["the row count is 12, below the expected 950 to 1,050 (score -9.1)"]),
        kwargs={"address": "mem://q"},
        attributes={
            "asset": "sales/orders",
            "verdicts": ["the row count is 12, below the expected 950 to 1,050 (score -9.1)"],
            "address": "mem://q",
        },
        fragments=(
            "'sales/orders'",
            "the row count is 12",
            "kept its previous contents",
            "'mem://q'",
            "dd.AnomalyCheck",
        ),
    ),
    Case(
        RowCountOutOfBoundsError,
        ("sales/orders", 12, 500, None, "the median of the last 5 materializations, 1000 rows"),
        kwargs={"address": "mem://q"},
        attributes={
            "asset": "sales/orders",
            "row_count": 12,
            "min_rows": 500,
            "max_rows": None,
            "basis": "the median of the last 5 materializations, 1000 rows",
            "address": "mem://q",
        },
        fragments=(
            "'sales/orders'",
            "12 rows",
            "at least 500 rows",
            "median of the last 5",
            "kept its previous contents",
            "dd.VolumeCheck",
        ),
    ),
    Case(
        SensitiveMarkError,
        ("People", {"email": "str"}),
        attributes={"schema_name": "People", "columns": {"email": "str"}},
        fragments=("'People'", "'email': a str", "pii", "True", "False"),
    ),
    Case(
        MaterializeResultValueError,
        ("sales/orders",),
        attributes={"asset": "sales/orders", "value_type": None},
        fragments=(
            "'sales/orders'",
            "holds no frame",
            "value=",
            "context.add_asset_metadata",
            "schema_metadata",
        ),
    ),
    Case(
        MaterializeResultValueError,
        ("orders",),
        {"value_type": "pandas.DataFrame"},
        attributes={"asset": "orders", "value_type": "pandas.DataFrame"},
        fragments=(
            "'orders'",
            "holds a pandas.DataFrame, not a Polars frame",
            "pl.from_pandas",
            "value=",
        ),
    ),
    Case(
        UnsupportedDtypeError,
        (
            "Orders",
            [
                {
                    "column": "amount",
                    "dtype": "Decimal(precision=76, scale=0)",
                    "reason": "precision must be between 1 and 38",
                }
            ],
        ),
        attributes={
            "schema_name": "Orders",
            "problems": [
                {
                    "column": "amount",
                    "dtype": "Decimal(precision=76, scale=0)",
                    "reason": "precision must be between 1 and 38",
                }
            ],
        },
        fragments=(
            "'Orders'",
            "'amount': Decimal(precision=76, scale=0) (precision must be between 1 and 38)",
            "at most 38 digits",
        ),
    ),
    Case(
        MaterializeResultFieldError,
        ("orders", "check_results"),
        attributes={"asset": "orders", "field": "check_results"},
        fragments=("'orders'", "Remove `check_results=`"),
    ),
    Case(
        ColumnSchemaError,
        (
            "Orders",
            [
                {"column": "quantity", "expected": "Int32", "actual": "Int64"},
                {"column": "amount", "expected": "Decimal(10, 2)", "actual": "missing"},
            ],
        ),
        attributes={
            "schema_name": "Orders",
            "problems": [
                {"column": "quantity", "expected": "Int32", "actual": "Int64"},
                {"column": "amount", "expected": "Decimal(10, 2)", "actual": "missing"},
            ],
        },
        fragments=(
            "'Orders'",
            "'quantity': expected Int32, actual Int64",
            "'amount': expected Decimal(10, 2), actual missing",
            "Orders.cast",
        ),
    ),
    Case(
        ValidationAbortError,
        ("Orders", 3, {"amount|min": 2, "sku|regex": 3}),
        attributes={
            "schema_name": "Orders",
            "invalid_count": 3,
            "counts": {"amount|min": 2, "sku|regex": 3},
        },
        fragments=(
            "'Orders'",
            "3 rows",
            "amount|min: 2 rows",
            "sku|regex: 3 rows",
            "more than one rule",
            "quarantine=True",
            "upstream",
        ),
    ),
    Case(
        NoValidRowsError,
        ("Orders", 1, {"amount|min": 1}, "/tmp/q/orders_quarantine.parquet"),
        attributes={
            "schema_name": "Orders",
            "invalid_count": 1,
            "counts": {"amount|min": 1},
            "address": "/tmp/q/orders_quarantine.parquet",
        },
        fragments=(
            "'Orders'",
            "amount|min: 1 row",
            "'/tmp/q/orders_quarantine.parquet'",
            "more than one rule",
        ),
    ),
    Case(
        QuarantineKeyCollisionError,
        ("orders", "orders_quarantine"),
        attributes={"asset": "orders", "quarantine": "orders_quarantine"},
        fragments=("'orders'", "'orders_quarantine'", "Rename", "quarantine_spec"),
    ),
    Case(
        QuarantineDirError,
        ("orders",),
        attributes={"asset": "orders"},
        fragments=(
            "'orders'",
            "DAGSTER_DATAFRAMELY_QUARANTINE_DIR",
            "run",
            "dd.testing.call_asset",
        ),
    ),
    Case(
        CredentialsInUrlError,
        ("the environment variable DAGSTER_DATAFRAMELY_QUARANTINE_DIR", "s3"),
        attributes={
            "given_as": "the environment variable DAGSTER_DATAFRAMELY_QUARANTINE_DIR",
            "scheme": "s3",
        },
        fragments=("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", "s3:// URL", "AWS_SECRET_ACCESS_KEY"),
    ),
    Case(
        QuarantineDirProtocolError,
        ("http",),
        attributes={"protocol": "http"},
        fragments=("'http'", "cannot write", "local directory", "s3://"),
    ),
    Case(
        PartitionKeyTooLongError,
        ("k" * 300, "k" * 300 + ".parquet", 255),
        attributes={"partition_key": "k" * 300, "name": "k" * 300 + ".parquet", "limit": 255},
        fragments=("'" + "k" * 300 + "'", "308 bytes", "at most 255 bytes", "shorter"),
    ),
    Case(
        PartitionRangeError,
        ("orders", "2026-01-01...2026-01-03", "it stores a file per partition", "Use DuckDB."),
        attributes={
            "asset": "orders",
            "partitions": "2026-01-01...2026-01-03",
            "problem": "it stores a file per partition",
            "fix": "Use DuckDB.",
        },
        fragments=(
            "'orders' over the partitions 2026-01-01...2026-01-03",
            "before writing anything",
            "Use DuckDB.",
        ),
    ),
    Case(  # a run of one partition on a database manager (issue 52)
        PartitionRangeError,
        ("orders", "2026-01-02|eu", "1 of the 3 rows fall outside it", "Return only its rows."),
        attributes={
            "asset": "orders",
            "partitions": "2026-01-02|eu",
            "problem": "1 of the 3 rows fall outside it",
            "fix": "Return only its rows.",
        },
        fragments=(
            "The run of 'orders' of the partition 2026-01-02|eu stopped before writing anything",
            "Return only its rows.",
        ),
    ),
    Case(
        QuarantineIOManagerError,
        ("DuckDBPandasIOManager (the io_manager argument)", "it cannot store Polars", "Use X."),
        attributes={
            "manager": "DuckDBPandasIOManager (the io_manager argument)",
            "problem": "it cannot store Polars",
            "fix": "Use X.",
        },
        fragments=("DuckDBPandasIOManager", "cannot store Polars", "Use X."),
    ),
    Case(
        QuarantineStorageCollisionError,
        ("orders", "orders_quarantine", "orders_quarantine/p1"),
        attributes={
            "asset": "orders",
            "quarantine": "orders_quarantine",
            "other": "orders_quarantine/p1",
        },
        fragments=("'orders'", "'orders_quarantine'", "'orders_quarantine/p1'", "Rename"),
    ),
    Case(
        QuarantineStorageError,
        ("orders", "InMemoryIOManager", "it stores by step output"),
        attributes={
            "asset": "orders",
            "manager": "InMemoryIOManager",
            "problem": "it stores by step output",
        },
        fragments=("'orders'", "InMemoryIOManager", "stores by step output", "Nothing was written"),
    ),
    Case(
        UnsafePathKeyError,
        ("orders", "../x", "its segment `..` climbs"),
        attributes={"asset": "orders", "key": "../x", "problem": "its segment `..` climbs"},
        fragments=("'orders'", "'../x'", "`..` climbs", "Nothing was written", "Rename"),
    ),
    Case(
        ConcurrentRunError,
        ("orders", "2026-01-02", "run-a"),
        attributes={"asset": "orders", "partition": "2026-01-02", "other_run_id": "run-a"},
        fragments=("'orders'", "'2026-01-02'", "run-a", "pool", "mark it failed"),
    ),
    Case(
        MultiAssetReturnError,
        ("orders_and_lines", "returned a list, not a mapping", ["orders", "lines"]),
        attributes={
            "asset": "orders_and_lines",
            "problem": "returned a list, not a mapping",
            "outputs": ["orders", "lines"],
        },
        fragments=("'orders_and_lines'", "returned a list", "'orders', 'lines'", "mapping"),
    ),
    Case(
        MultiAssetKeyError,
        ("orders_and_lines", ["lines", "orders"], None),
        attributes={"definition": "orders_and_lines", "keys": ["lines", "orders"], "given": None},
        fragments=("'orders_and_lines'", "2 assets", "asset_key=", "'lines', 'orders'"),
    ),
    Case(
        MultiAssetKeyError,
        ("orders_and_lines", ["lines", "orders"], "customers"),
        attributes={
            "definition": "orders_and_lines",
            "keys": ["lines", "orders"],
            "given": "customers",
        },
        fragments=("has no asset 'customers'", "asset_key=", "'lines', 'orders'"),
    ),
    Case(
        InvalidArgumentsError,
        ("table_checks", "it takes one asset", "Pass its key."),
        attributes={
            "function": "table_checks",
            "problem": "it takes one asset",
            "fix": "Pass its key.",
        },
        fragments=("table_checks: it takes one asset. Pass its key.",),
    ),
    Case(
        SchemaHintMismatchError,
        ("orders", "Orders", "Refunds"),
        attributes={
            "function": "orders",
            "argument": "Orders",
            "hinted": "Refunds",
            "output": None,
            "kind": "schema",
        },
        fragments=("'orders'", "schema Orders", "names Refunds", "drop the decorator's schema"),
    ),
    Case(
        UnreadableInputHintError,
        (
            "summary",
            "orders",
            "dy.DataFrame[Orders] | dy.DataFrame[Refunds]",
            "names more than one schema",
        ),
        attributes={
            "function": "summary",
            "parameter": "orders",
            "hint": "dy.DataFrame[Orders] | dy.DataFrame[Refunds]",
            "problem": "names more than one schema",
        },
        fragments=(
            "input 'orders' of 'summary'",
            "`dy.DataFrame[Orders] | dy.DataFrame[Refunds]`, names more than one schema",
            "`dy.LazyFrame[Orders]`",
            "`Annotated[pl.DataFrame, Orders]`",
            "`| None`",
            "`dict[str, ...]`",
            "`pl.DataFrame`",
        ),
    ),
    Case(
        SchemaHintMismatchError,
        ("orders_and_lines", "Orders", "Lines"),
        {"output": "orders"},
        attributes={
            "function": "orders_and_lines",
            "argument": "Orders",
            "hinted": "Lines",
            "output": "orders",
            "kind": "schema",
        },
        fragments=("output 'orders' of 'orders_and_lines'", "names Lines for it", "dd.AssetOut"),
    ),
    Case(
        SchemaHintMismatchError,
        ("order_book", "OrderBook", "ShopBook"),
        {"kind": "Collection"},
        attributes={
            "function": "order_book",
            "argument": "OrderBook",
            "hinted": "ShopBook",
            "output": None,
            "kind": "Collection",
        },
        fragments=("Collection OrderBook", "names ShopBook", "drop the decorator's Collection"),
    ),
    Case(
        OutputHintError,
        (
            "orders_and_lines",
            "tuple[dy.DataFrame[Orders]]",
            "has 1 entry for the 2 outputs 'orders', 'lines'",
            "Annotate one entry per output, in the order of outs.",
        ),
        attributes={
            "function": "orders_and_lines",
            "hint": "tuple[dy.DataFrame[Orders]]",
            "problem": "has 1 entry for the 2 outputs 'orders', 'lines'",
            "fix": "Annotate one entry per output, in the order of outs.",
        },
        fragments=("'orders_and_lines'", "`tuple[dy.DataFrame[Orders]]`", "'lines'", "Annotate"),
    ),
    Case(
        UnreadableReturnHintError,
        (
            "orders",
            "list[dy.DataFrame[Orders]]",
            "names a schema in a form the package cannot read",
        ),
        attributes={
            "function": "orders",
            "hint": "list[dy.DataFrame[Orders]]",
            "problem": "names a schema in a form the package cannot read",
        },
        fragments=(
            "'orders'",
            "`list[dy.DataFrame[Orders]]`",
            "`-> dy.LazyFrame[Orders]`",
            "`-> Annotated[pl.DataFrame, Orders]`",
            "`-> dg.MaterializeResult[dy.DataFrame[Orders]]`",
            "`| None`",
            "`@dd.asset(Orders)`",
        ),
    ),
    Case(
        SchemaTypeError,
        ("a dataframely Schema class (a subclass of dy.Schema)", "<function orders>"),
        attributes={
            "expected": "a dataframely Schema class (a subclass of dy.Schema)",
            "given": "<function orders>",
            "problem": "",
            "fix": "Pass the class itself, not an instance or a frame.",
        },
        fragments=(
            "Expected a dataframely Schema class",
            "got <function orders>",
            "the class itself",
        ),
    ),
    Case(
        UnresolvedAnnotationError,
        ("orders", "context", "dg.AssetExecutionContext", "name 'dg' is not defined"),
        attributes={
            "function": "orders",
            "parameter": "context",
            "annotation": "dg.AssetExecutionContext",
            "problem": "name 'dg' is not defined",
        },
        fragments=(
            "parameter 'context' of 'orders', `dg.AssetExecutionContext`",
            "name 'dg' is not defined",
            "`if TYPE_CHECKING:`",
            "`import dagster as dg`",
            "runtime-evaluated-decorators",
        ),
    ),
    Case(
        StagedWriteError,
        (".dy-staged-1.tmp",),
        attributes={"staging_name": ".dy-staged-1.tmp"},
        fragments=(
            "staged_writes=True",
            "wrote a directory",
            "Drop staged_writes=True",
            ".dy-staged-1.tmp",
        ),
    ),
    Case(
        StreamingStagingError,
        ("sales/orders", "/tmp/dagster-dataframely-x1", "No space left on device (os error 28)"),
        attributes={
            "asset": "sales/orders",
            "path": "/tmp/dagster-dataframely-x1",
            "problem": "No space left on device (os error 28)",
        },
        fragments=(
            "streaming=True",
            "'sales/orders'",
            "/tmp/dagster-dataframely-x1",
            "No space left on device",
            "Nothing was written",
            "TMPDIR",
            "drop streaming=True",
        ),
    ),
    Case(
        QuarantineFrameTypeError,
        ("orders_quarantine", "dict"),
        attributes={"asset": "orders_quarantine", "value_type": "dict"},
        fragments=("orders_quarantine", "pl.DataFrame", "got dict", "delegating_writer"),
    ),
    Case(
        StorageWriteError,
        (
            "people_quarantine",
            "DbIOManager",
            "_duckdb.ConversionException",
            "the asset marks 'email' sensitive",
        ),
        attributes={
            "asset": "people_quarantine",
            "manager": "DbIOManager",
            "error_type": "_duckdb.ConversionException",
            "reason": "the asset marks 'email' sensitive",
        },
        fragments=(
            "DbIOManager could not write 'people_quarantine'",
            "raised _duckdb.ConversionException",
            "left out of the event log",
            "the asset marks 'email' sensitive",
            "compare the stored table with the frame",
        ),
    ),
    Case(
        NoRunningStepError,
        ("delegating_writer",),
        attributes={"function": "delegating_writer"},
        fragments=("delegating_writer", "direct", "file_writer", "call_asset"),
    ),
    Case(
        UnknownPartitionKeyError,
        ("orders", "not-a-date", "2026-01-01"),
        attributes={"asset": "orders", "partition_key": "not-a-date", "first_key": "2026-01-01"},
        fragments=(
            "'not-a-date'",
            "'orders'",
            "run of it would be refused",
            "such as '2026-01-01'",
            "build_asset_context(partition_key=",
            "call_asset",
        ),
    ),
    Case(
        MissingPartitionExprError,
        ("orders", "DbIOManager", ["region"]),
        attributes={"asset": "orders", "manager": "DbIOManager", "dimensions": ["region"]},
        fragments=(
            "'orders'",
            "before its function ran",
            "DbIOManager",
            "`partition_expr`",
            "dimension 'region'",
            "add 'region': '<column>'",
        ),
    ),
]

IDS = [case.cls.__name__ for case in CASES]

# The constructor shapes the reference gives, as (name, kind, default) per parameter.
SIGNATURES: dict[type[DagsterDataframelyError], list[tuple[str, Any, Any]]] = {
    CollectionNotSupportedError: [("collection_name", POS, inspect.Parameter.empty)],
    ClearQuarantineError: [("asset", POS, inspect.Parameter.empty)],
    MultiAssetReturnError: [
        (name, POS, inspect.Parameter.empty) for name in ("asset", "problem", "outputs")
    ],
    MultiAssetKeyError: [
        (name, POS, inspect.Parameter.empty) for name in ("definition", "keys", "given")
    ],
    ReservedColumnError: [
        ("schema_name", POS, inspect.Parameter.empty),
        ("columns", POS, inspect.Parameter.empty),
    ],
    InvalidColumnNameError: [
        ("schema_name", POS, inspect.Parameter.empty),
        ("columns", POS, inspect.Parameter.empty),
    ],
    InvalidRuleNameError: [
        ("schema_name", POS, inspect.Parameter.empty),
        ("rules", POS, inspect.Parameter.empty),
    ],
    CheckNameCollisionError: [
        (name, POS, inspect.Parameter.empty) for name in ("schema_name", "first", "second", "name")
    ],
    InvalidSettingError: [
        ("setting", POS, inspect.Parameter.empty),
        ("value", POS, inspect.Parameter.empty),
        ("allowed", POS, inspect.Parameter.empty),
        ("source", KW, inspect.Parameter.empty),
        ("env_var", KW, inspect.Parameter.empty),
        ("takes_argument", KW, True),
    ],
    MaterializeResultValueError: [
        ("asset", POS, inspect.Parameter.empty),
        ("value_type", KW, None),
    ],
    UnsupportedDtypeError: [
        ("schema_name", POS, inspect.Parameter.empty),
        ("problems", POS, inspect.Parameter.empty),
    ],
    QuarantineDirProtocolError: [("protocol", POS, inspect.Parameter.empty)],
    PartitionKeyTooLongError: [
        (name, POS, inspect.Parameter.empty) for name in ("partition_key", "name", "limit")
    ],
    MaterializeResultFieldError: [
        ("asset", POS, inspect.Parameter.empty),
        ("field", POS, inspect.Parameter.empty),
    ],
    ColumnSchemaError: [
        ("schema_name", POS, inspect.Parameter.empty),
        ("problems", POS, inspect.Parameter.empty),
    ],
    ValidationAbortError: [
        (name, POS, inspect.Parameter.empty) for name in ("schema_name", "invalid_count", "counts")
    ],
    NoValidRowsError: [
        (name, POS, inspect.Parameter.empty)
        for name in ("schema_name", "invalid_count", "counts", "address")
    ],
    QuarantineKeyCollisionError: [
        ("asset", POS, inspect.Parameter.empty),
        ("quarantine", POS, inspect.Parameter.empty),
    ],
    QuarantineDirError: [("asset", POS, inspect.Parameter.empty)],
    CredentialsInUrlError: [
        ("given_as", POS, inspect.Parameter.empty),
        ("scheme", POS, inspect.Parameter.empty),
    ],
    QuarantineIOManagerError: [
        (name, POS, inspect.Parameter.empty) for name in ("manager", "problem", "fix")
    ],
    # Not in the reference: the errors of the storage checks a run makes before writing.
    QuarantineStorageCollisionError: [
        (name, POS, inspect.Parameter.empty) for name in ("asset", "quarantine", "other")
    ],
    QuarantineStorageError: [
        (name, POS, inspect.Parameter.empty) for name in ("asset", "manager", "problem")
    ],
    SensitiveMarkError: [
        ("schema_name", POS, inspect.Parameter.empty),
        ("columns", POS, inspect.Parameter.empty),
    ],
    UnknownWarningRuleError: [
        (name, POS, inspect.Parameter.empty) for name in ("schema_name", "rules", "valid_rules")
    ],
    UnsafePathKeyError: [
        (name, POS, inspect.Parameter.empty) for name in ("asset", "key", "problem")
    ],
    # Not in the reference: the errors of `dd.collection_asset` (issue 14).
    CollectionWithoutMembersError: [("collection_name", POS, inspect.Parameter.empty)],
    UnknownCollectionMemberError: [
        (name, POS, inspect.Parameter.empty) for name in ("collection_name", "unknown", "members")
    ],
    CollectionMemberMissingError: [
        (name, POS, inspect.Parameter.empty) for name in ("collection_name", "missing")
    ],
    CollectionFilterDuplicatesError: [
        (name, POS, inspect.Parameter.empty)
        for name in (
            "collection_name",
            "member",
            "input_count",
            "output_count",
            "primary_key",
            "filters",
        )
    ],
    ConcurrentRunError: [
        (name, POS, inspect.Parameter.empty) for name in ("asset", "partition", "other_run_id")
    ],
    # Not in the reference: package errors where the package used to raise Dagster's or
    # Python's own (issue 18); each also subclasses the class raised before.
    InvalidArgumentsError: [
        (name, POS, inspect.Parameter.empty) for name in ("function", "problem", "fix")
    ],
    SchemaTypeError: [
        *[(name, POS, inspect.Parameter.empty) for name in ("expected", "given")],
        ("problem", KW, ""),
        ("fix", KW, "Pass the class itself, not an instance or a frame."),
    ],
    # Not in the reference: a parameter's string annotation its module cannot resolve (issue 52).
    UnresolvedAnnotationError: [
        (name, POS, inspect.Parameter.empty)
        for name in ("function", "parameter", "annotation", "problem")
    ],
    SchemaHintMismatchError: [
        *[(name, POS, inspect.Parameter.empty) for name in ("function", "argument", "hinted")],
        ("output", KW, None),
        ("kind", KW, "schema"),
    ],
    OutputHintError: [
        (name, POS, inspect.Parameter.empty) for name in ("function", "hint", "problem", "fix")
    ],
    UnreadableInputHintError: [
        (name, POS, inspect.Parameter.empty)
        for name in ("function", "parameter", "hint", "problem")
    ],
    UnreadableReturnHintError: [
        (name, POS, inspect.Parameter.empty) for name in ("function", "hint", "problem")
    ],
    StagedWriteError: [("staging_name", POS, inspect.Parameter.empty)],
    QuarantineFrameTypeError: [
        (name, POS, inspect.Parameter.empty) for name in ("asset", "value_type")
    ],
    NoRunningStepError: [("function", POS, inspect.Parameter.empty)],
    # Not in the reference: a failed write whose message may hold hidden values (issue 36).
    StorageWriteError: [
        (name, POS, inspect.Parameter.empty)
        for name in ("asset", "manager", "error_type", "reason")
    ],
    # Not in the reference: the common mistakes and the Component's YAML (issue 21).
    UnexpectedArgumentError: [
        (name, POS, inspect.Parameter.empty) for name in ("function", "problem", "fix")
    ],
    ComponentFieldError: [
        (name, POS, inspect.Parameter.empty) for name in ("file", "field", "problem", "fix")
    ],
    # Not in the reference: the errors of the quality policy (issue 20).
    UnknownPolicyRuleError: [
        (name, POS, inspect.Parameter.empty)
        for name in ("schema_name", "parameter", "rules", "valid_rules")
    ],
    InvalidThresholdError: [
        (name, POS, inspect.Parameter.empty) for name in ("parameter", "value", "problem")
    ],
    ThresholdNotApplicableError: [
        (name, POS, inspect.Parameter.empty) for name in ("schema_name", "problem", "fix")
    ],
    # Not in the reference: a direct call's unknown partition, a database manager's missing
    # `partition_expr` (issue 36).
    UnknownPartitionKeyError: [
        (name, POS, inspect.Parameter.empty) for name in ("asset", "partition_key", "first_key")
    ],
    MissingPartitionExprError: [
        (name, POS, inspect.Parameter.empty) for name in ("asset", "manager", "dimensions")
    ],
    ThresholdExceededError: [
        *(
            (name, POS, inspect.Parameter.empty)
            for name in ("schema_name", "rule", "failed_count", "row_count", "bound")
        ),
        ("address", KW, None),
        ("other_rules", KW, ()),
    ],
    MetricAnomalyError: [
        *((name, POS, inspect.Parameter.empty) for name in ("asset", "verdicts")),
        ("address", KW, None),
    ],
    RowCountOutOfBoundsError: [
        *(
            (name, POS, inspect.Parameter.empty)
            for name in ("asset", "row_count", "min_rows", "max_rows", "basis")
        ),
        ("address", KW, None),
    ],
    # Not in the reference: a run over a partition range (issue 22).
    PartitionRangeError: [
        (name, POS, inspect.Parameter.empty) for name in ("asset", "partitions", "problem", "fix")
    ],
    # Not in the reference: `streaming=True` staging its rows (issue 36).
    StreamingStagingError: [
        (name, POS, inspect.Parameter.empty) for name in ("asset", "path", "problem")
    ],
}

CATEGORIES: dict[type[DagsterDataframelyError], set[type[DagsterDataframelyError]]] = {
    InvalidDefinitionError: {
        CollectionNotSupportedError,
        CollectionWithoutMembersError,
        UnknownCollectionMemberError,
        ReservedColumnError,
        InvalidColumnNameError,
        InvalidRuleNameError,
        CheckNameCollisionError,
        UnsupportedDtypeError,
        UnknownWarningRuleError,
        SensitiveMarkError,
        InvalidSettingError,
        ClearQuarantineError,
        MultiAssetKeyError,
        InvalidArgumentsError,
        OutputHintError,
        SchemaHintMismatchError,
        SchemaTypeError,
        UnexpectedArgumentError,
        UnreadableInputHintError,
        UnreadableReturnHintError,
        UnresolvedAnnotationError,
        ComponentFieldError,
        UnknownPolicyRuleError,
        InvalidThresholdError,
        ThresholdNotApplicableError,
        UnknownPartitionKeyError,
    },
    InvalidReturnError: {
        CollectionMemberMissingError,
        CollectionFilterDuplicatesError,
        MaterializeResultValueError,
        MaterializeResultFieldError,
        MultiAssetReturnError,
    },
    ValidationFailedError: {
        ColumnSchemaError,
        ValidationAbortError,
        NoValidRowsError,
        ThresholdExceededError,
        RowCountOutOfBoundsError,
        MetricAnomalyError,
    },
    StorageRefusedError: {
        QuarantineKeyCollisionError,
        QuarantineStorageCollisionError,
        QuarantineStorageError,
        UnsafePathKeyError,
        ConcurrentRunError,
        QuarantineDirError,
        QuarantineIOManagerError,
        CredentialsInUrlError,
        QuarantineDirProtocolError,
        PartitionKeyTooLongError,
        StagedWriteError,
        QuarantineFrameTypeError,
        PartitionRangeError,
        MissingPartitionExprError,
        StreamingStagingError,
        StorageWriteError,
    },
}
"""Each category base and the errors under it; the rest sit under the base class alone."""


def test_every_error_is_covered() -> None:
    exported = {
        obj
        for obj in vars(errors).values()
        if isinstance(obj, type)
        and issubclass(obj, DagsterDataframelyError)
        and obj is not DagsterDataframelyError
        and obj not in CATEGORIES
    }
    assert exported == {case.cls for case in CASES} == set(SIGNATURES)
    bases = {"DagsterDataframelyError"} | {cls.__name__ for cls in CATEGORIES}
    assert set(errors.__all__) == {cls.__name__ for cls in exported} | bases


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_each_error_is_in_its_category(case: Case) -> None:
    for category, members in CATEGORIES.items():
        assert issubclass(case.cls, category) is (case.cls in members), category.__name__


def test_the_definition_errors_are_dagsters_definition_errors() -> None:
    """Code that catches Dagster's own definition errors catches the package's too."""
    assert issubclass(InvalidDefinitionError, dg.DagsterInvalidDefinitionError)
    with pytest.raises(dg.DagsterInvalidDefinitionError):
        raise ReservedColumnError("Orders", ["dy_x"])


def test_the_verdict_and_storage_errors_are_no_dagster_errors() -> None:
    """Raised inside a step, they stay user-code errors, which Dagster wraps and can retry."""
    for category in (InvalidReturnError, ValidationFailedError, StorageRefusedError):
        assert not issubclass(category, dg.DagsterError), category


@pytest.mark.parametrize(
    ("cls", "raised_before"),
    [
        (InvalidArgumentsError, dg.DagsterInvariantViolationError),
        (QuarantineFrameTypeError, dg.DagsterInvariantViolationError),
        (SchemaTypeError, TypeError),
        (StagedWriteError, IsADirectoryError),
        (NoRunningStepError, DagsterInvalidPropertyError),
        # What a run raises for the same key, so a test written for either catches both.
        (UnknownPartitionKeyError, dg.DagsterUnknownPartitionError),
    ],
)
def test_an_error_that_replaced_a_foreign_one_is_still_that_one(
    cls: type[DagsterDataframelyError], raised_before: type[Exception]
) -> None:
    """Code that caught what the package raised before still catches the package's error."""
    assert issubclass(cls, raised_before)


def test_base_class_is_an_exception() -> None:
    assert issubclass(DagsterDataframelyError, Exception)
    err = DagsterDataframelyError("something broke")
    assert str(err) == "something broke"
    assert err.message == "something broke"


@pytest.mark.parametrize("cls", list(SIGNATURES), ids=[cls.__name__ for cls in SIGNATURES])
def test_constructor_signature_matches_the_reference(
    cls: type[DagsterDataframelyError],
) -> None:
    params = list(inspect.signature(cls).parameters.values())
    assert [(p.name, p.kind, p.default) for p in params] == SIGNATURES[cls]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_error_subclasses_base_and_can_be_caught_by_it(case: Case) -> None:
    assert issubclass(case.cls, DagsterDataframelyError)
    with pytest.raises(DagsterDataframelyError) as info:
        raise case.build()
    assert type(info.value) is case.cls


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_error_stores_its_arguments(case: Case) -> None:
    err = case.build()
    for name, expected in case.attributes.items():
        actual = getattr(err, name)
        assert actual == expected, name
        assert type(actual) is type(expected), name
    # Every constructor parameter is an attribute.
    assert set(inspect.signature(case.cls).parameters) == set(case.attributes)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_message_names_what_failed_and_the_fix(case: Case) -> None:
    message = str(case.build())
    for fragment in case.fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_error_survives_pickling(case: Case) -> None:
    err = case.build()
    clone = pickle.loads(pickle.dumps(err))
    assert type(clone) is case.cls
    assert str(clone) == str(err)
    assert clone.args == err.args
    for name in case.attributes:
        assert getattr(clone, name) == getattr(err, name), name


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_error_survives_copying(case: Case) -> None:
    err = case.build()
    assert str(copy.copy(err)) == str(err)
    assert str(copy.deepcopy(err)) == str(err)


def test_pickling_keeps_notes() -> None:
    err = QuarantineDirError("orders")
    err.add_note("while calling orders directly")
    clone = pickle.loads(pickle.dumps(err))
    assert clone.__notes__ == ["while calling orders directly"]


def test_pickling_keeps_keyword_only_arguments() -> None:
    err = InvalidSettingError(
        "quarantine_dir",
        "''",
        "a non-empty directory path",
        source="the environment variable DAGSTER_DATAFRAMELY_QUARANTINE_DIR",
        env_var="DAGSTER_DATAFRAMELY_QUARANTINE_DIR",
        takes_argument=False,
    )
    clone = pickle.loads(pickle.dumps(err))
    assert clone.takes_argument is False
    assert clone.source == "the environment variable DAGSTER_DATAFRAMELY_QUARANTINE_DIR"
    assert clone.allowed == "a non-empty directory path"
    assert str(clone) == str(err)


def test_invalid_setting_keyword_arguments_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        InvalidSettingError("statistics", "'x'", ["true"], "the argument", "ENV")  # type: ignore[call-arg]


def test_invalid_setting_without_argument_points_only_at_the_environment() -> None:
    err = InvalidSettingError(
        "quarantine_dir",
        "''",
        "a non-empty directory path",
        source="the environment variable DAGSTER_DATAFRAMELY_QUARANTINE_DIR",
        env_var="DAGSTER_DATAFRAMELY_QUARANTINE_DIR",
        takes_argument=False,
    )
    message = str(err)
    assert "`quarantine_dir=`" not in message
    assert "no argument" in message
    assert "unset it" in message
    assert "a non-empty directory path" in message
    assert "''" in message


def test_invalid_setting_with_argument_mentions_the_argument() -> None:
    err = InvalidSettingError(
        "row_sample",
        "True",
        "a non-negative int",
        source="the argument",
        env_var="DAGSTER_DATAFRAMELY_ROW_SAMPLE",
    )
    message = str(err)
    assert "from the argument" in message
    assert "`row_sample=`" in message
    assert "DAGSTER_DATAFRAMELY_ROW_SAMPLE" in message
    assert "a non-negative int" in message
    assert "one of" not in message


def test_stored_collections_are_copies() -> None:
    columns = ["dy_a"]
    counts = {"a|min": 1}
    problem = {"column": "a", "expected": "Int64", "actual": "missing"}
    problems = [problem]
    reserved = ReservedColumnError("S", columns)
    aborted = ValidationAbortError("S", 1, counts)
    mismatch = ColumnSchemaError("S", problems)
    columns.append("dy_b")
    counts["b|min"] = 2
    problem["actual"] = "String"
    problems.append(problem)
    assert reserved.columns == ["dy_a"]
    assert aborted.counts == {"a|min": 1}
    assert mismatch.problems == [{"column": "a", "expected": "Int64", "actual": "missing"}]


def test_read_only_sequences_and_mappings_are_stored_as_lists_and_dicts() -> None:
    problem = MappingProxyType({"column": "a", "expected": "Int64", "actual": "missing"})
    err = ColumnSchemaError("S", (problem,))
    assert err.problems == [{"column": "a", "expected": "Int64", "actual": "missing"}]
    assert type(err.problems) is list
    assert type(err.problems[0]) is dict
    aborted = NoValidRowsError("S", 2, MappingProxyType({"a|min": 2}), "mem://q")
    assert type(aborted.counts) is dict
    assert aborted.counts == {"a|min": 2}
    setting = InvalidSettingError("s", "'x'", ("a", "b"), source="the argument", env_var="E")
    assert setting.allowed == ("a", "b")


def test_column_schema_error_lists_every_problem_on_its_own_line() -> None:
    problems = [{"column": f"c{i}", "expected": "Int64", "actual": "String"} for i in range(5)]
    message = str(ColumnSchemaError("Wide", problems))
    lines = [line for line in message.splitlines() if line.startswith("  - ")]
    assert lines == [f"  - 'c{i}': expected Int64, actual String" for i in range(5)]


def test_rule_counts_keep_the_given_order() -> None:
    message = str(ValidationAbortError("S", 4, {"z|min": 1, "a|max": 4}))
    assert message.index("z|min: 1 row") < message.index("a|max: 4 rows")
    assert "the number of invalid rows (4)" in message


def test_a_threshold_error_carries_the_observed_fraction() -> None:
    """An alert handler reads how much failed without parsing the message."""
    error = ThresholdExceededError("Orders", "amount|min", 120, 1000, 50)
    assert error.fraction == pytest.approx(0.12)
    assert "above its threshold's fail_above of 50 rows" in str(error)
    assert ThresholdExceededError("Orders", "amount|min", 0, 0, 0).fraction == 0.0


def _drawn_tree() -> list[str]:
    """The class tree drawn in the errors package's docstring, one indented line per class."""
    doc = dd.errors.__doc__ or ""
    block = doc.split("::\n\n", 1)[1]
    return [line[4:] for line in block.splitlines() if line.strip()]


def _real_tree(cls: type[Exception], depth: int = 0) -> list[str]:
    """Every exported class under `cls`, each drawn under the first of its package bases."""
    exported = [getattr(dd.errors, name) for name in dd.errors.__all__]
    children = sorted(
        (
            child
            for child in exported
            if next((base for base in child.__bases__ if base in exported), None) is cls
        ),
        key=lambda child: child.__name__,
    )
    lines = ["    " * depth + cls.__name__]
    for child in children:
        lines += _real_tree(child, depth + 1)
    return lines


def test_the_docstring_draws_every_error_class_where_it_sits() -> None:
    """A class added, moved or removed without redrawing the tree fails here."""
    drawn = _drawn_tree()
    assert drawn == _real_tree(dd.errors.DagsterDataframelyError)
    assert len(drawn) == len(dd.errors.__all__)


@pytest.mark.parametrize("name", sorted(dd.errors.__all__))
def test_every_error_class_keeps_the_public_module_and_pickles_by_it(name: str) -> None:
    """Dagster's multiprocess executor pickles errors; the reference names the public module."""
    cls = getattr(dd.errors, name)
    assert cls.__module__ == "dagster_dataframely.errors"
    assert pickle.loads(pickle.dumps(cls)) is cls
    assert b"dagster_dataframely.errors\n" in pickle.dumps(cls, protocol=0)

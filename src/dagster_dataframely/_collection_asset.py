"""`dd.collection_asset`: a `dy.Collection`'s members as assets, validated together where written.

One asset per member, built on the validating multi-asset (`_multi_asset.build_multi_asset`),
so each member gets what `dd.asset` gives one asset and the step follows the same atomicity
rule. What differs is the decision: the members are split together, by one
`Collection.filter` (`_collection.split_collection`), so the Collection's `@dy.filter`s apply
across them, and each filter has a check (`dy_filter__<name>`) and a quarantine column on
every member it constrains.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import Any

import dagster as dg
import dataframely as dy

from ._collection import CollectionInfo, read_collection, split_collection
from ._failures import Failures
from ._multi_asset import (
    OutputDeclaration,
    OutputRun,
    OutputSettings,
    build_multi_asset,
    declare_output,
)
from ._outcome import Frame, Outcome, decided
from ._settings import Granularity, SchemaRules, read_quarantine_dir
from ._validate import type_name
from .errors import MultiAssetReturnError, UnknownCollectionMemberError

CollectionFunction = Callable[..., Mapping[str, Any] | dy.Collection | None]


def collection_asset(
    collection: type[dy.Collection],
    /,
    *,
    quarantine: bool = False,
    clear_quarantine: bool | None = None,
    check_granularity: Granularity | None = None,
    schema_rules: SchemaRules | None = None,
    max_failure_samples: int | None = None,
    statistics: bool | None = None,
    row_sample: int | None = None,
    key_prefix: str | Sequence[str] | None = None,
    outs: Mapping[str, dg.AssetOut] | None = None,
    name: str | None = None,
    ins: Mapping[str, dg.AssetIn] | None = None,
    deps: Iterable[
        dg.AssetKey
        | str
        | Sequence[str]
        | dg.AssetSpec
        | dg.AssetsDefinition
        | dg.SourceAsset
        | dg.AssetDep
    ]
    | None = None,
    description: str | None = None,
    config_schema: Mapping[str, Any] | None = None,
    required_resource_keys: Set[str] | None = None,
    resource_defs: Mapping[str, object] | None = None,
    hooks: Set[dg.HookDefinition] | None = None,
    partitions_def: dg.PartitionsDefinition[str] | None = None,
    op_tags: Mapping[str, Any] | None = None,
    group_name: str | None = None,
    backfill_policy: dg.BackfillPolicy | None = None,
    retry_policy: dg.RetryPolicy | None = None,
    code_version: str | None = None,
    pool: str | None = None,
) -> Callable[[CollectionFunction], dg.AssetsDefinition]:
    """Turn the decorated function into one validated asset per member of a `dy.Collection`.

    The function returns the members: a mapping from member name to a `pl.DataFrame`, a
    `pl.LazyFrame` or a `dg.MaterializeResult` with one of those as `value` (None, or no
    entry, for an optional member it has no rows for), or an instance of the Collection.
    The members are validated together with one `Collection.filter`, so each member's own
    rules and the Collection's `@dy.filter`s both apply: a row a filter removes goes to its
    member's quarantine, with one column per rule and per filter saying which removed it.

    Each member is an asset named by the member (under `key_prefix`), with what `dd.asset`
    gives one asset: a Columns tab from its schema, one check per rule set, one check
    `dy_filter__<filter name>` per filter that constrains it (every member not declared
    `ignored_in_filters`), statistics, samples and, with `quarantine=True`, its quarantine
    `<member asset name>_quarantine` through its own IO manager. A member declared with
    `dy.CollectionMember(propagate_row_failures=True)` adds the filter
    `dy_filter__<member>__failure_propagation` to the members it constrains.

    The step is atomic, as a `dd.multi_asset`'s: every member's outcome is decided first, and
    if one fails the step (a column mismatch, invalid rows without a quarantine, no valid
    rows), no member's table is written, every member's checks still report, and the
    quarantines of members with invalid rows are still written. A column mismatch in one
    member stops the split of all (the filters need every member): the other members then
    report only their passing column check. See docs/collections.md.

    Not accepted, with the reasons: `can_subset` (the filters need every member, so the
    members are validated and written together), `warning_rules` (a row kept by a warning
    rule would be kept after the filters had already removed the rows of other members that
    depend on it, breaking the filters' promise), and `@dg.multi_asset`'s `specs`,
    `check_specs`, `internal_asset_deps` and `io_manager_def` (as for `dd.multi_asset`).

    Parameters
    ----------
    collection
        The `dy.Collection` subclass whose members the function returns. Positional only.
    quarantine
        For every member, as `dd.asset`'s: with `True` its invalid rows (those a rule or a
        filter removed) go to `<member asset name>_quarantine` and its valid rows are written;
        with `False` any invalid row of any member fails the step.
    clear_quarantine
        For every member, as `dd.asset`'s. Needs `quarantine=True`.
    check_granularity
        For every member's rule checks, as `dd.asset`'s; each filter keeps a check of its own
        at every granularity. `None` uses `DAGSTER_DATAFRAMELY_CHECK_GRANULARITY` if set, else
        `rule`.
    schema_rules
        For every member, as `dd.asset`'s. `None` uses `DAGSTER_DATAFRAMELY_SCHEMA_RULES` if
        set, else `collapsed`.
    max_failure_samples
        For every member, as `dd.asset`'s. `None` uses
        `DAGSTER_DATAFRAMELY_MAX_FAILURE_SAMPLES` if set, else `5`.
    statistics
        For every member, as `dd.asset`'s. `None` uses `DAGSTER_DATAFRAMELY_STATISTICS` if set,
        else `True`.
    row_sample
        For every member, as `dd.asset`'s. `None` uses `DAGSTER_DATAFRAMELY_ROW_SAMPLE` if
        set, else `5`.
    key_prefix
        The key prefix of every member asset whose `outs` entry sets neither `key` nor
        `key_prefix`. Each quarantine has its member's prefix.
    outs
        A `dg.AssetOut` for some members, by member name: its key, IO manager key, metadata,
        description, group, tags, owners, code version, kinds and policies. `is_required` is
        always `False` (an optional member may be skipped). A member without an entry gets a
        plain `dg.AssetOut()`.
    name
        The op's name. `None` uses the function's name.
    ins
        Passed to `@dg.multi_asset` unchanged.
    deps
        Passed to `@dg.multi_asset` unchanged.
    description
        Passed to `@dg.multi_asset` unchanged: the op's description. A member's own
        description comes from its `outs` entry, else its schema's docstring.
    config_schema
        Passed to `@dg.multi_asset` unchanged. Only a mapping is accepted.
    required_resource_keys
        Passed to `@dg.multi_asset` unchanged.
    resource_defs
        Passed to `@dg.multi_asset` unchanged; bind an IO manager here.
    hooks
        Passed to `@dg.multi_asset` unchanged.
    partitions_def
        Passed to `@dg.multi_asset` unchanged. Every member's checks and quarantine are
        partitioned the same way, and each partition is validated on its own.
    op_tags
        Passed to `@dg.multi_asset` unchanged.
    group_name
        Passed to `@dg.multi_asset` unchanged.
    backfill_policy
        Passed to `@dg.multi_asset` unchanged.
    retry_policy
        Passed to `@dg.multi_asset` unchanged.
    code_version
        The op's code version. A member without a `code_version` in `outs` takes this one if
        it is set, else a digest of its schema and of the filters that constrain it, so a
        change of either marks the member changed.
    pool
        Passed to `@dg.multi_asset` unchanged.

    Returns
    -------
    Callable[[CollectionFunction], dg.AssetsDefinition]
        A decorator that returns a `dg.AssetsDefinition` with one asset per member, each with
        its check specs and Columns tab.

    Raises
    ------
    CollectionWithoutMembersError
        The Collection has no member.
    UnknownCollectionMemberError
        `outs` names a member the Collection does not have.
    ClearQuarantineError
        `clear_quarantine=True` without `quarantine=True`.
    CheckNameCollisionError
        Two filters (a `@dy.filter` and a member's failure propagation) get one check name.
    InvalidSettingError
        A setting's argument or environment variable has a value the setting does not allow.

    Examples
    --------
    ```python
    import dataframely as dy
    import polars as pl

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        order_id = dy.String(primary_key=True)


    class Lines(dy.Schema):
        order_id = dy.String(primary_key=True)
        line_no = dy.Int64(primary_key=True)


    class OrderBook(dy.Collection):
        orders: dy.LazyFrame[Orders]
        lines: dy.LazyFrame[Lines]

        @dy.filter()
        def has_order(self) -> pl.LazyFrame:
            return self.lines.join(self.orders, on="order_id", how="semi").select("order_id")


    @dd.collection_asset(OrderBook, quarantine=True)
    def order_book() -> dict[str, pl.DataFrame]:
        return {
            "orders": pl.DataFrame({"order_id": ["A-1"]}),
            "lines": pl.DataFrame({"order_id": ["A-1", "B-9"], "line_no": [1, 1]}),
        }


    print(sorted(key.to_user_string() for key in order_book.keys))
    print(sorted(spec.name for spec in order_book.check_specs if "filter" in spec.name))
    ```
    """
    info = read_collection(collection)
    unknown = [member for member in outs or {} if member not in info.members]
    if unknown:
        raise UnknownCollectionMemberError(info.name, unknown, list(info.members))
    read_quarantine_dir()  # an empty value is a mistake worth failing on at declaration
    settings = OutputSettings(
        quarantine=quarantine,
        clear_quarantine=clear_quarantine,
        check_granularity=check_granularity,
        schema_rules=schema_rules,
        max_failure_samples=max_failure_samples,
        statistics=statistics,
        row_sample=row_sample,
    )
    declarations = {
        member_name: declare_output(
            member_name,
            member.info.schema,
            _member_out(member_name, (outs or {}).get(member_name), key_prefix),
            settings,
            code_version=code_version,
            info=member.info,
        )
        for member_name, member in info.members.items()
    }

    def decorate(function: CollectionFunction) -> dg.AssetsDefinition:
        asset_name = str(name or getattr(function, "__name__", "collection_asset"))
        return build_multi_asset(
            declarations,
            function,
            decide_all=functools.partial(decide_members, info),
            unpack_return=functools.partial(members_returned, info, asset_name),
            name=name,
            ins=ins,
            deps=deps,
            description=description,
            config_schema=config_schema,
            required_resource_keys=required_resource_keys,
            resource_defs=resource_defs,
            hooks=hooks,
            partitions_def=partitions_def,
            op_tags=op_tags,
            group_name=group_name,
            backfill_policy=backfill_policy,
            retry_policy=retry_policy,
            code_version=code_version,
            pool=pool,
        )

    return decorate


def _member_out(
    member: str, out: dg.AssetOut | None, key_prefix: str | Sequence[str] | None
) -> dg.AssetOut:
    """The member's `dg.AssetOut`: its key resolved under `key_prefix`, never required."""
    out = out or dg.AssetOut()
    prefix = [key_prefix] if isinstance(key_prefix, str) else list(key_prefix or [])
    # `dg.AssetOut` keeps its own `key_prefix` as a list already.
    own_prefix = out.key_prefix if out.key_prefix is not None else prefix
    key = out.key or dg.AssetKey([*own_prefix, member])
    return dg.AssetOut.from_spec(
        out.to_spec(key, deps=[]),
        dagster_type=out.dagster_type,
        is_required=False,
        io_manager_key=out.io_manager_key,
        backfill_policy=out.backfill_policy,
    )


def members_returned(
    info: CollectionInfo, asset_name: str, returned: object
) -> Mapping[str, object]:
    """The `UnpackReturn` of a Collection: a mapping by member name, or a Collection instance.

    None returns no member, which skips every member.
    """
    if returned is None:
        return {}
    if isinstance(returned, info.collection):
        return returned.to_dict()
    if not isinstance(returned, Mapping):
        raise MultiAssetReturnError(
            asset_name,
            f"returned a {type_name(returned)}, neither a mapping of members nor an instance "
            f"of {info.name}",
            list(info.members),
        )
    unknown = [str(member) for member in returned if member not in info.members]
    if unknown:
        raise UnknownCollectionMemberError(info.name, unknown, list(info.members))
    return returned


def decide_members(
    info: CollectionInfo, frames: Mapping[str, Frame | None], runs: Mapping[str, OutputRun]
) -> dict[str, Outcome]:
    """The `DecideAll` of a Collection: every member's outcome from one joint split.

    A member with mismatched columns is a column mismatch, and every other member is
    `unchecked` (its columns passed, no rule ran); a skipped member (optional, or all of them)
    is a skip; every other member's outcome follows its rows as `dd.asset`'s would.
    """
    split = split_collection(info, frames)
    outcomes: dict[str, Outcome] = {}
    for member, run in runs.items():
        declaration: OutputDeclaration = run.declaration
        unchecked = Outcome(
            "unchecked",
            declaration.info,
            declaration.settings,
            declaration.key,
            run.partition_key,
            run.has_writer,
        )
        if member in split.problems:
            outcomes[member] = dataclasses.replace(
                unchecked, kind="column_mismatch", problems=tuple(split.problems[member])
            )
        elif split.problems:
            outcomes[member] = unchecked
        elif member in split.skipped:
            outcomes[member] = dataclasses.replace(
                unchecked, kind="skip", failures=Failures.none(declaration.info)
            )
        else:
            rows = split.splits[member]
            outcomes[member] = decided(
                declaration.info,
                declaration.settings,
                key=declaration.key,
                valid=rows.valid,
                failures=rows.failures,
                has_writer=run.has_writer,
                partition_key=run.partition_key,
            )
    return outcomes

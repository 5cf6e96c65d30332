"""`dd.collection_asset`: a `dy.Collection`'s members as assets, validated together where written.

One asset per member on the package's one builder, so each member gets what `dd.asset` gives
one asset and the step follows the same atomicity rule. What differs is the split: the members
are split together, by one `Collection.filter` (`_run.collection_split`), so the Collection's
`@dy.filter`s apply across them, and each filter has a check (`dy_filter__<name>`) and a
quarantine column on every member it constrains.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import dagster as dg
import dataframely as dy
from typing_extensions import Unpack

from dagster_dataframely._api.dagster_keywords import OpKeywords, with_op_keywords
from dagster_dataframely._api.refusals import refusing_mistakes, usable_bare
from dagster_dataframely._declare.builder import build_collection_asset
from dagster_dataframely._declare.output_declaration import Declaration, declare_output
from dagster_dataframely._model.asset_settings import OutputSettings
from dagster_dataframely._model.collection import (
    CollectionInfo,
    Member,
    collection_rules,
    read_collection,
)
from dagster_dataframely._model.return_hints import collection_from_return_hint, mismatch
from dagster_dataframely._model.setting_keywords import checked_settings, with_setting_keywords
from dagster_dataframely._model.setting_model import SETTINGS, CollectionKeywords, EntryPoint
from dagster_dataframely._model.settings import read_quarantine_dir
from dagster_dataframely.errors import (
    InvalidArgumentsError,
    UnexpectedArgumentError,
    UnknownCollectionMemberError,
)

from .asset_out import AssetOut

CollectionFunction = Callable[..., Mapping[str, Any] | dy.Collection | None]

HINTED_USAGE = "-> OrderBook"
"""The return hint that gives a bare `@dd.collection_asset` its Collection."""


class CollectionAssetKeywords(CollectionKeywords, OpKeywords, total=False):
    """`dd.collection_asset`'s keywords: its settings and those it passes on to Dagster."""


@usable_bare
@refusing_mistakes(
    EntryPoint.COLLECTION_ASSET,
    "@dd.collection_asset(OrderBook)",
    hinted_usage=HINTED_USAGE,
    reads_hint=lambda function: collection_from_return_hint(function, needed=True),
)
@with_setting_keywords(
    EntryPoint.COLLECTION_ASSET,
    notes={
        "quality_policy": "Its rule names are any member's rules and the Collection's filters; "
        "each member applies those it has, and compares volume with its own history.",
        "check_granularity": "Each filter keeps a check of its own at every granularity.",
    },
)
@with_op_keywords(OpKeywords, item="member")
def collection_asset(
    collection: type[dy.Collection] | None = None,
    /,
    *,
    key_prefix: str | Sequence[str] | None = None,
    outs: Mapping[str, AssetOut | dg.AssetOut] | None = None,
    **keywords: Unpack[CollectionAssetKeywords],
) -> Callable[[CollectionFunction], dg.AssetsDefinition]:
    """Turn the decorated function into one validated asset per member of a `dy.Collection`.

    The function returns the members: a mapping from member name to a `pl.DataFrame`, a
    `pl.LazyFrame` or a `dg.MaterializeResult` with one of those as `value` (None, or no
    entry, for an optional member it has no rows for), or an instance of the Collection.
    The members are validated together with one `Collection.filter`, so each member's own
    rules and the Collection's `@dy.filter`s both apply: a row a filter removes goes to its
    member's quarantine, with one column per rule and per filter saying which removed it.
    Each `pl.LazyFrame` input reaches the function behind a `.cache()`, so the members built
    from one input come from one read of it, whatever its source; a source the function builds
    itself and several members read should be cached there (the documentation's "Collections" page).

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
    report only their passing column check. See the documentation's "Collections" page.

    Not accepted, with the reasons: `can_subset` (the filters need every member, so the
    members are validated and written together), `warning_rules` (one `Collection.filter`
    decides every member's rows together in memory: a warning-only rule cannot keep a row its
    filters drop in another member), `streaming` (the same filter needs every member in
    memory, and streaming needs each frame staged alone), and `@dg.multi_asset`'s `specs`,
    `check_specs`, `internal_asset_deps` and `io_manager_def` (as for `dd.multi_asset`).

    Every keyword parameter not described below is `@dg.multi_asset`'s, passed to it
    unchanged: `ins`, `deps`, `required_resource_keys`, `resource_defs`, `hooks`, `op_tags`,
    `group_name`, `backfill_policy`, `retry_policy` and `pool`.

    Parameters
    ----------
    collection
        The `dy.Collection` subclass whose members the function returns (never
        `dy.Collection` itself, which declares no member). Positional only. Without it, the
        function's return hint names it: `-> OrderBook` (the class itself, optionally
        `| None`, also through a type alias; a string under `from __future__ import
        annotations` too).
    key_prefix
        The key prefix of every member asset whose `outs` entry sets neither `key` nor
        `key_prefix`. Each quarantine has its member's prefix.
    outs
        A `dd.AssetOut` (as `dd.multi_asset` takes) or a `dg.AssetOut` for some members, by
        member name: its key, IO manager key, metadata, description, group, tags, owners, code
        version, kinds and policies. A `dd.AssetOut`'s schema must be the member's, and its
        settings left at their defaults: the Collection is validated as one, with the
        decorator's settings. `is_required` is always `False` (an optional member may be
        skipped). A member without an entry gets a plain `dg.AssetOut()`.
    code_version
        The op's code version. A member without a `code_version` in `outs` takes this one if
        it is set, else a digest of its schema and of the filters that constrain it, so a
        change of either marks the member changed.

    Returns
    -------
    Callable[[CollectionFunction], dg.AssetsDefinition]
        A decorator that returns a `dg.AssetsDefinition` with one asset per member, each with
        its check specs and Columns tab.

    Raises
    ------
    SchemaHintMismatchError
        `collection` is given and the return hint names another Collection.
    OutputHintError
        The return hint names a Collection in another form (`list[OrderBook]`, two of them) or
        a schema: a Collection asset returns the members.
    UnexpectedArgumentError
        No `collection` is given and the return hint names none.
    CollectionWithoutMembersError
        The Collection has no member.
    UnreadableInputHintError
        An input's hint names a schema in a form that stands for no one Polars type (two
        schemas, a `list[...]`, a `dy.Collection`); each accepted form loads as its Polars type.
    UnknownCollectionMemberError
        `outs` names a member the Collection does not have.
    UnexpectedArgumentError
        `warning_rules=` or `streaming=` is given: the message says why neither applies.
    ClearQuarantineError
        `clear_quarantine=True` without `quarantine=True`.
    InvalidArgumentsError
        `quality_policy` is not a `dd.QualityPolicy` (a dict of its fields, a bare
        `dd.Threshold`), or an `outs` entry is a `dd.AssetOut` of another schema than its
        member's, or with a setting of its own.
    UnknownPolicyRuleError, ThresholdNotApplicableError
        `quality_policy` names a rule no member has, or a threshold that cannot apply
        without `quarantine=True`.
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
    op = {name: value for name, value in keywords.items() if name in OpKeywords.__annotations__}
    settings = {name: value for name, value in keywords.items() if name not in op}
    given = checked_settings(EntryPoint.COLLECTION_ASSET, settings)
    read_quarantine_dir()  # an empty value is a mistake worth failing on at declaration

    def declare(collection: type[dy.Collection]) -> tuple[CollectionInfo, list[Declaration]]:
        info = read_collection(collection)
        unknown = [member for member in outs or {} if member not in info.members]
        if unknown:
            raise UnknownCollectionMemberError(info.name, unknown, list(info.members))
        # NOTE: no streaming: the members are split together, in memory.
        output_settings = OutputSettings.of(**given, streaming=False)
        known = collection_rules(info)
        return info, [
            declare_output(
                member_name,
                member.info,
                output_settings,
                output_settings.resolve(member.info, known_rules=known),
                _member_out(member_name, member, (outs or {}).get(member_name)),
                partitions_def=keywords.get("partitions_def"),
                default_prefix=key_prefix,
                code_version=keywords.get("code_version"),
                is_required=False,
            )
            for member_name, member in info.members.items()
        ]

    declared = declare(collection) if collection is not None else None

    def decorate(function: CollectionFunction) -> dg.AssetsDefinition:
        info, declarations = declared or declare(_collection_of(function, collection))
        if declared is not None:
            _collection_of(function, collection)  # a hint naming another one is refused
        return build_collection_asset(info, declarations, function, op)

    return decorate


def _collection_of(
    function: CollectionFunction, collection: type[dy.Collection] | None
) -> type[dy.Collection]:
    """The asset's Collection: the argument, the return hint's, or the error when they differ."""
    hinted = collection_from_return_hint(function, needed=collection is None)
    name = getattr(function, "__name__", repr(function))
    if collection is not None:
        if hinted is not None and hinted is not collection:
            raise mismatch(name, collection, hinted, kind="Collection")
        return collection
    if hinted is None:
        raise UnexpectedArgumentError(
            EntryPoint.COLLECTION_ASSET.value,
            f"it was called without its Collection, and the return hint of {name!r} names none",
            f"Write @dd.collection_asset(OrderBook), or annotate `def {name}(...) {HINTED_USAGE}`.",
        )
    return hinted


def _member_out(
    member_name: str, member: Member, given: AssetOut | dg.AssetOut | None
) -> dg.AssetOut:
    """The `dg.AssetOut` of one member, from its `outs` entry.

    A `dd.AssetOut` gives its asset attributes only: its schema must be the member's (or left
    out), and its settings must be left unset, since the Collection is validated as one with
    the decorator's.

    Raises
    ------
    InvalidArgumentsError
        The `dd.AssetOut`'s schema is not the member's, or it sets a setting.
    """
    if given is None:
        return dg.AssetOut()
    if not isinstance(given, AssetOut):
        return given
    expected = member.info.schema
    if given.schema is not None and given.schema is not expected:
        raise InvalidArgumentsError(
            "dd.collection_asset",
            f"outs[{member_name!r}] is a dd.AssetOut of {given.schema.__name__}, but the "
            f"member {member_name!r} is a {expected.__name__}",
            f"Write dd.AssetOut({expected.__name__}, ...) for it.",
        )
    changed = [spec.name for spec in SETTINGS if spec.name in given.settings.keywords]
    if changed:
        raise InvalidArgumentsError(
            "dd.collection_asset",
            f"outs[{member_name!r}] sets {', '.join(f'`{name}=`' for name in changed)}: "
            "one Collection.filter validates every member together, with the decorator's "
            "settings",
            "Pass the setting to dd.collection_asset itself, or leave it out.",
        )
    return given.out

"""A `dy.Collection` read as assets, and its members split with one `Collection.filter`.

No `from __future__ import annotations`: a `dy.Collection` reads its annotations at runtime.
"""

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from dagster_dataframely import errors
from dagster_dataframely._declare.check_specs import declared_check_specs
from dagster_dataframely._model.check_groups import check_groups
from dagster_dataframely._model.code_version import _version
from dagster_dataframely._model.collection import CollectionInfo, read_collection
from dagster_dataframely._model.columns_tab import columns_tab, quarantine_table_schema
from dagster_dataframely._model.settings import resolve_settings
from dagster_dataframely._run.checks.rule_checks import check_results_for
from dagster_dataframely._run.split.collection_split import split_collection
from dagster_dataframely._run.split.failures import Failures
from tests.asset_support import QUIET
from tests.parquet_io_manager import ParquetIOManager
from tests.schemas import BookLines, BookOrders, OrderBook

ORDERS = pl.DataFrame({"order_id": ["o-1", "o-2", "o-3"], "amount": [10.0, -1.0, 5.0]})
LINES = pl.DataFrame(
    {
        "order_id": ["o-1", "o-1", "o-2", "o-3", "o-9"],
        "line_no": [1, 2, 1, 0, 1],
        "quantity": [1, 2, 3, 4, 5],
    }
)


def by_key(frame: pl.DataFrame, *columns: str) -> list[tuple[Any, ...]]:
    return sorted(frame.select(columns).iter_rows())


# --- Reading a Collection ---------------------------------------------------------------------


def test_each_member_has_its_rules_then_one_filter_rule_per_filter() -> None:
    info = read_collection(OrderBook)
    assert list(info.members) == ["orders", "lines"]
    assert info.primary_key == ("order_id",)
    for name, schema in (("orders", BookOrders), ("lines", BookLines)):
        member = info.members[name]
        own = [rule.check_name for rule in member.info.rules if not rule.is_filter]
        assert own == [r.check_name for r in dg_rules(schema)]
        assert [r.check_name for r in member.info.filters] == [
            "dy_filter__has_order",
            "dy_filter__positive_total",
        ]
        assert member.info.schema is schema
    assert read_collection(OrderBook) is info  # read once per class


def dg_rules(schema: type[dy.Schema]) -> Any:
    from dagster_dataframely._model.schema import read_schema

    return read_schema(schema).rules


def test_a_filter_is_described_by_its_docstring_or_by_what_it_keeps() -> None:
    has_order, positive_total = read_collection(OrderBook).filters
    assert has_order.description == "Every line has an order."
    assert positive_total.description == (
        "Keeps the rows whose (order_id) the filter positive_total of OrderBook returns, in "
        "every member it constrains."
    )
    # Its expression is the filter's query, as Polars explains it.
    assert "SEMI JOIN" in has_order.expression()


class Notes(dy.Schema):
    note_id = dy.Int64(primary_key=True)


class Parent(dy.Schema):
    key = dy.Int64(primary_key=True)
    value = dy.Int64(min=0)


class Child(dy.Schema):
    key = dy.Int64(primary_key=True)
    seq = dy.Int64(primary_key=True)


class Family(dy.Collection):
    """Parents propagate their failed rows; notes take no part in the filters; pets optional."""

    parent: Annotated[dy.LazyFrame[Parent], dy.CollectionMember(propagate_row_failures=True)]
    child: dy.LazyFrame[Child]
    notes: Annotated[dy.LazyFrame[Notes], dy.CollectionMember(ignored_in_filters=True)]
    pets: dy.LazyFrame[Child] | None

    @dy.filter()
    def has_parent(self) -> pl.LazyFrame:
        return self.parent.select("key")


def test_collection_member_options_become_filter_rules_or_none() -> None:
    info = read_collection(Family)
    checks = {name: [r.check_name for r in m.info.filters] for name, m in info.members.items()}
    both = ["dy_filter__has_parent", "dy_filter__parent__failure_propagation"]
    assert checks == {"parent": both, "child": both, "notes": [], "pets": both}
    assert info.members["notes"].ignored_in_filters
    assert info.members["pets"].optional
    assert not info.members["child"].optional


def test_check_specs_of_a_member_end_with_its_filters_at_every_granularity() -> None:
    lines = read_collection(OrderBook).members["lines"]
    filters = ["dy_filter__has_order", "dy_filter__positive_total"]
    for granularity, rule_checks in (
        ("rule", [r.check_name for r in dg_rules(BookLines)]),
        ("column", ["dy_schema__rules", "dy_col__order_id", "dy_col__line_no", "dy_col__quantity"]),
        ("schema", ["dy_schema__rules"]),
    ):
        specs = declared_check_specs(
            lines.info,
            asset=dg.AssetKey("lines"),
            settings=resolve_settings(check_granularity=granularity),  # type: ignore[arg-type]
            partitions_def=None,
        )
        assert [s.name for s in specs] == ["dy_schema__columns", *rule_checks, *filters]
    assert specs[-2].description == "Every line has an order."


def test_an_ignored_member_has_only_its_own_checks() -> None:
    notes = read_collection(Family).members["notes"]
    groups = check_groups(notes.info, "rule", "collapsed")
    assert [g.name for g in groups] == [r.check_name for r in dg_rules(Notes)]


def test_the_columns_tab_lists_the_filters_and_the_quarantine_has_their_columns() -> None:
    orders = read_collection(OrderBook).members["orders"]
    constraints = columns_tab(orders.info).constraints
    assert constraints is not None
    assert constraints.other[-2:] == [
        "filter has_order of OrderBook",
        "filter positive_total of OrderBook",
    ]
    columns = [c.name for c in quarantine_table_schema(orders.info).columns]
    assert columns[-2:] == ["dy_filter__has_order", "dy_filter__positive_total"]


def test_a_member_code_version_changes_with_a_filter() -> None:
    def book(keep: str) -> CollectionInfo:
        class Book(dy.Collection):
            orders: dy.LazyFrame[BookOrders]
            lines: dy.LazyFrame[BookLines]

            @dy.filter()
            def has_order(self) -> pl.LazyFrame:
                return self.lines.join(self.orders, on="order_id", how=keep).select("order_id")  # type: ignore[arg-type]

        return read_collection(Book)

    semi, anti = book("semi"), book("anti")
    assert _version(semi.members["orders"].info) == _version(book("semi").members["orders"].info)
    assert _version(semi.members["orders"].info) != _version(anti.members["orders"].info)


def test_a_collection_without_members_is_refused() -> None:
    class Empty(dy.Collection):
        pass

    with pytest.raises(errors.CollectionWithoutMembersError, match="'Empty'"):
        read_collection(Empty)


def test_two_filters_with_one_check_name_are_refused() -> None:
    class Clash(dy.Collection):
        parent: Annotated[dy.LazyFrame[Parent], dy.CollectionMember(propagate_row_failures=True)]
        child: dy.LazyFrame[Child]

        @dy.filter()
        def parent__failure_propagation(self) -> pl.LazyFrame:
            return self.parent.select("key")

    with pytest.raises(errors.CheckNameCollisionError) as raised:
        read_collection(Clash)
    assert raised.value.name == "dy_filter__parent__failure_propagation"


def test_a_filter_name_dagster_refuses_in_a_check_name_is_refused() -> None:
    namespace: dict[str, Any] = {
        "__annotations__": {"parent": dy.LazyFrame[Parent], "child": dy.LazyFrame[Child]},
        "größe": dy.filter()(lambda self: self.parent.select("key")),
    }
    accented = type("Accented", (dy.Collection,), namespace)
    with pytest.raises(errors.InvalidRuleNameError) as raised:
        read_collection(accented)
    assert raised.value.rules == ["größe"]


def test_a_member_schema_this_package_refuses_is_named_with_its_member() -> None:
    class Reserved(dy.Schema):
        key = dy.Int64(primary_key=True)
        dy_flag = dy.Bool()

    class Bad(dy.Collection):
        good: dy.LazyFrame[Parent]
        bad: dy.LazyFrame[Reserved]

    with pytest.raises(errors.ReservedColumnError) as raised:
        read_collection(Bad)
    assert "member 'bad' of Collection 'Bad'" in raised.value.__notes__[0]


def test_read_collection_refuses_a_schema() -> None:
    with pytest.raises(TypeError, match=r"dy\.Collection"):
        read_collection(BookOrders)


# --- The joint split ---------------------------------------------------------------------------


def test_member_rules_and_filters_split_every_member_once() -> None:
    split = split_collection(read_collection(OrderBook), {"orders": ORDERS, "lines": LINES.lazy()})
    orders, lines = split.splits["orders"], split.splits["lines"]
    # o-2 fails amount|min; o-3's only line fails line_no|min, so no line keeps o-3.
    assert by_key(orders.valid, "order_id") == [("o-1",)]
    assert by_key(lines.valid, "order_id", "line_no") == [("o-1", 1), ("o-1", 2)]
    assert orders.failures.counts == {"amount|min": 1, "has_order": 1, "positive_total": 1}
    assert lines.failures.counts == {"line_no|min": 1, "has_order": 2}


def test_the_quarantine_says_which_filter_removed_each_row() -> None:
    split = split_collection(read_collection(OrderBook), {"orders": ORDERS, "lines": LINES})
    quarantine = split.splits["lines"].failures.quarantine_frame
    rows = {
        (row["order_id"], row["line_no"]): row
        for row in quarantine.to_dicts()  # one row per quarantined line
    }
    # A line removed by a filter passed every rule of its own; each filter says if it kept it.
    assert rows["o-9", 1]["dy_rule__line_no__min"] == "valid"
    assert rows["o-9", 1]["dy_filter__has_order"] == "invalid"
    assert rows["o-9", 1]["dy_filter__positive_total"] == "valid"
    assert rows["o-2", 1]["dy_filter__has_order"] == "invalid"
    # A line a rule removed never reached the filters.
    assert rows["o-3", 0]["dy_rule__line_no__min"] == "invalid"
    assert rows["o-3", 0]["dy_filter__has_order"] == "unknown"
    assert quarantine.columns[-2:] == ["dy_filter__has_order", "dy_filter__positive_total"]
    sample = split.splits["lines"].failures.sample(5)
    reasons = dict(
        zip(
            sample["line_no"].cast(str) + sample["order_id"], sample["dy_failed_rules"], strict=True
        )
    )
    assert reasons == {
        "1o-9": "dy_filter__has_order",
        "1o-2": "dy_filter__has_order",
        "0o-3": "dy_rule__line_no__min",
    }


def test_filter_check_results_fail_on_the_members_it_removed_rows_from() -> None:
    info = read_collection(OrderBook)
    split = split_collection(info, {"orders": ORDERS, "lines": LINES})
    member = info.members["orders"]
    results = {
        r.check_name: r
        for r in check_results_for(
            check_groups(member.info, "schema", "collapsed"),
            split.splits["orders"].failures,
            asset_key=dg.AssetKey("orders"),
            severity=dg.AssetCheckSeverity.WARN,
            max_failure_samples=5,
        )
    }
    assert list(results) == [
        "dy_schema__columns",
        "dy_schema__rules",
        "dy_filter__has_order",
        "dy_filter__positive_total",
    ]
    # o-3 lost its only line to a rule: neither filter keeps it.
    assert not results["dy_filter__has_order"].passed
    failed = results["dy_filter__positive_total"]
    assert not failed.passed
    assert failed.metadata["dy_failed_count"].value == 1
    assert failed.metadata["dy_rule"].value == "positive_total"
    assert "AGGREGATE" in str(failed.metadata["dy_rule__expr"].value)


def test_failure_propagation_and_ignored_members() -> None:
    info = read_collection(Family)
    split = split_collection(
        info,
        {
            "parent": pl.DataFrame({"key": [1, 2], "value": [1, -1]}),
            "child": pl.DataFrame({"key": [1, 2, 3], "seq": [1, 1, 1]}),
            "notes": pl.DataFrame({"note_id": [7]}),
        },
    )
    assert split.skipped == {"pets"}
    child = split.splits["child"].failures.quarantine_frame
    assert sorted(child.select("key", "dy_filter__parent__failure_propagation").rows()) == [
        (2, "invalid"),
        (3, "valid"),
    ]
    assert split.splits["notes"].valid.height == 1
    assert split.splits["notes"].failures.counts == {}


def test_an_optional_member_left_out_is_skipped_and_the_others_are_split() -> None:
    info = read_collection(Family)
    frames = {
        "parent": pl.DataFrame({"key": [1], "value": [1]}),
        "child": pl.DataFrame({"key": [1], "seq": [1]}),
        "notes": pl.DataFrame({"note_id": [7]}),
        "pets": None,
    }
    split = split_collection(info, frames)
    assert split.skipped == {"pets"}
    assert set(split.splits) == {"parent", "child", "notes"}
    with_pets = split_collection(
        info, {**frames, "pets": pl.DataFrame({"key": [1, 5], "seq": [1, 1]})}
    )
    assert with_pets.splits["pets"].failures.counts == {"has_parent": 1}


def test_no_member_at_all_skips_every_member() -> None:
    info = read_collection(OrderBook)
    assert split_collection(info, {}).skipped == {"orders", "lines"}
    split = split_collection(info, {"orders": None, "lines": None})
    assert split.skipped == {"orders", "lines"}
    assert not split.splits
    empty = Failures.none(info.members["lines"].info)
    assert empty.invalid_count == 0
    assert empty.quarantine_frame.columns[-1] == "dy_filter__positive_total"


def test_a_missing_required_member_fails_before_anything_runs() -> None:
    with pytest.raises(errors.CollectionMemberMissingError) as raised:
        split_collection(read_collection(OrderBook), {"orders": ORDERS})
    assert raised.value.missing == ["lines"]


def test_a_frame_for_no_member_is_refused() -> None:
    @dd.collection_asset(OrderBook)
    def book() -> dict[str, pl.DataFrame]:
        return {"orders": ORDERS, "line": LINES}

    # The same error as a dd.multi_asset's unknown output: the return is wrong, not the
    # declaration, so it is no definition error.
    with pytest.raises(errors.MultiAssetReturnError) as raised:
        dd.testing.call_asset(book, asset_key="orders")
    assert isinstance(raised.value, errors.InvalidReturnError)
    assert not isinstance(raised.value, errors.InvalidDefinitionError)
    assert "'line'" in raised.value.problem
    assert raised.value.outputs == ["orders", "lines"]


def test_an_unknown_returned_key_is_one_mistake_on_both_multi_output_decorators() -> None:
    """A multi-asset and a Collection asset refuse a misspelled key with the same error."""

    @dd.multi_asset(outs={"orders": dd.AssetOut(BookOrders), "lines": dd.AssetOut(BookLines)})
    def pair() -> dict[str, pl.DataFrame]:
        return {"orders": ORDERS, "line": LINES}

    @dd.collection_asset(OrderBook)
    def book() -> dict[str, pl.DataFrame]:
        return {"orders": ORDERS, "line": LINES}

    raised = []
    for asset in (pair, book):
        with pytest.raises(errors.DagsterDataframelyError) as error:
            list(asset(dg.build_asset_context()))
        raised.append(error.value)
    assert [type(error) for error in raised] == [errors.MultiAssetReturnError] * 2
    for error in raised:
        assert isinstance(error, errors.InvalidReturnError)
        assert not isinstance(error, dg.DagsterInvalidDefinitionError)
        assert "'line'" in error.problem


def test_a_value_that_is_no_frame_is_refused() -> None:
    @dd.collection_asset(OrderBook)
    def book() -> dict[str, object]:
        return {"orders": ORDERS, "lines": {}}

    with pytest.raises(errors.MultiAssetReturnError, match="dict"):
        dd.testing.call_asset(book, asset_key="orders")


def test_a_column_mismatch_in_one_member_splits_no_member() -> None:
    ran: list[str] = []

    def spy(frame: pl.DataFrame) -> pl.DataFrame:
        ran.append("ran")
        return frame

    lines = LINES.lazy().map_batches(spy)
    split = split_collection(
        read_collection(OrderBook),
        {"orders": ORDERS.with_columns(pl.col("amount").cast(pl.String)), "lines": lines},
    )
    assert split.problems == {
        "orders": [{"column": "amount", "expected": "Float64", "actual": "String"}]
    }
    assert not split.splits
    assert ran == []  # no plan ran


def test_a_filter_that_returns_a_key_twice_is_refused_not_written_twice() -> None:
    class Doubling(dy.Collection):
        orders: dy.LazyFrame[BookOrders]
        lines: dy.LazyFrame[BookLines]

        @dy.filter()
        def has_order(self) -> pl.LazyFrame:
            return self.lines.join(self.orders, on="order_id").select("order_id")  # no unique

    with pytest.raises(errors.CollectionFilterDuplicatesError) as raised:
        split_collection(read_collection(Doubling), {"orders": ORDERS, "lines": LINES})
    assert (raised.value.member, raised.value.input_count) in {("orders", 3), ("lines", 5)}


def _joined_book(ending: Callable[[pl.LazyFrame], pl.LazyFrame]) -> type[dy.Collection]:
    """An `OrderBook` whose filter joins lines to orders, a row per line, then `ending`."""

    class JoinedBook(dy.Collection):
        orders: dy.LazyFrame[BookOrders]
        lines: dy.LazyFrame[BookLines]

        @dy.filter()
        def ordered_lines(self) -> pl.LazyFrame:
            return ending(self.lines.join(self.orders, on="order_id"))

        @dy.filter()
        def any_order(self) -> pl.LazyFrame:
            return self.orders.select("order_id")

    return JoinedBook


def test_the_filter_error_names_the_filter_and_a_fix_that_works() -> None:
    """A join repeats an order per line: `.unique()` keeps the repeats, selecting the key not."""
    orders = pl.DataFrame({"order_id": ["o-1", "o-2"], "amount": [10.0, 5.0]})
    lines = pl.DataFrame(
        {"order_id": ["o-1", "o-1", "o-2", "o-9"], "line_no": [1, 2, 1, 1], "quantity": [1] * 4}
    )
    returned = {"orders": orders, "lines": lines}

    def book_of(collection: type[dy.Collection]) -> dg.AssetsDefinition:
        @dd.collection_asset(collection, quarantine=True)
        def book() -> dict[str, pl.DataFrame]:
            return returned

        return book

    # `.unique()` over the joined rows, as the message once advised, leaves o-1 on two rows.
    failing = book_of(_joined_book(lambda joined: joined.unique()))
    with pytest.raises(errors.CollectionFilterDuplicatesError) as raised:
        dd.testing.call_asset(failing, asset_key="orders")
    assert raised.value.filters == ["ordered_lines"]
    assert raised.value.primary_key == ["order_id"]
    message = str(raised.value)
    assert "the filter 'ordered_lines' returned the same (order_id) on more than one row" in message
    assert "`.unique()` over rows that keep other columns" in message
    fix = "End the filter with `.select('order_id').unique()`."
    assert fix in message

    # What the message says, done: every row lands once, o-9's line in the quarantine.
    fixed = _joined_book(lambda joined: joined.select("order_id").unique())
    with dg.DagsterInstance.ephemeral() as instance, tempfile.TemporaryDirectory() as base:
        result = dg.materialize(
            [book_of(fixed)],
            resources={"io_manager": ParquetIOManager(base_dir=base)},
            instance=instance,
            run_config=QUIET,
        )
        assert result.success
        assert pl.read_parquet(Path(base, "orders.parquet")).height == 2
        assert pl.read_parquet(Path(base, "lines.parquet")).height == 3
        assert pl.read_parquet(Path(base, "lines_quarantine.parquet"))["order_id"].to_list() == [
            "o-9"
        ]


def test_every_lazy_member_runs_once() -> None:
    calls: list[int] = []

    def counted(frame: pl.DataFrame) -> pl.DataFrame:
        calls.append(frame.height)
        return frame

    split_collection(
        read_collection(OrderBook),
        {"orders": ORDERS.lazy().map_batches(counted), "lines": LINES.lazy()},
    )
    assert calls == [3]


def test_a_members_undeclared_columns_are_never_computed() -> None:
    # `note` is not declared: as `OrderBook.filter` would, the split never computes it, so its
    # failing cast (text to integer) raises nothing.
    lines = LINES.lazy().with_columns(note=pl.col("order_id").str.to_integer())
    split = split_collection(read_collection(OrderBook), {"orders": ORDERS, "lines": lines})
    assert by_key(split.splits["lines"].valid, "order_id", "line_no") == [("o-1", 1), ("o-1", 2)]
    assert split.splits["lines"].valid.columns == ["order_id", "line_no", "quantity"]


# --- No row of any member is lost or duplicated -------------------------------------------------

ORDER_ROW = st.tuples(
    st.sampled_from(["o-1", "o-2", "o-3", None]), st.sampled_from([1.0, -1.0, None])
)
LINE_ROW = st.tuples(
    st.sampled_from(["o-1", "o-2", "o-3", "o-4"]),
    st.sampled_from([0, 1, 2, None]),
    st.sampled_from([-1, 0, 1, 2]),
)


@settings(max_examples=60, deadline=None)
@given(
    orders=st.lists(ORDER_ROW, max_size=12),
    lines=st.lists(LINE_ROW, max_size=20),
    parent_values=st.lists(st.sampled_from([-1, 0, 1, None]), max_size=4),
)
def test_no_row_of_any_member_is_lost_or_duplicated(
    orders: list[tuple[Any, ...]],
    lines: list[tuple[Any, ...]],
    parent_values: list[int | None],
) -> None:
    order_frame = pl.DataFrame(
        orders, schema={"order_id": pl.String, "amount": pl.Float64}, orient="row"
    )
    line_frame = pl.DataFrame(
        lines,
        schema={"order_id": pl.String, "line_no": pl.Int64, "quantity": pl.Int64},
        orient="row",
    )
    book = {"orders": order_frame, "lines": line_frame.lazy()}
    _assert_partition(read_collection(OrderBook), book, OrderBook)

    family = {
        "parent": pl.DataFrame(
            {"key": list(range(len(parent_values))), "value": parent_values},
            schema={"key": pl.Int64, "value": pl.Int64},
        ),
        "child": line_frame.select(
            pl.col("line_no").fill_null(0).alias("key"), pl.col("quantity").alias("seq")
        ),
        "notes": pl.DataFrame({"note_id": [1, 1]}),
    }
    _assert_partition(read_collection(Family), family, Family)


def _assert_partition(
    info: CollectionInfo, frames: dict[str, Any], collection: type[dy.Collection]
) -> None:
    split = split_collection(info, frames)
    expected_result, expected_failure = collection.filter(frames, cast=False)
    for name, frame in frames.items():
        rows = frame.lazy().collect()
        member = split.splits[name]
        columns = list(info.members[name].info.columns)
        out = pl.concat([member.valid, member.failures.quarantine_frame.select(columns)])
        assert_frame_equal(out, rows.select(columns), check_row_order=False)
        # Exactly the split Dataframely's own `Collection.filter` makes.
        assert_frame_equal(
            member.valid,
            getattr(expected_result, name).lazy().collect(),
            check_row_order=False,
        )
        assert member.failures.counts == expected_failure[name].counts()


# --- dd.collection_asset at declaration ---------------------------------------------------------


def test_collection_asset_declares_one_asset_per_member_with_its_checks() -> None:
    @dd.collection_asset(
        OrderBook,
        quarantine=True,
        key_prefix="shop",
        check_granularity="schema",
        outs={"lines": dg.AssetOut(io_manager_key="warehouse", key_prefix="erp")},
    )
    def book() -> None:
        return None

    assert set(book.keys) == {dg.AssetKey(["shop", "orders"]), dg.AssetKey(["erp", "lines"])}
    specs = {(s.asset_key.to_user_string(), s.name) for s in book.check_specs}
    for member in ("shop/orders", "erp/lines"):
        assert {name for key, name in specs if key == member} == {
            "dy_schema__columns",
            "dy_schema__rules",
            "dy_filter__has_order",
            "dy_filter__positive_total",
        }
    lines = book.specs_by_key[dg.AssetKey(["erp", "lines"])]
    assert book.get_io_manager_key_for_asset_key(lines.key) == "warehouse"
    assert lines.description == BookLines.__doc__
    columns_tab = lines.metadata["dagster/column_schema"]
    assert "filter has_order of OrderBook" in columns_tab.constraints.other
    info = read_collection(OrderBook)
    assert lines.code_version == _version(info.members["lines"].info)


def test_collection_asset_refuses_outs_for_no_member() -> None:
    with pytest.raises(errors.UnknownCollectionMemberError) as raised:
        dd.collection_asset(OrderBook, outs={"line": dg.AssetOut()})
    assert raised.value.unknown == ["line"]


def test_collection_asset_refuses_clear_quarantine_without_quarantine() -> None:
    with pytest.raises(errors.ClearQuarantineError):
        dd.collection_asset(OrderBook, clear_quarantine=True)


def test_collection_asset_refuses_a_schema_and_dd_asset_still_refuses_a_collection() -> None:
    with pytest.raises(TypeError, match=r"dy\.Collection"):
        dd.collection_asset(BookOrders)  # type: ignore[arg-type]
    with pytest.raises(errors.CollectionNotSupportedError):
        dd.asset(OrderBook)


def test_a_return_value_that_is_no_mapping_nor_collection_fails_with_a_clear_error() -> None:
    @dd.collection_asset(OrderBook)
    def book() -> Any:
        return [ORDERS, LINES]

    with pytest.raises(errors.MultiAssetReturnError, match="neither a mapping of members"):
        list(book(dg.build_asset_context()))


def test_quarantine_spec_of_a_member_has_its_filter_columns() -> None:
    @dd.collection_asset(OrderBook, quarantine=True, key_prefix="shop")
    def book() -> None:
        return None

    key = dg.AssetKey(["shop", "lines"])
    for spec in (
        dd.quarantine_spec(OrderBook, book, asset_key=key),
        dd.quarantine_spec(OrderBook, key),
    ):
        assert spec.key == dg.AssetKey(["shop", "lines_quarantine"])
        columns = [c.name for c in spec.metadata["dagster/column_schema"].columns]
        assert columns[-2:] == ["dy_filter__has_order", "dy_filter__positive_total"]
    with pytest.raises(errors.UnknownCollectionMemberError):
        dd.quarantine_spec(OrderBook, dg.AssetKey("orderz"))

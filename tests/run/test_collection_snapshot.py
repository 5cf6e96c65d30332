"""A Collection's members from one snapshot of what they share: one evaluation, one split.

The members of `OrderBook` are built here from one frame of order lines (`orders` its order
columns, `lines` its line columns), so a line's order is in `orders` exactly when both members
come from the same evaluation of that frame. Each source below is one Polars evaluates anew
for every plan that reads it unless a cache stands above it: an IO plugin and a pyarrow
dataset whose rows change after the first read (a table rewritten between two reads), a random
filter and a random sample of rows. The frame reaches the function as its input (the package
caches it) or is cached by the function itself; either way, every member's rows must come from
one read, and the split must be Dataframely's own `Collection.filter` over those rows. The
checks of `dd.table_checks` read the members from an IO manager that caches one source, and
must read it once too.

No `from __future__ import annotations`: a `dy.Collection` reads its annotations at runtime.
"""

import functools
import pickle
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pyarrow as pa
import pyarrow.dataset
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from dagster_dataframely import errors
from dagster_dataframely._store.capture import capturing_quarantine
from tests.changing_source import ChangingSource
from tests.schemas import OrderBook

RAW = {"order_id": pl.String, "amount": pl.Float64, "line_no": pl.Int64, "quantity": pl.Int64}
MEMBERS = {"orders": ["order_id", "amount"], "lines": ["order_id", "line_no", "quantity"]}
BASE = pl.DataFrame(
    {
        "order_id": [f"o-{i}" for i in range(40)],
        "amount": [float(i % 7) - 1.0 for i in range(40)],  # every seventh order is negative
        "line_no": [1 + i % 3 for i in range(40)],
        "quantity": [i % 5 for i in range(40)],  # every fifth line has no quantity
    },
    schema=RAW,
)


class ChangingDataset:
    """A pyarrow dataset as `pl.scan_pyarrow_dataset` reads it, counting its reads.

    The first read scans a dataset of the frame, every later one a dataset of other orders.
    """

    def __init__(self, frame: pl.DataFrame) -> None:
        self.first = pyarrow.dataset.dataset(frame.to_arrow())
        self.later = pyarrow.dataset.dataset(_rewritten(frame).to_arrow())
        self.reads = 0

    @property
    def schema(self) -> pa.Schema:
        return self.first.schema

    def to_batches(self, **scan: Any) -> Iterator[pa.RecordBatch]:
        self.reads += 1
        return (self.first if self.reads == 1 else self.later).to_batches(**scan)

    def scan(self) -> pl.LazyFrame:
        return pl.scan_pyarrow_dataset(self)  # type: ignore[arg-type]


def _rewritten(frame: pl.DataFrame, reads: int = 2) -> pl.DataFrame:
    """The frame as another read finds it: half the orders gone, the rest renamed."""
    return frame.tail(frame.height // 2).with_columns(pl.col("order_id") + "-new")


@dataclass(frozen=True)
class Source:
    """One source the members share, and how many reads it counted (None: it cannot count)."""

    name: str
    build: Callable[[pl.DataFrame], Any] = field(repr=False)
    random: bool = False
    """Whether its rows are drawn anew on each read; else its first read is the frame."""

    def open(self, frame: pl.DataFrame) -> tuple[pl.LazyFrame, Callable[[], int | None]]:
        built = self.build(frame)
        if isinstance(built, ChangingSource | ChangingDataset):
            return built.scan(), lambda: built.reads
        return built, lambda: None


def _random_half(frame: pl.DataFrame) -> pl.LazyFrame:
    return frame.lazy().filter(pl.int_range(pl.len()).shuffle() < pl.len() // 2)


def _random_rows(frame: pl.DataFrame) -> pl.LazyFrame:
    rows = pl.struct(pl.all()).sample(fraction=0.7, with_replacement=True)
    return frame.lazy().select(rows.alias("row")).unnest("row")


SOURCES = [
    Source("LazyFrame", lambda frame: frame.lazy()),
    Source("changing IO plugin", functools.partial(ChangingSource, rewrite=_rewritten)),
    Source("changing pyarrow dataset", ChangingDataset),
    Source("random filter", _random_half, random=True),
    Source("random sample of rows", _random_rows, random=True),
]
WHERE = ["input", "cached in the function"]


def _members(shared: pl.LazyFrame) -> dict[str, pl.LazyFrame]:
    return {member: shared.select(columns) for member, columns in MEMBERS.items()}


def _book(where: str, plan: pl.LazyFrame) -> dg.AssetsDefinition:
    """The Collection's asset, sharing `plan` as its input or caching it in its function."""
    if where == "input":

        @dd.collection_asset(OrderBook, quarantine=True, name="book")
        def from_input(raw: pl.LazyFrame) -> dict[str, pl.LazyFrame]:
            return _members(raw)

        return from_input

    @dd.collection_asset(OrderBook, quarantine=True, name="book")
    def cached_in_the_function() -> dict[str, pl.LazyFrame]:
        return _members(plan.cache())

    return cached_in_the_function


Stored = dict[str, pl.DataFrame]
"""Each member's written table and quarantine, by `<member>` and `<member>_quarantine`."""


def _call(
    book: dg.AssetsDefinition, where: str, plan: pl.LazyFrame
) -> tuple[Stored, errors.ValidationFailedError | None]:
    """One direct call: what it stored, and the data's verdict if the call failed."""
    events: list[object] = []
    error = None
    with dg.build_asset_context() as context, capturing_quarantine() as captured:
        try:
            events.extend(book(context, raw=plan) if where == "input" else book(context))
        except errors.ValidationFailedError as raised:
            error = raised
    stored = {
        event.asset_key.path[-1]: event.value
        for event in events
        if isinstance(event, dg.MaterializeResult) and event.asset_key is not None
    }
    for key, frames in captured.by_key.items():
        stored[key.path[-1] + "_quarantine"] = frames[-1]
    return stored, error


def _run(book: dg.AssetsDefinition, plan: pl.LazyFrame, base_dir: Path) -> Stored:
    """One `dg.materialize` run, the shared frame handed over in memory by an upstream asset."""

    @dg.asset(name="raw", io_manager_key="memory")
    def raw() -> pl.LazyFrame:
        return plan

    result = dg.materialize(
        [raw, book],
        resources={
            "io_manager": dg.FilesystemIOManager(base_dir=str(base_dir)),
            "memory": dg.InMemoryIOManager(),
        },
    )
    assert result.success
    return {  # `FilesystemIOManager` pickles each value to a file named by its key
        name: pickle.loads((base_dir / name).read_bytes())
        for name in ("orders", "lines", "orders_quarantine", "lines_quarantine")
        if (base_dir / name).exists()
    }


def _stored_rows(stored: Stored) -> dict[str, pl.DataFrame]:
    """Each member's rows as the call read them: its table's and its quarantine's."""
    rows = {}
    for member, columns in MEMBERS.items():
        parts = [stored[name].select(columns) for name in (member, member + "_quarantine")]
        rows[member] = pl.concat(parts)
    return rows


def _assert_split_as_dataframely_splits(stored: Stored, rows: dict[str, pl.DataFrame]) -> None:
    """The split is Dataframely's own `Collection.filter`, over the rows collected once."""
    valid, failure = OrderBook.filter(rows, cast=False)
    for member in MEMBERS:
        expected = getattr(valid, member).collect()
        if member in stored:
            assert_frame_equal(stored[member], expected, check_row_order=False)
        quarantined = stored.get(member + "_quarantine")
        assert (0 if quarantined is None else quarantined.height) == len(failure[member])


def _assert_one_snapshot_split_as_dataframely_splits_it(stored: Stored) -> None:
    """Each member's rows (table and quarantine) are one read's, split as Dataframely splits."""
    for member in MEMBERS:  # a clean member writes no quarantine: an empty one stands for it
        stored.setdefault(member + "_quarantine", stored[member].clear())
    rows = _stored_rows(stored)
    # One snapshot: the members' order ids are the ones of one evaluation, row for row.
    ids = [rows[member]["order_id"].sort(nulls_last=True).to_list() for member in MEMBERS]
    assert ids[0] == ids[1]
    _assert_split_as_dataframely_splits(stored, rows)


@pytest.mark.parametrize("where", WHERE)
@pytest.mark.parametrize("source", SOURCES, ids=[source.name for source in SOURCES])
def test_a_direct_call_splits_the_members_of_one_read(source: Source, where: str) -> None:
    plan, reads = source.open(BASE)

    stored, error = _call(_book(where, plan), where, plan)

    assert error is None
    assert reads() in (None, 1)
    assert stored["lines_quarantine"].height  # the filters removed the lines of bad orders
    _assert_one_snapshot_split_as_dataframely_splits_it(stored)


@pytest.mark.parametrize("source", SOURCES, ids=[source.name for source in SOURCES])
def test_a_run_splits_the_members_of_one_read(source: Source, tmp_path: Path) -> None:
    plan, reads = source.open(BASE)

    stored = _run(_book("input", plan), plan, tmp_path)

    assert reads() in (None, 1)
    _assert_one_snapshot_split_as_dataframely_splits_it(stored)


ROW = st.tuples(
    st.sampled_from(["o-1", "o-2", "o-3", "o-4", None]),
    st.sampled_from([1.0, -1.0, None]),
    st.sampled_from([0, 1, 2, None]),
    st.sampled_from([-1, 0, 1, 2]),
)


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(ROW, max_size=16),
    source=st.sampled_from(SOURCES),
    where=st.sampled_from(WHERE),
)
def test_no_member_row_is_lost_or_duplicated_whatever_the_shared_source(
    rows: list[tuple[Any, ...]], source: Source, where: str
) -> None:
    frame = pl.DataFrame(rows, schema=RAW, orient="row")
    plan, reads = source.open(frame)

    stored, error = _call(_book(where, plan), where, plan)

    assert reads() in (None, 1)
    if error is None:
        _assert_one_snapshot_split_as_dataframely_splits_it(stored)
        return
    # A member has rows and none valid: no table is written, and every quarantine is.
    assert isinstance(error, errors.NoValidRowsError)
    assert not set(MEMBERS) & set(stored)
    if not source.random:  # its one read was the frame: Dataframely's split of the frame
        members = {member: frame.select(columns) for member, columns in MEMBERS.items()}
        _assert_split_as_dataframely_splits(stored, members)


# --- dd.table_checks of a Collection: members an IO manager loads from one source ---------------


class OneSourceIOManager(dg.IOManager):
    """Loads every member from one stored frame it caches, as one read of one table would."""

    def __init__(self, shared: pl.LazyFrame) -> None:
        self.shared = shared.cache()

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        raise AssertionError("the checks only read")

    def load_input(self, context: dg.InputContext) -> pl.LazyFrame:
        return self.shared.select(MEMBERS[context.asset_key.path[-1]])


@pytest.mark.parametrize("source", SOURCES, ids=[source.name for source in SOURCES])
def test_table_checks_of_a_collection_split_the_members_of_one_read(source: Source) -> None:
    plan, reads = source.open(BASE)
    members = {member: dg.AssetSpec(member) for member in MEMBERS}
    checks = dd.table_checks(OrderBook, members, severity=dg.AssetCheckSeverity.WARN)

    result = dg.materialize(
        [*members.values(), checks],
        resources={"io_manager": OneSourceIOManager(plan)},
        selection=dg.AssetSelection.all_asset_checks(),
    )

    assert result.success  # no panic for a cached random filter either
    assert reads() in (None, 1)
    if source.random:  # which rows it drew is unknown here; the calls above check the split
        return
    failed = {
        (check.asset_key.path[-1], check.check_name): check.metadata["dy_failed_count"].value
        for check in result.get_asset_check_evaluations()
        if not check.passed
    }
    _, failure = OrderBook.filter(
        {member: BASE.select(columns) for member, columns in MEMBERS.items()}, cast=False
    )
    filters = {"has_order", "positive_total"}
    assert failed == {
        (member, f"dy_filter__{rule}" if rule in filters else dd.wiring.check_name(rule)): count
        for member in MEMBERS
        for rule, count in failure[member].counts().items()
    }

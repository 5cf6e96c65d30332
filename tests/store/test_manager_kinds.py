"""An IO-manager kind is one class and one entry in `kind_choice.KINDS`; unknown managers are named.

`ShelfIOManager` keeps each frame in a dict, under its asset key and partition. The package
does not know it, so it gets `UnknownManager`'s answers: `staged_writes=True` is refused when
the resource starts, the table-wide key check says it cannot read the table, and a first
clean run writes no empty quarantine. `ShelfKind`, registered here for one test, tells the
package what the shelf can do, and each of those three works through a real run.
"""

from collections.abc import Callable
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely._store.manager_kinds import kind_choice
from dagster_dataframely._store.manager_kinds.manager_kind import (
    ManagerKind,
    StoredPartition,
    UnknownManager,
)
from dagster_dataframely.errors import QuarantineIOManagerError

REGIONS = dg.StaticPartitionsDefinition(["east", "west"])
Slot = tuple[str, str | None]


def _slot(context: dg.OutputContext) -> Slot:
    partition = str(context.partition_key) if context.has_partition_key else None
    return context.asset_key.to_user_string(), partition


class ShelfIOManager(dg.IOManager):
    """Keeps each frame under its asset key and partition key, in a dict the test holds."""

    def __init__(self, shelf: dict[Slot, pl.DataFrame]) -> None:
        self.shelf = shelf

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        self.shelf[_slot(context)] = obj.collect() if isinstance(obj, pl.LazyFrame) else obj

    def load_input(self, context: dg.InputContext) -> Any:
        assert context.upstream_output is not None
        return self.shelf[_slot(context.upstream_output)]


class ShelfKind(ManagerKind):
    """What the package may ask of a shelf: every answer it gives beyond an unknown manager's."""

    manager: ShelfIOManager

    @classmethod
    def claims(cls, manager: dg.IOManager) -> bool:
        return isinstance(manager, ShelfIOManager)

    def staged(self, name: str) -> dg.IOManager:
        return self.manager  # a dict's entry is replaced in one step

    def stored_check(self, context: dg.OutputContext) -> Callable[[], bool]:
        return lambda: _slot(context) in self.manager.shelf

    def stored_partitions(
        self,
        context: dg.OutputContext,
        partitions_def: dg.PartitionsDefinition,
        instance: dg.DagsterInstance,
    ) -> dict[str, StoredPartition]:
        asset = context.asset_key.to_user_string()
        return {
            partition: StoredPartition(frame.lazy(), frozenset(frame.columns))
            for (key, partition), frame in self.manager.shelf.items()
            if key == asset and partition is not None
        }

    def previews(self) -> None:
        return None


@pytest.fixture
def shelf_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ShelfKind` registered, first, for one test."""
    monkeypatch.setattr(kind_choice, "KINDS", (ShelfKind, *kind_choice.KINDS))


class Keyed(dy.Schema):
    region = dy.String()
    order_id = dy.Int64(primary_key=True)
    amount = dy.Float64(min=0.0)


FRAMES = {
    "east": pl.DataFrame({"region": ["east"] * 2, "order_id": [1, 2], "amount": [1.0, 2.0]}),
    "west": pl.DataFrame({"region": ["west"] * 2, "order_id": [2, 3], "amount": [3.0, 4.0]}),
}


@dd.asset(
    Keyed, name="orders", partitions_def=REGIONS, keys_across_partitions=True, quarantine=True
)
def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
    return FRAMES[context.partition_key]


def _run_each(io_manager: object) -> list[dg.AssetCheckEvaluation]:
    """Each region in its own run: every evaluation of the key check, in order."""
    instance = dg.DagsterInstance.ephemeral()
    found = []
    for region in FRAMES:
        result = dg.materialize(
            [orders], resources={"io_manager": io_manager}, partition_key=region, instance=instance
        )
        assert result.success
        found += [
            evaluation
            for evaluation in result.get_asset_check_evaluations()
            if evaluation.check_name == "dy_keys_across_partitions"
        ]
    return found


def test_an_unknown_manager_gets_the_named_fallback_and_a_registered_kind_comes_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert type(kind_choice.kind_of(ShelfIOManager({}))) is UnknownManager
    monkeypatch.setattr(kind_choice, "KINDS", (ShelfKind, *kind_choice.KINDS))
    assert type(kind_choice.kind_of(ShelfIOManager({}))) is ShelfKind


def test_an_unknown_manager_is_never_staged_nor_read_and_gets_no_first_quarantine() -> None:
    shelf: dict[Slot, pl.DataFrame] = {}
    staged = dd.QuarantineAwareIOManager(io_manager=ShelfIOManager(shelf), staged_writes=True)

    with pytest.raises(dg.DagsterResourceFunctionError) as raised:
        _run_each(staged)
    assert isinstance(raised.value.__cause__, QuarantineIOManagerError)
    assert raised.value.__cause__.manager == "ShelfIOManager (the io_manager argument)"

    evaluations = _run_each(ShelfIOManager(shelf))
    assert [e.passed for e in evaluations] == [False, False]
    assert all(e.severity == dg.AssetCheckSeverity.WARN for e in evaluations)
    assert "cannot read it" in str(evaluations[-1].description)
    # The package cannot ask whether a quarantine is stored: a clean run writes none.
    assert ("orders_quarantine", "east") not in shelf


@pytest.mark.usefixtures("shelf_kind")
def test_a_registered_kind_stages_reads_the_keys_and_writes_the_first_empty_quarantine() -> None:
    shelf: dict[Slot, pl.DataFrame] = {}
    staged = dd.QuarantineAwareIOManager(io_manager=ShelfIOManager(shelf), staged_writes=True)

    evaluations = _run_each(staged)

    assert [e.passed for e in evaluations] == [True, False]
    metadata = {name: value.value for name, value in evaluations[-1].metadata.items()}
    assert metadata["dy_repeated_keys"] == 1
    assert metadata["dy_repeated_key_partitions"] == ["east", "west"]
    # A first clean run writes an empty quarantine, so that a reader finds one.
    assert shelf["orders_quarantine", "east"].height == 0
    assert shelf["orders", "west"]["order_id"].to_list() == [2, 3]

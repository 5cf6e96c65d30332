"""One pipeline: `dd.asset` is the one-output case of `dd.multi_asset`, and ADR 0004 holds for all.

The same schema, settings and frame give the same events, metadata, check results, error and
stored rows whether they are declared with `dd.asset` or as the one output of a
`dd.multi_asset`, for every outcome of the failure policy, in a run and in a direct call. And
every entry point computes the statistics while it writes the quarantine, and builds the
quarantine frame while it makes the checks' samples.
"""

# No `from __future__ import annotations`: Dataframely reads a Collection's annotations.
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import dagster_dataframely as dd
from dagster_dataframely._run.emit import emit as emit_module
from dagster_dataframely._run.split.failures import Failures


class Orders(dy.Schema):
    """An order, as the sameness tests validate it."""

    order_id = dy.String(primary_key=True)
    amount = dy.Float64(nullable=False, min=0.0)
    note = dy.String(nullable=True, max_length=8)


VALID = pl.DataFrame(
    {"order_id": ["a", "b", "c"], "amount": [1.0, 2.5, 3.0], "note": ["x", None, "y"]}
)
SOME_INVALID = pl.DataFrame(
    {
        "order_id": ["a", "b", "c", "c"],
        "amount": [1.0, -2.0, 3.0, 4.0],
        "note": ["x", "much too long", None, None],
    }
)
ALL_INVALID = pl.DataFrame({"order_id": ["a"], "amount": [-1.0], "note": ["x"]})
MISSING_COLUMN = pl.DataFrame({"order_id": ["a"], "note": ["x"]})

OUTCOMES: dict[str, tuple[Mapping[str, Any], pl.DataFrame | None]] = {
    "clean": ({"quarantine": True}, VALID),
    "clean, cleared": ({"quarantine": True, "clear_quarantine": True}, VALID),
    "clean, no quarantine": ({}, VALID),
    "partial": ({"quarantine": True}, SOME_INVALID),
    "partial, warning rule": (
        {"quarantine": True, "warning_rules": ["note|max_length"]},
        SOME_INVALID,
    ),
    "abort": ({}, SOME_INVALID),
    "all invalid": ({"quarantine": True}, ALL_INVALID),
    "column mismatch": ({"quarantine": True}, MISSING_COLUMN),
    "skip": ({"quarantine": True}, None),
    "lean settings": (
        {"quarantine": True, "statistics": False, "row_sample": 0, "max_failure_samples": 0},
        SOME_INVALID,
    ),
    "column granularity": ({"quarantine": True, "check_granularity": "column"}, SOME_INVALID),
    "quality policy, tolerated": (
        {
            "quarantine": True,
            "quality_policy": dd.QualityPolicy(
                threshold=dd.Threshold(warn_above=0.5), blocking=True, undeclared_columns="report"
            ),
        },
        SOME_INVALID,
    ),
    "quality policy, above fail_above": (
        {
            "quarantine": True,
            "quality_policy": dd.QualityPolicy(
                rules={"amount|min": dd.Threshold(fail_above=0)},
                volume=dd.VolumeCheck(min_rows=1),
            ),
        },
        SOME_INVALID,
    ),
}


def single(settings: Mapping[str, Any], frame: pl.DataFrame | None) -> dg.AssetsDefinition:
    @dd.asset(Orders, name="orders", **settings)
    def orders(context: dg.AssetExecutionContext) -> pl.DataFrame | None:
        return frame

    return orders


def one_output(settings: Mapping[str, Any], frame: pl.DataFrame | None) -> dg.AssetsDefinition:
    @dd.multi_asset(name="orders", outs={"orders": dd.AssetOut(Orders, **settings)})
    def orders(context: dg.AssetExecutionContext) -> dict[str, pl.DataFrame | None]:
        return {"orders": frame}

    return orders


BUILDERS: dict[str, Callable[[Mapping[str, Any], pl.DataFrame | None], dg.AssetsDefinition]] = {
    "dd.asset": single,
    "dd.multi_asset": one_output,
}


class KeyedIOManager(dg.IOManager):
    """Stores each output under its asset key, as a real manager does, and keeps every frame."""

    def __init__(self) -> None:
        self.stored: dict[str, pl.DataFrame] = {}

    def handle_output(self, context: dg.OutputContext, obj: pl.DataFrame) -> None:
        self.stored[context.asset_key.to_user_string()] = obj

    def load_input(self, context: dg.InputContext) -> pl.DataFrame:
        return self.stored[context.asset_key.to_user_string()]


def _plain(value: Any) -> Any:
    """A metadata value as plain data, so two runs' values compare equal when they say the same."""
    inner = getattr(value, "value", value)
    if isinstance(inner, dg.TableSchema):
        return repr(inner)
    if hasattr(inner, "records") and hasattr(inner, "schema"):  # a table value
        return (repr(inner.schema), [repr(record) for record in inner.records])
    return inner


def _metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    return {key: _plain(value) for key, value in metadata.items()}


@dataclass(frozen=True)
class Run:
    """What a run of one asset definition recorded and stored."""

    success: bool
    materializations: list[tuple[str, dict[str, Any]]]
    checks: list[tuple[str, str, bool, str, dict[str, Any]]]
    error: tuple[str, str] | None
    stored: dict[str, pl.DataFrame]


def run(asset: dg.AssetsDefinition) -> Run:
    manager = KeyedIOManager()
    result = dg.materialize([asset], resources={"io_manager": manager}, raise_on_error=False)
    materializations = [
        (
            event.asset_key.to_user_string(),
            _metadata(event.step_materialization_data.materialization.metadata),
        )
        for event in result.get_asset_materialization_events()
    ]
    checks = [
        (
            e.asset_key.to_user_string(),
            e.check_name,
            e.passed,
            str(e.severity),
            _metadata(e.metadata),
        )
        for e in result.get_asset_check_evaluations()
    ]
    error = None
    if not result.success:
        failure = result.failure_data_for_node("orders")
        assert failure is not None
        assert failure.error is not None
        cause = failure.error.cause or failure.error
        error = (cause.cls_name or "", cause.message)
    return Run(result.success, materializations, checks, error, manager.stored)


@pytest.mark.parametrize("outcome", sorted(OUTCOMES))
def test_a_run_is_the_same_for_dd_asset_and_a_one_output_multi_asset(outcome: str) -> None:
    settings, frame = OUTCOMES[outcome]
    ours, theirs = (run(build(settings, frame)) for build in BUILDERS.values())
    assert ours.success == theirs.success
    assert ours.materializations == theirs.materializations
    assert ours.checks == theirs.checks
    assert ours.error == theirs.error
    assert ours.stored.keys() == theirs.stored.keys()
    for key, table in ours.stored.items():
        assert_frame_equal(table, theirs.stored[key])


def _call_events(asset: dg.AssetsDefinition) -> tuple[list[Any], tuple[str, str] | None]:
    """Everything a plain direct invocation yields, as plain data, and what it raised."""
    events: list[Any] = []
    error = None
    try:
        for event in asset(dg.build_asset_context()):
            if isinstance(event, dg.MaterializeResult):
                events.append(("table", str(event.asset_key), _metadata(event.metadata or {})))
                events.append(("rows", event.value.rows()))
            else:
                events.append(
                    (
                        "check",
                        str(event.asset_key),
                        event.check_name,
                        event.passed,
                        str(event.severity),
                        _metadata(event.metadata),
                    )
                )
    except dd.errors.DagsterDataframelyError as raised:
        error = (type(raised).__name__, str(raised))
    return events, error


@pytest.mark.parametrize("outcome", sorted(OUTCOMES))
def test_a_direct_call_is_the_same_for_dd_asset_and_a_one_output_multi_asset(
    outcome: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, frame = OUTCOMES[outcome]
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", str(tmp_path))
    ours, theirs = (_call_events(build(settings, frame)) for build in BUILDERS.values())
    assert ours == theirs
    helper = [dd.testing.call_asset(build(settings, frame)) for build in BUILDERS.values()]
    mine, other = helper
    assert type(mine.error) is type(other.error)
    assert str(mine.error) == str(other.error)
    assert mine.failed_checks == other.failed_checks
    assert {k: (r.passed, r.severity) for k, r in mine.checks.items()} == {
        k: (r.passed, r.severity) for k, r in other.checks.items()
    }
    for left, right in ((mine.table, other.table), (mine.quarantine, other.quarantine)):
        assert (left is None) == (right is None)
        if left is not None and right is not None:
            assert_frame_equal(left, right)


# --- ADR 0004: the statistics run while the quarantine is written, for every entry point ----


class Overlap:
    """Whether the statistics started while a quarantine write was still in progress.

    The writer waits (at most `patience` seconds, so a broken overlap fails instead of hanging)
    for the statistics to start; it records whether they did before it finished writing.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, patience: float = 10.0) -> None:
        self.started = threading.Event()
        self.patience = patience
        self.seen: list[bool] = []
        real = emit_module.statistics_tables

        def statistics(
            frame: pl.DataFrame, distinct: frozenset[str], masked: frozenset[str]
        ) -> Any:
            self.started.set()
            return real(frame, distinct, masked)

        monkeypatch.setattr(emit_module, "statistics_tables", statistics)

    def write(self, frame: pl.DataFrame) -> None:
        """Block the quarantine write until the statistics have started, or give up."""
        self.seen.append(self.started.wait(self.patience))


class SlowQuarantineIOManager(KeyedIOManager):
    """Writes quarantines only once the statistics have started (or the patience ran out)."""

    def __init__(self, overlap: Overlap) -> None:
        super().__init__()
        self.overlap = overlap

    def handle_output(self, context: dg.OutputContext, obj: pl.DataFrame) -> None:
        if context.asset_key.path[-1].endswith("_quarantine"):
            self.overlap.write(obj)
        super().handle_output(context, obj)


class Lines(dy.Schema):
    order_id = dy.String(nullable=False)
    quantity = dy.Int64(min=1)


class Book(dy.Collection):
    orders: dy.LazyFrame[Orders]
    lines: dy.LazyFrame[Lines]


def _entry_points() -> Iterator[tuple[str, dg.AssetsDefinition]]:
    yield "dd.asset", single({"quarantine": True}, SOME_INVALID)
    yield "dd.multi_asset", one_output({"quarantine": True}, SOME_INVALID)

    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(Orders, quarantine=True),
            "lines": dd.AssetOut(Lines, quarantine=True),
        }
    )
    def two() -> dict[str, pl.DataFrame]:
        lines = pl.DataFrame({"order_id": ["a", "b"], "quantity": [1, 0]})
        return {"orders": SOME_INVALID, "lines": lines}

    yield "dd.multi_asset, two outputs", two

    @dd.collection_asset(Book, quarantine=True)
    def book() -> dict[str, pl.DataFrame]:
        lines = pl.DataFrame({"order_id": ["a", "a"], "quantity": [1, 0]})
        return {"orders": SOME_INVALID, "lines": lines}

    yield "dd.collection_asset", book


@pytest.mark.parametrize("name", [name for name, _ in _entry_points()])
def test_the_statistics_run_while_the_quarantine_is_written(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asset = dict(_entry_points())[name]
    overlap = Overlap(monkeypatch)
    manager = SlowQuarantineIOManager(overlap)
    result = dg.materialize([asset], resources={"io_manager": manager})
    assert result.success
    assert overlap.seen, "no quarantine was written"
    assert overlap.seen[0], (
        f"{name}: the statistics had not started when the quarantine was written"
    )


def test_validation_results_computes_the_statistics_while_its_writer_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    overlap = Overlap(monkeypatch)

    def writer(frame: pl.DataFrame) -> str:
        overlap.write(frame)
        return "slow"

    events = list(
        dd.wiring.validation_results(
            Orders, SOME_INVALID, valid_key=dg.AssetKey("orders"), quarantine_writer=writer
        )
    )
    assert isinstance(events[0], dg.MaterializeResult)
    assert overlap.seen == [True]


def test_every_quarantine_is_still_written_before_the_first_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The multi-asset atomicity rule, with the statistics overlapping the writes."""
    order: list[str] = []

    class Recording(KeyedIOManager):
        def handle_output(self, context: dg.OutputContext, obj: pl.DataFrame) -> None:
            order.append(context.asset_key.to_user_string())
            super().handle_output(context, obj)

    asset = dict(_entry_points())["dd.multi_asset, two outputs"]
    assert dg.materialize([asset], resources={"io_manager": Recording()}).success
    assert order[:2] == ["orders_quarantine", "lines_quarantine"]
    assert sorted(order[2:]) == ["lines", "orders"]


# --- ADR 0006: the quarantine frame is built while the checks' samples become Python values ---


class FrameOverlap:
    """Whether each quarantine frame with rows was built while the checks' samples were made.

    Building the frame and making the samples each wait at one barrier for the other (at most
    `patience` seconds, so a broken overlap fails instead of hanging): both pass it only if they
    run at the same time. `met` and `missed` record which side passed or gave up.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch, patience: float = 10.0) -> None:
        self.barrier = threading.Barrier(2, timeout=patience)
        self.met: list[str] = []
        self.missed: list[str] = []
        build = Failures.__dict__["quarantine_frame"].func
        samples = emit_module.failure_samples

        def quarantine_frame(failures: Failures) -> pl.DataFrame:
            if failures.invalid_count:
                self._meet("frame")
            return build(failures)

        def failure_samples(*args: Any) -> Any:
            if args[1].rows.height:  # rows failed, so a quarantine frame with rows is built
                self._meet("samples")
            return samples(*args)

        monkeypatch.setattr(Failures, "quarantine_frame", property(quarantine_frame))
        monkeypatch.setattr(emit_module, "failure_samples", failure_samples)

    def _meet(self, side: str) -> None:
        try:
            self.barrier.wait()
            self.met.append(side)
        except threading.BrokenBarrierError:
            self.missed.append(side)
            if side == "samples":  # the later side: the barrier is ready for the next output
                self.barrier.reset()


@pytest.mark.parametrize("name", [name for name, _ in _entry_points()])
def test_the_quarantine_frame_is_built_while_the_samples_are_made(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asset = dict(_entry_points())[name]
    overlap = FrameOverlap(monkeypatch)
    written: list[pl.DataFrame] = []

    class Recording(KeyedIOManager):
        def handle_output(self, context: dg.OutputContext, obj: pl.DataFrame) -> None:
            if context.asset_key.path[-1].endswith("_quarantine"):
                written.append(obj)
            super().handle_output(context, obj)

    assert dg.materialize([asset], resources={"io_manager": Recording()}).success
    assert overlap.met, f"{name}: no quarantine frame with rows was built"
    assert not overlap.missed, f"{name}: not built at the same time: {overlap.missed}"
    assert len(written) == len(overlap.met) // 2
    assert all(frame.height for frame in written), "every quarantine written holds its rows"


def test_validation_results_builds_its_quarantine_frame_while_the_samples_are_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    overlap = FrameOverlap(monkeypatch)
    written: list[pl.DataFrame] = []

    def writer(frame: pl.DataFrame) -> str:
        written.append(frame)
        return "memory"

    list(
        dd.wiring.validation_results(
            Orders, SOME_INVALID, valid_key=dg.AssetKey("orders"), quarantine_writer=writer
        )
    )
    assert sorted(overlap.met) == ["frame", "samples"]
    assert written[0].get_column("order_id").to_list() == ["b", "c", "c"]

"""Of the runs that would write one partition at once, exactly one writes.

Two parts:

- A model of every interleaving: two or three runs, each announcing, reading the others one at
  a time, waiting and saying its decision as `claim_partition` does, scheduled in any order
  (hypothesis draws the schedule, the creation order and which runs die where), each deciding
  with the package's own `verdict`. Never two writers; with no run dying, exactly one; when all
  announce before any reads, the one created first.
- `claim_partition` itself in a run, against another run of the same partition faked in a real
  instance at each word it can have said (announced, writes, stops), created before or after
  the run: what the run decides, what it stores, and what it says in its event log.

Two real processes released into the step together are in `integration_tests/`
(`test_concurrent_runs.py` on SQLite, `test_postgres_instance.py` on PostgreSQL).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from dagster._core.events import AssetMaterializationPlannedData, DagsterEvent, StepSuccessData
from hypothesis import given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely._store import concurrent_runs
from dagster_dataframely._store.concurrent_runs import (
    Contender,
    RunOrder,
    Stop,
    Wait,
    Word,
    Write,
    say_word,
    verdict,
)
from tests.asset_support import MIXED, QUIET, SmallOrders
from tests.parquet_io_manager import ParquetIOManager

# A model of every interleaving.

_POLL_LIMIT = 200
"""Polls before a waiting run gives up in the model: more than any drawn schedule gives one
run, so only a run waiting for a dead one reaches it, as only such a run reaches the timeout."""


@dataclass
class ModelRun:
    """One run of the model: what the others can read of it, and where its program stands."""

    order: RunOrder
    word: Word | None = None
    stage: str = "announce"
    to_read: list[int] = field(default_factory=list)
    seen: list[Contender] = field(default_factory=list)
    waiting_for: frozenset[str] = frozenset()
    decided: Write | Stop | None = None
    polls: int = 0
    dead: bool = False

    @property
    def done(self) -> bool:
        return self.dead or self.stage == "done"


class Model:
    """Runs acting one atomic step at a time: an event written, or one other run read."""

    def __init__(self, created: list[int]) -> None:
        # Run i is created `created[i]`-th; ids tie-break nothing here (creation times differ).
        self.runs = [ModelRun(RunOrder(float(rank), f"run-{i}")) for i, rank in enumerate(created)]

    def step(self, index: int) -> None:
        run = self.runs[index]
        if run.done:
            return
        if run.stage == "announce":
            run.word = Word.ANNOUNCED
            run.stage = "read"
            run.to_read = [i for i in range(len(self.runs)) if i != index]
        elif run.stage in ("read", "wait"):
            self._read_one(run)
        elif run.stage == "say":
            run.word = Word.WRITES if isinstance(run.decided, Write) else Word.STOPS
            run.stage = "done"

    def _read_one(self, run: ModelRun) -> None:
        if run.to_read:
            other = self.runs[run.to_read.pop(0)]
            if other.word in (Word.ANNOUNCED, Word.WRITES):
                run.seen.append(Contender(other.order, other.word))
            if run.to_read:
                return
        decided = verdict(run.order, run.seen)
        if isinstance(decided, Wait):
            run.polls += 1
            if run.polls > _POLL_LIMIT:
                run.decided, run.stage = Stop(min(decided.run_ids)), "say"
                return
            run.stage, run.waiting_for, run.seen = "wait", decided.run_ids, []
            run.to_read = [i for i, r in enumerate(self.runs) if r.order.run_id in decided.run_ids]
            return
        run.decided, run.stage = decided, "say"

    def finish(self) -> None:
        """Every live run acts in turn until each has said its decision or waits for none."""
        while not all(run.done for run in self.runs):
            for index in range(len(self.runs)):
                self.step(index)

    @property
    def writers(self) -> list[ModelRun]:
        return [run for run in self.runs if run.word is Word.WRITES]


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[int], list[int], dict[int, int]]:
    """Creation ranks, a schedule of run indices, and where (if anywhere) each run dies."""
    count = draw(st.integers(2, 3))
    created = draw(st.permutations(list(range(count))))
    schedule = draw(st.lists(st.integers(0, count - 1), max_size=60))
    deaths = draw(
        st.dictionaries(st.integers(0, count - 1), st.integers(0, len(schedule)), max_size=count)
    )
    return list(created), schedule, deaths


def _play(created: list[int], schedule: list[int], deaths: dict[int, int]) -> Model:
    model = Model(created)
    for position, index in enumerate(schedule):
        for dying, at in deaths.items():
            if at == position:
                model.runs[dying].dead = True
        model.step(index)
    for dying, at in deaths.items():
        if at >= len(schedule):
            model.runs[dying].dead = True
    model.finish()
    return model


@settings(max_examples=400)
@given(schedules())
def test_never_two_writers_in_any_interleaving(drawn: tuple[list[int], list[int], dict[int, int]]):
    model = _play(*drawn)
    assert len(model.writers) <= 1, [(r.order, r.word) for r in model.runs]


@settings(max_examples=400)
@given(schedules())
def test_exactly_one_writer_when_no_run_dies(drawn: tuple[list[int], list[int], dict[int, int]]):
    created, schedule, _ = drawn
    model = _play(created, schedule, {})
    assert len(model.writers) == 1, [(r.order, r.word) for r in model.runs]
    assert all(run.word in (Word.WRITES, Word.STOPS) for run in model.runs)


@settings(max_examples=200)
@given(schedules())
def test_runs_that_all_announce_before_any_reads_let_the_one_created_first_write(
    drawn: tuple[list[int], list[int], dict[int, int]],
) -> None:
    created, schedule, _ = drawn
    model = Model(created)
    for index in range(len(created)):
        model.step(index)  # every run announces
    for index in schedule:
        model.step(index)  # then they read, wait and say in any order
    model.finish()
    (writer,) = model.writers
    assert writer.order == min(run.order for run in model.runs)


def test_a_run_created_later_that_decided_first_keeps_writing() -> None:
    """The earlier run announces after the later one has read: it stops, the later one writes."""
    model = Model([1, 0])  # run-1 is created first
    model.step(0)  # run-0 announces
    model.step(0)  # reads run-1, which has said nothing yet, and decides to write
    model.step(0)  # says so
    model.finish()
    assert [run.word for run in model.runs] == [Word.WRITES, Word.STOPS]


def test_verdict_cases() -> None:
    own = RunOrder(10.0, "b")
    earlier, later = RunOrder(5.0, "a"), RunOrder(20.0, "c")
    tie_earlier, tie_later = RunOrder(10.0, "a"), RunOrder(10.0, "c")
    assert verdict(own, []) == Write()
    assert verdict(own, [Contender(later, Word.WRITES)]) == Stop("c")
    assert verdict(own, [Contender(earlier, Word.ANNOUNCED)]) == Stop("a")
    assert verdict(own, [Contender(tie_earlier, Word.ANNOUNCED)]) == Stop("a")
    assert verdict(own, [Contender(later, Word.ANNOUNCED)]) == Wait(frozenset({"c"}))
    assert verdict(own, [Contender(tie_later, Word.ANNOUNCED)]) == Wait(frozenset({"c"}))
    both = [Contender(later, Word.ANNOUNCED), Contender(earlier, Word.WRITES)]
    assert verdict(own, both) == Stop("a")


# `claim_partition` in a run, against a faked run of the same partition.

PARTITIONS = dg.StaticPartitionsDefinition(["p1", "p2"])
ORDERS = dg.AssetKey("orders")
EARLIER, LATER = "00000000", "ffffffff"
"""Prefixes of fake run ids that sort before and after any run id Dagster makes (a uuid4):
SQLite stores creation times to the second, so two runs created within one second are ordered
by id."""

Hook = Callable[[dg.InputContext], None]


class GateIOManager(dg.IOManager):
    """Loads the `gate` input, running the test's hooks first: inside the step, before the check."""

    def __init__(self, hooks: list[Hook]) -> None:
        self.hooks = hooks

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        raise NotImplementedError

    def load_input(self, context: dg.InputContext) -> int:
        for hook in self.hooks:
            hook(context)
        return 0


@dd.asset(
    SmallOrders,
    quarantine=True,
    partitions_def=PARTITIONS,
    ins={"gate": dg.AssetIn("gate", input_manager_key="gate")},
)
def orders(gate: int) -> pl.DataFrame:
    return MIXED


@pytest.fixture(scope="module")
def shared_instance() -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.ephemeral() as created:
        yield created


@pytest.fixture
def instance(shared_instance: dg.DagsterInstance) -> Iterator[dg.DagsterInstance]:
    """The module's instance; every run a test leaves in progress (the fakes) is failed after it."""
    yield shared_instance
    in_progress = dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED])
    for run in shared_instance.get_runs(filters=in_progress):
        shared_instance.report_run_failed(run)


@dataclass
class Runs:
    instance: dg.DagsterInstance
    warehouse: Path
    hooks: list[Hook] = field(default_factory=list)
    earlier_id: str = field(default_factory=lambda: f"{EARLIER}-{uuid.uuid4().hex[8:]}")
    later_id: str = field(default_factory=lambda: f"{LATER}-{uuid.uuid4().hex[8:]}")

    def materialize(self, partition: str = "p1") -> dg.ExecuteInProcessResult:
        return dg.materialize(
            [dg.AssetSpec("gate"), orders],
            selection=[orders],
            partition_key=partition,
            instance=self.instance,
            resources={
                "io_manager": ParquetIOManager(base_dir=str(self.warehouse)),
                "gate": GateIOManager(self.hooks),
            },
            run_config=QUIET,
            raise_on_error=False,
        )

    def fake(
        self,
        run_id: str,
        *,
        partition: str = "p1",
        says: Word | None = Word.ANNOUNCED,
        status: dg.DagsterRunStatus = dg.DagsterRunStatus.STARTED,
    ) -> dg.DagsterRun:
        """Another run of `orders`, in progress, that planned `partition` and said `says`."""
        run = dg.DagsterRun(job_name="other_job", run_id=run_id, status=status)
        self.instance.add_run(run)
        planned = DagsterEvent(
            event_type_value=dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED.value,
            job_name="other_job",
            event_specific_data=AssetMaterializationPlannedData(ORDERS, partition=partition),
        )
        self.instance.report_dagster_event(planned, run_id=run_id)
        if says is not None:
            self.say(run, says)
        return run

    def say(self, run: dg.DagsterRun, word: Word) -> None:
        say_word(self.instance, run, "orders", ORDERS, word, f"the fake says {word.value}")

    def later(self, **kwargs: object) -> Callable[[], dg.DagsterRun]:
        """A fake created inside the run's step, after the run: returned once it exists."""
        made: list[dg.DagsterRun] = []

        def create(context: dg.InputContext) -> None:
            made.append(self.fake(self.later_id, **kwargs))  # type: ignore[arg-type]

        self.hooks.append(create)
        return lambda: made[0]

    def stored(self, partition: str = "p1") -> bool:
        return (self.warehouse / "orders" / f"{partition}.parquet").exists()

    def words(self, run_id: str) -> list[str]:
        """What the run said, in order: the messages of its concurrent-write engine events."""
        events = self.instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
        return [
            (event.dagster_event.message or "").removeprefix("dagster-dataframely: ")
            for event in events
            if event.dagster_event is not None
            and (event.dagster_event.message or "").startswith("dagster-dataframely: ")
        ]


@pytest.fixture
def runs(instance: dg.DagsterInstance, tmp_path: Path) -> Runs:
    return Runs(instance, tmp_path / "warehouse")


def _stopped_by(result: dg.ExecuteInProcessResult) -> str:
    """The run id a failed run's `ConcurrentRunError` names."""
    failure = result.failure_data_for_node("orders")
    assert failure is not None
    assert failure.error is not None
    error = failure.error.cause or failure.error
    assert error.cls_name == "ConcurrentRunError", error.to_string()
    return error.message.split("Run ", 1)[1].split(" ", 1)[0]


def test_a_lone_run_writes_and_says_so(runs: Runs) -> None:
    result = runs.materialize()

    assert result.success
    assert runs.stored()
    assert runs.words(result.run_id) == [
        "about to write partition 'p1' of 'orders'; checking that no other run writes it now.",
        "no other run writes partition 'p1' of 'orders' now; this run writes it.",
    ]


def test_a_run_stops_at_once_for_an_undecided_run_created_before_it(runs: Runs) -> None:
    runs.fake(runs.earlier_id, says=Word.ANNOUNCED)
    started = time.monotonic()

    result = runs.materialize()

    assert not result.success
    assert time.monotonic() - started < concurrent_runs.DECISION_WAIT_SECONDS
    assert _stopped_by(result) == runs.earlier_id
    assert not runs.stored()
    assert not (runs.warehouse / "orders_quarantine").exists()
    assert runs.words(result.run_id)[-1] == (
        f"run {runs.earlier_id} writes partition 'p1' of 'orders' now; "
        "this run stops before writing."
    )


@pytest.mark.parametrize("created", ["earlier", "later"])
def test_a_run_stops_for_a_run_that_writes(runs: Runs, created: str) -> None:
    if created == "earlier":
        runs.fake(runs.earlier_id, says=Word.WRITES)
    else:
        runs.later(says=Word.WRITES)

    result = runs.materialize()

    assert not result.success
    assert _stopped_by(result) == (runs.earlier_id if created == "earlier" else runs.later_id)
    assert not runs.stored()


@pytest.mark.parametrize("created", ["earlier", "later"])
def test_a_run_that_stopped_does_not_count(runs: Runs, created: str) -> None:
    if created == "earlier":
        runs.fake(runs.earlier_id, says=Word.STOPS)
    else:
        runs.later(says=Word.STOPS)

    result = runs.materialize()

    assert result.success
    assert runs.stored()


def test_a_run_waits_for_a_later_run_to_decide_and_writes_when_it_stops(runs: Runs) -> None:
    fake = runs.later(says=Word.ANNOUNCED)

    def stop_soon(context: dg.InputContext) -> None:
        threading.Timer(1.0, lambda: runs.say(fake(), Word.STOPS)).start()

    runs.hooks.append(stop_soon)
    started = time.monotonic()

    result = runs.materialize()

    assert result.success
    assert time.monotonic() - started >= 1.0  # it waited for the word
    assert runs.stored()


def test_a_run_waits_for_a_later_run_to_decide_and_stops_when_it_writes(runs: Runs) -> None:
    fake = runs.later(says=Word.ANNOUNCED)

    def write_soon(context: dg.InputContext) -> None:
        threading.Timer(1.0, lambda: runs.say(fake(), Word.WRITES)).start()

    runs.hooks.append(write_soon)

    result = runs.materialize()

    assert not result.success
    assert _stopped_by(result) == runs.later_id
    assert not runs.stored()


def test_a_later_run_that_never_decides_stops_the_run_after_the_wait(
    runs: Runs, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(concurrent_runs, "DECISION_WAIT_SECONDS", 1.5)
    runs.later(says=Word.ANNOUNCED)
    started = time.monotonic()

    result = runs.materialize()

    assert not result.success
    assert time.monotonic() - started >= 1.5
    assert _stopped_by(result) == runs.later_id
    assert not runs.stored()


def test_a_run_of_another_partition_does_not_count(runs: Runs) -> None:
    runs.fake(runs.earlier_id, partition="p2", says=Word.WRITES)

    result = runs.materialize("p1")

    assert result.success
    assert runs.stored("p1")


def test_a_run_no_longer_in_progress_does_not_count(runs: Runs) -> None:
    runs.fake(runs.earlier_id, says=Word.WRITES, status=dg.DagsterRunStatus.FAILURE)

    result = runs.materialize()

    assert result.success


def test_a_word_said_by_a_step_that_ended_since_does_not_count(runs: Runs) -> None:
    fake = runs.fake(runs.earlier_id, says=Word.WRITES)
    ended = DagsterEvent(
        event_type_value=dg.DagsterEventType.STEP_SUCCESS.value,
        job_name="other_job",
        step_key="orders",
        event_specific_data=StepSuccessData(duration_ms=1.0),
    )
    runs.instance.report_dagster_event(ended, run_id=fake.run_id)

    result = runs.materialize()

    assert result.success

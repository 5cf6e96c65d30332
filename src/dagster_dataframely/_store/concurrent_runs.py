"""Of the runs that would write one partition of an asset at the same time, exactly one writes.

A run writes the quarantine, then the table. Two runs of one partition at once could interleave
those writes and leave run A's table beside run B's quarantine, with A's metadata describing
rows that are gone. Dagster's concurrency pools can queue such runs (see docs/guarantees.md);
this is the package's own part. Everything it decides on is in the Dagster instance, read and
written from the step, so the outcome is the same on every executor and every instance storage.

Inside its step, before it writes anything, each run:

1. says it is about to write: an engine event of its step (`Word.ANNOUNCED`), stored before
   anything else happens;
2. reads the other runs in progress that planned the asset for an overlapping partition, each
   at its latest word for the asset (`announced`, `writes` or `stops`), unless the step that
   said it has ended since (`STEP_SUCCESS`, `STEP_FAILURE`, `STEP_UP_FOR_RETRY`);
3. decides (`verdict`), and stores the decision as another engine event before acting on it:
   another run writes, or one created before it (earlier `create_timestamp`, then smaller run
   id) has announced and not decided: stop with `ConcurrentRunError`. Only runs created after
   it have announced and not decided: wait for their words, then decide again. Else: write.

Why never two: of two runs whose writes could interleave, say A announced first. B announced
after that, so B's read finds A announced or writing, never absent. If A writes, B stops; if A
has not decided and was created first, B stops; if B was created first, B waits for A's word
and stops if it is `writes`. A run waits only for runs created after it, so no two runs wait for
each other. `tests/store/test_concurrent_runs.py` checks every interleaving of two and three
runs: never two writers, and, when no run dies, one.

A run that dies after announcing and before deciding is waited for at most
`DECISION_WAIT_SECONDS`; then the run waiting stops, as it would for a run that died writing.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Collection, Container, Iterable, Iterator, Set
from dataclasses import dataclass

import dagster as dg

from dagster_dataframely._upstream import (
    planned_partitions,
    report_step_engine_event,
    step_engine_event_text,
)
from dagster_dataframely.errors import ConcurrentRunError

DECISION_WAIT_SECONDS = 60.0
"""The longest a run waits for the word of a run created after it: a live run says it within
moments of announcing, so only a run that died in between is waited for this long."""
_POLL_SECONDS = 0.2

_RUNNING = [
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]
_PLANNED = dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED
_STEP_ENDS = {
    dg.DagsterEventType.STEP_SUCCESS,
    dg.DagsterEventType.STEP_FAILURE,
    dg.DagsterEventType.STEP_UP_FOR_RETRY,
}
_EVENTS = {_PLANNED, dg.DagsterEventType.ENGINE_EVENT, *_STEP_ENDS}

# The metadata keys of the engine events a run says its word in.
_WORD_KEY = "dagster_dataframely/concurrent_write"
_ASSET_KEY = "dagster_dataframely/asset"


class Word(enum.Enum):
    """What a run last said about writing an asset, in an engine event of its step."""

    ANNOUNCED = "announced"
    WRITES = "writes"
    STOPS = "stops"


_WORDS = {word.value: word for word in Word}


@dataclass(frozen=True, order=True)
class RunOrder:
    """Where a run stands among runs that announce together: created first, then by run id."""

    created: float
    run_id: str


@dataclass(frozen=True)
class Contender:
    """Another run that may write the partition: it announced, or says it writes."""

    order: RunOrder
    word: Word


@dataclass(frozen=True)
class Write:
    """No other run writes or may write first: this run writes."""


@dataclass(frozen=True)
class Stop:
    """Run `run_id` writes, or may write first: this run stops before writing."""

    run_id: str


@dataclass(frozen=True)
class Wait:
    """Runs created after this one announced and have not decided: wait for their words."""

    run_ids: frozenset[str]


def verdict(own: RunOrder, contenders: Iterable[Contender]) -> Write | Stop | Wait:
    """Decide from the words of the other runs read after this run announced.

    Parameters
    ----------
    own
        This run's creation time and id.
    contenders
        Every other run that announced for an overlapping partition and has not stopped.

    Returns
    -------
    Write | Stop | Wait
        `Stop` naming a run that writes, else the earliest created run that announced before
        this one's creation; `Wait` for the runs created after this one; `Write` if none.
    """
    ordered = sorted(contenders, key=lambda contender: contender.order)
    for contender in ordered:
        if contender.word is Word.WRITES:
            return Stop(contender.order.run_id)
    undecided = [contender for contender in ordered if contender.word is Word.ANNOUNCED]
    if undecided and undecided[0].order < own:
        return Stop(undecided[0].order.run_id)
    if undecided:
        return Wait(frozenset(contender.order.run_id for contender in undecided))
    return Write()


def claim_partition(
    instance: dg.DagsterInstance,
    run: dg.DagsterRun,
    asset: dg.AssetKey,
    step_key: str,
    output: dg.OutputContext,
) -> None:
    """Return once this run may write `asset`'s partition; raise if another run writes it.

    Reads only the runs Dagster reports as starting, started or canceling, one event query
    each, so the cost grows with the number of runs in progress, not with the instance's
    history.

    Parameters
    ----------
    instance
        The instance of the running step.
    run
        The running step's own run.
    asset
        The asset the step writes.
    step_key
        The step that writes `asset`, whose engine events carry this run's word.
    output
        The table's output context, for its partition keys.

    Raises
    ------
    ConcurrentRunError
        Another run writes an overlapping partition of the asset, or announced it at the same
        moment and was created first.
    """
    ours = set(output.asset_partition_keys) if output.has_asset_partitions else None
    where = _where(asset, ours)

    def say(word: Word, message: str) -> None:
        say_word(instance, run, step_key, asset, word, message)

    say(Word.ANNOUNCED, f"about to write {where}; checking that no other run writes it now.")
    record = instance.get_run_record_by_id(run.run_id)
    own = RunOrder(record.create_timestamp.timestamp() if record is not None else 0.0, run.run_id)
    decided = verdict(own, _contenders(instance, run.run_id, asset, ours))
    deadline = time.monotonic() + DECISION_WAIT_SECONDS
    while isinstance(decided, Wait):
        if time.monotonic() > deadline:
            decided = Stop(min(decided.run_ids))
            break
        time.sleep(_POLL_SECONDS)
        # NOTE: only the runs waited for are read again: a run announcing after this one's
        # read finds this one announced, and decides knowing it.
        waited = _contenders(instance, run.run_id, asset, ours, among=decided.run_ids)
        decided = verdict(own, waited)
    if isinstance(decided, Stop):
        say(Word.STOPS, f"run {decided.run_id} writes {where} now; this run stops before writing.")
        shown = None if ours is None else ", ".join(sorted(ours))
        raise ConcurrentRunError(asset.to_user_string(), shown, decided.run_id)
    say(Word.WRITES, f"no other run writes {where} now; this run writes it.")


def say_word(
    instance: dg.DagsterInstance,
    run: dg.DagsterRun,
    step_key: str,
    asset: dg.AssetKey,
    word: Word,
    message: str,
) -> None:
    """Store `run`'s word about writing `asset` as an engine event of its step `step_key`."""
    metadata = {_WORD_KEY: word.value, _ASSET_KEY: asset.to_string()}
    report_step_engine_event(instance, run, step_key, f"dagster-dataframely: {message}", metadata)


def _where(asset: dg.AssetKey, ours: Set[str] | None) -> str:
    if ours is None:
        return repr(asset.to_user_string())
    if len(ours) == 1:
        return f"partition {next(iter(ours))!r} of {asset.to_user_string()!r}"
    first, last = min(ours), max(ours)
    return f"{len(ours)} partitions ({first!r} to {last!r}) of {asset.to_user_string()!r}"


def _contenders(
    instance: dg.DagsterInstance,
    own_run_id: str,
    asset: dg.AssetKey,
    ours: Set[str] | None,
    *,
    among: Collection[str] | None = None,
) -> Iterator[Contender]:
    filters = dg.RunsFilter(statuses=_RUNNING, run_ids=list(among) if among is not None else None)
    for record in instance.get_run_records(filters=filters):
        run_id = record.dagster_run.run_id
        if run_id == own_run_id:
            continue
        word = _latest_word(instance, run_id, asset, ours)
        if word is not None and word is not Word.STOPS:
            yield Contender(RunOrder(record.create_timestamp.timestamp(), run_id), word)


def _latest_word(
    instance: dg.DagsterInstance, run_id: str, asset: dg.AssetKey, ours: Set[str] | None
) -> Word | None:
    planned = False
    word: Word | None = None
    speaking_step: str | None = None
    for record in instance.get_records_for_run(run_id, of_type=_EVENTS).records:
        event = record.event_log_entry.dagster_event
        if event is None:
            continue
        if event.event_type == _PLANNED:
            mine, partition, partitions = planned_partitions(event, asset)
            planned = planned or (mine and _overlaps(partition, partitions, ours))
        elif event.event_type == dg.DagsterEventType.ENGINE_EVENT:
            said = _WORDS.get(step_engine_event_text(event, _WORD_KEY) or "")
            if said is not None and step_engine_event_text(event, _ASSET_KEY) == asset.to_string():
                word, speaking_step = said, event.step_key
        elif speaking_step is not None and event.step_key == speaking_step:
            word = None  # the step ended: whatever it said no longer holds
    return word if planned else None


def _overlaps(
    partition: str | None, partitions: Container[str] | None, ours: Set[str] | None
) -> bool:
    if ours is None:
        return True
    if partition is not None:
        return partition in ours
    if partitions is not None:
        return any(key in partitions for key in ours)
    return True

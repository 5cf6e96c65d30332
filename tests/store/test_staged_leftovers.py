"""Staged writes' locks: what a killed write left is removed, a running write's never is.

The killed writes themselves (SIGKILL in a child process) are in
`integration_tests/test_staged_writes.py`; here, in one process, two opens of one lock file
conflict as two processes' do (`flock` locks belong to the open file, not the process), which
lets a test put another writer's sweep at the one moment it matters.
"""

import fcntl
import os
from pathlib import Path

import pytest
from upath import UPath

from dagster_dataframely._store import staged_writes
from dagster_dataframely._store.staged_writes import STAGING_PREFIX


def _locks(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"{STAGING_PREFIX}*.tmp.lock"))


def _is_locked(lock: Path) -> bool:
    descriptor = os.open(lock, os.O_WRONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(descriptor)
    return False


def test_a_lock_another_write_swept_before_it_was_taken_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another write's sweep finds the new lock file unlocked, between its creation and its
    lock, and removes it: the write must hold a lock on a file that is still there, or a kill
    during it would leave a staging file no lock names, which no sweep removes."""
    flock = fcntl.flock
    swept: list[bool] = []

    def sweep_first(descriptor: int, operation: int) -> None:
        if operation == fcntl.LOCK_EX and not swept:  # the write's own (blocking) lock
            swept.append(True)
            staged_writes._remove_orphans(tmp_path)
        flock(descriptor, operation)

    monkeypatch.setattr(fcntl, "flock", sweep_first)
    held: list[bool] = []

    def dump(staging: UPath) -> None:
        (lock,) = _locks(tmp_path)
        held.append(_is_locked(lock))
        Path(staging.path).write_bytes(b"new")

    staged_writes._replace_local(dump, UPath(tmp_path / "orders.parquet"))

    assert swept
    assert held == [True]
    assert (tmp_path / "orders.parquet").read_bytes() == b"new"
    assert [path.name for path in tmp_path.iterdir()] == ["orders.parquet"]


@pytest.mark.parametrize("kind", ["local", "object store"])
def test_a_sweep_keeps_the_staging_of_a_write_in_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """A write holds its lock while another write to the same place sweeps: nothing of the
    first is removed, and both complete."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(staged_writes.tempfile, "tempdir", str(temporary))
    target = tmp_path / "orders.parquet"
    staging_directory = tmp_path if kind == "local" else temporary
    seen: dict[str, set[str]] = {}

    def place(dump: staged_writes._Dump, path: UPath) -> None:
        if kind == "local":
            staged_writes._replace_local(dump, path)
        else:
            staged_writes._upload_whole(dump, UPath(f"file://{path.path}"))

    def second(staging: UPath) -> None:
        Path(staging.path).write_bytes(b"second")

    def first(staging: UPath) -> None:
        Path(staging.path).write_bytes(b"first, half")
        before = {path.name for path in staging_directory.glob(f"{STAGING_PREFIX}*")}
        place(second, UPath(tmp_path / "other.parquet"))  # sweeps while this one runs
        seen["before"] = before
        seen["after"] = {path.name for path in staging_directory.glob(f"{STAGING_PREFIX}*")}
        Path(staging.path).write_bytes(b"first")

    place(first, UPath(target))

    assert len(seen["before"]) == 2  # the staging file or directory, and its lock
    assert seen["after"] == seen["before"]
    assert target.read_bytes() == b"first"
    assert (tmp_path / "other.parquet").read_bytes() == b"second"
    assert list(staging_directory.glob(f"{STAGING_PREFIX}*")) == []

"""A disk that fills up: a tmpfs of a few MiB mounted for one test, and a way to fill it.

Mounting needs root; CI runs the suite as root. A test that writes to it meets ENOSPC exactly as
on a full disk, from whichever writer: an IO manager, a staged write, a streamed run's staging.
"""

import errno
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def mounted_small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MiB tmpfs mounted under `tmp_path` for one test, and unmounted after it.

    A test module makes it a fixture: `yield from`-ing it in one keeps pytest's skip.
    """
    point = tmp_path / "small-disk"
    point.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root; CI runs as root and runs this test")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(point)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"this machine refuses to mount a tmpfs: {mounted.stderr.strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], check=True)


def fill(disk: Path, leave: int) -> None:
    """Fill `disk` to the last byte, then free `leave` bytes of it."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as file:
        chunk = b"\0" * 65536
        while True:
            try:
                file.write(chunk)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                break
    os.truncate(filler, max(0, filler.stat().st_size - leave))

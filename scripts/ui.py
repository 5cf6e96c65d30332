"""`make ui`: run `dg dev` over the demo, and stop all of it within seconds of Ctrl-C.

`dg dev` (like `dagster dev`) starts a webserver, a daemon and code servers; on Ctrl-C the
webserver restarts the code server that the same Ctrl-C stopped, and the whole tree takes a
minute or more to exit. So the server runs in a process group of its own, which the terminal's
Ctrl-C does not reach: this script receives it, asks the group to stop (SIGTERM), and after
`GRACE` seconds kills what is left of it. A run still going in the UI is stopped with it.

Usage: python scripts/ui.py [--cwd DIR] -- COMMAND ...
"""

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

GRACE = 5.0
"""Seconds the server's processes get to stop on SIGTERM before they are killed."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cwd", type=Path, default=Path.cwd())
    parser.add_argument("command", nargs=argparse.REMAINDER)
    arguments = parser.parse_args()
    command = arguments.command[1:] if arguments.command[:1] == ["--"] else arguments.command
    if not command:
        parser.error("no command to run")
    server = subprocess.Popen(command, cwd=arguments.cwd, start_new_session=True)
    received: list[int] = []

    def note(signum: int, _: FrameType | None) -> None:
        # Only noted here: the loop below stops the server, outside the handler, where
        # waiting on the process cannot deadlock with a wait it interrupted.
        received.append(signum)

    signal.signal(signal.SIGINT, note)
    signal.signal(signal.SIGTERM, note)
    try:
        while server.poll() is None and not received:
            time.sleep(0.2)
    finally:
        if received:
            name = signal.Signals(received[0]).name
            print(f"\nui: stopping the server ({name})", file=sys.stderr)
        stop_group(server)
    return 128 + received[0] if received else server.returncode


def stop_group(server: "subprocess.Popen[bytes]") -> None:
    """SIGTERM to the server's whole process group, then SIGKILL to what is left after GRACE."""
    try:
        os.killpg(server.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline:
        server.poll()  # reap the group's leader once it exits, or it counts as alive
        if not _group_alive(server.pid):
            return
        time.sleep(0.1)
    try:
        os.killpg(server.pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    server.wait()


def _group_alive(group: int) -> bool:
    """Whether any process of the group is still running (signal 0 checks without sending)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main())

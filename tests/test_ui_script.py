"""`make ui`'s wrapper (`scripts/ui.py`): Ctrl-C stops the whole server within seconds.

`dg dev`'s processes take a minute or more to exit on Ctrl-C (the webserver restarts the code
server the same Ctrl-C stopped). The wrapper runs the server in a process group of its own and
stops the group itself; here the "server" is a process tree that ignores SIGINT and SIGTERM,
the worst case, so only the wrapper's kill after its grace period can end it.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STUBBORN_SERVER = """
import os, signal, subprocess, sys, time
for number in (signal.SIGINT, signal.SIGTERM):
    signal.signal(number, signal.SIG_IGN)
subprocess.Popen([sys.executable, "-c", "import signal, time; "
    "signal.signal(signal.SIGINT, signal.SIG_IGN); signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "time.sleep(600)"])
open(sys.argv[1], "w").write(str(os.getpgid(0)))
time.sleep(600)
"""


def _alive(group: int) -> list[int]:
    """The running (not zombie) processes of a process group, read from /proc."""
    running = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            running.append(int(stat.parent.name))
    return running


def test_ctrl_c_stops_a_server_that_ignores_it_within_seconds(tmp_path: Path) -> None:
    started = tmp_path / "started"
    wrapper = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "scripts" / "ui.py"),
            "--",
            sys.executable,
            "-c",
            STUBBORN_SERVER,
            str(started),
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (started.exists() and started.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    group = int(started.read_text())
    assert group != os.getpgid(0)  # the server has a group of its own, out of the terminal's

    wrapper.send_signal(signal.SIGINT)  # what the terminal sends on Ctrl-C
    _, stderr = wrapper.communicate(timeout=30)

    assert wrapper.returncode == 128 + signal.SIGINT
    assert "ui: stopping the server (SIGINT)" in stderr
    assert _alive(group) == [], "a process of the server (or its child) outlived the wrapper"

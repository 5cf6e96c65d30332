"""Run documentation examples as `python example.py` would, without paying Python's start each time.

Started once per test process (`python example_server.py`), this server imports what nearly
every example imports (`PRELOAD`), then waits for requests on stdin, one JSON line each:
`{"directory": ..., "output": ..., "environment": {...}}`. For each it forks a child, which
becomes what a fresh interpreter started in `directory` would be (that directory as the
script's folder and the working directory, that environment, stdin empty, stdout and stderr
into `output`), and there runs `example.py` twice (`run_twice`). The server answers with the
child's pid, then with its exit code.

Each example's child is forked from the server, which never runs an example itself: what one
example leaves behind (a module attribute, an environment variable, a cache, a server) dies
with its child and cannot reach the next. Only the imports are shared, and a fresh interpreter
would make the same ones; and Dagster's storage migration scripts, read once by the server as
every test process reads them (`tests/alembic_scripts.py`), where a fresh interpreter reads the
same files from disk for every instance it makes.

Stdlib only before `PRELOAD`: the test module also runs this file as a plain script where
`os.fork` does not exist.
"""

from __future__ import annotations

import ast
import importlib
import json
import logging
import os
import runpy
import sys
import traceback
from pathlib import Path

PRELOAD = ("polars", "dataframely", "dagster", "dagster_polars", "dagster_dataframely")
"""Imported once by the server: the costly part of an example's start."""

SECOND_RUN = "dd-docs-example: the second run in the same folder"
"""What the runner writes to stderr before it runs the example again."""


def import_what_the_example_imports(path: str) -> None:
    """The example's own top-level imports, done once for both of its runs."""
    with open(path, encoding="utf-8") as file:
        body = ast.parse(file.read()).body
    for node in body:
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        else:
            continue
        for module in modules:
            try:
                importlib.import_module(module)
            except Exception:  # the run itself reports it
                continue


def _run_once() -> None:
    """In a forked child: `example.py` as `__main__`, then exit with the code Python would."""
    code = 0
    try:
        runpy.run_path("example.py", run_name="__main__")
    except SystemExit as exit_:
        code = 0 if exit_.code is None else exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:
        traceback.print_exc()
        code = 1
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_twice() -> int:
    """Run `example.py` of the working directory, then once more there; the first failing code.

    Each run is a process of its own, forked after the example's imports, so an environment
    variable, a cache or a server of the first run is gone in the second, as for a reader.
    """
    import_what_the_example_imports("example.py")
    for second in (False, True):
        if second:
            print(SECOND_RUN, file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        if not hasattr(os, "fork"):
            import subprocess

            code = subprocess.run([sys.executable, "example.py"], check=False).returncode
        elif (pid := os.fork()) == 0:
            _run_once()
        else:
            code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if code:
            return code
    return 0


def _become_a_fresh_start(request: dict[str, object]) -> None:
    """In the example's child: what `python run_twice.py` started in its directory would see."""
    directory = str(request["directory"])
    output = str(request["output"])
    os.setpgid(0, 0)  # the caller can stop this child and everything it starts at once
    os.chdir(directory)
    environment = request["environment"]
    assert isinstance(environment, dict)
    os.environ.clear()
    os.environ.update({str(key): str(value) for key, value in environment.items()})
    sys.path[0] = directory
    sys.argv = ["example.py"]
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        target = os.open(os.path.join(output, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    os.close(null)


def _read_migrations_once() -> None:
    """Every instance an example makes is stamped from scripts the server read once."""
    scripts = Path(__file__).resolve().parents[1] / "tests" / "alembic_scripts.py"
    runpy.run_path(str(scripts))["reuse_alembic_scripts"]()
    import dagster as dg

    # NOTE: an instance stamps its storages, which reads the scripts here, before any fork: a
    # child that read them itself would lose them with its exit (0.2 s of CPU per instance).
    dg.DagsterInstance.ephemeral().dispose()


def serve() -> None:
    """Answer requests on stdin until it closes; replies go to the original stdout only."""
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything an import prints cannot corrupt the replies
    for module in PRELOAD:
        importlib.import_module(module)
    _read_migrations_once()
    print(json.dumps({"ready": True}), file=replies)
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                replies.close()
                _become_a_fresh_start(request)
                code = run_twice()
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        print(json.dumps({"pid": pid}), file=replies)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        print(json.dumps({"code": code}), file=replies)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--run-twice":
        sys.exit(run_twice())
    serve()

"""Start a Python process as a fresh interpreter would, without paying Python's start each time.

Started once per test process (`python warm_server.py`, through `WarmServer`), this server
imports what nearly every such process imports (`PRELOAD`), then waits for requests on stdin,
one JSON line each: `{"directory": ..., "output": ..., "environment": {...}}`, with
`"module"` and `"argv"` for `python -m module argv...`, or `"script"` and `"argv"` for
`python script argv...` (a console script such as `dg`). For each it forks a child, which
becomes what a fresh interpreter started in `directory` would be (that directory as the
working directory and the script's folder, that environment and its `PYTHONPATH`, stdin
empty, stdout and stderr into `output`), and there runs the module or script as `__main__`,
or else the documentation example `example.py` twice (`run_twice`). The server answers with
the child's pid, then with its exit code (a negative signal number if a signal ended it, as
`subprocess` says).

Each child is forked from the server, which never runs one itself: what one child leaves
behind (a module attribute, an environment variable, a cache, a server) dies with it and
cannot reach the next. Only the imports are shared, and a fresh interpreter would make the
same ones (a module's or a script's own imports are made by the server before its first
child); and
Dagster's storage migration scripts, read once by the server as every test process reads them
(`tests/alembic_scripts.py`), where a fresh interpreter reads the same files from disk for
every instance it makes.

Stdlib only before `PRELOAD`: the docs' test module also runs this file as a plain script
where `os.fork` does not exist, and the unit suite imports it.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import json
import logging
import os
import runpy
import select
import signal
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

_SERVERS_PYTHONPATH = [
    entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry
]
"""The server's own `PYTHONPATH` entries, which a child's environment replaces."""

PRELOAD = ("polars", "dataframely", "dagster", "dagster_polars", "dagster_dataframely")
"""Imported once by the server, where installed: the costly part of an example's start (the
newest-versions environment has no `dagster_polars`)."""

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


def _run_once(run: Callable[[], object]) -> None:
    """In a forked child: `run` (a script or module as `__main__`), then exit with the code
    Python would."""
    code = 0
    try:
        run()
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
            _run_once(functools.partial(runpy.run_path, "example.py", run_name="__main__"))
        else:
            code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if code:
            return code
    return 0


def _become_a_fresh_start(request: dict[str, object]) -> None:
    """In a child: what a fresh interpreter started in the directory of `request` would see."""
    directory = str(request["directory"])
    output = str(request["output"])
    os.setpgid(0, 0)  # the caller can stop this child and everything it starts at once
    os.chdir(directory)
    environment = request["environment"]
    assert isinstance(environment, dict)
    os.environ.clear()
    os.environ.update({str(key): str(value) for key, value in environment.items()})
    # NOTE: the server may have asked for its temporary directory already (Python keeps the
    # answer); a fresh interpreter reads this environment's TMPDIR.
    tempfile.tempdir = None
    # NOTE: a fresh interpreter puts its PYTHONPATH right after the script's folder.
    python_path = [entry for entry in environment.get("PYTHONPATH", "").split(os.pathsep) if entry]
    rest = [entry for entry in sys.path[1:] if entry not in _SERVERS_PYTHONPATH]
    script = request.get("script")
    sys.path[:] = [os.path.dirname(str(script)) if script else directory, *python_path, *rest]
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
    scripts = Path(__file__).with_name("alembic_scripts.py")
    runpy.run_path(str(scripts))["reuse_alembic_scripts"]()
    import dagster as dg

    # NOTE: an instance stamps its storages, which reads the scripts here, before any fork: a
    # child that read them itself would lose them with its exit (0.2 s of CPU per instance).
    dg.DagsterInstance.ephemeral().dispose()


def _import_for_the_children(module: str, directory: str) -> None:
    """`module` imported as its children's `python -m` would find it, once for all of them."""
    sys.path.insert(0, directory)
    try:
        importlib.import_module(module)
    except Exception:  # the child's run reports it
        pass
    finally:
        sys.path.remove(directory)  # a child's path is a fresh interpreter's (`sys.path[0]`)


def serve() -> None:
    """Answer requests on stdin until it closes; replies go to the original stdout only."""
    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything an import prints cannot corrupt the replies
    for module in PRELOAD:
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)
    _read_migrations_once()
    print(json.dumps({"ready": True}), file=replies)
    for line in sys.stdin:
        request = json.loads(line)
        module, script = request.get("module"), request.get("script")
        if module is not None:
            _import_for_the_children(module, str(request["directory"]))
        if script is not None:
            import_what_the_example_imports(script)  # its imports, once for every child
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                replies.close()
                _become_a_fresh_start(request)
                arguments = [str(argument) for argument in request.get("argv", [])]
                if module is not None:
                    sys.argv = [module, *arguments]
                    _run_once(
                        functools.partial(
                            runpy.run_module, module, run_name="__main__", alter_sys=True
                        )
                    )
                elif script is not None:
                    sys.argv = [script, *arguments]
                    _run_once(functools.partial(runpy.run_path, script, run_name="__main__"))
                else:
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


class Forked:
    """A child of the server, as much of `subprocess.Popen` as the tests use: `pid`, `poll`,
    `wait` and `returncode`. Only the server can wait for it, and says when it ended."""

    def __init__(self, server: WarmServer, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._server = server

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self._server.exit_code(timeout=0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self._server.exit_code(timeout=timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(f"forked child {self.pid}", timeout or 0)
        return self.returncode


class WarmServer:
    """One server (this file run as a script) per test process, started on first use with the
    environment `environment()` gives then; one child at a time."""

    def __init__(self, environment: Callable[[], Mapping[str, str]], timeout: float) -> None:
        self._environment = environment
        self._timeout = timeout
        self._process: subprocess.Popen[str] | None = None

    def _started(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, __file__],
                cwd=Path(__file__).resolve().parents[1],
                env=dict(self._environment()),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            assert self._reply(self._timeout) == {"ready": True}
        return self._process

    def _reply(self, timeout: float | None) -> dict[str, int] | None:
        assert self._process is not None
        assert self._process.stdout is not None
        ready, _, _ = select.select([self._process.stdout], [], [], timeout)
        line = self._process.stdout.readline() if ready else ""
        return json.loads(line) if line else None

    def start(
        self,
        directory: str,
        output: str,
        environment: Mapping[str, str],
        *,
        module: str | None = None,
        script: str | None = None,
        argv: Sequence[str] = (),
    ) -> Forked:
        """A child started in `directory` with `environment`, its stdout and stderr in files
        of those names in `output`: `python -m module argv...`, `python script argv...`, or
        the example run twice."""
        process = self._started()
        assert process.stdin is not None
        request: dict[str, object] = {
            "directory": directory,
            "output": output,
            "environment": dict(environment),
        }
        if module is not None:
            request.update(module=module, argv=list(argv))
        if script is not None:
            request.update(script=script, argv=list(argv))
        process.stdin.write(json.dumps(request) + "\n")
        process.stdin.flush()
        started = self._reply(self._timeout)
        assert started is not None, "the warm server stopped"
        return Forked(self, started["pid"])

    def run(
        self,
        directory: str,
        environment: Mapping[str, str],
        *,
        module: str | None = None,
        script: str | None = None,
        argv: Sequence[str] = (),
    ) -> subprocess.CompletedProcess[str]:
        """`python -m module argv...` or `python script argv...` run to its end in `directory`,
        as `subprocess.run(..., capture_output=True, text=True)` gives it; started afresh where
        `os.fork` does not exist."""
        command = [*(["-m", module] if module else [str(script)]), *argv]
        if not hasattr(os, "fork"):
            return subprocess.run(
                [sys.executable, *command],
                cwd=directory,
                env=dict(environment),
                capture_output=True,
                text=True,
                timeout=self._timeout,
                check=False,
            )
        with tempfile.TemporaryDirectory(prefix="dd-warm-output-") as output:
            child = self.start(
                directory, output, environment, module=module, script=script, argv=argv
            )
            try:
                code = child.wait(self._timeout)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait(self._timeout)
                raise
            stdout, stderr = ((Path(output) / name).read_text() for name in ("stdout", "stderr"))
        return subprocess.CompletedProcess([sys.executable, *command], code, stdout, stderr)

    def exit_code(self, timeout: float | None) -> int | None:
        """The running child's exit code, once it has ended within `timeout`; else None."""
        finished = self._reply(timeout)
        return None if finished is None else finished["code"]

    def stop(self) -> None:
        if self._process is not None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            self._process.wait(timeout=self._timeout)
            self._process = None


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--run-twice":
        sys.exit(run_twice())
    serve()

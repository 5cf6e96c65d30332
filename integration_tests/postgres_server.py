"""A throwaway PostgreSQL server on 127.0.0.1, for a Dagster instance stored in PostgreSQL.

It runs Debian's own PostgreSQL binaries (`apt-get install postgresql`, which `.ci/run`
installs) on a free port of the loopback interface, with its data in a temporary directory that
is deleted afterwards. PostgreSQL refuses to run as root, so as root the server runs as the
`postgres` user the Debian package creates. Authentication is `trust`: only this machine can
reach the server, and only for the length of the tests.
"""

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import psycopg2

USER = "dagster"
DATABASE = "postgres"
STARTUP_SECONDS = 60.0


@dataclass(frozen=True)
class PostgresServer:
    """Where a running server listens, and the database a Dagster instance uses there."""

    port: int
    log: Path

    @property
    def storage(self) -> dict[str, object]:
        """The `storage` section of a `dagster.yaml` that keeps runs and events here."""
        return {
            "postgres": {
                "postgres_db": {
                    "username": USER,
                    "hostname": "127.0.0.1",
                    "port": self.port,
                    "db_name": DATABASE,
                    # SQLAlchemy 2.1 reads a bare `postgresql://` as psycopg 3, which
                    # dagster-postgres does not install; it installs psycopg2.
                    "scheme": "postgresql+psycopg2",
                }
            }
        }

    def reset(self) -> None:
        """Drop every table, so the next instance starts from an empty event log."""
        connection = self.connect()
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                cursor.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
        finally:
            connection.close()

    @contextlib.contextmanager
    def fresh_instance(self) -> Iterator[dg.DagsterInstance]:
        """A Dagster instance on the emptied database (`reset`), its runs and events here and
        no compute logs (a step's stdout is not what the tests read)."""
        self.reset()
        overrides = {
            "storage": self.storage,
            "compute_logs": {
                "module": "dagster._core.storage.noop_compute_log_manager",
                "class": "NoOpComputeLogManager",
            },
        }
        with dg.instance_for_test(overrides=overrides) as created:
            yield created

    def connect(self) -> "psycopg2.extensions.connection":
        return psycopg2.connect(host="127.0.0.1", port=self.port, user=USER, dbname=DATABASE)


def binaries() -> Path | None:
    """The directory holding `initdb` and `postgres`: on PATH, else Debian's newest version."""
    on_path = shutil.which("initdb")
    if on_path is not None and shutil.which("postgres") is not None:
        return Path(on_path).resolve().parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=_major)
    return versions[-1].parent if versions else None


def _major(initdb: Path) -> int:
    version = initdb.parent.parent.name
    return int(version) if version.isdigit() else 0


def why_not_runnable() -> str | None:
    """Why no server can be started here, or None when one can."""
    if binaries() is None:
        return (
            "PostgreSQL is not installed: `apt-get install postgresql` (as .ci/run does) puts "
            "initdb and postgres under /usr/lib/postgresql/<version>/bin"
        )
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, and there is no `postgres` user to run the server as"
    return None


@contextlib.contextmanager
def running_server() -> Iterator[PostgresServer]:
    """Start a server in a fresh data directory, wait until it accepts connections, stop it."""
    directory = binaries()
    assert directory is not None, why_not_runnable()
    user = "postgres" if os.geteuid() == 0 else None
    # Under /tmp, not pytest's tmp_path: the `postgres` user must be able to reach it.
    root = Path(tempfile.mkdtemp(prefix="dd-postgres-"))
    data, log = root / "data", root / "server.log"
    if user is not None:
        account = pwd.getpwnam(user)
        os.chown(root, account.pw_uid, account.pw_gid)
    try:
        subprocess.run(
            [
                str(directory / "initdb"),
                *("-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync"),
            ],
            user=user,
            check=True,
            capture_output=True,
        )
        port = _free_port()
        with log.open("wb") as output:
            server = subprocess.Popen(
                [
                    str(directory / "postgres"),
                    *("-D", str(data), "-h", "127.0.0.1", "-p", str(port), "-k", str(root)),
                    *("-c", "fsync=off", "-c", "synchronous_commit=off"),
                ],
                user=user,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        try:
            found = PostgresServer(port, log)
            _wait_until_ready(found, server)
            yield found
        finally:
            server.send_signal(signal.SIGINT)  # PostgreSQL's fast shutdown
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _wait_until_ready(server: PostgresServer, process: "subprocess.Popen[bytes]") -> None:
    """Return once the server accepts a connection; fail with its log if it cannot."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"PostgreSQL exited at startup:\n{server.log.read_text()}")
        try:
            server.connect().close()
            return
        except psycopg2.OperationalError:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"PostgreSQL did not accept connections in {STARTUP_SECONDS:.0f} s:\n"
                    f"{server.log.read_text()}"
                ) from None
            time.sleep(0.2)

"""`python -m dagster_dataframely suggest`: the module on stdout, the rest on stderr."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely._suggest.suggest_schema import PROGRESS_STEPS
from tests.warm_server import WarmServer

from .suggested_code import load_schema

# NOTE: each command is forked from one warm interpreter per test process, as `python -m`
# would start (tests/warm_server.py): a fresh one spent about 2 s of CPU importing the package.
_SERVER = WarmServer(lambda: os.environ, 300)


@pytest.fixture(scope="module", autouse=True)
def _stop_the_warm_server() -> Iterator[None]:
    yield
    _SERVER.stop()


def _run(*arguments: str) -> subprocess.CompletedProcess[str]:
    return _SERVER.run(os.getcwd(), os.environ, module="dagster_dataframely", argv=arguments)


def test_suggest_prints_the_module_and_progress_on_stderr(tmp_path: Path) -> None:
    table = tmp_path / "orders.parquet"
    data = pl.DataFrame({"order_id": range(500), "channel": ["web", "shop"] * 250})
    data.write_parquet(table)
    result = _run("suggest", str(table), "--name", "Orders")
    assert result.returncode == 0, result.stderr
    schema = load_schema(result.stdout, "Orders")
    assert schema.primary_key() == ["order_id"]
    assert "profiling 2 columns (pass 1 of 2)" in result.stderr


def test_evaluate_writes_the_module_and_the_report(tmp_path: Path) -> None:
    table = tmp_path / "orders.parquet"
    pl.DataFrame({"day": [1, 2, 3, 4] * 50, "amount": [1.0, 2.0, 3.0, 40.0] * 50}).write_parquet(
        table
    )
    output = tmp_path / "orders_schema.py"
    result = _run(
        "suggest", str(table), "--name", "Orders", "--evaluate", "--split-by", "day",
        "--output", str(output),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "amount|max" in result.stderr
    assert (
        load_schema(output.read_text(), "Orders").filter(pl.read_parquet(table))[1].counts() == {}
    )


def test_a_refused_source_exits_2_with_the_message_and_no_traceback(tmp_path: Path) -> None:
    result = _run("suggest", str(tmp_path / "missing.parquet"), "--name", "Orders")
    assert result.returncode == 2
    assert "no such file or folder" in result.stderr
    assert "Traceback" not in result.stderr


def _stderr_on_a_terminal(*arguments: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run the command with stderr on a pseudo-terminal, as in a shell; stdout stays a pipe."""
    terminal, side = pty.openpty()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "dagster_dataframely", *arguments],
            stdout=subprocess.PIPE,
            stderr=side,
            text=True,
            check=False,
        )
    finally:
        os.close(side)
    written = b""
    while True:
        try:
            chunk = os.read(terminal, 4096)
        except OSError:  # NOTE: Linux reports the closed terminal's end as EIO.
            break
        if not chunk:
            break
        written += chunk
    os.close(terminal)
    return result, written.decode()


def test_a_terminal_shows_a_bar_of_the_steps_redrawn_in_place(tmp_path: Path) -> None:
    table = tmp_path / "orders.parquet"
    pl.DataFrame({"order_id": range(500), "channel": ["web", "shop"] * 250}).write_parquet(table)

    result, terminal = _stderr_on_a_terminal("suggest", str(table), "--name", "Orders")

    assert result.returncode == 0
    assert load_schema(result.stdout, "Orders").primary_key() == ["order_id"]
    assert "\r" in terminal
    assert f"[{'#' * 8}{'-' * 16}] 1/3" in terminal
    assert f"[{'#' * 24}] 3/3" in terminal
    assert "searched the primary key" in terminal
    assert "[   0." not in terminal  # NOTE: the pipe's line-per-step form is not used


def test_a_suggestion_reports_as_many_steps_as_the_bar_counts() -> None:
    steps: list[str] = []
    data = pl.DataFrame({"order_id": range(100), "channel": ["web", "shop"] * 50})
    dd.suggest_schema(data, name="Orders", progress=steps.append)
    assert len(steps) == PROGRESS_STEPS

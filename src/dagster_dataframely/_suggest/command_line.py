"""`python -m dagster_dataframely suggest PATH --name Orders`: the suggestion from a shell."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from dagster_dataframely._suggest.held_out import evaluate_suggestion
from dagster_dataframely._suggest.suggest_schema import PROGRESS_STEPS, suggest_schema
from dagster_dataframely._suggest.table_source import Source
from dagster_dataframely.errors import DagsterDataframelyError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m dagster_dataframely", description="Tools of dagster-dataframely."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    suggest = commands.add_parser(
        "suggest",
        help="suggest a Dataframely schema from a parquet file or folder",
        description="Print the source of a Dataframely schema suggested from the table's data.",
    )
    suggest.add_argument("path", help="a parquet file or folder, or a URL such as s3://b/t/")
    suggest.add_argument("--name", required=True, help="the schema's class name, e.g. Orders")
    suggest.add_argument(
        "--sensitive",
        nargs="*",
        default=None,
        metavar="COLUMN",
        help="columns whose values must not appear (marked pii); default: those whose names "
        "suggest personal data; --sensitive alone: none",
    )
    suggest.add_argument(
        "--evaluate",
        action="store_true",
        help="judge the rules on held-out rows first, and print the report on stderr",
    )
    suggest.add_argument(
        "--split-by", help="with --evaluate: hold out the newest values of this column"
    )
    suggest.add_argument("--output", type=Path, help="write the module here instead of stdout")
    return parser


class _Progress:
    """The progress of the passes on stderr, so stdout stays the module alone: a bar redrawn
    in place on a terminal, one line per step with the time so far on a pipe or in a log."""

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.done = 0
        self.started = time.perf_counter()
        self.bar = sys.stderr.isatty()

    def __call__(self, line: str) -> None:
        elapsed = time.perf_counter() - self.started
        if not self.bar:
            print(f"[{elapsed:6.1f} s] {line}", file=sys.stderr, flush=True)
            return
        self.done = min(self.steps, self.done + 1)
        filled = _BAR_WIDTH * self.done // self.steps
        bar = "#" * filled + "-" * (_BAR_WIDTH - filled)
        # NOTE: `\r` and the erase-line code redraw the one line; a step's text may be shorter
        # than the one before it.
        sys.stderr.write(f"\r\x1b[2K[{bar}] {self.done}/{self.steps} {elapsed:5.1f} s  {line}")
        sys.stderr.flush()

    def close(self) -> None:
        """End the bar's line, so what follows starts on its own."""
        if self.bar and self.done:
            sys.stderr.write("\n")
            self.bar = False


_BAR_WIDTH = 24


def write_schema_module(source: Source, *, name: str, folder: Path) -> Path:
    """Write the schema suggested from `source` to `folder/schema.py` (for `dg scaffold defs`),
    refusing to replace a file that is already there."""
    code = suggest_schema(source, name=name)
    folder.mkdir(parents=True, exist_ok=True)
    module = folder / "schema.py"
    # NOTE: exclusive creation: a schema the user already reviewed is never overwritten.
    with module.open("x", encoding="utf-8") as file:
        file.write(code)
    return module


def main(arguments: Sequence[str] | None = None) -> int:
    """Run the command line; the exit status is 0, or 2 for a refused source or argument."""
    options = _parser().parse_args(arguments)
    # NOTE: an evaluation suggests twice: from the training rows, then from every row.
    progress = _Progress(PROGRESS_STEPS * (2 if options.evaluate else 1))
    try:
        if options.evaluate:
            report = evaluate_suggestion(
                options.path,
                name=options.name,
                split_by=options.split_by,
                sensitive=options.sensitive,
                progress=progress,
            )
            progress.close()
            print(report, file=sys.stderr)
            code = report.code
        else:
            code = suggest_schema(
                options.path, name=options.name, sensitive=options.sensitive, progress=progress
            )
    except DagsterDataframelyError as error:
        progress.close()
        print(f"error: {error.message}", file=sys.stderr)
        return 2
    progress.close()
    if options.output is None:
        sys.stdout.write(code)
    else:
        options.output.write_text(code, encoding="utf-8")
        progress(f"wrote {options.output}")
    return 0

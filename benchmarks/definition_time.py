"""Definition time: what `dd.asset` adds to loading a code location, against hand-wired assets.

A code location imports every asset module each time it loads (every `dagster dev` reload,
every run worker), so declaring an asset must stay cheap. This script declares 400 assets on a
wide schema (40 columns, about 100 rules) with `dd.asset`, and 400 plain `@dg.asset`s as a user
would wire them by hand: the same number of `dg.AssetCheckSpec`s with the same names and
descriptions, and the same `dagster/column_schema` metadata (a `dg.TableSchema` built from
literal column data). Both sides pay for the column schema; neither pays for creating the
schema classes, which happens before the clock starts.

Two cases:

- `one`: the 400 assets share ONE schema class. The package derives a schema's rules, names and
  texts once per class and reuses them, which is legitimate here; the hand-wired side builds
  its `TableSchema` once and shares it, as a user would.
- `many`: 400 distinct (identical) schema classes, so nothing the package derived for one
  asset helps the next; the hand-wired side builds 400 `TableSchema`s.

Every measurement runs in a fresh interpreter (imports are not timed), the sides and cases
interleaved, so neither side profits from a warm cache or from the other's work. For each it
prints the median of the repetitions of: declaring the 400 assets, then building
`dg.Definitions(assets=...)` and resolving its asset graph (what a code location load pays after
the declarations), and the ratio dd / plain. Targets (issue 51): declaring costs at most 0.5x
plain with one shared schema and at most 0.8x with a schema class per asset. Declaring is also
given in CPU time (`time.process_time`), which other jobs on a shared machine disturb less than
the wall time; both are judged against the targets. Beside them, the CPU time Python's cycle
collector took while declaring (a `gc.callbacks` entry) and its full collections, each of which
walks every object the assets declared so far left behind: what grows faster than the number of
assets is there, not in the declarations (their calls per asset are the same at 100 and 400).

    .venv/bin/python -m benchmarks.definition_time [--repeat 3] [--profile] [--against REV]
        [--assets 400] [--parts]

`--assets N` declares N assets (and N schema classes in `many`) instead of 400.

`--parts` instead times, in this one interpreter with the cycle collector off, what the
package derives from each of N fresh schema classes (reading the schema, its code version, its
Columns tab), CPU seconds summed over the N; with `--against REV` the same for the sources at
REV, interleaved in fresh interpreters, with the paired ratios.

`--profile` then runs the `dd` side of each case once more under cProfile and prints its top
functions by cumulative and by own time. `--against REV` adds a third side, `dd` with the
package's `src/` as it is at git revision REV (extracted to a temporary directory and put first
on `PYTHONPATH`), interleaved with the other two, so a change is measured before and after in
the same run on the same machine load.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl

import dagster_dataframely as dd
from dagster_dataframely import wiring

ASSETS = 400
TARGETS = {"one": 0.5, "many": 0.8}
"""Issue 51's goals for declaring, dd / plain: one shared schema, a schema class per asset."""
CASES = ("one", "many")
SIDES = ("plain", "dd")
BASE = "dd-at-revision"
"""The third side `--against` adds: `dd` with the package's sources at another revision."""
ROOT = Path(__file__).resolve().parent.parent

# Forty columns: fourteen floats, thirteen integers, thirteen strings.
FLOATS, INTEGERS, STRINGS = 14, 13, 13


def _custom_check(column: pl.Expr) -> pl.Expr:
    return column != 13


def _rule_factory(name: str, expr: Callable[[], pl.Expr], doc: str) -> Any:
    """A `@dy.rule` built without a `def` in a class body, so the class can be built by `type`."""

    def validation_fn(cls: Any) -> pl.Expr:
        return expr()

    validation_fn.__name__ = name
    validation_fn.__doc__ = doc
    return dy.rule()(validation_fn)


def build_schema(name: str = "Wide") -> type[dy.Schema]:
    """A fresh 40-column schema class with about 100 rules (`rule_count` gives the exact count).

    Floats carry min and max (NaN and infinities allowed, so Dataframely adds no `nan`/`inf`
    rule), integers min and max, strings a max length and a regex; every other column is
    non-nullable; three columns have a custom `check=`; `i00` and `s00` form a composite
    primary key; three `@dy.rule`s compare columns.
    """
    attributes: dict[str, Any] = {"__doc__": "A wide table for the definition-time benchmark."}
    for i in range(FLOATS):
        attributes[f"f{i:02d}"] = dy.Float64(
            nullable=i % 2 == 0,
            min=0.0,
            max=float(1_000 + i),
            allow_inf=True,
            allow_nan=True,
            description=f"Float measure number {i}.",
            check={"not_thirteen": _custom_check} if i == 1 else None,
        )
    for i in range(INTEGERS):
        attributes[f"i{i:02d}"] = dy.Int64(
            primary_key=i == 0,
            nullable=i % 2 == 1,
            min=0,
            max=10_000 + i,
            description=f"Integer count number {i}.",
            check={"not_thirteen": _custom_check} if i == 1 else None,
        )
    for i in range(STRINGS):
        attributes[f"s{i:02d}"] = dy.String(
            primary_key=i == 0,
            nullable=i % 2 == 1,
            max_length=64,
            regex=r"^[a-z][a-z0-9_-]*$" if i % 3 == 0 else None,
            description=f"Text attribute number {i}.",
            check={"lowercase": lambda c: c == c.str.to_lowercase()} if i == 1 else None,
        )
    attributes["f01_below_f03"] = _rule_factory(
        "f01_below_f03", lambda: pl.col("f01") <= pl.col("f03"), "f01 never exceeds f03."
    )
    attributes["i01_needs_s01"] = _rule_factory(
        "i01_needs_s01",
        lambda: pl.col("i01").is_null() | pl.col("s01").is_not_null(),
        "A row with an i01 also has an s01.",
    )
    attributes["one_s02_per_s00"] = _rule_factory(
        "one_s02_per_s00",
        lambda: pl.col("s02").n_unique().over("s00") == 1,
        "Every row of one s00 has the same s02.",
    )
    return type(name, (dy.Schema,), attributes)


def rule_count(schema: type[dy.Schema]) -> int:
    """How many rules Dataframely validates: one check spec each, plus the column-schema check."""
    return len(wiring.check_specs(schema, asset="x")) - 1


# ------------------------------------------------------------------------------------------
# The two sides. Everything they are given is built before the clock starts.


def _declare_dd(schemas: list[type[dy.Schema]]) -> list[dg.AssetsDefinition]:
    assets = []
    for i, schema in enumerate(schemas):

        @dd.asset(schema, name=f"asset_{i:03d}")
        def body() -> pl.DataFrame | None:
            return None

        assets.append(body)
    return assets


class HandWired:
    """What a hand-wired asset writes as literals: check names and texts, column data."""

    def __init__(self, schema: type[dy.Schema]) -> None:
        self.description = schema.__doc__
        self.checks = [
            (spec.name, spec.description, spec.blocking)
            for spec in wiring.check_specs(schema, asset="x")
        ]
        self.columns = [
            {
                "name": c.name,
                "type": c.type,
                "description": c.description,
                "nullable": c.constraints.nullable,
                "unique": c.constraints.unique,
                "other": list(c.constraints.other),
                "tags": c.tags or None,
            }
            for c in wiring.table_schema(schema).columns
        ]
        constraints = wiring.table_schema(schema).constraints
        self.table_constraints = list(constraints.other) if constraints else []

    def table_schema(self) -> dg.TableSchema:
        return dg.TableSchema(
            columns=[
                dg.TableColumn(
                    name=c["name"],
                    type=c["type"],
                    description=c["description"],
                    constraints=dg.TableColumnConstraints(
                        nullable=c["nullable"], unique=c["unique"], other=c["other"]
                    ),
                    tags=c["tags"],
                )
                for c in self.columns
            ],
            constraints=dg.TableConstraints(other=self.table_constraints),
        )


def _declare_plain(hand: HandWired, *, shared_table: bool) -> list[dg.AssetsDefinition]:
    shared = hand.table_schema() if shared_table else None
    assets = []
    for i in range(ASSETS):
        name = f"asset_{i:03d}"
        key = dg.AssetKey([name])

        @dg.asset(
            name=name,
            description=hand.description,
            metadata={"dagster/column_schema": shared or hand.table_schema()},
            check_specs=[
                dg.AssetCheckSpec(check, asset=key, description=text, blocking=blocking)
                for check, text, blocking in hand.checks
            ],
            output_required=False,
        )
        def body() -> Iterator[dg.MaterializeResult[Any] | dg.AssetCheckResult]:
            yield from ()

        assets.append(body)
    return assets


def _load(assets: list[dg.AssetsDefinition]) -> int:
    defs = dg.Definitions(assets=assets)
    return len(defs.resolve_asset_graph().get_all_asset_keys())


# ------------------------------------------------------------------------------------------
# One measurement, in this (fresh) interpreter.


def worker(side: str, case: str, *, profile: bool) -> dict[str, Any]:
    started = time.perf_counter()
    schemas = (
        [build_schema()] * ASSETS
        if case == "one"
        else [build_schema(f"Wide{i:03d}") for i in range(ASSETS)]
    )
    classes = time.perf_counter() - started
    if side == "plain":
        hand = HandWired(schemas[0])

        def declare() -> list[dg.AssetsDefinition]:
            return _declare_plain(hand, shared_table=case == "one")

    else:

        def declare() -> list[dg.AssetsDefinition]:
            return _declare_dd(schemas)

    gc.collect()
    collector = _Collector()
    profiler = cProfile.Profile() if profile else None
    if profiler:
        profiler.enable()
    gc.callbacks.append(collector)
    started, started_cpu = time.perf_counter(), time.process_time()
    assets = declare()
    declared, declared_cpu = time.perf_counter(), time.process_time()
    gc.callbacks.remove(collector)
    keys = _load(assets)
    loaded = time.perf_counter()
    if profiler:
        profiler.disable()
    assert keys == ASSETS, keys
    result: dict[str, Any] = {
        "classes": classes,
        "declare": declared - started,
        "declare_cpu": declared_cpu - started_cpu,
        "declare_gc_cpu": collector.cpu,
        "full_collections": collector.full,
        "load": loaded - declared,
        "checks": sum(len(list(a.check_specs)) for a in assets),
    }
    if profiler:
        out = io.StringIO()
        out.write("-- this package's own functions, by cumulative time --\n")
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(
            "dagster_dataframely", 25
        )
        stats = pstats.Stats(profiler, stream=out).strip_dirs()
        out.write("-- everything, by cumulative time --\n")
        stats.sort_stats("cumulative").print_stats(30)
        out.write("-- everything, by own time --\n")
        stats.sort_stats("tottime").print_stats(20)
        result["profile"] = out.getvalue()
    return result


class _Collector:
    """A `gc.callbacks` entry: the CPU time of Python's cycle collector, its full collections."""

    def __init__(self) -> None:
        self.cpu = 0.0
        self.full = 0
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.process_time()
            return
        self.cpu += time.process_time() - self._started
        self.full += info["generation"] == 2


def _run_worker(
    side: str, case: str, *, profile: bool = False, src: Path | None = None
) -> dict[str, Any]:
    """One measurement in a fresh interpreter; `src` replaces the package's sources."""
    command = [sys.executable, "-m", "benchmarks.definition_time", "--worker", side, case]
    command += ["--assets", str(ASSETS)]
    if profile:
        command.append("--profile")
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    if done.returncode:
        raise RuntimeError(f"worker {side}/{case} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def main(repeat: int, *, profile: bool, against: str | None = None) -> None:
    schema = build_schema()
    rules = rule_count(schema)
    print(
        f"{ASSETS} assets on a schema of {len(schema.columns())} columns and {rules} rules "
        f"({rules + 1} check specs per asset, with the column-schema check); "
        f"median of {repeat} fresh interpreters per cell.\n"
    )
    with tempfile.TemporaryDirectory() as scratch:
        base = _extract_src(against, Path(scratch)) if against else None
        sides = [*SIDES, BASE] if base else list(SIDES)
        runs: dict[tuple[str, str], list[dict[str, Any]]] = {
            (side, case): [] for side in sides for case in CASES
        }
        for _ in range(repeat):
            for case in CASES:
                for side in sides:
                    if side == BASE:
                        runs[side, case].append(_run_worker("dd", case, src=base))
                    else:
                        runs[side, case].append(_run_worker(side, case))

    def median(side: str, case: str, field: str) -> float:
        return statistics.median(run[field] for run in runs[side, case])

    header = f"{'case':<6} {'step':<34} {'plain s':>8} {'dd s':>8} {'dd/plain':>9}  target  verdict"
    print(header)
    print("-" * len(header))
    for case in CASES:
        for field, label in (
            ("declare", f"declare {ASSETS} assets"),
            ("declare_cpu", "declare, CPU time"),
            ("load", "Definitions + resolve_asset_graph"),
        ):
            plain, ours = median("plain", case, field), median("dd", case, field)
            ratio = ours / plain
            judged = field in ("declare", "declare_cpu")
            goal = TARGETS[case]
            verdict = ("ok" if ratio <= goal else "OVER") if judged else ""
            target = f"<={goal}x" if judged else ""
            print(
                f"{case:<6} {label:<34} {plain:8.3f} {ours:8.3f} {ratio:8.2f}x  {target:<6}  "
                f"{verdict}"
            )
        plain, ours = median("plain", case, "declare_gc_cpu"), median("dd", case, "declare_gc_cpu")
        full = f"{median('plain', case, 'full_collections'):.0f}"
        full += f" / {median('dd', case, 'full_collections'):.0f}"
        ratio = ours / plain if plain else float("nan")
        print(
            f"{case:<6} {'declare: cycle collector CPU':<34} {plain:8.3f} {ours:8.3f} "
            f"{ratio:8.2f}x  full collections {full}"
        )
        plain = median("plain", case, "declare") + median("plain", case, "load")
        ours = median("dd", case, "declare") + median("dd", case, "load")
        print(f"{case:<6} {'both':<34} {plain:8.3f} {ours:8.3f} {ours / plain:8.2f}x")
        extra = (median("dd", case, "declare") - median("plain", case, "declare")) / ASSETS
        print(f"{case:<6} {'declare: dd - plain, per asset':<34} {extra * 1000:+17.1f} ms")
        if base:
            for field, label in (("declare", "declare"), ("declare_cpu", "declare, CPU")):
                plain, before = median("plain", case, field), median(BASE, case, field)
                label = f"{label}, dd at {against}"[:34]
                print(f"{case:<6} {label:<34} {plain:8.3f} {before:8.3f} {before / plain:8.2f}x")
    print(
        f"\nNot timed: creating the schema classes, {median('dd', 'one', 'classes'):.3f} s for "
        f"one, {median('dd', 'many', 'classes'):.3f} s for {ASSETS}. "
        f"Check specs declared per side: {runs['dd', 'one'][0]['checks']} (dd), "
        f"{runs['plain', 'one'][0]['checks']} (plain)."
    )
    if profile:
        for case in CASES:
            print(f"\n==== cProfile, dd side, case {case} ====")
            print(_run_worker("dd", case, profile=True)["profile"])


def parts() -> dict[str, float]:
    """CPU seconds of each step derived per schema class, summed over `ASSETS` fresh classes."""
    from dagster_dataframely._model.code_version import info_version
    from dagster_dataframely._model.columns_tab import columns_tab
    from dagster_dataframely._model.schema import read_schema

    schemas = [build_schema(f"Wide{i:03d}") for i in range(ASSETS)]
    spent = {"read_schema": 0.0, "code version": 0.0, "Columns tab": 0.0}
    gc.collect()
    gc.disable()
    for schema in schemas:
        started = time.process_time()
        info = read_schema(schema)
        read = time.process_time()
        info_version(info)
        versioned = time.process_time()
        columns_tab(info, frozenset())
        spent["read_schema"] += read - started
        spent["code version"] += versioned - read
        spent["Columns tab"] += time.process_time() - versioned
    gc.enable()
    return spent


def main_parts(repeat: int, against: str | None) -> None:
    """`--parts`: the per-class steps, here and (with `--against`) at another revision."""
    runs: dict[str, list[dict[str, float]]] = {"dd": [], BASE: []}
    with tempfile.TemporaryDirectory() as scratch:
        base = _extract_src(against, Path(scratch)) if against else None
        for _ in range(repeat):
            for side, src in (("dd", None), (BASE, base)):
                if side == BASE and base is None:
                    continue
                command = [sys.executable, "-m", "benchmarks.definition_time", "--parts-worker"]
                env = dict(os.environ)
                if src is not None:
                    env["PYTHONPATH"] = os.pathsep.join(
                        filter(None, [str(src), env.get("PYTHONPATH")])
                    )
                command += ["--assets", str(ASSETS)]
                done = subprocess.run(
                    command, cwd=ROOT, capture_output=True, text=True, check=True, env=env
                )
                runs[side].append(json.loads(done.stdout.splitlines()[-1]))
    print(f"CPU s over {ASSETS} fresh schema classes, median of {repeat} interpreters")
    for step in runs["dd"][0]:
        ours = statistics.median(run[step] for run in runs["dd"])
        line = f"{step:<14} dd {ours:7.4f}"
        if runs[BASE]:
            before = statistics.median(run[step] for run in runs[BASE])
            paired = statistics.median(
                new[step] / old[step] for new, old in zip(runs["dd"], runs[BASE], strict=True)
            )
            line += f"   at {against} {before:7.4f}   paired dd/{against} {paired:5.2f}x"
        print(line)


def _extract_src(revision: str, into: Path) -> Path:
    """The package's `src/` at `revision`, extracted under `into`; returns the `src` directory."""
    archive = subprocess.run(
        ["git", "archive", revision, "src"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="fresh interpreters per cell")
    parser.add_argument("--profile", action="store_true", help="also profile the dd side")
    parser.add_argument("--against", metavar="REV", help="also time dd at this git revision")
    parser.add_argument("--assets", type=int, default=ASSETS, help="assets declared per side")
    parser.add_argument("--parts", action="store_true", help="time the per-class steps")
    parser.add_argument("--worker", nargs=2, metavar=("SIDE", "CASE"), help=argparse.SUPPRESS)
    parser.add_argument("--parts-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    ASSETS = args.assets
    if args.parts_worker:
        print(json.dumps(parts()))
    elif args.parts:
        main_parts(args.repeat, args.against)
    elif args.worker:
        side, case = args.worker
        print(json.dumps(worker(side, case, profile=args.profile)))
    else:
        main(args.repeat, profile=args.profile, against=args.against)

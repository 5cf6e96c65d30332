"""Each return hint `dd.asset` reads, on parquet and in DuckDB, against `dd.asset(S)`.

This module uses `from __future__ import annotations`, so every hint is a string the package
resolves as Dagster does. Per form and per outcome of the spec's six, the hinted asset and
`dd.asset(Orders, ...)` with the same quarantine, returning the same value, have the same
definition (specs, checks, metadata, code version, repository snapshot), and their runs the
same events and stored rows. What the function returns decides, not the hint: a
`LazyFrame` under a `DataFrame` hint is validated as a `LazyFrame` is.

The six outcomes of one form and manager run together, each outcome's asset under a key prefix
of its own (`OUTCOME_PREFIXES`), the same for the hinted asset and the asset given its schema,
so each case compares what its own asset left in those runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd

from .compared_runs import (
    KINDS,
    OUTCOME_PREFIXES,
    OUTCOMES,
    definition,
    made_once,
    returned,
    run,
    run_once,
    run_together,
)
from .conftest import Orders

pytestmark = pytest.mark.integration


def _lazy(frame: pl.DataFrame | None) -> pl.LazyFrame | None:
    return None if frame is None else frame.lazy()


def _result(frame: pl.DataFrame | pl.LazyFrame | None, **metadata: str) -> Any:
    """`frame` in a `dg.MaterializeResult`; None as it is, the spec's sixth outcome."""
    return None if frame is None else dg.MaterializeResult(value=frame, metadata=metadata)


def frame_hint(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> dy.DataFrame[Orders]:
        return frame  # type: ignore[return-value]

    return orders


def lazy_hint(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> dy.LazyFrame[Orders]:
        return _lazy(frame)  # type: ignore[return-value]

    return orders


def annotated_frame(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> Annotated[pl.DataFrame, Orders]:
        return frame  # type: ignore[return-value]

    return orders


def annotated_lazy(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> Annotated[pl.LazyFrame, Orders]:
        return _lazy(frame)  # type: ignore[return-value]

    return orders


def materialize_result(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> dg.MaterializeResult[dy.DataFrame[Orders]]:
        return _result(frame, source="shop")  # type: ignore[no-any-return]

    return orders


def lazy_materialize_result(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> dg.MaterializeResult[dy.LazyFrame[Orders]]:
        return _result(_lazy(frame), source="shop")  # type: ignore[no-any-return]

    return orders


def optional_frame(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> dy.DataFrame[Orders] | None:
        return frame  # type: ignore[return-value]

    return orders


def optional_lazy(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> dy.LazyFrame[Orders] | None:
        return _lazy(frame)  # type: ignore[return-value]

    return orders


def optional_annotated(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> Annotated[pl.DataFrame, Orders] | None:
        return frame

    return orders


def optional_materialize_result(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> dg.MaterializeResult[dy.DataFrame[Orders]] | None:
        return _result(frame)  # type: ignore[no-any-return]

    return orders


def optional_annotated_lazy(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> Annotated[pl.LazyFrame, Orders] | None:
        return _lazy(frame)

    return orders


def optional_lazy_materialize_result(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> dg.MaterializeResult[dy.LazyFrame[Orders]] | None:
        return _result(_lazy(frame))  # type: ignore[no-any-return]

    return orders


def lazy_under_a_frame_hint(frame: pl.DataFrame | None) -> Callable[[], Any]:
    def orders() -> dy.DataFrame[Orders]:
        return _lazy(frame)  # type: ignore[return-value]

    return orders


FORMS: list[Callable[[pl.DataFrame | None], Callable[[], Any]]] = [
    frame_hint,
    lazy_hint,
    annotated_frame,
    annotated_lazy,
    materialize_result,
    lazy_materialize_result,
    optional_frame,
    optional_lazy,
    optional_annotated,
    optional_materialize_result,
    optional_annotated_lazy,
    optional_lazy_materialize_result,
    lazy_under_a_frame_hint,
]
"""Each form: a function `orders` under the hint, returning what it makes of a frame."""


def unhinted(function: Callable[[], Any]) -> Callable[[], Any]:
    """`function` with the same name and body and no return hint, for `dd.asset(Orders)`."""

    def orders() -> Any:
        return function()

    return orders


Form = Callable[[pl.DataFrame | None], Callable[[], Any]]


def hinted_runs(form: Form, kind: str) -> dict[str, tuple[object, ...]]:
    """Each outcome's asset under `form`'s hint, in one run: by outcome, what it left."""
    return run_once(
        ("hinted", form, kind),
        lambda folder: run_together(
            {
                prefix: dd.asset(quarantine=OUTCOMES[outcome][0], key_prefix=prefix)(
                    form(OUTCOMES[outcome][1])
                )
                for outcome, prefix in OUTCOME_PREFIXES.items()
            },
            folder,
            kind,
        ),
    )


def given_runs(form: Form, kind: str) -> dict[str, tuple[object, ...]]:
    """Each outcome's `dd.asset(Orders)` returning what `form` returns, in one run: by
    outcome, what it left. Several forms return the same values (a frame, a LazyFrame, a
    `MaterializeResult`): their assets given the schema run once for all of them."""
    values = tuple((quarantine, returned(form(frame)())) for quarantine, frame in OUTCOMES.values())
    return run_once(
        ("dd.asset(Orders)", values, kind),
        lambda folder: run_together(
            {
                prefix: dd.asset(Orders, quarantine=OUTCOMES[outcome][0], key_prefix=prefix)(
                    unhinted(form(OUTCOMES[outcome][1]))
                )
                for outcome, prefix in OUTCOME_PREFIXES.items()
            },
            folder,
            kind,
        ),
    )


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("outcome", list(OUTCOMES))
@pytest.mark.parametrize("form", FORMS, ids=[form.__name__ for form in FORMS])
def test_the_hinted_asset_is_the_asset_given_its_schema(
    form: Form, outcome: str, kind: str
) -> None:
    quarantine, frame = OUTCOMES[outcome]
    function = form(frame)
    # The definitions are the same on either manager: made once for both.
    hinted, given = made_once(
        ("definitions", form, outcome),
        lambda: (
            definition(dd.asset(quarantine=quarantine)(function)),
            definition(dd.asset(Orders, quarantine=quarantine)(unhinted(function))),
        ),
    )

    assert hinted == given
    prefix = OUTCOME_PREFIXES[outcome]
    hinted_run = hinted_runs(form, kind)[prefix]
    assert hinted_run == given_runs(form, kind)[prefix]
    _, _, stored = hinted_run
    if outcome == "some rows failed, quarantine":  # two valid rows kept, one quarantined
        assert [len(rows) for rows in stored.values()] == [2, 1]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("outcome", list(OUTCOMES))
def test_a_bare_decorator_reads_the_hint(tmp_path: Path, outcome: str, kind: str) -> None:
    """A bare `@dd.asset` declares no quarantine: every outcome's frame, without one."""
    function = frame_hint(OUTCOMES[outcome][1])
    hinted = dd.asset(function)  # type: ignore[arg-type]
    given = dd.asset(Orders)(unhinted(function))

    assert definition(hinted) == definition(given)
    assert run(hinted, tmp_path / "hinted", kind) == run(given, tmp_path / "given", kind)

"""Each return hint `dd.asset` reads, on dagster-polars' parquet manager, against `dd.asset(S)`.

This module uses `from __future__ import annotations`, so every hint is a string the package
resolves as Dagster does. Per form, the hinted asset and `dd.asset(Orders, quarantine=True)`
returning the same value have the same specs, checks, metadata and code version, and their
runs the same events and stored rows. What the function returns decides, not the hint: a
`LazyFrame` under a `DataFrame` hint is validated as a `LazyFrame` is.
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

from .conftest import DAY_1, Orders, orders_frame
from .hinted_support import run

pytestmark = pytest.mark.integration


def _eager() -> pl.DataFrame:
    return orders_frame(DAY_1)


def frame_hint() -> dy.DataFrame[Orders]:
    return _eager()  # type: ignore[return-value]


def lazy_hint() -> dy.LazyFrame[Orders]:
    return _eager().lazy()  # type: ignore[return-value]


def annotated_frame() -> Annotated[pl.DataFrame, Orders]:
    return _eager()


def annotated_lazy() -> Annotated[pl.LazyFrame, Orders]:
    return _eager().lazy()


def materialize_result() -> dg.MaterializeResult[dy.DataFrame[Orders]]:
    return dg.MaterializeResult(value=_eager(), metadata={"source": "shop"})  # type: ignore[arg-type]


def lazy_materialize_result() -> dg.MaterializeResult[dy.LazyFrame[Orders]]:
    return dg.MaterializeResult(value=_eager().lazy(), metadata={"source": "shop"})  # type: ignore[arg-type]


def optional_frame() -> dy.DataFrame[Orders] | None:
    return _eager()  # type: ignore[return-value]


def optional_skipped() -> dy.LazyFrame[Orders] | None:
    return None


def optional_annotated() -> Annotated[pl.DataFrame, Orders] | None:
    return _eager()


def optional_materialize_result() -> dg.MaterializeResult[dy.DataFrame[Orders]] | None:
    return dg.MaterializeResult(value=_eager())  # type: ignore[arg-type]


def lazy_under_a_frame_hint() -> dy.DataFrame[Orders]:
    return _eager().lazy()  # type: ignore[return-value]


FORMS: list[Callable[[], Any]] = [
    frame_hint,
    lazy_hint,
    annotated_frame,
    annotated_lazy,
    materialize_result,
    lazy_materialize_result,
    optional_frame,
    optional_skipped,
    optional_annotated,
    optional_materialize_result,
    lazy_under_a_frame_hint,
]


def unhinted(function: Callable[[], Any]) -> Callable[[], Any]:
    """`function` with the same name and body and no return hint, for `dd.asset(Orders)`."""

    def orders() -> Any:
        return function()

    orders.__name__ = function.__name__
    return orders


@pytest.mark.parametrize("function", FORMS, ids=[form.__name__ for form in FORMS])
def test_the_hinted_asset_is_the_asset_given_its_schema(
    tmp_path: Path, function: Callable[[], Any]
) -> None:
    hinted = dd.asset(quarantine=True)(function)
    given = dd.asset(Orders, quarantine=True)(unhinted(function))

    assert list(hinted.specs) == list(given.specs)
    assert list(hinted.check_specs) == list(given.check_specs)
    assert hinted.metadata_by_key == given.metadata_by_key
    assert hinted.code_versions_by_key == given.code_versions_by_key
    hinted_run = run(hinted, tmp_path / "hinted", "parquet")
    assert hinted_run == run(given, tmp_path / "given", "parquet")
    _, _, stored = hinted_run
    if function is not optional_skipped:  # two valid rows kept, one quarantined
        assert [len(rows) for rows in stored.values()] == [2, 1]


def test_a_bare_decorator_reads_the_hint(tmp_path: Path) -> None:
    hinted = dd.asset(frame_hint)  # type: ignore[arg-type]
    given = dd.asset(Orders)(unhinted(frame_hint))

    assert list(hinted.check_specs) == list(given.check_specs)
    assert hinted.code_versions_by_key == given.code_versions_by_key

"""The settings as keywords: what mypy refuses in a user's code, and what a run refuses."""

import re
import subprocess
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely._model.setting_model import KEYWORDS, EntryPoint, refusals, settings_of
from dagster_dataframely.errors import InvalidArgumentsError, UnexpectedArgumentError
from tests.schemas import OrderBook, Orders

_ROOT = Path(__file__).parents[2]

_SNIPPET = """\
import dagster as dg
import dataframely as dy

import dagster_dataframely as dd


class Orders(dy.Schema):
    order_id = dy.String()


dd.AssetOut(Orders, quarantine=True, check_granularity="column", row_sample=0)
dd.AssetOut(Orders, quarantne=True)
dd.AssetOut(Orders, quarantine="no")
dd.AssetOut.from_spec(Orders, dg.AssetSpec("orders"), check_granularity="rows")
dd.AssetOut.from_spec(Orders, dg.AssetSpec("orders"), clear_quarantine=1)
dd.asset(Orders, warning_rule=["order_id|nullability"])
dd.asset(Orders, max_failure_samples="5")
dd.asset(Orders, streaming=True, statistics=False, name="orders")
"""


def test_every_keywords_typeddict_has_the_models_settings() -> None:
    for entry_point, keywords in KEYWORDS.items():
        assert set(typing.get_type_hints(keywords)) == {
            spec.name for spec in settings_of(entry_point)
        }


def test_mypy_refuses_a_misspelt_setting_and_a_wrong_type(tmp_path: Path) -> None:
    snippet = tmp_path / "user_code.py"
    snippet.write_text(_SNIPPET, encoding="utf-8")
    checked = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(snippet)],
        cwd=_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = {int(line) for line in re.findall(r"user_code\.py:(\d+): error", checked.stdout)}
    assert lines == {12, 13, 14, 15, 16, 17}, checked.stdout


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("quarantine", "no"),
        ("quarantine", None),
        ("clear_quarantine", 1),
        ("clear_quarantine", "true"),
    ],
)
def test_a_flag_that_is_not_a_bool_is_refused(keyword: str, value: Any) -> None:
    for call in (
        lambda: dd.AssetOut(Orders, **{keyword: value}),
        lambda: dd.AssetOut.from_spec(Orders, dg.AssetSpec("orders"), **{keyword: value}),
        lambda: dd.asset(Orders, **{keyword: value}),
    ):
        with pytest.raises(InvalidArgumentsError) as raised:
            call()
        assert f"`{keyword}=`" in str(raised.value)
        assert f"is a {type(value).__name__}, not a bool" in str(raised.value)


def test_a_setting_the_entry_point_does_not_take_is_refused() -> None:
    with pytest.raises(InvalidArgumentsError, match="not one of its settings"):
        dd.AssetOut(Orders, quarantne=True)  # type: ignore[call-arg]


_CALLS: dict[EntryPoint, Callable[..., object]] = {
    EntryPoint.ASSET: lambda **given: dd.asset(Orders, **given),
    EntryPoint.ASSET_OUT: lambda **given: dd.AssetOut(Orders, **given),
    EntryPoint.ASSET_OUT_FROM_SPEC: lambda **given: dd.AssetOut.from_spec(
        Orders, dg.AssetSpec("orders"), **given
    ),
    EntryPoint.COLLECTION_ASSET: lambda **given: dd.collection_asset(OrderBook, **given),
    EntryPoint.TABLE_CHECKS: lambda **given: dd.table_checks(
        Orders, "orders", severity=dg.AssetCheckSeverity.WARN, **given
    ),
    EntryPoint.WIRING_CHECK_SPECS: lambda **given: dd.wiring.check_specs(
        Orders, asset="orders", **given
    ),
    EntryPoint.WIRING_CHECK_RESULTS: lambda **given: list(
        dd.wiring.check_results(
            Orders, _FRAME, asset_key="orders", severity=dg.AssetCheckSeverity.WARN, **given
        )
    ),
    EntryPoint.WIRING_VALIDATION_RESULTS: lambda **given: list(
        dd.wiring.validation_results(Orders, _FRAME, valid_key=dg.AssetKey("orders"), **given)
    ),
}
_FRAME = pl.DataFrame({"order_id": ["A-1"], "amount": [1.0]})
_REFUSED = [
    (entry_point, name, reason)
    for entry_point in _CALLS
    for name, reason in refusals(entry_point).items()
    if name != "quarantine_dir"
]


@pytest.mark.parametrize(
    ("entry_point", "name", "reason"),
    _REFUSED,
    ids=[f"{entry_point.value}-{name}" for entry_point, name, _ in _REFUSED],
)
def test_a_setting_the_model_refuses_names_it_and_the_reason(
    entry_point: EntryPoint, name: str, reason: str
) -> None:
    """Every entry point refuses what the model says it refuses with the package's error."""
    with pytest.raises(UnexpectedArgumentError) as raised:
        _CALLS[entry_point](**{name: True})
    assert f"`{name}=`" in str(raised.value)
    assert reason in str(raised.value)


def test_every_settings_entry_point_has_a_call_here() -> None:
    assert set(_CALLS) == set(KEYWORDS)

"""The settings as keywords: what mypy refuses in a user's code, and what a run refuses."""

import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

import dagster_dataframely as dd
from dagster_dataframely._model.setting_keywords import KEYWORDS
from dagster_dataframely._model.setting_model import settings_of
from dagster_dataframely.errors import InvalidArgumentsError
from tests.schemas import Orders

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
        assert list(typing.get_type_hints(keywords)) == [
            spec.name for spec in settings_of(entry_point)
        ]


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

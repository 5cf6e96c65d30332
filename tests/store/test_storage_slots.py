"""Which keys a path-based IO manager would not keep as written."""

import pytest

from dagster_dataframely._store.storage_slots import path_key_problem


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("..", "`..`"),
        ("../x", "`..`"),
        ("a/../b", "`..`"),
        ("a/..", "`..`"),
        ("/..", "`..`"),
        (".", "`.`"),
        ("./y", "`.`"),
        ("a//b", "empty"),
        ("x/", "empty"),
        ("", "empty"),
        ("//x", "empty"),
    ],
)
def test_a_segment_a_path_resolves_away_is_named(key: str, problem: str) -> None:
    found = path_key_problem(key)
    assert found is not None
    assert problem in found


@pytest.mark.parametrize(
    "key", ["x", "/x", "a..b", "...", ".hidden", "2026-01-02/eu", "x y", "a\\\\b", "%2E%2E", "ü"]
)
def test_a_key_a_path_keeps_is_accepted(key: str) -> None:
    assert path_key_problem(key) is None

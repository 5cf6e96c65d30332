"""`dd.suggest_schema`: from a sampled table back to its dtypes, nullability, key and rules."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import dataframely as dy
import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely.errors import InvalidArgumentsError

from .suggested_code import load_schema, sampled_schemas

_PYTHON = Path(sys.executable)


def _sample(schema: type[dy.Schema], rows: int, seed: int) -> pl.DataFrame:
    return schema.sample(rows, generator=dy.random.Generator(seed))


# NOTE: each example samples, profiles and validates a table: shrinking one costs minutes on a
# busy machine, and the printed example (schema, rows, seed) reproduces a failure as it is.
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(sampled=sampled_schemas(), rows=st.integers(30, 200), seed=st.integers(0, 2**16))
def test_suggestion_recovers_dtypes_nullability_key_and_accepts_every_row(
    sampled: tuple[type[dy.Schema], tuple[str, ...]], rows: int, seed: int
) -> None:
    schema, key = sampled
    data = _sample(schema, rows, seed)
    suggested = load_schema(dd.suggest_schema(data, name="Suggested"), "Suggested")

    assert suggested.create_empty().schema == data.schema
    for name, column in suggested.columns().items():
        assert column.nullable == (data[name].null_count() > 0), name
    suggested_key = suggested.primary_key()
    assert 1 <= len(suggested_key) <= len(key)
    assert data.select(suggested_key).is_duplicated().sum() == 0
    valid, failures = suggested.filter(data)
    assert failures.counts() == {}
    assert valid.height == data.height
    for name, column in suggested.columns().items():
        # NOTE: a sensitive-looking name gets no bound; the sampled names are not such.
        if isinstance(column, dy.Date | dy.Datetime) and data[name].drop_nulls().len():
            assert column.min is not None, name
            assert column.max is not None, name
            assert column.min < data[name].min() <= data[name].max() < column.max, name


def test_output_is_formatted_and_passes_mypy_strict(tmp_path: Path) -> None:
    modules = []
    for seed in range(4):
        schema = _fixed_schema(seed)
        code = dd.suggest_schema(_sample(schema, 200, seed), name=f"Suggested{seed}")
        module = tmp_path / f"suggested_{seed}.py"
        module.write_text(code)
        modules.append(str(module))
    ruff = subprocess.run(
        [str(_PYTHON.parent / "ruff"), "format", "--check", "--diff", *modules],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ruff.returncode == 0, ruff.stdout + ruff.stderr
    mypy = subprocess.run(
        [str(_PYTHON), "-m", "mypy", "--strict", "--no-incremental", *modules],
        capture_output=True,
        text=True,
        check=False,
    )
    assert mypy.returncode == 0, mypy.stdout


def _fixed_schema(seed: int) -> type[dy.Schema]:
    import datetime as dt

    class Wide(dy.Schema):
        order_id = dy.Int64(primary_key=True)
        filter = dy.String(regex=r"^[A-Z]{2}[0-9]{2}$")
        amount = dy.Float64(nullable=seed % 2 == 0, min=0.0, max=10_000.0)
        status = dy.Enum(["open", "closed", "refunded"])
        quantity = dy.Int16(is_in=[1, 2, 3, 4])
        note = dy.String(nullable=True, max_length=200)
        day = dy.Date(min=dt.date(2024, 1, 1))
        at = dy.Datetime(time_zone="Europe/Berlin", time_unit="ns")

    return Wide


def test_evidence_comments_say_what_was_seen() -> None:
    data = pl.DataFrame(
        {"order_id": range(1_000), "channel": ["web", "shop", "phone", "web"] * 250}
    )
    code = dd.suggest_schema(data, name="Orders")
    assert "# 1,000 rows, no null" in code
    assert "# 3 distinct values, the rarest seen in 250 rows" in code
    assert "# seen 0 to 999; bounds widened by 10% of the range" in code
    assert "order_id = dy.Int64(nullable=False, primary_key=True, min=0, max=1100)" in code
    assert '_CHANNEL_VALUES = ["phone", "shop", "web"]' in code


def test_composite_key_is_the_smallest_unique_combination() -> None:
    data = pl.DataFrame(
        {
            "day": [day for day in range(50) for _ in range(4)],
            "store": [store for _ in range(50) for store in range(4)],
            "amount": [1.5] * 200,
        }
    )
    suggested = load_schema(dd.suggest_schema(data, name="Sales"), "Sales")
    assert suggested.primary_key() == ["day", "store"]


def test_nearly_complete_column_is_nullable_with_a_completeness_bound() -> None:
    data = pl.DataFrame({"id": range(1_000), "email": [None] * 10 + ["a@b.io"] * 990})
    code = dd.suggest_schema(data, name="People", sensitive=[])
    assert "nullable=True, min_length=6, max_length=6" in code
    assert "expect at least 98.33% non-null" in code  # one-sided 95% Wilson bound, 990 of 1,000


def test_sensitive_columns_show_no_value() -> None:
    emails = [f"person{index}@example.org" for index in range(300)]
    data = pl.DataFrame({"id": range(300), "email": emails, "tier": ["gold", "iron"] * 150})
    code = dd.suggest_schema(data, name="People", sensitive=["email", "tier"])
    assert not any(value in code for value in [*emails, "gold", "iron", "example"])
    assert code.count('metadata={"pii": True}') == 2
    suggested = load_schema(code, "People")
    assert suggested.filter(data)[1].counts() == {}


def test_no_rows_is_refused() -> None:
    with pytest.raises(InvalidArgumentsError, match="it has no rows"):
        dd.suggest_schema(pl.DataFrame({"id": []}, schema={"id": pl.Int64}), name="Empty")


def test_unreadable_source_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "broken.parquet"
    broken.write_text("not parquet")
    with pytest.raises(InvalidArgumentsError, match="cannot be read as parquet"):
        dd.suggest_schema(broken, name="Broken")
    with pytest.raises(InvalidArgumentsError, match="no such file or folder"):
        dd.suggest_schema(tmp_path / "missing", name="Missing")


def test_unsupported_dtype_is_refused_naming_the_column() -> None:
    data = pl.DataFrame({"id": [1, 2], "tags": [["a"], ["b"]]})
    with pytest.raises(InvalidArgumentsError, match=r"'tags' \(List\(String\)\).*Drop or cast"):
        dd.suggest_schema(data, name="Tagged")


def test_parquet_folder_is_one_table(tmp_path: Path) -> None:
    for day in range(3):
        part = tmp_path / f"day={day}"
        part.mkdir()
        pl.DataFrame({"id": range(day * 10, day * 10 + 10)}).write_parquet(part / "0.parquet")
    code = dd.suggest_schema(tmp_path, name="Parts")
    assert "# 30 rows, no null" in code


def test_a_column_named_like_the_count_field_is_profiled() -> None:
    data = pl.DataFrame({"count": [1, 2, 3] * 50, "value": ["a", "b", "c"] * 50})
    code = dd.suggest_schema(data, name="Counts")
    assert "count = dy.Int64(nullable=False, is_in=_COUNT_VALUES)" in code


def test_a_sensitive_enum_is_refused_without_its_categories() -> None:
    data = pl.DataFrame(
        {"id": [1, 2], "diagnosis": ["flu", "cold"]},
        schema={"id": pl.Int64, "diagnosis": pl.Enum(["flu", "cold"])},
    )
    with pytest.raises(InvalidArgumentsError, match="'diagnosis' are Enums") as refusal:
        dd.suggest_schema(data, name="Visits", sensitive=["diagnosis"])
    assert "flu" not in str(refusal.value)
    assert "cold" not in str(refusal.value)


def test_columns_named_like_personal_data_show_no_value_unless_the_user_chooses() -> None:
    data = pl.DataFrame({"id": range(100), "phone_number": ["555-0100", "555-0199"] * 50})
    guessed = dd.suggest_schema(data, name="People")
    assert "555-0100" not in guessed
    assert "Treated as sensitive by their names (no value shown): phone_number." in guessed
    chosen = dd.suggest_schema(data, name="People", sensitive=[])
    assert "555-0100" in chosen

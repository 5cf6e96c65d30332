"""What a run reports of the rows: sensitive columns masked, every cell cut, every count exact.

Each test runs the one pipeline (`validation_results`, which `dd.asset` runs too) and looks at
what it yields, serialized as Dagster stores it in the event log.

No `from __future__ import annotations`: a `dy.Collection` reads its annotations at runtime.
"""

import contextlib
import itertools
from collections.abc import Iterable
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster._serdes import serialize_value

import dagster_dataframely as dd
from dagster_dataframely import errors, wiring
from dagster_dataframely._model.shown_values import CELL_LIMIT, MASK

KEY = dg.AssetKey(["people"])


class People(dy.Schema):
    person_id = dy.String(primary_key=True)
    email = dy.String(regex=r"^[^@]+@[^@]+$", metadata={"pii": True})
    salary = dy.Int64(min=0, metadata={"pii": True})
    city = dy.String(min_length=2)

    @dy.rule()
    def paid_in_town(cls) -> pl.Expr:
        """Nobody in Oz is paid."""
        return (pl.col("city") != "Oz") | (pl.col("salary") == 0)


PEOPLE = pl.DataFrame(
    {
        "person_id": ["p-1", "p-2", "p-3", "p-4"],
        "email": ["ann@private.example", "bob-at-private", "cy@private.example", "dee@x"],
        "salary": [31_337, 42_424, -77_777, 5_150],
        "city": ["Rome", "Oslo", "Oz", "Lima"],
    }
)
SECRETS = ("private.example", "bob-at-private", "dee@x", "31337", "42424", "77777", "5150")
"""Every value of the sensitive columns, as text: none may appear anywhere in an event."""


class Writer:
    def __init__(self) -> None:
        self.frames: list[pl.DataFrame] = []

    def __call__(self, frame: pl.DataFrame) -> str:
        self.frames.append(frame)
        return "memory://people_quarantine"


def _events(schema: type[dy.Schema], frame: pl.DataFrame, writer: Writer | None, **kw: Any) -> list:
    events: list[Any] = []
    with contextlib.suppress(errors.NoValidRowsError, errors.ValidationAbortError):
        events.extend(
            wiring.validation_results(schema, frame, valid_key=KEY, quarantine_writer=writer, **kw)
        )
    return events


def _logged(events: Iterable[Any]) -> str:
    """What Dagster stores of the events: their metadata, serialized."""
    return serialize_value([dict(event.metadata or {}) for event in events])


def _tables(events: Iterable[Any]) -> dict[str, dg.TableMetadataValue]:
    """Every table value yielded, keyed `<check or materialization> <metadata key>`."""
    found = {}
    for event in events:
        owner = getattr(event, "check_name", None) or "materialization"
        for key, value in (event.metadata or {}).items():
            if isinstance(value, dg.TableMetadataValue):
                found[f"{owner} {key}"] = value
    return found


@pytest.mark.parametrize("granularity", ["rule", "column", "schema"])
def test_a_sensitive_column_is_masked_in_every_sample_and_kept_in_the_quarantine(
    granularity: str,
) -> None:
    writer = Writer()
    events = _events(People, PEOPLE, writer, check_granularity=granularity)
    (table,) = [e for e in events if isinstance(e, dg.MaterializeResult)]
    samples = {
        key: value
        for key, value in _tables(events).items()
        if key.endswith(("valid_sample", "invalid_sample", "dy_failed_sample"))
    }
    assert {key.split()[-1] for key in samples} == {
        "dataframely/valid_sample",
        "dataframely/invalid_sample",
        "dy_failed_sample",
    }
    for key, value in samples.items():
        for record in value.records:
            assert record.data["email"] == MASK, key
            assert record.data["salary"] == MASK, key
            assert record.data["person_id"].startswith("p-"), key  # the rest is shown
    for secret in SECRETS:
        assert secret not in _logged(events), secret
    # The rows themselves keep every value: the table written and the quarantine.
    assert sorted(table.value["salary"]) == [5_150, 31_337]
    (quarantined,) = writer.frames
    assert sorted(quarantined["email"]) == ["bob-at-private", "cy@private.example"]
    assert sorted(quarantined["salary"]) == [-77_777, 42_424]


def test_the_statistics_show_a_sensitive_column_only_by_its_counts() -> None:
    events = _events(People, PEOPLE, Writer())
    (table,) = [e for e in events if isinstance(e, dg.MaterializeResult)]
    numeric = table.metadata["dataframely/valid_statistics/numeric"]
    (salary,) = [r.data for r in numeric.records if r.data["column"] == "salary"]
    assert salary == {
        "column": "salary",
        "count": 2,
        "null_count": 0,
        **dict.fromkeys(("mean", "std", "min", "p50", "max"), MASK),
    }


class Flags(dy.Schema):
    """Seven independent rules, so invalid rows fall into many sets of rules failed together."""

    id = dy.Int64(primary_key=True)
    a = dy.Int8(max=0)
    b = dy.Int8(max=0)
    c = dy.Int8(max=0)
    d = dy.Int8(max=0)
    e = dy.Int8(max=0)
    f = dy.Int8(max=0)
    g = dy.Int8(max=0)


def _flags(repeat: int) -> pl.DataFrame:
    """Every one of the 2**7 combinations of failed rules, `repeat` rows each (one all valid)."""
    combos = list(itertools.product([0, 1], repeat=7)) * repeat
    columns = list("abcdefg")
    return pl.DataFrame(
        {
            "id": range(len(combos)),
            **{c: [row[i] for row in combos] for i, c in enumerate(columns)},
        },
        schema={"id": pl.Int64, **dict.fromkeys(columns, pl.Int8)},
    )


def test_invalid_by_rules_lists_twenty_rule_sets_and_sums_the_rest_exactly() -> None:
    frame = _flags(3)
    events = _events(Flags, frame, Writer())
    (table,) = [e for e in events if isinstance(e, dg.MaterializeResult)]
    metadata = table.metadata or {}
    rows = [r.data for r in metadata["dataframely/invalid_by_rules"].records]
    assert len(rows) == 20
    assert rows[-1]["rules"] == "(108 other rule sets)"
    assert sum(row["rows"] for row in rows) == metadata["dataframely/invalid_count"] == 127 * 3
    # Largest first: the listed sets are the largest ones (here all of 3 rows), then the rest.
    assert [row["rows"] for row in rows[:-1]] == [3] * 19


def test_twenty_rule_sets_are_listed_whole() -> None:
    frame = _flags(1).head(21)  # the all-valid row, then 20 combinations
    events = _events(Flags, frame, Writer())
    (table,) = [e for e in events if isinstance(e, dg.MaterializeResult)]
    rows = [r.data for r in (table.metadata or {})["dataframely/invalid_by_rules"].records]
    assert len(rows) == 20
    assert not any(row["rules"].startswith("(") for row in rows)


class Blobs(dy.Schema):
    id = dy.Int64(primary_key=True)
    text = dy.String(max_length=10)
    raw = dy.Binary()
    parts = dy.List(dy.String())


def test_huge_cells_leave_every_event_small_and_every_count_exact() -> None:
    """Two rows of 5 MB cells in every text, binary and nested column, one of them invalid."""
    huge = "x" * 5_000_000
    frame = pl.DataFrame(
        {"id": [1, 2], "text": ["short", huge], "raw": [huge.encode()] * 2, "parts": [[huge]] * 2},
        schema={"id": pl.Int64, "text": pl.String, "raw": pl.Binary, "parts": pl.List(pl.String)},
    )
    writer = Writer()
    events = _events(Blobs, frame, writer, check_granularity="schema")
    for event in events:
        # A few dozen cells of at most the limit and their marker, and the tables around them.
        assert len(_logged([event])) < 40 * (CELL_LIMIT + 40) + 20_000, type(event)
    (table,) = [e for e in events if isinstance(e, dg.MaterializeResult)]
    metadata = table.metadata or {}
    assert metadata["dagster/row_count"] == 1
    assert metadata["dataframely/invalid_count"] == 1
    (invalid,) = metadata["dataframely/invalid_sample"].records
    assert invalid.data["text"] == f"{'x' * CELL_LIMIT}…[cut: 5000000 characters]"
    assert invalid.data["raw"] == f"{'78' * (CELL_LIMIT // 2)}…[cut: 5000000 bytes]"
    assert str(invalid.data["parts"]).endswith("…[cut: 5000004 characters]")
    # The rows written keep every byte.
    assert writer.frames[0]["text"].str.len_bytes().to_list() == [5_000_000]
    assert table.value["raw"].bin.size().to_list() == [5_000_000]


def test_a_sensitive_column_is_masked_in_a_collection_members_samples() -> None:
    class Book(dy.Collection):
        people: dy.LazyFrame[People]

    @dd.collection_asset(Book, quarantine=True)
    def book() -> dict[str, pl.DataFrame]:
        return {"people": PEOPLE}

    call = dd.testing.call_asset(book, asset_key="people")
    assert call.materialization is not None
    assert call.quarantine is not None
    text = _logged([call.materialization, *call.checks.values()])
    for secret in SECRETS:
        assert secret not in text, secret
    assert sorted(call.quarantine["salary"]) == [-77_777, 42_424]


# A dtype's text: an Enum prints its categories, which are the values of its column.

EMAILS = PEOPLE["email"].to_list()
MASKED_ENUM = "Enum(categories=[sensitive])"


@pytest.mark.parametrize(
    ("dtype", "shown"),
    [
        (pl.Enum(EMAILS), MASKED_ENUM),
        (pl.List(pl.Enum(EMAILS)), f"List({MASKED_ENUM})"),
        (pl.Struct({"address": pl.Enum(EMAILS)}), f"Struct({{'address': {MASKED_ENUM}}})"),
    ],
    ids=["enum", "list of enum", "struct of enum"],
)
def test_a_sensitive_column_of_another_dtype_is_named_without_its_categories(
    dtype: pl.DataType, shown: str
) -> None:
    """The column gate's error and check name the dtype, and no value the dtype prints."""
    email = pl.col("email").cast(pl.Enum(EMAILS))
    if isinstance(dtype, pl.List):
        email = pl.concat_list(email)
    elif isinstance(dtype, pl.Struct):
        email = pl.struct(email.alias("address"))
    frame = PEOPLE.with_columns(email.alias("email"))
    # `city` is not sensitive, and an Enum there keeps its categories in the text.
    frame = frame.with_columns(pl.col("city").cast(pl.Enum(["Rome", "Oslo", "Oz", "Lima"])))
    events: list[Any] = []
    with pytest.raises(errors.ColumnSchemaError) as raised:
        events.extend(wiring.validation_results(People, frame, valid_key=KEY))
    (check,) = events
    problems = {r.data["column"]: r.data for r in check.metadata["dy_schema__errors"].records}
    assert problems["email"]["actual"] == shown
    assert problems["city"]["actual"] == "Enum(categories=['Rome', 'Oslo', 'Oz', 'Lima'])"
    reported = [str(raised.value), _logged(events), repr(raised.value.problems)]
    for secret in SECRETS:
        assert not any(secret in text for text in reported), secret
    assert f"'email': expected String, actual {shown}" in str(raised.value)


def test_a_sensitive_column_of_any_dtype_shows_its_enum_masked_in_every_table() -> None:
    class Tiers(dy.Schema):
        person_id = dy.String(primary_key=True)
        tier = dy.Any(metadata={"pii": True})
        level = dy.Int64(min=0)

    tiers = ["tier-gold-ann", "tier-lead-bob"]
    frame = pl.DataFrame(
        {"person_id": ["p-1", "p-2"], "tier": tiers, "level": [1, -1]},
        schema_overrides={"tier": pl.Enum(tiers)},
    )
    writer = Writer()
    events = _events(Tiers, frame, writer)
    assert {key.split()[-1] for key in _tables(events)} >= {
        "dataframely/valid_sample",
        "dataframely/invalid_sample",
        "dy_failed_sample",
    }
    for key, table in _tables(events).items():
        types = {column.name: column.type for column in table.schema.columns}
        assert types.get("tier", MASKED_ENUM) == MASKED_ENUM, key
    assert not any(tier in _logged(events) for tier in tiers)
    (quarantined,) = writer.frames
    assert quarantined["tier"].dtype == pl.Enum(tiers)  # the rows keep their dtype

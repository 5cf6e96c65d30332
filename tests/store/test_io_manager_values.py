"""Through `QuarantineAwareIOManager`, a manager's metadata shows only what the output may show;
a bare manager that may record values the settings hide is named once in the run's log.

A manager of the unit suite records what dagster-polars' managers record (the first rows as a
table) plus a markdown preview; the integration suite runs dagster-polars itself.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest
from dagster._serdes import serialize_value

import dagster_dataframely as dd
from tests.parquet_io_manager import ParquetIOManager


class PreviewingIOManager(ParquetIOManager):
    """Records its first rows as a table and as markdown, as many frame managers do."""

    def get_metadata(self, context: dg.OutputContext, obj: Any) -> dict[str, Any]:
        frame = obj.collect() if isinstance(obj, pl.LazyFrame) else obj
        head = frame.head(5)
        return {
            "table": dg.MetadataValue.table(
                records=[dg.TableRecord(row) for row in head.iter_rows(named=True)],
                schema=dg.TableSchema(
                    columns=[dg.TableColumn(n, str(t)) for n, t in head.schema.items()]
                ),
            ),
            "preview": dg.MetadataValue.md(str(head)),
            "rows_seen": frame.height,
        }


class People(dy.Schema):
    person_id = dy.String(primary_key=True)
    email = dy.String(metadata={"pii": True})
    age = dy.Int64(min=0)


PEOPLE = pl.DataFrame(
    {
        "person_id": ["pid-alpha", "pid-beta", "pid-gamma"],
        "email": ["ann@private.example", "bob@private.example", "cy@private.example"],
        "age": [31_337, 42_424, -1],
    }
)
EMAILS = ("ann@private", "bob@private", "cy@private")


def _people(**settings: Any) -> dg.AssetsDefinition:
    @dd.asset(People, quarantine=True, **settings)
    def people() -> pl.DataFrame:
        return PEOPLE

    return people


def _materialization(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
    (event,) = result.asset_materializations_for_node("people")
    return dict(event.metadata)


def _run(asset: dg.AssetsDefinition, io_manager: object) -> dg.ExecuteInProcessResult:
    result = dg.materialize([asset], resources={"io_manager": io_manager})
    assert result.success
    return result


def _logged(result: dg.ExecuteInProcessResult) -> str:
    return serialize_value(result.all_events)


@pytest.mark.parametrize("staged", [False, True], ids=["wrapped", "wrapped, staged"])
def test_the_wrapper_drops_the_managers_rows_when_the_samples_are_off(
    tmp_path: Path, staged: bool
) -> None:
    wrapped = dd.QuarantineAwareIOManager(
        io_manager=PreviewingIOManager(base_dir=str(tmp_path)), staged_writes=staged
    )
    result = _run(_people(row_sample=0, max_failure_samples=0, statistics=False), wrapped)
    metadata = _materialization(result)
    assert "table" not in metadata
    assert "preview" not in metadata
    assert metadata["rows_seen"] == dg.MetadataValue.int(2)  # a count: kept
    assert "path" in metadata
    text = _logged(result)
    for value in (*EMAILS, "pid-alpha", "pid-beta", "pid-gamma", "31337", "42424"):
        assert value not in text, value
    # The rows themselves are all stored.
    assert pl.read_parquet(tmp_path / "people.parquet")["age"].to_list() == [31_337, 42_424]
    assert pl.read_parquet(tmp_path / "people_quarantine.parquet")["age"].to_list() == [-1]


def test_the_wrapper_leaves_a_sensitive_column_out_of_the_managers_rows(tmp_path: Path) -> None:
    wrapped = dd.QuarantineAwareIOManager(io_manager=PreviewingIOManager(base_dir=str(tmp_path)))
    result = _run(_people(), wrapped)
    metadata = _materialization(result)
    assert [r.data["person_id"] for r in metadata["table"].records] == ["pid-alpha", "pid-beta"]
    assert all("email" not in r.data for r in metadata["table"].records)
    assert "preview" not in metadata
    text = _logged(result)
    for email in EMAILS:
        assert email not in text, email
    stored = pl.read_parquet(tmp_path / "people_quarantine.parquet")
    assert stored["email"].to_list() == ["cy@private.example"]


@dg.asset
def raw_people() -> pl.DataFrame:
    """A plain asset: no schema says which of its columns are sensitive."""
    return PEOPLE


@pytest.mark.parametrize("staged", [False, True], ids=["wrapped", "wrapped, staged"])
def test_the_wrapper_drops_the_previews_of_a_plain_asset_by_default(
    tmp_path: Path, staged: bool
) -> None:
    bare = _run(raw_people, PreviewingIOManager(base_dir=str(tmp_path / "bare")))
    assert "ann@private.example" in _logged(bare)  # the manager does record the rows
    wrapped = dd.QuarantineAwareIOManager(
        io_manager=PreviewingIOManager(base_dir=str(tmp_path)), staged_writes=staged
    )
    result = _run(raw_people, wrapped)
    (event,) = result.asset_materializations_for_node("raw_people")
    metadata = dict(event.metadata)
    assert set(metadata) == {"path", "rows_seen"}  # the table and the markdown dropped
    assert metadata["rows_seen"] == dg.MetadataValue.int(3)
    text = _logged(result)
    for value in (*EMAILS, "pid-alpha", "31337"):
        assert value not in text, value
    assert pl.read_parquet(tmp_path / "raw_people.parquet").equals(PEOPLE)


def test_with_plain_asset_previews_the_wrapper_passes_a_plain_assets_metadata_on(
    tmp_path: Path,
) -> None:
    def metadata(result: dg.ExecuteInProcessResult) -> dict[str, Any]:
        (event,) = result.asset_materializations_for_node("raw_people")
        return dict(event.metadata)

    bare = metadata(_run(raw_people, PreviewingIOManager(base_dir=str(tmp_path / "b"))))
    wrapped = dd.QuarantineAwareIOManager(
        io_manager=PreviewingIOManager(base_dir=str(tmp_path)), plain_asset_previews=True
    )
    through = metadata(_run(raw_people, wrapped))
    assert through["table"] == bare["table"]
    assert through["preview"] == bare["preview"]


def _warnings(asset: dg.AssetsDefinition, io_manager: object) -> list[str]:
    """The warnings a run of `asset` logged, as its event log stores them."""
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize([asset], resources={"io_manager": io_manager}, instance=instance)
    assert result.success
    return [
        record.user_message
        for record in instance.all_logs(result.run_id)
        if record.level >= logging.WARNING
    ]


@pytest.mark.parametrize(
    ("settings", "hidden"),
    [
        ({"row_sample": 0}, "'people' (row_sample=0; sensitive columns 'email')"),
        ({}, "'people' (sensitive columns 'email')"),
    ],
    ids=["samples off", "sensitive column"],
)
def test_a_bare_manager_that_may_record_values_is_named_once(
    tmp_path: Path, settings: dict[str, Any], hidden: str
) -> None:
    (warning,) = _warnings(_people(**settings), PreviewingIOManager(base_dir=str(tmp_path)))
    assert f"{hidden}: PreviewingIOManager records whatever it records" in warning
    assert "dd.QuarantineAwareIOManager(io_manager=...)" in warning


def test_nothing_is_said_where_nothing_is_hidden_or_nothing_recorded(tmp_path: Path) -> None:
    class Plain(dy.Schema):
        a = dy.Int64()

    @dd.asset(Plain)
    def plain() -> pl.DataFrame:
        return pl.DataFrame({"a": [1]})

    previewing = PreviewingIOManager(base_dir=str(tmp_path / "p"))
    assert _warnings(plain, previewing) == []  # samples on, nothing sensitive
    wrapped = dd.QuarantineAwareIOManager(io_manager=PreviewingIOManager(base_dir=str(tmp_path)))
    assert _warnings(_people(row_sample=0), wrapped) == []  # the wrapper filters
    # A path manager adding nothing to Dagster's own `path` records no value.
    assert _warnings(_people(row_sample=0), ParquetIOManager(base_dir=str(tmp_path / "q"))) == []


# The assets a step reads: a plain asset's manager records its rows before the step runs.


def _reading(schema: type[dy.Schema]) -> dg.AssetsDefinition:
    @dd.asset(schema, name="people")
    def people(raw_people: pl.DataFrame) -> pl.DataFrame:
        return raw_people.filter(pl.col("age") >= 0).select(schema.column_names())

    return people


def _upstream_warnings(
    assets: list[dg.AssetsDefinition], io_manager: object, *, separately: bool = False
) -> list[str]:
    """The warnings about what a step reads, of one run of `assets`, or one run of each."""
    instance = dg.DagsterInstance.ephemeral()
    warnings = []
    selections = [[a.key] for a in assets] if separately else [None]
    for selection in selections:
        result = dg.materialize(
            assets, selection=selection, resources={"io_manager": io_manager}, instance=instance
        )
        assert result.success
        warnings += [
            record.user_message
            for record in instance.all_logs(result.run_id)
            if record.level >= logging.WARNING and "assets this step reads" in record.user_message
        ]
    return warnings


@pytest.mark.parametrize("separately", [False, True], ids=["one run", "the reader run later"])
def test_a_step_names_the_asset_it_reads_whose_preview_shows_a_column_it_marks(
    tmp_path: Path, separately: bool
) -> None:
    previewing = PreviewingIOManager(base_dir=str(tmp_path))
    assets = [raw_people, _reading(People)]
    (warning,) = _upstream_warnings(assets, previewing, separately=separately)
    assert "'raw_people': `table` shows 'email'" in warning
    assert "return a pl.LazyFrame from such an asset" in warning
    assert "dd.QuarantineAwareIOManager(io_manager=...)" in warning
    for email in EMAILS:
        assert email not in warning


def test_nothing_is_said_of_what_a_step_reads_where_no_preview_shows_a_marked_column(
    tmp_path: Path,
) -> None:
    class Ages(dy.Schema):
        person_id = dy.String(primary_key=True)
        age = dy.Int64(min=0)

    previewing = PreviewingIOManager(base_dir=str(tmp_path / "p"))
    assert _upstream_warnings([raw_people, _reading(Ages)], previewing) == []  # none marked
    wrapped = dd.QuarantineAwareIOManager(io_manager=PreviewingIOManager(base_dir=str(tmp_path)))
    assert _upstream_warnings([raw_people, _reading(People)], wrapped) == []  # dropped

    # A validated asset read by another: its samples show the column masked, not its values.
    @dd.asset(People, name="raw_people", quarantine=True)
    def validated() -> pl.DataFrame:
        return PEOPLE

    masking = dd.QuarantineAwareIOManager(
        io_manager=PreviewingIOManager(base_dir=str(tmp_path / "v"))
    )
    assert _upstream_warnings([validated, _reading(People)], masking) == []
    # A direct call reads what the caller passes, not a stored asset.
    call = dd.testing.call_asset(_reading(People), {"raw_people": PEOPLE})
    assert call.materialization is not None

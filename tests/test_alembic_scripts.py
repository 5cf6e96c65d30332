"""What the suite's reuse of Dagster's migration scripts relies on (tests/alembic_scripts.py)."""

import dagster as dg
import sqlalchemy as db
from alembic.config import Config
from alembic.script import ScriptDirectory

from tests.alembic_scripts import scripts_read


@dg.asset
def one() -> int:
    return 1


def _stamped(instance: dg.DagsterInstance) -> set[str]:
    # NOTE: the in-memory run storage is a SQLite storage; its engine holds the stamped revision.
    with instance.run_storage.connect() as connection:  # type: ignore[attr-defined]
        rows = connection.execute(db.text("SELECT version_num FROM alembic_version"))
        return {row[0] for row in rows}


def test_a_fresh_instance_stamps_through_the_scripts_read_once() -> None:
    first = dg.DagsterInstance.ephemeral()
    read = dict(scripts_read())
    second = dg.DagsterInstance.ephemeral()

    assert read, "Dagster no longer stamps its storages through ScriptDirectory.from_config"
    assert scripts_read() == read
    for location, scripts in read.items():
        assert scripts is ScriptDirectory.from_config(_config(location))
    heads = {head for scripts in read.values() for head in scripts.get_heads()}
    assert _stamped(first) == _stamped(second)
    assert _stamped(first) <= heads


def test_each_instance_keeps_its_own_storage() -> None:
    first = dg.DagsterInstance.ephemeral()
    second = dg.DagsterInstance.ephemeral()

    dg.materialize([one], instance=first)

    assert first.get_latest_materialization_event(one.key) is not None
    assert second.get_latest_materialization_event(one.key) is None
    assert len(first.get_runs()) == 1
    assert not second.get_runs()


def _config(location: str) -> Config:
    config = Config()
    config.set_main_option("script_location", location)
    return config

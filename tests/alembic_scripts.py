"""Each test process reads Dagster's storage migrations once, not once per instance.

`dg.materialize` without an instance, and `DagsterInstance.ephemeral()`, make a fresh in-memory
instance whose run, event and schedule storages are each stamped with the newest migration;
alembic builds that revision from the migration scripts, which it loads from disk on every
stamp (about 90 files, three times per instance). Three quarters of what a small materialization
costs in a test was that loading. The scripts do not change while the tests run, so one
`ScriptDirectory` per script location serves every stamp; each instance still gets storages of
its own (tests/test_alembic_scripts.py pins both).
"""

from alembic.config import Config
from alembic.script import ScriptDirectory

_read: dict[str, ScriptDirectory] = {}
_from_config = ScriptDirectory.from_config


def _reused(config: Config) -> ScriptDirectory:
    location = config.get_main_option("script_location")
    if location is None:
        return _from_config(config)
    if location not in _read:
        _read[location] = _from_config(config)
    return _read[location]


def reuse_alembic_scripts() -> None:
    """Make alembic read each folder of migration scripts once in this process."""
    ScriptDirectory.from_config = _reused  # type: ignore[method-assign]


def scripts_read() -> dict[str, ScriptDirectory]:
    """The folders of migration scripts read so far, by location (for the characterization test)."""
    return _read

"""The wrapper hands each wrapped manager its own config, read when the resource starts.

A `ConfigurableIOManagerFactory` reaches `QuarantineAwareIOManager.create_io_manager` already
turned into the manager it builds, which then reads its settings from each context's
`resource_config`. A value a `dg.EnvVar` gives is known only when the resource starts, so
that is when the wrapper reads the config, and checks it for credentials.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import dataframely as dy
import polars as pl
import pytest

import dagster_dataframely as dd

KEY = "AKIAUNITKEY0001"
SECRET = "unitfirst/unitsecond"


class KeyedFiles(dg.IOManager):
    """Stores by asset key under the directory its context's `resource_config` names."""

    def _path(self, context: dg.OutputContext | dg.InputContext) -> Path:
        root = Path(context.resource_config["root"])
        return root.joinpath(*context.asset_key.path).with_suffix(".parquet")

    def handle_output(self, context: dg.OutputContext, obj: pl.DataFrame) -> None:
        path = self._path(context)
        path.parent.mkdir(parents=True, exist_ok=True)
        obj.write_parquet(path)

    def load_input(self, context: dg.InputContext) -> pl.DataFrame:
        return pl.read_parquet(self._path(context))


class KeyedFilesFactory(dg.ConfigurableIOManagerFactory[KeyedFiles]):
    """A factory as DuckDB's is one: the manager it builds reads the config from the context."""

    root: str

    def create_io_manager(self, context: dg.InitResourceContext) -> KeyedFiles:
        return KeyedFiles()


class Orders(dy.Schema):
    order_id = dy.String(primary_key=True)
    amount = dy.Float64(nullable=False, min=0.0)


@dd.asset(Orders, quarantine=True)
def table() -> pl.DataFrame:
    return pl.DataFrame({"order_id": ["a", "b"], "amount": [1.0, -1.0]})


@pytest.mark.parametrize("argument", ["io_manager", "quarantine_io_manager"])
def test_an_env_var_set_after_the_wrapper_was_built_reaches_the_wrapped_manager(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argument: str
) -> None:
    managers: dict[str, Any] = {
        "io_manager": KeyedFilesFactory(root=str(tmp_path / "other")),
        argument: KeyedFilesFactory(root=dg.EnvVar("DD_UNIT_ROOT")),
    }
    wrapper = dd.QuarantineAwareIOManager(**managers)
    monkeypatch.setenv("DD_UNIT_ROOT", str(tmp_path / "from-env"))

    result = dg.materialize([table], resources={"io_manager": wrapper})

    assert result.success
    # Without a quarantine manager of its own, the quarantine goes to `io_manager`.
    tables = "from-env" if argument == "io_manager" else "other"
    assert pl.read_parquet(tmp_path / tables / "table.parquet")["order_id"].to_list() == ["a"]
    stored = pl.read_parquet(tmp_path / "from-env" / "table_quarantine.parquet")
    assert stored["order_id"].to_list() == ["b"]


def test_an_env_var_holding_credentials_is_refused_when_the_resource_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrapper = dd.QuarantineAwareIOManager(io_manager=KeyedFilesFactory(root=dg.EnvVar("DD_ROOT")))
    monkeypatch.setenv("DD_ROOT", f"s3://{KEY}:{SECRET}@bucket/w")

    result = dg.materialize([table], resources={"io_manager": wrapper}, raise_on_error=False)

    assert not result.success
    events = [str(event) for event in result.all_events]
    assert any("CredentialsInUrlError" in event for event in events)
    for event in events:
        assert KEY not in event
        assert "unitfirst" not in event
        assert "unitsecond" not in event

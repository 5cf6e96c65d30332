"""The demo code location (`make demo`, `make ui`) with its own IO managers.

It stores with `PolarsParquetIOManager` and `DuckDBPolarsIOManager`, so it lives here, beside
the other tests of those managers, and not in the unit suite.

`make demo` and `make ui` share one Dagster instance, whose history the demo adds to: the demo
runs in-process on the instance at `$DAGSTER_HOME` and `make ui` opens the same home, so a user
who runs the demo and then opens the UI sees its runs, checks and quarantine there, and running
the demo again adds runs instead of deleting the ones the UI showed.
"""

import datetime as dt
import importlib
import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely_demo import anomaly, definitions
from dagster_dataframely_demo import demo as demo_script_module
from dagster_dataframely_demo._data import marketplace_orders, orders_for_day, storefront_orders
from dagster_dataframely_demo.order_book import order_headers
from dagster_dataframely_demo.schema import Orders

from .conftest import QUIET, found_in_event_log, materialization_metadata, shared_instance

MONDAY = "2026-01-05"

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The demo's definitions, re-imported so they read a demo directory under `tmp_path`."""
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_DEMO_DIR", str(tmp_path / "demo"))
    yield importlib.reload(definitions)
    monkeypatch.delenv("DAGSTER_DATAFRAMELY_DEMO_DIR")
    importlib.reload(definitions)


def test_the_demo_code_location_loads_and_materializes(demo: ModuleType) -> None:
    defs: dg.Definitions = demo.defs
    dg.Definitions.validate_loadable(defs)
    assets = list(defs.assets or [])
    unpartitioned = [a for a in assets if getattr(a, "partitions_def", None) is None]
    runs = {"resources": defs.resources, "instance": shared_instance(), "run_config": QUIET}

    result = dg.materialize([*unpartitioned, *(defs.asset_checks or [])], **runs)

    warehouse: Path = demo.WAREHOUSE
    assert pl.read_parquet(warehouse / "storefront_lines.parquet").height == 12
    assert pl.read_parquet(warehouse / "marketplace_lines.parquet").height == 12
    assert pl.read_parquet(warehouse / "marketplace_lines_quarantine.parquet").height == 8
    triage = materialization_metadata(result, dg.AssetKey("quarantine_triage"))
    assert triage["dy_rule__amount__min"] == 1
    all_orders = materialization_metadata(result, dg.AssetKey(["analytics", "all_orders"]))
    assert all_orders["dagster/row_count"] == 24
    # The Collection: one orders row fails its own rule; of the lines, one fails its own rule
    # and the filter removes the line of that invalid order and the line of an unknown order.
    book = warehouse / "order_book"
    assert pl.read_parquet(book / "orders.parquet").height == 4
    assert pl.read_parquet(book / "orders_quarantine.parquet").height == 1
    assert pl.read_parquet(book / "lines.parquet").height == 7
    lines_quarantine = pl.read_parquet(book / "lines_quarantine.parquet")
    removed_by_filter = lines_quarantine.filter(
        pl.col("dy_filter__every_line_has_an_order") == "invalid"
    )
    assert sorted(removed_by_filter["order_id"]) == ["ORD-000103", "ORD-000109"]
    assert lines_quarantine.height == 3

    # The features module: a warning rule keeps the line whose only fault is its channel.
    reviewed = materialization_metadata(result, dg.AssetKey("reviewed_lines"))
    assert reviewed["dagster/row_count"] == 13
    assert reviewed["dataframely/warning_count"] == 1
    # dd.table_checks reads the plain asset's stored table and reports on it.
    legacy = {
        c.check_name: c
        for c in result.get_asset_check_evaluations()
        if c.asset_key == dg.AssetKey("legacy_orders")
    }
    assert not legacy["dy_rule__amount__min"].passed
    assert legacy["dy_rule__amount__min"].severity == dg.AssetCheckSeverity.WARN
    assert pl.read_parquet(warehouse / "legacy_orders.parquet").height == 16
    # Declared by their return hints, without a schema argument: Orders' checks and version.
    orders_checks = {spec.name for spec in demo.daily_orders.check_specs}
    for hinted in (demo.storefront_lines, demo.features.split_by_channel):
        for key in hinted.keys:
            assert {s.name for s in hinted.check_specs if s.asset_key == key} == orders_checks
            assert hinted.code_versions_by_key[key] == dd.wiring.schema_version(Orders)
    # dd.multi_asset: two validated outputs of one step, one with a quarantine.
    assert pl.read_parquet(warehouse / "web_lines.parquet").height == 12
    assert pl.read_parquet(warehouse / "marketplace_review_quarantine.parquet").height == 8
    # Staged writes leave the table in place and no staging file behind.
    assert pl.read_parquet(warehouse / "staged_lines.parquet").height == 24
    assert not [p for p in warehouse.iterdir() if p.name.startswith(".")]

    partitioned = [demo.daily_orders]
    daily_orders = dg.AssetKey("daily_orders")
    monday = dg.materialize(partitioned, partition_key="2026-01-05", **runs)
    sunday = dg.materialize(partitioned, partition_key="2026-01-04", **runs)
    assert [e.asset_key for e in monday.get_asset_materialization_events()] == [daily_orders]
    assert (warehouse / "daily_orders" / "2026-01-05.parquet").exists()
    assert sunday.get_asset_materialization_events() == []
    assert all(check.passed for check in sunday.get_asset_check_evaluations())
    assert not (warehouse / "daily_orders" / "2026-01-04.parquet").exists()


def test_no_customer_email_the_demo_holds_reaches_its_event_log(demo: ModuleType) -> None:
    """The raw assets hold the e-mail addresses its schemas mark sensitive, and hand them on lazily.

    Every run of the demo's assets is scanned whole (each event, its metadata and message, each
    log line) for every address in the rows it reads and validates.
    """
    defs: dg.Definitions = demo.defs
    assets = list(defs.assets or [])
    unpartitioned = [a for a in assets if getattr(a, "partitions_def", None) is None]
    partitioned = [a for a in assets if getattr(a, "partitions_def", None) is not None]
    instance = shared_instance()
    runs = {"resources": defs.resources, "instance": instance, "run_config": QUIET}
    results = [
        dg.materialize([*unpartitioned, *(defs.asset_checks or [])], **runs),
        dg.materialize(partitioned, partition_key=MONDAY, **runs),
    ]
    assert all(result.success for result in results)
    entries = [entry for result in results for entry in instance.all_logs(result.run_id)]
    raw = [
        storefront_orders(),
        marketplace_orders(),
        orders_for_day(dt.date.fromisoformat(MONDAY)),
        order_headers(),
    ]
    emails = {email for frame in raw for email in frame["customer_email"] if email is not None}
    assert len(emails) > 20
    assert {"no-at-sign", "chloe(at)example.com"} <= emails
    assert found_in_event_log(entries, emails) == []
    # The raw assets were materialized, and the scan sees the values the samples do show.
    materialized = {key for result in results for key in _materialized(result)}
    plain = [demo.raw_storefront_orders, demo.raw_marketplace_orders, demo.raw_order_headers]
    plain += [demo.raw_order_lines, demo.features.legacy_orders]
    assert {asset.key for asset in plain} <= materialized
    products = list(storefront_orders()["product_name"].unique())
    assert found_in_event_log(entries, products)


def _materialized(result: dg.ExecuteInProcessResult) -> set[dg.AssetKey]:
    return {event.asset_key for event in result.get_asset_materialization_events()}


@pytest.fixture
def demo_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The demo's script, re-imported to write under `tmp_path`, its home inside, as in `.demo/`."""
    home = tmp_path / "demo" / "dagster_home"
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_DEMO_DIR", str(tmp_path / "demo"))
    importlib.reload(definitions)
    yield importlib.reload(demo_script_module)
    monkeypatch.delenv("DAGSTER_DATAFRAMELY_DEMO_DIR")
    importlib.reload(definitions)
    importlib.reload(demo_script_module)


@dg.asset
def launched_from_the_ui() -> None:
    """Stands for a run the user started in the UI before running the demo again."""


def test_the_demo_adds_its_runs_to_the_history_the_ui_shows(
    demo_script: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    # One run of the unpartitioned assets, one per day, and the replayed incident's runs.
    replayed = anomaly.QUIET_DAYS + 1
    runs_per_demo = 1 + len(demo_script.daily.get_partition_keys()) + replayed
    with dg.DagsterInstance.get() as instance:
        earlier = dg.materialize([launched_from_the_ui], instance=instance).run_id

    demo_script.main()

    with dg.DagsterInstance.get() as instance:
        records = instance.get_run_records()
        assert len(records) == 1 + runs_per_demo
        assert instance.get_run_by_id(earlier) is not None
        assert all(record.dagster_run.is_success for record in records)
        marketplace = dg.AssetKey("marketplace_lines")
        assert len(instance.fetch_materializations(marketplace, limit=10).records) == 1
        failing_checks = {
            event.dagster_event.event_specific_data.check_name
            for record in records
            for event in instance.all_logs(
                record.dagster_run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION
            )
            if event.dagster_event is not None
            and event.dagster_event.event_specific_data.asset_key == marketplace
            and not event.dagster_event.event_specific_data.passed
        }
        assert "dy_rule__primary_key" in failing_checks
        # The replayed incident, marked after its run: an observation naming the broken run.
        (mark,) = instance.fetch_observations(anomaly.app_orders.key, limit=10).records
        assert mark.asset_observation is not None
        broken = str(mark.asset_observation.metadata["dataframely/incident_run"].value)
        assert instance.get_run_by_id(broken) is not None
        # The demo uses the setup the docs recommend, and no run of it warns of anything.
        warnings = [
            entry.user_message
            for record in records
            for entry in instance.all_logs(record.dagster_run.run_id)
            if entry.level >= logging.WARNING
        ]
        assert warnings == []
    printed = capsys.readouterr().out
    assert printed.index("order_book/orders") < printed.index("order_book/lines")
    assert "dy_filter__every_line_has_an_order" in printed
    assert f"now holds {1 + runs_per_demo} runs" in printed
    assert "make ui" in printed
    # The check that learns fired on the replayed null burst, and on nothing else.
    fired = [line for line in printed.splitlines() if line.startswith("  fired  ")]
    assert len(fired) == 1
    assert fired[0].startswith("  fired             dy_anomaly__channel__null_fraction: ")
    assert "above the expected" in fired[0]
    # What each feature of the demo did, said by `make demo`.
    assert "rows warned       1 (written: they failed warning rules only)" in printed
    assert "dd.table_checks: the schema's checks on a plain asset's stored table" in printed
    assert "dd.multi_asset: one output of the step split_by_channel" in printed
    assert "QuarantineAwareIOManager(staged_writes=True)" in printed
    # The assets declared by their return hints, a dd.asset and both outputs of a multi-asset.
    hinted = [line for line in printed.splitlines() if line.startswith("  schema from hint  ")]
    assert hinted == [
        "  schema from hint  -> Annotated[pl.DataFrame, Orders]",
        "  schema from hint  -> ChannelSplit, whose field web_lines is "
        "Annotated[pl.DataFrame, Orders]",
        "  schema from hint  -> ChannelSplit, whose field marketplace_review is "
        "Annotated[pl.DataFrame, Orders]",
    ]


def test_make_demo_and_make_ui_use_one_dagster_home_with_telemetry_off() -> None:
    planned = subprocess.run(
        ["make", "--dry-run", "--always-make", "demo", "ui"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.replace("\\\n\t", " ")

    home = f"DAGSTER_HOME={ROOT / '.demo' / 'dagster_home'} "
    (demo_line,) = [
        line for line in planned.splitlines() if "dagster_dataframely_demo.demo" in line
    ]
    (ui_line,) = [line for line in planned.splitlines() if " dev " in line]
    assert home in demo_line
    assert " .venv-demo/bin/python -m dagster_dataframely_demo.demo" in demo_line
    assert home in ui_line
    assert "scripts/ui.py --cwd examples" in ui_line  # stops the server within seconds
    assert f"{ROOT}/.venv-demo/bin/dg dev -h 127.0.0.1 " in ui_line  # what Dagster recommends
    assert "telemetry:\\n  enabled: false" in planned
    assert (
        "sync --frozen --no-default-groups --extra parquet --extra duckdb --group demo" in planned
    )

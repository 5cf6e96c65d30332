"""`make demo`: materialize the example code location once and say what happened, per asset.

Runs in-process on the Dagster instance at `$DAGSTER_HOME`, which `make demo` and `make ui` both
set to `.demo/dagster_home`: the UI shows these runs, checks and quarantines, and each run of the
demo adds to that history instead of replacing it. The tables, the quarantines and the DuckDB file
stay under `.demo/` for you to open afterwards; each run overwrites them.
"""

import os
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

import dagster_dataframely as dd

from .anomaly import replay_incident
from .definitions import DEMO_DIR, DUCKDB_FILE, HINTED, WAREHOUSE, all_orders, daily, defs
from .features import SHOWS

QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


@dataclass
class Summary:
    """What the runs did to one validated asset."""

    partitions: int = 0
    materialized: int = 0
    written: int = 0
    quarantined: int = 0
    warned: int = 0
    failing_checks: set[str] = field(default_factory=set)
    table: str = ""
    quarantine: str = ""


def main() -> None:
    WAREHOUSE.mkdir(parents=True, exist_ok=True)
    instance = _instance()
    assets = list(defs.assets or [])
    plain = [a for a in assets if getattr(a, "partitions_def", None) is None]
    partitioned = [a for a in assets if getattr(a, "partitions_def", None) is not None]
    # The checks of tables the package did not build run with the assets they check.
    plain += list(defs.asset_checks or [])
    runs = [dg.materialize(plain, resources=defs.resources, instance=instance, run_config=QUIET)]
    runs += [
        dg.materialize(
            partitioned,
            resources=defs.resources,
            instance=instance,
            partition_key=day,
            run_config=QUIET,
        )
        for day in daily.get_partition_keys()
    ]
    summaries: dict[dg.AssetKey, Summary] = defaultdict(Summary)
    for run in runs:
        _read(run, summaries)
    _print(summaries, failed=sum(not run.success for run in runs))
    _print_replayed_incident(replay_incident(instance, defs.resources, QUIET))
    _print_where_the_runs_are(instance)


def _print_replayed_incident(fired: tuple[dg.AssetCheckEvaluation, ...]) -> None:
    print("app_orders  (dd.AnomalyCheck: a check that learns, on a replayed incident)")
    print("  replayed          quiet days, then one whose channel arrived half empty")
    for evaluation in fired:
        print(f"  fired             {evaluation.check_name}: {evaluation.description}")
    if not fired:
        print("  fired             nothing: the check did not see the incident")
    print("  then              dd.mark_incident: the broken run never trains a band again\n")


def _instance() -> dg.DagsterInstance:
    """The instance at `$DAGSTER_HOME`, which keeps the runs for the UI; else a throwaway one."""
    if os.environ.get("DAGSTER_HOME"):
        return dg.DagsterInstance.get()
    return dg.DagsterInstance.ephemeral()


def _print_where_the_runs_are(instance: dg.DagsterInstance) -> None:
    if instance.is_ephemeral:
        print("DAGSTER_HOME is not set, so these runs were not kept: `make demo` keeps them.")
        return
    runs = instance.get_runs_count()
    print(f"The Dagster instance at {os.environ['DAGSTER_HOME']} now holds {runs} runs.")
    print("See them, their checks and the quarantine in the Dagster UI: make ui")
    print("Start over with an empty history: make demo-reset")


def _read(run: dg.ExecuteInProcessResult, summaries: dict[dg.AssetKey, Summary]) -> None:
    validated = {check.asset_key for check in run.get_asset_check_evaluations()}
    for key in validated:
        summaries[key].partitions += 1
    for check in run.get_asset_check_evaluations():
        if not check.passed:
            summaries[check.asset_key].failing_checks.add(check.check_name)
    for event in run.get_asset_materialization_events():
        key = event.materialization.asset_key
        if key not in validated:
            continue
        metadata = event.materialization.metadata
        summary = summaries[key]
        summary.materialized += 1
        summary.written += _count(metadata.get("dagster/row_count"))
        summary.quarantined += _count(metadata.get("dataframely/invalid_count"))
        summary.warned += _count(metadata.get("dataframely/warning_count"))
        summary.table = _table_location(metadata)
        if "dataframely/invalid_count" in metadata:
            summary.quarantine = _quarantine_location(key, event.partition)


def _table_location(metadata: Mapping[str, Any]) -> str:
    """The file a parquet manager wrote, or the table DuckDB's manager wrote, for a reader."""
    if "path" in metadata:
        return str(getattr(metadata["path"], "value", metadata["path"]))
    if "dagster/table_name" in metadata:  # `<database path>.<schema>.<table>`
        table = str(getattr(metadata["dagster/table_name"], "value", ""))
        return f"{DUCKDB_FILE.name}: table {'.'.join(table.rsplit('.', 2)[-2:])}"
    return ""


def _quarantine_location(key: dg.AssetKey, partition: str | None) -> str:
    """Where the asset's IO manager put the invalid rows, for a reader to open."""
    if key == all_orders.key:
        return f"{DUCKDB_FILE.name}: table analytics.all_orders_quarantine"
    path = dd.wiring.quarantine_path(key, WAREHOUSE, partition)
    return str(path.parent if partition else path)


def _count(value: object) -> int:
    raw = getattr(value, "value", value)
    return raw if isinstance(raw, int) else 0


def _print(summaries: dict[dg.AssetKey, Summary], failed: int) -> None:
    outcome = "every run succeeded" if not failed else f"{failed} runs FAILED"
    print(f"Materialized the demo code location: {outcome}.")
    print(f"Everything is under {DEMO_DIR}\n")
    declared = [
        key
        for assets in defs.assets or []
        for key in getattr(assets, "keys_by_output_name", {}).values()
    ]
    for key in sorted(summaries, key=lambda k: declared.index(k) if k in declared else 0):
        summary = summaries[key]
        skipped = summary.partitions - summary.materialized
        heading = key.to_user_string()
        if summary.partitions > 1:
            heading += f"  ({summary.partitions} daily partitions, {skipped} skipped: no data)"
        print(heading)
        if key in SHOWS:
            print(f"  shows             {SHOWS[key]}")
        if key in HINTED:
            print(f"  schema from hint  {HINTED[key]}")
        print(f"  rows written      {summary.written}")
        print(f"  rows quarantined  {summary.quarantined}")
        if summary.warned:
            print(f"  rows warned       {summary.warned} (written: they failed warning rules only)")
        print(f"  failing checks    {', '.join(sorted(summary.failing_checks)) or 'none'}")
        if summary.table:
            where = summary.table if summary.partitions == 1 else f"{summary.table} (last one)"
            print(f"  table             {where}")
        if summary.quarantine:
            print(f"  quarantine        {summary.quarantine}")
        print()


if __name__ == "__main__":
    main()

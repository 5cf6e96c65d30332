"""Checks that remember: the volume check and the undeclared columns, read from the instance.

A table that lost most of its rows passes every rule, and a source that gained a column changes
nothing a rule sees. Both checks compare a run with the asset's own recent materializations,
read through Dagster's public API when the run starts, and are off (reading nothing) unless the
quality policy asks for them.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely import errors
from dagster_dataframely._model.asset_settings import OutputSettings
from dagster_dataframely._model.schema import read_schema
from dagster_dataframely._run.checks.history import (
    History,
    Point,
    Series,
    read_history,
    read_range_history,
)
from dagster_dataframely._run.checks.registry import series_of
from dagster_dataframely._run.validated_output import ValidatedOutput
from tests.asset_support import (
    QUIET,
    AssetContext,
    SmallOrders,
    call_checks,
    call_tables,
    collect,
    run_checks,
    run_tables,
    step_error,
    value,
)
from tests.parquet_io_manager import ParquetIOManager

WARN = dg.AssetCheckSeverity.WARN
ERROR = dg.AssetCheckSeverity.ERROR
REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])


def frame(rows: int, *, negative: int = 0, **extra: list[Any]) -> pl.DataFrame:
    """`rows` orders, the last `negative` failing `amount|min`, plus any `extra` columns."""
    amounts = [1.0 if i < rows - negative else -1.0 for i in range(rows)]
    orders = pl.DataFrame({"order_id": [f"o{i}" for i in range(rows)], "amount": amounts})
    return orders.with_columns(pl.Series(name, values) for name, values in extra.items())


@pytest.fixture
def own_instance() -> Iterator[dg.DagsterInstance]:
    """An instance whose history is this test's alone."""
    with dg.DagsterInstance.ephemeral() as instance:
        yield instance


class Runner:
    """Materializes one asset on the test's own instance, its frame set before each run."""

    def __init__(self, instance: dg.DagsterInstance, warehouse: Path, **arguments: Any) -> None:
        self.instance = instance
        self.io_manager = ParquetIOManager(base_dir=str(warehouse))
        self.frames: dict[str, pl.DataFrame] = {}

        @dd.asset(SmallOrders, name="orders", **arguments)
        def orders(context: dg.AssetExecutionContext) -> pl.DataFrame:
            return self.frames[context.partition_key if context.has_partition_key else ""]

        self.asset = orders

    def run(
        self, rows: pl.DataFrame, partition_key: str | None = None
    ) -> dg.ExecuteInProcessResult:
        self.frames[partition_key or ""] = rows
        return dg.materialize(
            [self.asset],
            resources={"io_manager": self.io_manager},
            instance=self.instance,
            partition_key=partition_key,
            run_config=QUIET,
            raise_on_error=False,
        )


def volume(**check: Any) -> dd.QualityPolicy:
    return dd.QualityPolicy(volume=dd.VolumeCheck(**check))


# --- the volume check ---------------------------------------------------------------------------


def test_fixed_bounds_warn_and_the_table_is_written(
    asset_context: AssetContext, quarantine_dir: Path
) -> None:
    @dd.asset(SmallOrders, quarantine=True, quality_policy=volume(min_rows=5, max_rows=8))
    def orders() -> pl.DataFrame:
        return frame(4, negative=1)

    spec = next(s for s in orders.check_specs if s.name == "dy_volume")
    assert spec.description == "The rows written: at least 5 rows, at most 8 rows; a breach warns."
    events = collect(orders(asset_context()))
    check = call_checks(events)["dy_volume"]
    assert (check.passed, check.severity) == (False, WARN)
    assert value(check.metadata["dy_row_count"]) == 3  # the rows written: the valid ones
    assert value(check.metadata["dy_min_rows"]) == 5
    assert call_tables(events)[0].value.height == 3


def test_a_breach_at_error_fails_the_run_keeps_the_table_and_writes_the_quarantine(
    own_instance: dg.DagsterInstance, warehouse: Path
) -> None:
    runner = Runner(
        own_instance,
        warehouse,
        quarantine=True,
        quality_policy=volume(min_rows=5, severity=ERROR),
    )
    assert runner.run(frame(10)).success
    result = runner.run(frame(4, negative=1))

    assert step_error(result) == "RowCountOutOfBoundsError"
    assert run_tables(result, "orders") == []
    assert pl.read_parquet(warehouse / "orders.parquet").height == 10
    assert pl.read_parquet(warehouse / "orders_quarantine.parquet").height == 1
    check = run_checks(result)["dy_volume"]
    assert (check.passed, check.severity) == (False, ERROR)


def test_a_drop_against_the_recent_median_breaches(
    own_instance: dg.DagsterInstance, warehouse: Path
) -> None:
    runner = Runner(own_instance, warehouse, quality_policy=volume(max_drop=0.5, max_growth=1.0))
    for rows in (100, 90, 110):
        assert run_checks(runner.run(frame(rows)))["dy_volume"].passed

    dropped = run_checks(runner.run(frame(40)))["dy_volume"]
    assert not dropped.passed
    assert value(dropped.metadata["dy_recent_median"]) == 100.0
    assert value(dropped.metadata["dy_min_rows"]) == 50
    assert value(dropped.metadata["dy_max_rows"]) == 200
    assert value(dropped.metadata["dy_recent_materializations"]) == 3
    assert "the median of the last 3 materializations, 100 rows" in (dropped.description or "")
    # The history now has 40 among the last five: 100, 90, 110, 40 -> median 95.
    grown = run_checks(runner.run(frame(191)))["dy_volume"]
    assert (grown.passed, value(grown.metadata["dy_max_rows"])) == (False, 190)

    # A direct call compares with its context's instance: the last five, 100 90 110 40 191.
    check = call_checks(runner.asset(dg.build_asset_context(instance=own_instance)))["dy_volume"]
    assert check.passed
    assert value(check.metadata["dy_recent_materializations"]) == 5
    assert value(check.metadata["dy_recent_median"]) == 100.0


def test_a_drop_at_error_names_the_bounds_and_their_basis(
    own_instance: dg.DagsterInstance, warehouse: Path
) -> None:
    runner = Runner(own_instance, warehouse, quality_policy=volume(max_drop=0.9, severity=ERROR))
    runner.run(frame(100))
    result = runner.run(frame(5))
    failure = result.failure_data_for_node("orders")
    assert failure is not None
    assert failure.error is not None
    message = (failure.error.cause or failure.error).message
    assert "would have written 5 rows" in message
    assert "at least 10 rows" in message
    assert "median of the last 1 materializations, 100 rows" in message


@pytest.mark.parametrize(("compare_with", "passes"), [("partition", True), ("asset", False)])
def test_a_partition_is_compared_with_its_own_history_or_the_assets(
    own_instance: dg.DagsterInstance, warehouse: Path, compare_with: str, passes: bool
) -> None:
    runner = Runner(
        own_instance,
        warehouse,
        partitions_def=REGIONS,
        quality_policy=volume(max_drop=0.5, compare_with=compare_with),
    )
    runner.run(frame(10), "us")
    runner.run(frame(1000), "eu")
    again = runner.run(frame(10), "us")
    check = run_checks(again)["dy_volume"]
    assert check.passed is passes
    assert value(check.metadata["dy_partition"]) == "us"


def test_a_skipped_run_passes_the_volume_check(asset_context: AssetContext) -> None:
    @dd.asset(SmallOrders, quality_policy=volume(min_rows=1))
    def orders() -> pl.DataFrame | None:
        return None

    check = call_checks(orders(asset_context()))["dy_volume"]
    assert check.passed
    assert check.description == "Nothing was written (the function returned None)."


def test_a_hand_wired_asset_compares_with_its_history_inside_a_run(
    own_instance: dg.DagsterInstance, warehouse: Path
) -> None:
    policy = volume(max_drop=0.5)
    rows = {"now": frame(100)}

    @dg.asset(
        check_specs=dd.wiring.check_specs(SmallOrders, asset="orders", quality_policy=policy),
        output_required=False,
    )
    def orders(context: dg.AssetExecutionContext) -> dd.wiring.AssetYield:
        yield from dd.wiring.validation_results(
            SmallOrders, rows["now"], valid_key=context.asset_key, quality_policy=policy
        )

    resources = {"io_manager": ParquetIOManager(base_dir=str(warehouse))}
    dg.materialize([orders], resources=resources, instance=own_instance, run_config=QUIET)
    rows["now"] = frame(10)
    result = dg.materialize([orders], resources=resources, instance=own_instance, run_config=QUIET)
    assert not run_checks(result)["dy_volume"].passed


def series_read(policy: dd.QualityPolicy | None) -> tuple[Series, ...]:
    """The series the check kinds of an output with `policy` read from the instance."""
    info = read_schema(SmallOrders)
    settings = OutputSettings.of(quality_policy=policy, quarantine=True).resolve(info)
    return series_of(ValidatedOutput("orders", dg.AssetKey("orders"), info, settings, True, False))


def values(history: History, series: Series) -> tuple[Any, ...]:
    return tuple(point.value for point in history[series])


class NoInstance:
    """A context whose instance must not be read: reading it fails the test."""

    has_partition_key = False

    @property
    def instance(self) -> dg.DagsterInstance:
        raise AssertionError("the instance was read")


@pytest.mark.parametrize(
    "policy",
    [
        None,
        dd.QualityPolicy(threshold=dd.Threshold(warn_above=0.1)),
        volume(min_rows=1, max_rows=10),
        dd.QualityPolicy(undeclared_columns="report"),
    ],
    ids=["no policy", "thresholds only", "fixed volume bounds", "undeclared columns reported"],
)
def test_nothing_is_read_from_the_instance_unless_a_check_compares_with_the_past(
    policy: dd.QualityPolicy | None,
) -> None:
    key = dg.AssetKey("orders")
    assert read_history(NoInstance(), key, None, series_read(policy)) is None
    with pytest.raises(AssertionError, match="the instance was read"):
        read_history(NoInstance(), key, None, series_read(volume(max_drop=0.5)))


def test_each_partition_of_a_range_reads_its_own_latest_materializations(
    own_instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A busy day, a day materialized once long ago, a day never materialized: read together.

    The busy day's recent runs do not crowd the others out, and the range costs two queries.
    """
    key = dg.AssetKey("orders")

    def materialized(day: str, rows: int, columns: list[str]) -> None:
        own_instance.report_runless_asset_event(
            dg.AssetMaterialization(
                key,
                partition=day,
                metadata={"dagster/row_count": rows, "dataframely/undeclared_columns": columns},
            )
        )

    materialized("2026-01-02", 100, ["vat"])
    for rows in range(1, 7):
        materialized("2026-01-01", rows, [f"c{rows}"])
    queries = []
    fetch = own_instance.fetch_materializations
    monkeypatch.setattr(
        own_instance,
        "fetch_materializations",
        lambda *args, **kwargs: queries.append(args) or fetch(*args, **kwargs),
    )
    days = ["2026-01-01", "2026-01-02", "2026-01-03"]
    context = dg.build_asset_context(instance=own_instance)

    policy = dd.QualityPolicy(
        volume=dd.VolumeCheck(max_drop=0.5, window=2), undeclared_columns="check"
    )
    counts, columns = series_read(policy)
    histories = read_range_history(context, key, days, (counts, columns))
    assert histories is not None
    assert [
        (values(histories.of(day), counts), values(histories.of(day), columns)) for day in days
    ] == [((6, 5), (["c6"],)), ((100,), (["vat"],)), ((), ())]
    assert len(queries) == 2

    queries.clear()
    asset_wide = dd.QualityPolicy(
        volume=dd.VolumeCheck(max_drop=0.5, window=3, compare_with="asset")
    )
    (counts,) = series_read(asset_wide)
    histories = read_range_history(context, key, days, (counts,))
    assert histories is not None
    assert values(histories.of("2026-01-03"), counts) == (6, 5, 4)
    # After the two days before it in the range wrote 7 and 8 rows, in a run each.
    written = [Point(rows, day, "run", 0.0) for rows, day in ((7, days[0]), (8, days[1]))]
    after = histories.of("2026-01-03", {"dagster/row_count": written})
    assert values(after, counts) == (8, 7, 6)
    assert len(queries) == 1


# --- undeclared columns -------------------------------------------------------------------------


def test_the_undeclared_columns_are_listed_on_the_materialization(
    asset_context: AssetContext,
) -> None:
    @dd.asset(SmallOrders, quality_policy=dd.QualityPolicy(undeclared_columns="report"))
    def orders() -> pl.LazyFrame:
        return frame(2, net=[0.8, 1.6], source=["web", "app"]).lazy()

    @dd.asset(SmallOrders)
    def unreported() -> pl.DataFrame:
        return frame(2, net=[0.8, 1.6])

    (table,) = call_tables(orders(asset_context()))
    assert table.metadata is not None
    assert value(table.metadata["dataframely/undeclared_columns"]) == ["net", "source"]
    assert table.value.columns == ["order_id", "amount"]  # still dropped, as the spec says
    assert not any(s.name == "dy_undeclared_columns" for s in orders.check_specs)
    (plain,) = call_tables(unreported(asset_context()))
    assert "dataframely/undeclared_columns" not in (plain.metadata or {})


def test_the_undeclared_columns_check_warns_when_they_change(
    own_instance: dg.DagsterInstance, warehouse: Path
) -> None:
    runner = Runner(
        own_instance, warehouse, quality_policy=dd.QualityPolicy(undeclared_columns="check")
    )
    first = run_checks(runner.run(frame(2, net=[1.0, 2.0])))["dy_undeclared_columns"]
    assert first.passed
    assert first.description == "No earlier materialization recorded its undeclared columns."

    same = run_checks(runner.run(frame(3, net=[1.0, 2.0, 3.0])))["dy_undeclared_columns"]
    assert same.passed

    changed = runner.run(frame(2, source=["web", "app"]))
    check = run_checks(changed)["dy_undeclared_columns"]
    assert (check.passed, check.severity) == (False, WARN)
    assert check.description == "Added: source; removed: net."
    assert value(check.metadata["dy_columns"]) == ["source"]
    assert value(check.metadata["dy_previous_columns"]) == ["net"]
    assert changed.success  # a warning: the table is written
    assert pl.read_parquet(warehouse / "orders.parquet").height == 2


def test_a_partitions_undeclared_columns_are_compared_with_its_own_last_run(
    own_instance: dg.DagsterInstance, warehouse: Path
) -> None:
    """Each region's source brings its own extra column, every run: nothing changed.

    Compared with the asset's latest run, another region's, the check failed on every run.
    """
    runner = Runner(
        own_instance,
        warehouse,
        partitions_def=REGIONS,
        quality_policy=dd.QualityPolicy(undeclared_columns="check"),
    )
    sources = {"eu": frame(2, vat=[0.2, 0.2]), "us": frame(2, state=["NY", "CA"])}
    found = []
    for region in ("eu", "us", "eu", "us"):
        check = run_checks(runner.run(sources[region], region))["dy_undeclared_columns"]
        found.append((region, check.passed, value(check.metadata["dy_partition"])))
    assert found == [("eu", True, "eu"), ("us", True, "us"), ("eu", True, "eu"), ("us", True, "us")]

    # A direct call compares with its context's instance, that partition's run too.
    context = dg.build_asset_context(instance=own_instance, partition_key="us")
    runner.frames["us"] = frame(2, vat=[0.2, 0.2])
    check = call_checks(runner.asset(context))["dy_undeclared_columns"]
    assert not check.passed
    assert check.description == "Added: vat; removed: state."


def test_a_direct_call_without_a_context_parameter_compares_with_its_contexts_instance(
    own_instance: dg.DagsterInstance, warehouse: Path
) -> None:
    """Dagster takes the context a call passes to a function without one; its instance counts."""
    rows = {"now": frame(100)}

    @dd.asset(SmallOrders, name="orders", quality_policy=volume(max_drop=0.5))
    def orders() -> pl.DataFrame:
        return rows["now"]

    resources = {"io_manager": ParquetIOManager(base_dir=str(warehouse))}
    dg.materialize([orders], resources=resources, instance=own_instance, run_config=QUIET)
    rows["now"] = frame(10)

    check = call_checks(orders(dg.build_asset_context(instance=own_instance)))["dy_volume"]
    assert not check.passed
    assert value(check.metadata["dy_recent_median"]) == 100.0


def test_a_volume_check_at_error_takes_part_in_a_multi_assets_atomicity(
    own_instance: dg.DagsterInstance, warehouse: Path
) -> None:
    @dd.multi_asset(
        outs={
            "orders": dd.AssetOut(SmallOrders, quality_policy=volume(min_rows=3, severity=ERROR)),
            "returns": dd.AssetOut(SmallOrders),
        }
    )
    def sales() -> dict[str, pl.DataFrame]:
        return {"orders": frame(2), "returns": frame(5)}

    result = dg.materialize(
        [sales],
        resources={"io_manager": ParquetIOManager(base_dir=str(warehouse))},
        instance=own_instance,
        run_config=QUIET,
        raise_on_error=False,
    )
    assert step_error(result, "sales") == "RowCountOutOfBoundsError"
    assert result.get_asset_materialization_events() == []
    with pytest.raises(errors.RowCountOutOfBoundsError):
        list(sales(dg.build_asset_context(instance=own_instance)))

"""A new check kind is one module and one registration: a kind of this test's own, end to end.

`OddRows` fails the run when the table would get an odd number of rows, and reads the row count
of the partition's previous materialization from the instance (a named metric series) to say
it. Registered here, it is declared on an asset defined afterwards, judged on the split rows
before the write, reported after every other kind's checks, and its error fails the run, as a
built-in kind's does; nothing else in the package names it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely._run.checks import registry
from dagster_dataframely._run.checks.history import Series
from dagster_dataframely._run.checks.kind import (
    DeclaredCheck,
    Judged,
    Reported,
    Target,
    When,
)
from dagster_dataframely._run.validated_output import ValidatedOutput
from tests.asset_support import QUIET, SmallOrders, run_checks, run_tables, step_error, value
from tests.parquet_io_manager import ParquetIOManager

CHECK = "dy_even_rows"
DESCRIPTION = "The table gets an even number of rows."
PREVIOUS = Series("dagster/row_count", 1)


@dataclass(frozen=True)
class Parity:
    rows: int
    previous: int | None

    @property
    def fails_run(self) -> bool:
        return self.rows % 2 == 1

    def error(
        self, output: ValidatedOutput, address: str | None
    ) -> dd.errors.ValidationFailedError | None:
        if not self.fails_run:
            return None
        return dd.errors.ValidationFailedError(
            f"{output.key.to_user_string()} would get {self.rows} rows, an odd number."
        )


class OddRows:
    name = "odd_rows"
    when = When.BEFORE_WRITE

    def declare(self, target: Target) -> list[DeclaredCheck]:
        return [DeclaredCheck(CHECK, DESCRIPTION, blocking=True)]

    def series(self, output: ValidatedOutput) -> tuple[Series, ...]:
        return (PREVIOUS,)

    def judge(self, judged: Judged) -> Parity:
        latest = judged.history.get(PREVIOUS, ())
        return Parity(judged.written, latest[0].value if latest else None)

    def results(self, verdict: Parity | None, reported: Reported) -> list[dg.AssetCheckResult]:
        metadata: dict[str, Any] = {}
        if verdict is not None:
            metadata = {"rows": verdict.rows, "previous_rows": verdict.previous}
        return [
            dg.AssetCheckResult(
                check_name=CHECK,
                asset_key=reported.output.key,
                passed=verdict is None or not verdict.fails_run,
                severity=reported.severity,
                metadata={**metadata, **reported.metadata},
            )
        ]


@pytest.fixture
def odd_rows() -> Iterator[OddRows]:
    kind = OddRows()
    registry.register(kind)
    yield kind
    registry.unregister(kind)


def frame(rows: int) -> pl.DataFrame:
    return pl.DataFrame({"order_id": [f"o{i}" for i in range(rows)], "amount": [1.0] * rows})


def test_a_registered_kind_is_declared_judged_and_reported_in_a_run(
    odd_rows: OddRows, warehouse: Path
) -> None:
    returned: list[pl.DataFrame] = []

    @dd.asset(SmallOrders, partitions_def=dg.StaticPartitionsDefinition(["eu"]))
    def orders() -> pl.DataFrame:
        return returned[-1]

    # The kind's spec follows every built-in one, on the asset's partitions.
    *_, declared = orders.check_specs
    assert (declared.name, declared.description) == (
        CHECK,
        "The table gets an even number of rows.",
    )
    assert declared.blocking
    assert declared.partitions_def == orders.partitions_def

    def run(rows: int) -> dg.ExecuteInProcessResult:
        returned.append(frame(rows))
        return dg.materialize(
            [orders],
            resources={"io_manager": ParquetIOManager(base_dir=str(warehouse))},
            instance=instance,
            partition_key="eu",
            run_config=QUIET,
            raise_on_error=False,
        )

    with dg.DagsterInstance.ephemeral() as instance:
        even = run(4)
        assert even.success
        check = run_checks(even)[CHECK]
        assert check.passed
        assert value(check.metadata["rows"]) == 4
        assert value(check.metadata["previous_rows"]) is None
        assert len(run_tables(even, "orders")) == 1

        odd = run(3)
        assert not odd.success
        assert step_error(odd) == "ValidationFailedError"
        check = run_checks(odd)[CHECK]
        assert (check.passed, check.severity) == (False, dg.AssetCheckSeverity.ERROR)
        # The previous materialization's row count, read from the instance as a series.
        assert value(check.metadata["previous_rows"]) == 4
        assert value(check.metadata["dy_partition"]) == "eu"
        assert run_tables(odd, "orders") == []  # failing the run, it kept the table unwritten
        assert list(run_checks(odd))[-1] == CHECK  # reported after every built-in check


def test_an_unregistered_kind_declares_nothing(odd_rows: OddRows) -> None:
    registry.unregister(odd_rows)
    try:

        @dd.asset(SmallOrders)
        def orders() -> pl.DataFrame:
            return frame(3)

        assert CHECK not in [spec.name for spec in orders.check_specs]
    finally:
        registry.register(odd_rows)

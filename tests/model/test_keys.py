"""Asset keys from what a caller passes, and a partition key as a run hands it to the asset."""

import dagster as dg
import pytest

from dagster_dataframely import errors
from dagster_dataframely._model.keys import coerce_asset_key, run_partition_key

BY_DAY_AND_REGION = dg.MultiPartitionsDefinition(
    {
        "region": dg.StaticPartitionsDefinition(["eu", "us"]),
        "date": dg.StaticPartitionsDefinition(["2026-01-01"]),
    }
)


@pytest.mark.parametrize(
    ("given", "parts"),
    [
        ("fleet/plane_flights", ["fleet", "plane_flights"]),
        ("plane_flights", ["plane_flights"]),
        (["fleet", "plane_flights"], ["fleet", "plane_flights"]),
        (dg.AssetKey(["fleet", "plane_flights"]), ["fleet", "plane_flights"]),
    ],
    ids=["user-string", "name", "parts", "key"],
)
def test_a_key_is_read_as_dagster_s_asset_selection_reads_it(
    given: str | list[str] | dg.AssetKey, parts: list[str]
) -> None:
    assert coerce_asset_key(given) == dg.AssetKey(parts)
    if isinstance(given, str):  # the very key `dg.AssetSelection.assets` selects

        @dg.multi_asset(specs=[dg.AssetSpec(dg.AssetKey(parts)), dg.AssetSpec("other")])
        def graph():  # type: ignore[no-untyped-def]  # Dagster reads `-> None` as one output
            pass

        (selected,) = dg.AssetSelection.assets(given).resolve([graph])
        assert coerce_asset_key(given) == selected


def test_a_multi_partition_key_string_becomes_the_key_a_run_gives() -> None:
    key = run_partition_key(BY_DAY_AND_REGION, "2026-01-01|eu", function="call_asset")
    assert isinstance(key, dg.MultiPartitionKey)
    assert key.keys_by_dimension == {"date": "2026-01-01", "region": "eu"}
    assert key == "2026-01-01|eu"


def test_other_partition_keys_stay_as_they_are() -> None:
    days = dg.DailyPartitionsDefinition(start_date="2026-01-01")
    assert type(run_partition_key(days, "2026-01-02", function="call_asset")) is str
    assert type(run_partition_key(None, "a|b", function="call_asset")) is str
    given = dg.MultiPartitionKey({"date": "2026-01-01", "region": "us"})
    assert run_partition_key(BY_DAY_AND_REGION, given, function="call_asset") is given


def test_a_multi_partition_key_without_a_key_per_dimension_is_refused() -> None:
    with pytest.raises(errors.InvalidArgumentsError) as raised:
        run_partition_key(BY_DAY_AND_REGION, "eu", function="call_asset")
    assert raised.value.function == "call_asset"
    assert "(date, region)" in raised.value.problem
    assert "<date>|<region>" in raised.value.fix

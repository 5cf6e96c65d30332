"""The quarantine's own history: one observation of its asset key per write.

The quarantine never receives a materialization (nothing materializes it; the asset's step
writes it on the side), so without this its catalog page says "Never materialized" forever. An
observation records what a write left there (how many rows, where, for which partition and
run) without claiming the quarantine was materialized.
"""

from __future__ import annotations

import dagster as dg

from dagster_dataframely._model import names
from dagster_dataframely._model.keys import quarantine_key


def quarantine_observation(
    asset_key: dg.AssetKey,
    *,
    row_count: int,
    address: str,
    partition_key: str | None,
    run_id: str,
) -> dg.AssetObservation:
    """The observation of `asset_key`'s quarantine after a write of `row_count` rows.

    `address` is where the writer put them, as the table's `dataframely/quarantine_address`
    reports it; a write of zero rows (a clean run that clears the quarantine) is recorded too,
    so the latest observation is the quarantine's current state.
    """
    return dg.AssetObservation(
        asset_key=quarantine_key(asset_key),
        partition=partition_key,
        metadata={
            names.ROW_COUNT: row_count,
            names.QUARANTINE_ADDRESS: address,
            names.QUARANTINE_OF: asset_key.to_user_string(),
            names.RUN: dg.MetadataValue.dagster_run(run_id),
        },
    )

"""The demo's quality policy: the marketplace feed again, with thresholds and a blocking rule.

`marketplace_lines` quarantines every bad line and warns on each rule that any line failed.
Here the same feed is held to a policy instead: each rule may fail up to 5% of the lines before
its check fails, and the run would fail (keeping the last good table) above half of them. The
primary key has a threshold of its own, which fails its check on any duplicate and the run
above a quarter of the lines, and its check is blocking, so downstream automation that waits
for blocking checks (`AutomationCondition.all_deps_blocking_checks_passed()`) holds back after a
feed with duplicate lines. In this feed two of twenty lines share a key (10%): the primary-key
check fails, blocking, and every rule that one line failed (5%) passes within its threshold.
"""

import polars as pl

import dagster_dataframely as dd

from .schema import Orders

MARKETPLACE_POLICY = dd.QualityPolicy(
    threshold=dd.Threshold(warn_above=0.05, fail_above=0.5),
    rules={"primary_key": dd.Threshold(fail_above=0.25)},
    blocking=["primary_key"],
)


@dd.asset(Orders, quarantine=True, quality_policy=MARKETPLACE_POLICY, group_name="sales")
def marketplace_lines_with_policy(raw_marketplace_orders: pl.DataFrame) -> pl.DataFrame:
    """The marketplace feed under a quality policy: a few bad lines are tolerated."""
    return raw_marketplace_orders

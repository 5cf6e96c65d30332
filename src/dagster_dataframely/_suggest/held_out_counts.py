"""Each rule's failures on the held-out rows, counted in streaming passes that never hold them."""

from __future__ import annotations

import dataclasses

import dataframely as dy
import polars as pl

from dagster_dataframely._model.schema import PRIMARY_KEY_RULE, dataframely_rules
from dagster_dataframely._suggest.table_profile import in_part, value_parts
from dagster_dataframely._upstream import evaluated_rules

_ROWS = "\x00rows"
_FAILED = "\x00failed"
_VALID = "\x00valid"
_REPEATED = "\x00repeated"
_REPEATED_VALID = "\x00repeated_valid"


@dataclasses.dataclass(frozen=True)
class FailureCounts:
    """What `Schema.filter` reports on some rows, counted without holding them.

    Attributes
    ----------
    rows
        How many rows were read.
    counts
        The failed rows of each rule that failed any, as `FailureInfo.counts()` gives them.
    quarantined
        The rows any rule fails: those `filter` leaves out of its valid rows.
    """

    rows: int
    counts: dict[str, int]
    quarantined: int


def count_failures(schema: type[dy.Schema], rows: pl.LazyFrame) -> FailureCounts:
    """Each rule's failed rows and the rows any rule fails, as `schema.filter(rows)` reports.

    The rules are Dataframely's own plan (`evaluated_rules`) run on the streaming engine: every
    rule but the primary key gives each row its outcome from that row alone, so their failures
    are summed as the rows stream past. A key's repeats are found in hash parts of the key
    (`value_parts`), each holding at most `MAX_VALUES_PER_PASS` keys, so memory stays bounded
    whatever the number of rows. `rows` must have the schema's columns and dtypes.
    """
    rules = dict(dataframely_rules(schema))
    # NOTE: Dataframely checks the key with `pl.struct(key).is_unique()`, a rule over every row
    # sharing a key: hash parts keep those rows together, so each part is checked alone.
    key_rule = rules.pop(PRIMARY_KEY_RULE, None)
    columns = rows.select(schema.column_names())
    if rules:
        plan, names, passed = evaluated_rules(schema, columns, rules)
        row_failures = [(~pl.col(name)).sum().alias(name) for name in names]
        is_valid = pl.col(passed)
    else:
        plan, names, row_failures, is_valid = columns, [], [], pl.lit(True)
    totals = (
        plan.select(pl.len().alias(_ROWS), *row_failures, (~is_valid).sum().alias(_FAILED))
        .collect(engine="streaming")
        .row(0, named=True)
    )
    height = int(totals[_ROWS])
    counts = {name: int(totals[name]) for name in names}
    quarantined = int(totals[_FAILED])
    if key_rule is not None and height:
        repeated, repeated_valid = _repeated_keys(
            plan, schema.primary_key(), key_rule.expr.fill_null(True), is_valid, height
        )
        counts[PRIMARY_KEY_RULE] = repeated
        quarantined += repeated_valid
    return FailureCounts(
        rows=height,
        counts={name: count for name, count in counts.items() if count},
        quarantined=quarantined,
    )


def _repeated_keys(
    plan: pl.LazyFrame, key: list[str], rule: pl.Expr, is_valid: pl.Expr, height: int
) -> tuple[int, int]:
    # NOTE: the rows whose key repeats, and those of them no other rule fails: `filter` leaves
    # out a row that fails the key or another rule, counted once.
    parts = value_parts(height)
    repeated = repeated_valid = 0
    for part in range(parts):
        in_this = plan if parts == 1 else plan.filter(in_part(pl.struct(key), parts, part))
        found = (
            in_this.select(is_valid.alias(_VALID), (~rule).alias(_REPEATED))
            .select(
                pl.col(_REPEATED).sum(),
                (pl.col(_REPEATED) & pl.col(_VALID)).sum().alias(_REPEATED_VALID),
            )
            .collect(engine="streaming")
            .row(0, named=True)
        )
        repeated += int(found[_REPEATED])
        repeated_valid += int(found[_REPEATED_VALID])
    return repeated, repeated_valid

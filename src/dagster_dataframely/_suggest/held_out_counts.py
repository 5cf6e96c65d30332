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


def count_failures(
    schema: type[dy.Schema], rows: pl.LazyFrame, row_count: int | None = None
) -> FailureCounts:
    """Each rule's failed rows and the rows any rule fails, as `schema.filter(rows)` reports.

    The rules are Dataframely's own plan (`evaluated_rules`) run on the streaming engine: every
    rule but the primary key gives each row its outcome from that row alone, so their failures
    are summed as the rows stream past. A key's repeats are found in hash parts of the key
    (`value_parts`), each holding at most `MAX_VALUES_PER_PASS` keys, so memory stays bounded
    whatever the number of rows: one read of the rows per part, each summing every rule's
    failures over its part (one read in all without a key, or with at most that many rows).
    `rows` must have the schema's columns and dtypes; `row_count`, their number when known,
    saves the read that sizes the parts.
    """
    rules = dict(dataframely_rules(schema))
    # NOTE: Dataframely checks the key with `pl.struct(key).is_unique()`, a rule over every row
    # sharing a key: hash parts keep those rows together, so each part is checked alone.
    key_rule = rules.pop(PRIMARY_KEY_RULE, None)
    columns = rows.select(schema.column_names())
    if rules:
        plan, names, passed = evaluated_rules(schema, columns, rules)
        is_valid = pl.col(passed)
    else:
        # NOTE: a column, not a literal: a literal alone would make one row of each part.
        plan, names, is_valid = columns.with_columns(pl.lit(True).alias(_VALID)), [], pl.col(_VALID)
    outcomes = [(~pl.col(name)).alias(name) for name in names]
    outcomes.append((~is_valid).alias(_FAILED))
    parts, key = 1, schema.primary_key()
    if key_rule is not None:
        outcomes += [is_valid.alias(_VALID), (~key_rule.expr.fill_null(True)).alias(_REPEATED)]
        # NOTE: counting the rows reads only what selects them (the split's column) and one key
        # column: a count of no column is a query DuckDB's lazy source cannot write.
        # (`pl.col(...).len()` is planned as a count of no column too.)
        if row_count is None:
            first = pl.col(key[0])
            counted = rows.select(first.count() + first.null_count()).collect(engine="streaming")
            row_count = int(counted.item())
        parts = value_parts(row_count)
    totals = dict.fromkeys([_ROWS, *names, _FAILED, _REPEATED, _REPEATED_VALID], 0)
    for part in range(parts):
        # NOTE: each part's rows are evaluated in one read: every rule's failures, and the key's
        # repeats among them (with those no other rule fails: `filter` leaves out a row that fails
        # the key or another rule, counted once).
        in_this = plan if parts == 1 else plan.filter(in_part(pl.struct(key), parts, part))
        sums = [pl.len().alias(_ROWS), *(pl.col(name).sum() for name in [*names, _FAILED])]
        if key_rule is not None:
            sums += [
                pl.col(_REPEATED).sum(),
                (pl.col(_REPEATED) & pl.col(_VALID)).sum().alias(_REPEATED_VALID),
            ]
        found = in_this.select(outcomes).select(sums).collect(engine="streaming").row(0, named=True)
        for name, value in found.items():
            totals[name] += int(value)
    counts = {name: totals[name] for name in names}
    if key_rule is not None:
        counts[PRIMARY_KEY_RULE] = totals[_REPEATED]
    return FailureCounts(
        rows=totals[_ROWS],
        counts={name: count for name, count in counts.items() if count},
        quarantined=totals[_FAILED] + totals[_REPEATED_VALID],
    )

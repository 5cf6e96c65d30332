"""The rows that failed validation, and everything reported about them, from one small frame.

Everything here works on the invalid rows only (with Dataframely's outcome of each rule), which a
run has already collected; nothing re-reads the user's plan or the valid rows.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import dataframely as dy
import polars as pl
from dataframely import FailureInfo

from dagster_dataframely._model import names
from dagster_dataframely._model.schema import RuleInfo, SchemaInfo, read_schema
from dagster_dataframely._upstream import failure_outcomes


@dataclass(frozen=True, eq=False)
class Failures:
    """The invalid rows of one run and how often each rule failed."""

    info: SchemaInfo
    outcomes: pl.DataFrame
    """The invalid rows, then a `Boolean` column per rule, named as the rule (False: failed)."""
    counts: dict[str, int]
    """Failed rows per rule, for the rules that failed at least once."""

    @classmethod
    def from_failure_info(cls, info: SchemaInfo, failure: FailureInfo) -> Failures:
        # Dataframely's failure frame for a rule-less schema has no columns at all.
        outcomes = rule_outcomes(info, failure) if info.rules else info.schema.create_empty()
        return cls(info=info, outcomes=outcomes, counts=failure.counts())

    @classmethod
    def none(cls, info: SchemaInfo) -> Failures:
        """No invalid row: the failures of a skip, every rule (and filter) over zero rows.

        Built, not computed: filtering an empty frame gives the same empty outcomes, and a
        Collection member's filters have no schema to filter with.
        """
        empty = info.schema.create_empty()
        outcomes = empty.with_columns(pl.lit(None, pl.Boolean).alias(r.name) for r in info.rules)
        return cls(info=info, outcomes=outcomes, counts={})

    @property
    def invalid_count(self) -> int:
        return self.outcomes.height

    @functools.cached_property
    def quarantine_frame(self) -> pl.DataFrame:
        """The invalid rows as a writer receives them: rule columns as `String`, named by check.

        `String`, not Dataframely's `Enum`, because an `Enum` column makes some writers (Delta)
        panic; the rule columns are the only columns this package ever casts.
        """
        return self.outcomes.select(self._quarantine_columns)

    def sample(self, limit: int) -> pl.DataFrame:
        """The first `limit` invalid rows as the quarantine has them, led by the rules each failed.

        The quarantine's columns put a row's reason last, behind every column of the schema and
        one column per rule; the leading `dy_failed_rules` names the failed rules (by check
        name, in the schema's order), so the reason is the first thing a reader sees.
        """
        head = self.outcomes.head(limit)
        rules = self.info.rules
        # In Python: a list expression over every rule cost more to build than to run, and a
        # sample's rule columns become Python cells in its table anyway, at the same cost.
        outcomes = [head.get_column(rule.name).to_list() for rule in rules]
        failed = [
            ", ".join(rule.check_name for rule, ok in zip(rules, row, strict=True) if ok is False)
            for row in zip(*outcomes, strict=True)
        ]
        sample = head.select(self._quarantine_columns)
        return sample.insert_column(0, pl.Series(names.FAILED_RULES, failed, dtype=pl.String))

    @functools.cached_property
    def _quarantine_columns(self) -> list[pl.Expr]:
        # NOTE: built once for the quarantine and its sample: a wide schema's thousand expressions
        # take longer to build than to run over a few rows. A rule every invalid row passed is the
        # literal `valid`.
        return [
            *(pl.col(name) for name in self.info.columns),
            *(self._outcome_column(rule) for rule in self.info.rules),
        ]

    def _outcome_column(self, rule: RuleInfo) -> pl.Expr:
        outcome = self.outcomes.get_column(rule.name)
        decided = outcome.null_count() == 0
        if decided and outcome.all():
            return _VALID.alias(rule.check_name)
        if decided:
            return _decided_outcome_text_of(rule.name, rule.check_name)
        return _outcome_text_of(rule.name, rule.check_name)

    def samples(self, limit: int) -> Samples:
        """The first `limit` rows that failed each failing rule, in one pass over the rule columns.

        One `select` finds every rule's first failing row positions and one `gather` fetches
        each of those rows once, however many rules show it, so a wide schema with many failing
        rules costs no pass over the rows, and no copy of them, per rule.
        """
        columns = self.outcomes.select(*self.info.columns)
        failing = [r.name for r in self.info.rules if r.name in self.counts]
        if limit <= 0 or not failing:
            return Samples(columns.clear(), {})
        positions = self.outcomes.select(_first_failing(name, limit) for name in failing).row(
            0, named=True
        )
        wanted = sorted({p for rows in positions.values() for p in rows})
        at = {position: index for index, position in enumerate(wanted)}
        return Samples(
            columns[wanted], {name: [at[p] for p in positions[name]] for name in failing}
        )

    def rule_sets(self) -> list[tuple[tuple[str, ...], int]]:
        """Each set of rules that rows failed together, largest group first.

        Every invalid row counts once, under the set of rules it failed; ties keep the order of
        the rules in the schema, so the table is stable from run to run.
        """
        if not self.invalid_count or not self.info.rules:
            return []
        # Only the rules some row failed can tell two sets apart; in a wide schema most failed
        # no row, and a rule no row failed is in no set.
        rules = [r.name for r in self.info.rules if self.outcomes.get_column(r.name).not_().any()]
        if not rules:  # rows quarantined for unknown outcomes only
            return [((), self.invalid_count)]
        # Named by position: a rule's own name could be `len`, or read as a pattern.
        flags = self.outcomes.select(_failed(name).alias(str(i)) for i, name in enumerate(rules))
        failed_per_row = flags.select(pl.sum_horizontal(pl.all())).to_series()
        # Most invalid rows fail one rule: their sets are counted by a sum per rule, and only
        # the rows that failed none (unknown outcomes) or several are grouped.
        alone = flags.filter(failed_per_row == 1).sum().row(0)
        ranked: list[tuple[tuple[int, ...], int]] = [
            ((i,), count) for i, count in enumerate(alone) if count
        ]
        # Group on one boolean per rule (cheap, unlike a list column), then read each group's
        # failed rules off its row.
        grouped = flags.filter(failed_per_row != 1).group_by(flags.columns).len()
        ranked += [
            (tuple(i for i, hit in enumerate(row[:-1]) if hit), row[-1])
            for row in grouped.select(*flags.columns, "len").iter_rows()
        ]
        ranked.sort(key=lambda item: (-item[1], item[0]))
        return [(tuple(rules[i] for i in failed), count) for failed, count in ranked]


@dataclass(frozen=True, eq=False)
class Samples:
    """Each failing rule's first invalid rows, every row held once however many rules show it."""

    rows: pl.DataFrame
    """The schema's columns of every sampled row, once each, in the order of the invalid rows."""
    positions: dict[str, list[int]]
    """By failing rule, the positions in `rows` of the rows it shows, first failing row first."""

    def of(self, rule: str) -> pl.DataFrame:
        """The rows `rule` shows, in the schema's columns."""
        return self.rows[self.positions[rule]]


_OUTCOME_TEXTS = pl.Series(["invalid", "valid", "unknown"], dtype=pl.String)
"""A rule's outcome texts at the index of its `Boolean` as an integer: False 0, True 1, null 2."""


_VALID = pl.lit(_OUTCOME_TEXTS[1], pl.String)
"""The outcome text of a rule that passed, as a column of every row when selected alone."""

_INVALID = pl.lit(_OUTCOME_TEXTS[0], pl.String)
"""The outcome text of a rule that failed, for a `when` that picks it per row."""


_EXPRESSIONS_KEPT = 16_384
"""Rule expressions kept built, by rule: a few wide schemas' worth, a few MB at most."""


@functools.lru_cache(maxsize=_EXPRESSIONS_KEPT)
def _outcome_text_of(rule: str, check_name: str) -> pl.Expr:
    # NOTE: a lookup by index (False 0, True 1, null 2) builds a wide schema's text columns about
    # three times faster than a `when` chain; an expression takes longer to build than to run, and
    # is immutable, so every run shares it.
    outcome = pl.col(rule).cast(pl.UInt32).fill_null(2)
    return pl.lit(_OUTCOME_TEXTS).gather(outcome).alias(check_name)


@functools.lru_cache(maxsize=_EXPRESSIONS_KEPT)
def _decided_outcome_text_of(rule: str, check_name: str) -> pl.Expr:
    # NOTE: two literals chosen by the Boolean itself: about half the time of the lookup over
    # 100,000 rows.
    return pl.when(pl.col(rule)).then(_VALID).otherwise(_INVALID).alias(check_name)


@functools.lru_cache(maxsize=_EXPRESSIONS_KEPT)
def _failed(rule: str) -> pl.Expr:
    return pl.col(rule).eq_missing(False)


@functools.lru_cache(maxsize=_EXPRESSIONS_KEPT)
def _first_failing(rule: str, limit: int) -> pl.Expr:
    return _failed(rule).arg_true().head(limit).implode().alias(rule)


def rule_outcomes(info: SchemaInfo, failure: dy.FailureInfo) -> pl.DataFrame:
    """The invalid rows, then a `Boolean` column per rule: True passed, False failed, null unknown.

    Dataframely holds exactly this frame; its public `details()` turns every rule column into
    an `Enum` first, which took longer than everything else this package does with the invalid
    rows together. Should a Dataframely release move the frame, `details()` still gives it.
    """
    frame = failure_outcomes(failure)
    names = [rule.name for rule in info.rules]
    if frame is not None and set(names) <= set(frame.columns):
        return frame
    details = failure.details()
    return details.with_columns(
        pl.when(pl.col(name) == "valid")
        .then(True)
        .when(pl.col(name) == "invalid")
        .then(False)
        .alias(name)
        for name in names
    )


def quarantine_frame(schema: type[dy.Schema], failure: FailureInfo) -> pl.DataFrame:
    """Return the invalid rows as a writer receives them, with one rule column per rule.

    For an asset that runs `Schema.filter` itself and wants to write the same quarantine frame
    `dd.asset` would.

    Parameters
    ----------
    schema
        The schema whose `filter` produced `failure`.
    failure
        The failure side of `schema.filter(frame, cast=False)`.

    Returns
    -------
    pl.DataFrame
        The original columns in their own order, then a `String` rule column for every rule,
        named by `check_name`. A rule column's value is `valid`, `invalid` or `unknown`.

    Raises
    ------
    ReservedColumnError, InvalidColumnNameError, InvalidRuleNameError, CheckNameCollisionError
        A column or rule name this package cannot use: in the reserved `dy_` namespace, with a
        character Dagster does not allow in a check name, or one check name for two rules.

    Examples
    --------
    ```python
    import dataframely as dy
    import polars as pl

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        amount = dy.Float64(min=0.0)


    frame = pl.DataFrame({"amount": [12.5, -3.0]})
    _, failure = Orders.filter(frame, cast=False)
    quarantine = dd.wiring.quarantine_frame(Orders, failure)
    print(quarantine)
    assert quarantine["dy_rule__amount__min"].to_list() == ["invalid"]
    ```
    """
    return Failures.from_failure_info(read_schema(schema), failure).quarantine_frame

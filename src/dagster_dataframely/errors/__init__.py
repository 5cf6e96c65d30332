"""The exceptions dagster-dataframely raises.

They live in one module under one base class so that a caller can catch a single error by
name, or every error from this package at once, and so that each message says both what
went wrong and what to change. Three categories sit between the base and most errors: the
refusals of a declaration (`InvalidDefinitionError`), the data's verdict
(`ValidationFailedError`) and the refusals to store rows unsafely (`StorageRefusedError`).
"""

import inspect
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import dagster as dg

from .._upstream import DagsterInvalidPropertyError

__all__ = [
    "CheckNameCollisionError",
    "ClearQuarantineError",
    "CollectionFilterDuplicatesError",
    "CollectionMemberMissingError",
    "CollectionNotSupportedError",
    "CollectionWithoutMembersError",
    "ColumnSchemaError",
    "ComponentFieldError",
    "ConcurrentRunError",
    "CredentialsInUrlError",
    "DagsterDataframelyError",
    "InvalidArgumentsError",
    "InvalidColumnNameError",
    "InvalidDefinitionError",
    "InvalidRuleNameError",
    "InvalidSettingError",
    "InvalidThresholdError",
    "MaterializeResultFieldError",
    "MaterializeResultValueError",
    "MissingPartitionExprError",
    "MultiAssetKeyError",
    "MultiAssetReturnError",
    "NoRunningStepError",
    "NoValidRowsError",
    "PartitionKeyTooLongError",
    "PartitionRangeError",
    "QuarantineDirError",
    "QuarantineDirProtocolError",
    "QuarantineFrameTypeError",
    "QuarantineIOManagerError",
    "QuarantineKeyCollisionError",
    "QuarantineStorageCollisionError",
    "QuarantineStorageError",
    "ReservedColumnError",
    "RowCountOutOfBoundsError",
    "SchemaTypeError",
    "SensitiveMarkError",
    "StagedWriteError",
    "StorageRefusedError",
    "StorageWriteError",
    "StreamingStagingError",
    "ThresholdExceededError",
    "ThresholdNotApplicableError",
    "UnexpectedArgumentError",
    "UnknownCollectionMemberError",
    "UnknownPartitionKeyError",
    "UnknownPolicyRuleError",
    "UnknownWarningRuleError",
    "UnsafePathKeyError",
    "UnsupportedDtypeError",
    "ValidationAbortError",
    "ValidationFailedError",
]

_CHECK_NAME_CHARACTERS = "letters, digits and underscores (A-Za-z0-9_)"


def _quoted(items: Iterable[object]) -> str:
    """Render items as a comma-separated list of their reprs."""
    return ", ".join(repr(item) for item in items)


def _bulleted(lines: Iterable[str]) -> str:
    """Render lines as an indented bullet list that starts on a new line."""
    return "".join(f"\n  - {line}" for line in lines)


def _rows(count: int) -> str:
    """`1 row`, `2 rows`: the count with its noun."""
    return f"{count} row" if count == 1 else f"{count} rows"


def _rule_counts(counts: Mapping[str, int], invalid_count: int) -> str:
    """Describe how many rows failed each rule, with the caveat about overlapping rules."""
    listing = _bulleted(f"{rule}: {_rows(count)}" for rule, count in counts.items())
    return (
        f"Rows that failed each rule:{listing}\n"
        f"A row can fail more than one rule, so these counts may add up to more than "
        f"the number of invalid rows ({invalid_count})."
    )


def _unknown_rules(rules: list[str], valid_rules: list[str], *, filters: bool = False) -> str:
    """The unknown names, the schema's rules, and how Dataframely names a rule."""
    listing = _quoted(valid_rules) if valid_rules else "none"
    kinds = "'primary_key', or a Collection filter's name" if filters else "or 'primary_key'"
    return (
        f"{_quoted(rules)}. Its rules are: {listing}. Name each rule as Dataframely does: "
        f"`<column>|<kind>` for a column's rule (such as 'amount|min'), the method name of "
        f"a `@dy.rule()`, {kinds}; not the check name (`dy_rule__...`)."
    )


def _quarantined_at(address: str | None) -> str:
    """Where the invalid rows of a failed run went, as a sentence; nothing without an address."""
    return "" if address is None else f" The invalid rows are in the quarantine at {address!r}."


def _rebuild(
    cls: type["DagsterDataframelyError"], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> "DagsterDataframelyError":
    """Call an error's constructor again; the target of `DagsterDataframelyError.__reduce__`."""
    return cls(*args, **kwargs)


class DagsterDataframelyError(Exception):
    """Base class of every error this package raises.

    Every subclass stores its constructor arguments as attributes of the same name, so a caller
    can act on the error (which columns, how many rows, where the quarantine went) without
    parsing its message; that is also what lets `__reduce__` rebuild it after pickling (Dagster
    ships errors between processes). Catch this class to catch every error of the package.

    Parameters
    ----------
    message
        The whole message, which says what failed and how to fix it. Also `self.message`.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        # The default reduction passes only `self.args` (the message) back to the class,
        # which breaks for constructors with other parameters or keyword-only ones. Rebuild
        # from the constructor's own signature instead, then restore `__dict__` so extras
        # such as `__notes__` survive too.
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for parameter in inspect.signature(type(self)).parameters.values():
            value = getattr(self, parameter.name)
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
                kwargs[parameter.name] = value
            else:
                args.append(value)
        return (_rebuild, (type(self), tuple(args), kwargs), dict(self.__dict__))


class InvalidDefinitionError(DagsterDataframelyError, dg.DagsterInvalidDefinitionError):
    """Base class of the refusals of a declaration: a schema, setting or argument unusable here.

    Raised where the asset or check is declared, so a code location fails to load instead of a
    run failing later; a hand-wiring function raises them when it is called. Each is also a
    `dg.DagsterInvalidDefinitionError`, so code that catches Dagster's own definition errors
    catches these too (and Dagster reports one raised inside a run as a definition problem,
    which a retry cannot fix).

    Parameters
    ----------
    message
        The whole message, which says what failed and how to fix it.
    """


class ValidationFailedError(DagsterDataframelyError):
    """Base class of the data's verdict: validation failed the step, so no table was written.

    `ColumnSchemaError`, `ValidationAbortError` and `NoValidRowsError`: the frame did not have
    the schema's columns, or rows failed and nothing may be written; with a quality policy,
    `ThresholdExceededError` and `RowCountOutOfBoundsError`: more rows failed a rule, or fewer
    or more rows came, than the policy tolerates. The table keeps its last
    good contents. Catch this one class to handle every failing outcome of the failure policy
    at once; it is never raised for a bug in the package or in the asset's own code.

    Parameters
    ----------
    message
        The whole message, which says what failed and how to fix it.
    """


class StorageRefusedError(DagsterDataframelyError):
    """Base class of the refusals to store rows where they would be lost, replaced or exposed.

    A quarantine that would share the table's place, a key a path cannot hold, two runs writing
    one partition, a URL with credentials, a directory nobody configured: raised before anything
    is written, so the table and the quarantine keep what they had.

    Parameters
    ----------
    message
        The whole message, which says what failed and how to fix it.
    """


class InvalidArgumentsError(InvalidDefinitionError, dg.DagsterInvariantViolationError):
    """Raised when a call's arguments cannot go together, or one is of a kind it cannot take.

    Also a `dg.DagsterInvariantViolationError`, which these calls raised before this package
    gave the refusals a class of their own, so code that catches that still catches them.

    Parameters
    ----------
    function
        The function that refused its arguments, such as `table_checks`.
    problem
        What is wrong with them.
    fix
        What to pass instead.
    """

    def __init__(self, function: str, problem: str, fix: str) -> None:
        self.function = function
        self.problem = problem
        self.fix = fix
        super().__init__(f"{function}: {problem}. {fix}")


class SchemaTypeError(InvalidDefinitionError, TypeError):
    """Raised when a Dataframely schema or Collection class is expected and something else given.

    Also a `TypeError`, as it was before this package gave it a class of its own.

    Parameters
    ----------
    expected
        What was expected, such as `a dataframely Schema class (a subclass of dy.Schema)`.
    given
        The `repr` of what was given instead.
    """

    def __init__(self, expected: str, given: str) -> None:
        self.expected = expected
        self.given = given
        super().__init__(
            f"Expected {expected}, got {given}. Pass the class itself, not an instance or a frame."
        )


class UnexpectedArgumentError(InvalidArgumentsError, TypeError):
    """Raised when a decorator is given a keyword it does not take, or is used without its schema.

    Several of `@dg.asset`'s keywords have a replacement here (`key=` is `name=` plus
    `key_prefix=`; `check_specs=` come from the schema), so the message names it instead of
    Python's bare "unexpected keyword argument". Also a `TypeError`, which Python raised before.

    Parameters
    ----------
    function
        The decorator that refused the call, such as `dd.asset`.
    problem
        What it refused: "`key=` is not one of its keywords", or a function where the schema
        goes.
    fix
        What to write instead.
    """


class ComponentFieldError(InvalidDefinitionError):
    """Raised when a component's YAML field has a value the component cannot use.

    `dg check defs`, `dg dev` and every load of the project fail on it, and the message says
    which file and line, which field, and what to write instead, as a YAML author needs.

    Parameters
    ----------
    file
        The YAML file and line, such as `defs/orders_checks/defs.yaml:4`.
    field
        The field under `attributes`, such as `dataframely_schema` or `assets[1]`.
    problem
        What is wrong with its value.
    fix
        What to write instead.
    """

    def __init__(self, file: str, field: str, problem: str, fix: str) -> None:
        self.file = file
        self.field = field
        self.problem = problem
        self.fix = fix
        super().__init__(f"{file}: attributes.{field}: {problem}. {fix}")


class CollectionNotSupportedError(InvalidDefinitionError):
    """Raised when the decorator is given a `dy.Collection` instead of a `dy.Schema`.

    An asset is one table, and a Collection describes several, so there is no single
    schema to check it against.

    Parameters
    ----------
    collection_name
        The name of the `dy.Collection` that was passed.
    """

    def __init__(self, collection_name: str) -> None:
        self.collection_name = collection_name
        super().__init__(
            f"`schema=` was given the Dataframely Collection {collection_name!r}, but this "
            f"asset is checked against a single `dy.Schema`. Validate the Collection's members "
            f"together with `dd.collection_asset({collection_name})`, check members' existing "
            f"tables with `dd.table_checks({collection_name}, {{member: asset, ...}})`, or give "
            f"each member an asset of its own with that member's schema."
        )


class CollectionWithoutMembersError(InvalidDefinitionError):
    """Raised when a `dy.Collection` with no member is declared as assets.

    Each member becomes one asset, so a Collection without members would declare none.

    Parameters
    ----------
    collection_name
        The name of the `dy.Collection`.
    """

    def __init__(self, collection_name: str) -> None:
        self.collection_name = collection_name
        super().__init__(
            f"The Dataframely Collection {collection_name!r} has no members, so there is no "
            f"asset to declare. Annotate at least one member on it, such as "
            f"`orders: dy.LazyFrame[Orders]`."
        )


class UnknownCollectionMemberError(InvalidDefinitionError):
    """Raised when frames are given for names that are not members of the Collection.

    A frame under a misspelled name would otherwise be dropped without a word, and the member
    it was meant for validated as missing.

    Parameters
    ----------
    collection_name
        The name of the `dy.Collection`.
    unknown
        The names that are not members.
    members
        The Collection's members, in declaration order.
    """

    def __init__(
        self, collection_name: str, unknown: Sequence[str], members: Sequence[str]
    ) -> None:
        self.collection_name = collection_name
        self.unknown = list(unknown)
        self.members = list(members)
        super().__init__(
            f"Frames were returned for {_quoted(self.unknown)}, which "
            f"{'is not a member' if len(self.unknown) == 1 else 'are not members'} of the "
            f"Collection {collection_name!r}. Its members are: {_quoted(self.members)}. "
            f"Return each frame under its member's name."
        )


class CollectionMemberMissingError(DagsterDataframelyError):
    """Raised when some members of a Collection are given but a required one is not.

    The Collection's filters need every required member to decide which rows to keep, so no
    member can be validated without it. A `dd.collection_asset` function that returns no
    member at all skips every one instead.

    Parameters
    ----------
    collection_name
        The name of the `dy.Collection`.
    missing
        The required members with no frame (absent, or `None`) or, for `dd.table_checks`, no
        asset.
    """

    def __init__(self, collection_name: str, missing: Sequence[str]) -> None:
        self.collection_name = collection_name
        self.missing = list(missing)
        super().__init__(
            f"Nothing was given for the required "
            f"{'member' if len(self.missing) == 1 else 'members'} {_quoted(self.missing)} of "
            f"the Collection {collection_name!r}, so its filters cannot run and nothing was "
            f"validated or written. Give every required member: return a frame for it from a "
            f"dd.collection_asset function (an empty one if it has no rows), or map it to its "
            f"asset in dd.table_checks; or declare the member optional "
            f"(`dy.LazyFrame[Schema] | None`); or return no member at all to skip the step."
        )


class CollectionFilterDuplicatesError(DagsterDataframelyError):
    """Raised when a Collection's filters would duplicate rows of a member.

    `Collection.filter` keeps only the Collection's common primary key of what each
    `@dy.filter` returns, and joins every member on it: a key the filter returns on several
    rows (a join that repeats an order once per line, say) repeats that key's rows. A
    `.unique()` over rows with other columns does not remove those repeats; selecting the key
    first does. Nothing is written: a duplicated row is as wrong as a lost one.

    Parameters
    ----------
    collection_name
        The name of the `dy.Collection`.
    member
        The member whose rows were duplicated.
    input_count
        How many rows the member had.
    output_count
        How many rows came out of the split, valid and invalid together.
    primary_key
        The Collection's common primary key: the columns Dataframely keeps of a filter's
        result, which must be unique in it.
    filters
        The filters whose result has a key on more than one row; empty when none could be
        named (a filter whose result changes between two runs).
    """

    def __init__(
        self,
        collection_name: str,
        member: str,
        input_count: int,
        output_count: int,
        primary_key: Sequence[str],
        filters: Sequence[str],
    ) -> None:
        self.collection_name = collection_name
        self.member = member
        self.input_count = input_count
        self.output_count = output_count
        self.primary_key = list(primary_key)
        self.filters = list(filters)
        key = ", ".join(self.primary_key)
        which = (
            f"the {'filter' if len(self.filters) == 1 else 'filters'} {_quoted(self.filters)}"
            if self.filters
            else "a `@dy.filter`"
        )
        selected = ", ".join(repr(column) for column in self.primary_key)
        super().__init__(
            f"The filters of the Collection {collection_name!r} turned the {_rows(input_count)} "
            f"of member {member!r} into {_rows(output_count)}, so nothing was written: {which} "
            f"returned the same ({key}) on more than one row. Collection.filter keeps only the "
            f"common primary key ({key}) of what a filter returns and joins every member on "
            f"it, so each repeat of a key repeats that key's rows; a `.unique()` over rows that "
            f"keep other columns (a join's) does not remove the repeats. End the filter with "
            f"`.select({selected}).unique()`."
        )


class ReservedColumnError(InvalidDefinitionError):
    """Raised when a schema has a column whose name starts with the reserved `dy_` prefix.

    This package names its checks and the rule columns of the quarantine with `dy_`, so
    such a column could clash with one of them.

    Parameters
    ----------
    schema_name
        The schema's name.
    columns
        The columns whose names start with `dy_`.
    """

    def __init__(self, schema_name: str, columns: list[str]) -> None:
        self.schema_name = schema_name
        self.columns = list(columns)
        super().__init__(
            f"Schema {schema_name!r} has columns in the `dy_` namespace, which "
            f"dagster-dataframely keeps for the checks and rule columns it generates: "
            f"{_quoted(self.columns)}. Rename these columns so that no name starts with `dy_`."
        )


class InvalidColumnNameError(InvalidDefinitionError):
    """Raised when a column name has characters Dagster rejects in an asset check name.

    Every rule's check name is built from its column's name, and Dagster only accepts
    letters, digits and underscores there.

    Parameters
    ----------
    schema_name
        The schema's name.
    columns
        The column names with a character outside `A-Za-z0-9_`.
    """

    def __init__(self, schema_name: str, columns: list[str]) -> None:
        self.schema_name = schema_name
        self.columns = list(columns)
        super().__init__(
            f"Schema {schema_name!r} has column names that cannot be part of an asset check "
            f"name: {_quoted(self.columns)}. Check names are built from column names and "
            f"Dagster accepts only {_CHECK_NAME_CHARACTERS} in them. Rename each column, or "
            f"change the `alias=` that gives it this name, so that it uses only those "
            f"characters."
        )


class InvalidRuleNameError(InvalidDefinitionError):
    """Raised when a rule name has characters Dagster rejects in an asset check name.

    The `|` Dataframely places between a column and its rule is translated, but any other
    character outside `A-Za-z0-9_`, such as the `-` in a `check={"is-lower": ...}` key,
    leaves no valid check name for the rule.

    Parameters
    ----------
    schema_name
        The schema's name.
    rules
        The rule names with a character outside `A-Za-z0-9_`.
    """

    def __init__(self, schema_name: str, rules: list[str]) -> None:
        self.schema_name = schema_name
        self.rules = list(rules)
        super().__init__(
            f"Schema {schema_name!r} has rule names that cannot be part of an asset check "
            f"name: {_quoted(self.rules)}. Apart from the `|` between a column and its rule, "
            f"Dagster accepts only {_CHECK_NAME_CHARACTERS} in a check name. Rename each "
            f"rule (the key in a `check=` dict, or the method name of a `@dy.rule()`) so "
            f"that it uses only those characters."
        )


class CheckNameCollisionError(InvalidDefinitionError):
    """Raised when two rules of one schema map to the same asset check name.

    Dagster would reject the duplicate as well, but its error does not say which rules
    caused it, so this package reports them first.

    Parameters
    ----------
    schema_name
        The schema's name.
    first
        The first rule that produces `name`.
    second
        The second rule that produces `name`.
    name
        The asset check name both rules produce.
    """

    def __init__(self, schema_name: str, first: str, second: str, name: str) -> None:
        self.schema_name = schema_name
        self.first = first
        self.second = second
        self.name = name
        super().__init__(
            f"In schema {schema_name!r}, the rules {first!r} and {second!r} both become the "
            f"asset check {name!r}, and an asset cannot have two checks with the same name. "
            f"Rename one of these two rules."
        )


class UnsupportedDtypeError(InvalidDefinitionError):
    """Raised when a schema declares a column with a dtype Polars cannot hold.

    Dataframely accepts such a declaration (`dy.Decimal(76)`, a precision beyond Polars' 38
    digits), but no frame can ever have that dtype, so every run would fail the column-schema
    check. Refusing it where the schema is declared points at the line to change.

    Parameters
    ----------
    schema_name
        The schema's name.
    problems
        One mapping per column whose dtype the package cannot handle, naming the column and
        its dtype.
    """

    def __init__(self, schema_name: str, problems: Sequence[Mapping[str, str]]) -> None:
        self.schema_name = schema_name
        self.problems = [dict(problem) for problem in problems]
        listing = _bulleted(
            f"{problem['column']!r}: {problem['dtype']} ({problem['reason']})"
            for problem in self.problems
        )
        super().__init__(
            f"Schema {schema_name!r} declares columns with a dtype Polars cannot hold, so no "
            f"frame could ever match them:{listing}\n"
            f"Declare each of these columns with a dtype Polars supports; a `dy.Decimal` takes "
            f"a precision of at most 38 digits."
        )


class SensitiveMarkError(InvalidDefinitionError):
    """Raised when a column's `metadata={"pii": ...}` is neither `True` nor `False`.

    The package reads `pii` as the mark of a sensitive column, whose values it keeps out of the
    event log. A value it would have to guess at (`"yes"`, `1`) could leave a column the user
    meant to hide in every sample, so only the two booleans are accepted.

    Parameters
    ----------
    schema_name
        The schema's name.
    columns
        Each column whose mark is not a boolean, with the type of the value it has.
    """

    def __init__(self, schema_name: str, columns: Mapping[str, str]) -> None:
        self.schema_name = schema_name
        self.columns = dict(columns)
        listing = _bulleted(f"{column!r}: a {kind}" for column, kind in self.columns.items())
        super().__init__(
            f"Schema {schema_name!r} marks columns with a `pii` metadata value that is not "
            f"True or False:{listing}\n"
            f"dagster-dataframely reads `metadata={{'pii': True}}` as the mark of a sensitive "
            f"column: its values are masked in every sample and left out of the statistics. "
            f"Write `True` to mark the column sensitive or `False` to say it is not."
        )


class UnknownWarningRuleError(InvalidDefinitionError):
    """Raised when `warning_rules=` names a rule the schema does not have.

    A misspelt name must not leave the rule it meant blocking while the user believes it only
    warns, nor be dropped in silence, so every name is checked where the asset is declared.

    Parameters
    ----------
    schema_name
        The schema's name.
    rules
        The names given that are not rules of the schema.
    valid_rules
        Every rule of the schema, as Dataframely names them.
    """

    def __init__(self, schema_name: str, rules: list[str], valid_rules: list[str]) -> None:
        self.schema_name = schema_name
        self.rules = list(rules)
        self.valid_rules = list(valid_rules)
        super().__init__(
            f"`warning_rules=` names rules that schema {schema_name!r} does not have: "
            f"{_unknown_rules(self.rules, self.valid_rules)}"
        )


class UnknownPolicyRuleError(InvalidDefinitionError):
    """Raised when a `dd.QualityPolicy` names a rule the schema does not have.

    A misspelt name would leave the rule it meant without its threshold, severity or blocking
    while the user believes it has them, so every name is checked where the asset is declared.

    Parameters
    ----------
    schema_name
        The schema's name (a Collection's, for `dd.collection_asset`).
    parameter
        The policy's parameter that names them: `rules`, `severity` or `blocking`.
    rules
        The names given that are not rules of the schema.
    valid_rules
        Every rule the policy may name, as Dataframely names them.
    """

    def __init__(
        self, schema_name: str, parameter: str, rules: list[str], valid_rules: list[str]
    ) -> None:
        self.schema_name = schema_name
        self.parameter = parameter
        self.rules = list(rules)
        self.valid_rules = list(valid_rules)
        super().__init__(
            f"The quality policy's `{parameter}=` names rules that schema {schema_name!r} does "
            f"not have: {_unknown_rules(self.rules, self.valid_rules, filters=True)}"
        )


class InvalidThresholdError(InvalidDefinitionError):
    """Raised when a `dd.Threshold`, `dd.VolumeCheck` or `dd.QualityPolicy` gets an unusable bound.

    A bound is checked where it is written, so a fraction of `5` (meant as 5%) or a warn bound
    above the fail bound never reaches a run, where it would pass or fail everything.

    Parameters
    ----------
    parameter
        The parameter given the value, such as `warn_above`.
    value
        The value, as its `repr`.
    problem
        Why it cannot be used.
    """

    def __init__(self, parameter: str, value: str, problem: str) -> None:
        self.parameter = parameter
        self.value = value
        self.problem = problem
        super().__init__(
            f"`{parameter}={value}` is not a bound this package can use: {problem}. An int "
            f"counts rows (10 means ten rows), a float is a fraction of the rows between 0 "
            f"and 1 (0.05 means 5%); see docs/quality-policy.md."
        )


class ThresholdNotApplicableError(InvalidDefinitionError):
    """Raised when a quality policy sets something that cannot apply where it is declared.

    A threshold on a rule whose failing rows already fail the run would promise a tolerance the
    run cannot give, since those rows have nowhere to go; a volume check where nothing is
    written has nothing to count.

    Parameters
    ----------
    schema_name
        The schema's name.
    problem
        What cannot apply, and why.
    fix
        What to declare instead.
    """

    def __init__(self, schema_name: str, problem: str, fix: str) -> None:
        self.schema_name = schema_name
        self.problem = problem
        self.fix = fix
        super().__init__(
            f"The quality policy of an asset of schema {schema_name!r} cannot apply: "
            f"{problem}. {fix}"
        )


class InvalidSettingError(InvalidDefinitionError):
    """Raised when a setting resolves to a value it does not accept.

    Settings come from the package default, an environment variable or an argument, so the
    error is raised while resolving and says which of those supplied the bad value.

    Parameters
    ----------
    setting
        The setting's name, such as `statistics`.
    value
        The rejected value, as its `repr`.
    allowed
        The accepted values, or a phrase describing them when they cannot be listed.
    source
        Where the value came from: the argument, an environment variable or the package default.
    env_var
        The setting's environment variable, such as `DAGSTER_DATAFRAMELY_STATISTICS`.
    takes_argument
        Whether the setting also has an argument; `quarantine_dir` is read only from the
        environment.
    """

    def __init__(
        self,
        setting: str,
        value: str,
        allowed: Sequence[str] | str,
        *,
        source: str,
        env_var: str,
        takes_argument: bool = True,
    ) -> None:
        self.setting = setting
        self.value = value
        self.allowed: tuple[str, ...] | str = (
            allowed if isinstance(allowed, str) else tuple(allowed)
        )
        self.source = source
        self.env_var = env_var
        self.takes_argument = takes_argument
        accepted = (
            self.allowed if isinstance(self.allowed, str) else f"one of {_quoted(self.allowed)}"
        )
        if takes_argument:
            where = (
                f"Change {source} to an accepted value. The `{setting}=` argument takes "
                f"precedence over the environment variable {env_var}, which takes precedence "
                f"over the package default."
            )
        else:
            where = (
                f"Change {source} to an accepted value, or unset it. This setting has no "
                f"argument and is read only from the environment variable {env_var}."
            )
        super().__init__(
            f"The setting {setting!r} got {value} from {source}, which is not a value it "
            f"accepts (expected {accepted}). {where}"
        )


class MaterializeResultValueError(DagsterDataframelyError):
    """Raised when a returned `dg.MaterializeResult` carries no Polars frame in `value`.

    Without a frame there is nothing to validate, so this comes before the column-schema
    check. `value_type` names what `value` held instead, such as `pandas.DataFrame`; it is
    None when `value` was None.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    value_type
        The type `value` held instead, or None when it was None.
    """

    def __init__(self, asset: str, *, value_type: str | None = None) -> None:
        self.asset = asset
        self.value_type = value_type
        if value_type is None:
            held = "holds no frame"
            convert = ""
        else:
            held = f"holds a {value_type}, not a Polars frame"
            convert = (
                " (convert it in the asset body, for example with `pl.from_pandas(...)` for a "
                "pandas frame or `pl.from_arrow(...)` for an Arrow table)"
            )
        super().__init__(
            f"Asset {asset!r} returned a `dg.MaterializeResult` whose `value` {held}, so "
            f"there is nothing to validate. Put a `pl.DataFrame` or `pl.LazyFrame` in "
            f"`value=`{convert}; or return the frame itself and attach metadata with "
            f"`context.add_asset_metadata`; or, for an asset that should not be validated, "
            f"use a plain `@dg.asset` with `dd.wiring.schema_metadata`."
        )


class MaterializeResultFieldError(DagsterDataframelyError):
    """Raised when a returned `dg.MaterializeResult` sets `asset_key` or `check_results`.

    The decorator fills in both fields itself, so a value from the asset would conflict.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    field
        The field that was set: `asset_key` or `check_results`.
    """

    def __init__(self, asset: str, field: str) -> None:
        self.asset = asset
        self.field = field
        super().__init__(
            f"Asset {asset!r} returned a `dg.MaterializeResult` that sets `{field}`, a field "
            f"the decorator fills in itself. Remove `{field}=` from the result."
        )


class MultiAssetReturnError(DagsterDataframelyError):
    """Raised when a `dd.multi_asset` function returns something it cannot validate.

    It returns a mapping from output name to a frame (or a `dg.MaterializeResult` with one, or
    None): anything else, a name that is no output, or a value of another type for an output
    fails the step before any output is validated, so nothing is written.

    Parameters
    ----------
    asset
        The multi-asset's name.
    problem
        What the function returned instead.
    outputs
        The output names the mapping may have.
    """

    def __init__(self, asset: str, problem: str, outputs: list[str]) -> None:
        self.asset = asset
        self.problem = problem
        self.outputs = list(outputs)
        super().__init__(
            f"Multi-asset {asset!r} {problem}. A dd.multi_asset function returns a mapping "
            f"from output name ({_quoted(self.outputs)}) to a pl.DataFrame, a pl.LazyFrame, a "
            f"dg.MaterializeResult with one of those as `value`, or None to skip that output."
        )


class MultiAssetKeyError(InvalidDefinitionError):
    """Raised when a function needs one asset of a multi-asset definition and cannot tell which.

    `dd.quarantine_spec`, `dd.wiring.delegating_writer` and `dd.wiring.validate_quarantine_key`
    work for one asset; given a definition with several (a multi-asset), they take the output's
    asset key too, and it must be one of the definition's.

    Parameters
    ----------
    definition
        The definition's name.
    keys
        The definition's asset keys, as strings.
    given
        The asset key passed, as a string, or None when none was.
    """

    def __init__(self, definition: str, keys: list[str], given: str | None) -> None:
        self.definition = definition
        self.keys = list(keys)
        self.given = given
        problem = (
            f"has {len(self.keys)} assets, so it needs the asset key of the one meant"
            if given is None
            else f"has no asset {given!r}"
        )
        super().__init__(
            f"Definition {definition!r} {problem}. Pass `asset_key=` with one of "
            f"{_quoted(self.keys)}."
        )


class UnknownPartitionKeyError(InvalidDefinitionError, dg.DagsterUnknownPartitionError):
    """Raised when a direct call of a partitioned asset names a partition the asset does not have.

    A run of such a key never starts (Dagster raises `dg.DagsterUnknownPartitionError`), so a
    direct call (`dd.testing.call_asset(..., partition_key=...)`, or the asset called with
    `dg.build_asset_context(partition_key=...)`) refuses it too, before the asset's function
    runs; it is also a `dg.DagsterUnknownPartitionError`, so a test that expects a run's
    error catches it. A dimension of dynamic partitions is not checked: its keys live in an
    instance, which a direct call usually has none of.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    partition_key
        The key given, as text (a multi-partition's joined with `|`).
    first_key
        The asset's first partition key, shown as an example; None when it has none.
    """

    def __init__(self, asset: str, partition_key: str, first_key: str | None) -> None:
        self.asset = asset
        self.partition_key = str(partition_key)
        self.first_key = None if first_key is None else str(first_key)
        example = "" if self.first_key is None else f", such as {self.first_key!r}"
        super().__init__(
            f"The partition key {self.partition_key!r} is not a partition of {asset!r}, and a "
            f"run of it would be refused, so the call stopped before the asset's function ran. "
            f"Pass one of the asset's partition keys{example}, to "
            "`dg.build_asset_context(partition_key=...)` or "
            "`dd.testing.call_asset(..., partition_key=...)`."
        )


class ColumnSchemaError(ValidationFailedError):
    """Raised when a frame's columns or dtypes differ from the schema.

    That points at a bug in the code producing the frame rather than at bad rows, so the
    run stops before row validation and nothing is written.

    Parameters
    ----------
    schema_name
        The schema's name.
    problems
        One mapping per mismatched column, with the keys `column`, `expected` and `actual`
        (dtypes as text; `missing` for a column the frame lacks).
    """

    def __init__(self, schema_name: str, problems: Sequence[Mapping[str, str]]) -> None:
        self.schema_name = schema_name
        self.problems = [dict(problem) for problem in problems]
        listing = _bulleted(
            f"{problem['column']!r}: expected {problem['expected']}, actual {problem['actual']}"
            for problem in self.problems
        )
        super().__init__(
            f"The frame's columns do not match schema {schema_name!r}:{listing}\n"
            f"Fix the code that builds the frame, or convert it with "
            f"`{schema_name}.cast` in the asset body."
        )


class ValidationAbortError(ValidationFailedError):
    """Raised when rows fail validation and the asset has no quarantine for them.

    Without a quarantine every row must be valid, so the asset writes nothing rather than
    silently dropping rows.

    Parameters
    ----------
    schema_name
        The schema's name.
    invalid_count
        How many rows failed at least one rule.
    counts
        How many rows failed each rule, by rule name. A row can fail several rules, so the
        counts may add up to more than `invalid_count`.
    """

    def __init__(self, schema_name: str, invalid_count: int, counts: Mapping[str, int]) -> None:
        self.schema_name = schema_name
        self.invalid_count = invalid_count
        self.counts = dict(counts)
        super().__init__(
            f"{_rows(invalid_count)} failed validation against schema {schema_name!r}, and "
            f"the asset has no quarantine, so nothing was written.\n"
            f"{_rule_counts(self.counts, invalid_count)}\n"
            f"Fix these rows upstream, pass `quarantine=True` to send them to a quarantine, "
            f"or filter them out in the asset body."
        )


class NoValidRowsError(ValidationFailedError):
    """Raised when every row fails validation, so only the quarantine was written.

    The asset's table is left untouched, so an empty table never replaces the last good one.

    Parameters
    ----------
    schema_name
        The schema's name.
    invalid_count
        How many rows failed: every row.
    counts
        How many rows failed each rule, by rule name.
    address
        Where the quarantine was written: the writer's address.
    """

    def __init__(
        self, schema_name: str, invalid_count: int, counts: Mapping[str, int], address: str
    ) -> None:
        self.schema_name = schema_name
        self.invalid_count = invalid_count
        self.counts = dict(counts)
        self.address = address
        super().__init__(
            f"All {_rows(invalid_count)} failed validation against schema {schema_name!r}, so "
            f"only the quarantine was written and the asset's table kept its previous "
            f"contents.\n"
            f"{_rule_counts(self.counts, invalid_count)}\n"
            f"Inspect the invalid rows in the quarantine at {address!r}."
        )


class ThresholdExceededError(ValidationFailedError):
    """Raised when more rows failed a rule than its threshold's `fail_above` tolerates.

    The table is not written, so it keeps its last good contents; the quarantine still gets its
    rows, and every check reports.

    Parameters
    ----------
    schema_name
        The schema's name.
    rule
        The first rule above its bound, as Dataframely names it.
    failed_count
        How many rows failed it.
    row_count
        How many rows the frame had; `fraction` is `failed_count / row_count`.
    bound
        The rule's `fail_above`: an int counts rows, a float is a fraction of the rows.
    address
        Where the quarantine was written, when it was.
    other_rules
        The other rules above their bounds in the same run.
    """

    def __init__(
        self,
        schema_name: str,
        rule: str,
        failed_count: int,
        row_count: int,
        bound: float,
        *,
        address: str | None = None,
        other_rules: Sequence[str] = (),
    ) -> None:
        self.schema_name = schema_name
        self.rule = rule
        self.failed_count = failed_count
        self.row_count = row_count
        self.bound = bound
        self.address = address
        self.other_rules = list(other_rules)
        self.fraction = failed_count / row_count if row_count else 0.0
        shown = _rows(bound) if isinstance(bound, int) else f"{bound * 100:g}% of the rows"
        others = (
            f"\nAlso above their bounds: {_quoted(self.other_rules)}." if self.other_rules else ""
        )
        super().__init__(
            f"Rule {rule!r} of schema {schema_name!r} failed {failed_count} of "
            f"{_rows(row_count)} ({self.fraction * 100:.4g}%), above its threshold's "
            f"fail_above of {shown}, so the run failed and the asset's table kept its previous "
            f"contents.{_quarantined_at(address)}{others}\n"
            f"Fix the rows upstream, or raise the rule's `fail_above` in the asset's "
            f"`quality_policy=` if this much failure is acceptable."
        )


class RowCountOutOfBoundsError(ValidationFailedError):
    """Raised when a volume check at `ERROR` finds the rows to write outside its bounds.

    A table that lost most of its rows passes every rule, so the volume check is the one that
    keeps it from replacing the last good table: the table is not written, the quarantine still
    gets its rows, and every check reports.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    row_count
        How many rows the run would have written.
    min_rows
        The fewest rows the check expected, or None.
    max_rows
        The most rows the check expected, or None.
    basis
        Where the bounds come from: the fixed bounds, or the recent materializations.
    address
        Where the quarantine was written, when it was.
    """

    def __init__(
        self,
        asset: str,
        row_count: int,
        min_rows: int | None,
        max_rows: int | None,
        basis: str,
        *,
        address: str | None = None,
    ) -> None:
        self.asset = asset
        self.row_count = row_count
        self.min_rows = min_rows
        self.max_rows = max_rows
        self.basis = basis
        self.address = address
        low = "" if min_rows is None else f"at least {_rows(min_rows)}"
        high = "" if max_rows is None else f"at most {_rows(max_rows)}"
        expected = " and ".join(part for part in (low, high) if part)
        super().__init__(
            f"Asset {asset!r} would have written {_rows(row_count)}, and its volume check "
            f"expects {expected} ({basis}), so the run failed and the table kept its previous "
            f"contents.{_quarantined_at(address)}\n"
            f"Check the source for lost or duplicated rows; if the new volume is right, widen "
            f"the asset's `dd.VolumeCheck` bounds."
        )


class QuarantineKeyCollisionError(StorageRefusedError):
    """Raised when another asset already materializes the quarantine's asset key.

    Both would write to the same place, and whichever ran second would overwrite the other,
    so the run stops before the asset's function is called.

    Parameters
    ----------
    asset
        The key of the asset with `quarantine=True`, as a string.
    quarantine
        Its quarantine's key, which the other asset also materializes.
    """

    def __init__(self, asset: str, quarantine: str) -> None:
        self.asset = asset
        self.quarantine = quarantine
        super().__init__(
            f"Asset {asset!r} has `quarantine=True` and writes its invalid rows under the key "
            f"{quarantine!r}, but another asset in this code location already materializes "
            f"{quarantine!r}. Rename that other asset, or drop `quarantine=True` from "
            f"{asset!r}. If the other asset is a quarantine table you declared yourself, "
            f"remove it and use `quarantine_spec`, which puts the quarantine in the asset "
            f"graph for you."
        )


class QuarantineStorageCollisionError(QuarantineKeyCollisionError):
    """Raised when another asset's key would write inside a partitioned asset's quarantine.

    A path-based IO manager stores the partitions of `<name>_quarantine` as files in the
    directory `<name>_quarantine/`, so an asset keyed `<name>_quarantine/<part>` writes a
    file among them and replaces the one partition its last part names. A subclass of
    `QuarantineKeyCollisionError`, so code that catches that error catches this one too.

    Parameters
    ----------
    asset
        The key of the partitioned asset with `quarantine=True`, as a string.
    quarantine
        Its quarantine's key.
    other
        The key of the asset that would write among the quarantine's partition files.
    """

    def __init__(self, asset: str, quarantine: str, other: str) -> None:
        self.other = other
        super().__init__(asset, quarantine)
        message = (
            f"Asset {asset!r} has `quarantine=True` and is partitioned, so a path-based IO "
            f"manager stores its invalid rows as one file per partition under {quarantine!r}. "
            f"The asset {other!r}, also in this code location, has a key that starts with "
            f"{quarantine!r}, so it would write into that storage and replace a partition of "
            f"the quarantine. Rename or re-prefix {other!r}, or drop `quarantine=True` from "
            f"{asset!r}."
        )
        self.args = (message,)
        self.message = message


class QuarantineStorageError(StorageRefusedError):
    """Raised in a run, before anything is written, when the quarantine has no safe place.

    The asset's IO manager (or `QuarantineAwareIOManager`'s `quarantine_io_manager`) would
    store the quarantine where the table goes, where the table's next write replaces it,
    or outside its own base directory; or it stores by step output rather than by asset key,
    as `dg.mem_io_manager` does, so the quarantine and the table would share one slot.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    manager
        The IO manager that would store the quarantine, by class name.
    problem
        Why the quarantine has no safe place there.
    """

    def __init__(self, asset: str, manager: str, problem: str) -> None:
        self.asset = asset
        self.manager = manager
        self.problem = problem
        super().__init__(
            f"Asset {asset!r} cannot write its quarantine through {manager}: {problem}. Nothing "
            f"was written. Use an IO manager that stores each asset under its own asset key "
            f"(a UPathIOManager such as PolarsParquetIOManager, or a database IO manager such "
            f"as DuckDBPolarsIOManager), or wrap yours in QuarantineAwareIOManager with such a "
            f"quarantine_io_manager."
        )


class UnsafePathKeyError(StorageRefusedError):
    """Raised in a run, before anything is written, for a key a file path cannot hold as is.

    A path-based IO manager joins the asset key and the partition key into a path, and the
    filesystem resolves a `..` segment and drops a `.` or empty one, so such a key can put
    the table and its quarantine in one file, or either outside the manager's directory.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    key
        The asset or partition key a path cannot hold as it is.
    problem
        What is wrong with it: a `..`, `.` or empty segment.
    """

    def __init__(self, asset: str, key: str, problem: str) -> None:
        self.asset = asset
        self.key = key
        self.problem = problem
        super().__init__(
            f"Asset {asset!r} cannot be written under the key {key!r} through a path-based IO "
            f"manager: {problem}, so its table and quarantine could land in one file or outside "
            f"the manager's base directory. Nothing was written. Rename the partition or key "
            f"part so that no `/`-separated segment is `..`, `.` or empty."
        )


class ConcurrentRunError(StorageRefusedError):
    """Raised when another run is writing the same asset partition at the same time.

    Its table and quarantine writes could interleave with this run's, leaving one run's table
    beside the other run's quarantine, so the run that notices stops before writing anything.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    partition
        The partition both runs write, or None for an unpartitioned asset.
    other_run_id
        The id of the run already writing it.
    """

    def __init__(self, asset: str, partition: str | None, other_run_id: str) -> None:
        self.asset = asset
        self.partition = partition
        self.other_run_id = other_run_id
        where = f"partition {partition!r} of {asset!r}" if partition is not None else repr(asset)
        super().__init__(
            f"Run {other_run_id} is writing {where} right now, so this run stopped before "
            f"writing anything: interleaved writes could pair one run's table with the other's "
            f"quarantine. Re-run once that run has finished. To queue such runs instead, give "
            f"the asset a concurrency pool with a limit of 1 (`dd.asset(..., pool=...)`). If "
            f"run {other_run_id} is dead, mark it failed so it no longer counts as in progress."
        )


class QuarantineDirError(StorageRefusedError):
    """Raised when a directly called asset has invalid rows and no quarantine directory.

    A run hands invalid rows to its IO manager, but a direct call has none, and there is no
    default directory so rows never land somewhere nobody picked.

    Parameters
    ----------
    asset
        The key of the asset that was called, as a string.
    """

    def __init__(self, asset: str) -> None:
        self.asset = asset
        super().__init__(
            f"Asset {asset!r} was called directly and has invalid rows to quarantine, but no "
            f"quarantine directory is configured and a direct call has no IO manager to "
            f"write them. In a test, call it with `dd.testing.call_asset(asset, ...)`, which "
            f"keeps the invalid rows in memory; or set DAGSTER_DATAFRAMELY_QUARANTINE_DIR to a "
            f"directory; or materialize the asset in a run."
        )


class QuarantineIOManagerError(StorageRefusedError):
    """Raised when `QuarantineAwareIOManager` is given something it cannot route rows to.

    Raised when the resource initializes, or on the first write a manager turns out unable to
    take, so a misconfigured deployment fails on its first run rather than losing rows.

    Parameters
    ----------
    manager
        The manager that was passed, named by its class and the argument it was passed as.
    problem
        What is wrong with it.
    fix
        What to pass instead.
    """

    def __init__(self, manager: str, problem: str, fix: str) -> None:
        self.manager = manager
        self.problem = problem
        self.fix = fix
        super().__init__(f"QuarantineAwareIOManager cannot use {manager}: {problem}. {fix}")


class ClearQuarantineError(InvalidDefinitionError):
    """Raised when `clear_quarantine=True` is set on an asset that writes no quarantine.

    Raised at decoration time by `dd.asset` without `quarantine=True`, and on the call by
    `validation_results` without a `quarantine_writer`: there is nothing to clear, and a flag
    that silently does nothing hides a mistake.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    """

    def __init__(self, asset: str) -> None:
        self.asset = asset
        super().__init__(
            f"Asset {asset!r} sets `clear_quarantine=True` but writes no quarantine, so a clean "
            f"run has nothing to clear. Set `quarantine=True` on `dd.asset` (or pass a "
            f"`quarantine_writer` to `validation_results`), or remove `clear_quarantine=True`."
        )


class CredentialsInUrlError(StorageRefusedError):
    """Raised when a directory is a URL with a user name or password written into it.

    Whatever shows the location (metadata, an error, a log line) would show the secret, and
    object stores read their credentials from the environment anyway. The message names where
    the URL was given and its scheme, never the URL itself.

    Parameters
    ----------
    given_as
        Where the URL was given, such as the argument or setting that held it.
    scheme
        The URL's scheme (`s3`, `gs`, ...), or an empty string when it has none.
    """

    def __init__(self, given_as: str, scheme: str) -> None:
        self.given_as = given_as
        self.scheme = scheme
        url = f"a {scheme}:// URL" if scheme else "a URL"
        super().__init__(
            f"{given_as} is {url} with a user name or password in it, which dagster-dataframely "
            f"refuses so that no credential ever appears in metadata, errors or logs. Remove "
            f"the `user:password@` part and give the credentials through the environment (for "
            f"S3, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) or the IO manager's "
            f"storage_options."
        )


class QuarantineDirProtocolError(StorageRefusedError):
    """Raised when the quarantine directory is a URL whose filesystem cannot write files.

    fsspec reads `http://` and `https://` URLs but cannot write to them, and answers a write
    with a bare `NotImplementedError`; this takes its place, when the write is refused.

    Parameters
    ----------
    protocol
        The URL protocol of the quarantine directory that is not supported.
    """

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        super().__init__(
            f"The quarantine directory is a URL with the protocol {protocol!r}, and fsspec's "
            f"filesystem for {protocol!r} cannot write files, so the invalid rows have nowhere "
            f"to go. Set "
            f"the quarantine directory to a local directory or to a URL of a store fsspec "
            f"can write to, such as s3://, gs://, az:// or memory://."
        )


class PartitionKeyTooLongError(StorageRefusedError):
    """Raised when a partition key would make a quarantine file name too long to create.

    A local filesystem refuses a file or directory name over 255 bytes with a bare `OSError`
    ("File name too long"). The name is the escaped partition key plus `.parquet`, so this is
    raised before anything is written.

    Parameters
    ----------
    partition_key
        The partition key that does not fit.
    name
        The file or directory name it would become.
    limit
        The longest name the filesystem allows, in bytes.
    """

    def __init__(self, partition_key: str, name: str, limit: int) -> None:
        self.partition_key = str(partition_key)
        self.name = name
        self.limit = limit
        size = len(name.encode())
        super().__init__(
            f"The partition key {self.partition_key!r} makes the quarantine path segment "
            f"{name!r}, which is {size} bytes long, but a local filesystem takes at most "
            f"{limit} bytes in one file or directory name. Use shorter partition keys (each "
            f"segment of the key, escaped, plus `.parquet` for the last, within {limit} bytes "
            f"of UTF-8), or write the quarantine to an object store such as s3://."
        )


class PartitionRangeError(StorageRefusedError):
    """Raised when a run over a partition range cannot store each partition's rows as its own.

    A single-run backfill validates each partition of the range separately and stores them
    with one write, so every row must belong to one partition of the range, by the asset's
    `partition_expr`, and the IO manager must store a range in one step. Raised before
    anything is written; when the rows decide it, after the asset's function returned them.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    partitions
        The range, as `first...last`.
    problem
        What stands in the way.
    fix
        What to change.
    """

    def __init__(self, asset: str, partitions: str, problem: str, fix: str) -> None:
        self.asset = asset
        self.partitions = partitions
        self.problem = problem
        self.fix = fix
        super().__init__(
            f"The run of {asset!r} over the partitions {partitions} stopped before writing "
            f"anything: {problem}. {fix}"
        )


class MissingPartitionExprError(StorageRefusedError):
    """Raised in a run, before the function, when a database manager lacks a `partition_expr`.

    A database IO manager (a `DbIOManager`, such as `DuckDBPolarsIOManager`) replaces one
    partition of a table by the column the asset's `partition_expr` definition metadata names,
    and without it fails on its first write, after the function ran: the package's write of
    the quarantine, under a key the asset never declared. So a run of one partition refuses it
    first, naming the asset; nothing is written.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    manager
        The IO manager that needs it, as its class name.
    dimensions
        The dimensions of a multi-partitioned asset that have no entry in its
        `partition_expr`; empty for an asset with one partitions definition.
    """

    def __init__(self, asset: str, manager: str, dimensions: list[str]) -> None:
        self.asset = asset
        self.manager = manager
        self.dimensions = list(dimensions)
        if self.dimensions:
            missing = (
                f"its `partition_expr` has no entry for the dimension"
                f"{'s' if len(self.dimensions) > 1 else ''} {_quoted(self.dimensions)}"
            )
            columns = ", ".join(f"{name!r}: '<column>'" for name in self.dimensions)
            fix = (
                "Give `partition_expr` one entry per dimension, naming the column that holds "
                f"each row's key in that dimension: add {columns} to its mapping."
            )
        else:
            missing = "it has no `partition_expr` in its definition metadata"
            fix = (
                "Add `metadata={'partition_expr': '<column>'}` to the asset, naming the column "
                "that holds each row's partition."
            )
        super().__init__(
            f"The run of {asset!r} stopped before its function ran: {manager} stores each "
            f"partition by the column the asset's `partition_expr` names, and {missing}, so "
            f"its first write (the quarantine's, or the table's) would fail after the function "
            f"ran. {fix}"
        )


class StagedWriteError(StorageRefusedError, IsADirectoryError):
    """Raised when `staged_writes=True` finds that the IO manager wrote a directory.

    Staging replaces one file per table; a dataset split into files (or a Delta table) cannot
    be renamed into place whole, so the previous table is left as it was. Also an
    `IsADirectoryError`, as it was before this package gave it a class of its own.

    Parameters
    ----------
    staging_name
        The name of the staging path the manager wrote a directory to.
    """

    def __init__(self, staging_name: str) -> None:
        self.staging_name = staging_name
        super().__init__(
            f"staged_writes=True stages one file per table, but the IO manager wrote a "
            f"directory (a dataset split into files, or a Delta table); the previous table was "
            f"left as it was. Drop staged_writes=True for this asset: {staging_name}"
        )


class StreamingStagingError(StorageRefusedError):
    """Raised when `streaming=True` cannot stage the returned rows on the local disk.

    A streamed output stages its rows once, compressed, in a directory under Python's temporary
    directory (`tempfile`, which `TMPDIR` sets) before validating them. Raised when that disk
    is full or over its quota, or the directory cannot be made; nothing was written, and the
    staged part is removed.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    path
        The staging directory (or the temporary directory it was to be made in).
    problem
        What the operating system or Polars reported.
    """

    def __init__(self, asset: str, path: str, problem: str) -> None:
        self.asset = asset
        self.path = path
        self.problem = problem
        super().__init__(
            f"streaming=True could not stage the rows of {asset!r} in {path}: {problem}. "
            f"Nothing was written. Staging needs room for the whole table, compressed, in "
            f"Python's temporary directory: free space there, point the TMPDIR environment "
            f"variable at a local disk with room for it, or drop streaming=True to validate "
            f"the rows in memory."
        )


class QuarantineFrameTypeError(StorageRefusedError, dg.DagsterInvariantViolationError):
    """Raised when something other than a Polars `DataFrame` is written as a quarantine.

    `QuarantineAwareIOManager` stores quarantines as `pl.DataFrame`s only; also a
    `dg.DagsterInvariantViolationError`, as it was before this package gave it a class.

    Parameters
    ----------
    asset
        The quarantine's asset key, as a string.
    value_type
        The type of what was written instead.
    """

    def __init__(self, asset: str, value_type: str) -> None:
        self.asset = asset
        self.value_type = value_type
        super().__init__(
            f"A quarantine write for {asset} must be a pl.DataFrame, got {value_type}. Write "
            f"the quarantine with dd.wiring.delegating_writer, which hands the writer the frame "
            f"dd.wiring.quarantine_frame builds."
        )


class StorageWriteError(StorageRefusedError):
    """Raised when a write of the package fails for an output whose settings hide values.

    A storage error quotes what it could not write (DuckDB names the value it could not
    convert), and a step's error reaches the event log whole. So when a quarantine write, or a
    write through `QuarantineAwareIOManager`, fails for an output with a column marked
    `metadata={"pii": True}` or with `row_sample=0`, this error replaces the manager's: it names
    the write, the manager and the error's type, and leaves out its message and its chain.

    Parameters
    ----------
    asset
        The asset key the write was for, as a string (a quarantine's: `<name>_quarantine`).
    manager
        The IO manager that failed, by class name.
    error_type
        The class of the error it raised, with its module (`_duckdb.ConversionException`).
    reason
        Why its message is left out: the sensitive columns, or the samples being off.
    """

    def __init__(self, asset: str, manager: str, error_type: str, reason: str) -> None:
        self.asset = asset
        self.manager = manager
        self.error_type = error_type
        self.reason = reason
        super().__init__(
            f"{manager} could not write {asset!r}: it raised {error_type}, whose message is "
            f"left out of the event log because it may quote the rows' values, and {reason}. "
            f"To find the cause, compare the stored table with the frame (a column whose "
            f"stored type no longer matches the schema's is the usual cause of a failed "
            f"insert), or repeat the write outside a run, where the message stays with you."
        )


class NoRunningStepError(DagsterDataframelyError, DagsterInvalidPropertyError):
    """Raised when a writer that needs a run is made in a direct invocation, which has no step.

    `delegating_writer` hands the rows to the step's IO manager, and a direct call has none.
    Also Dagster's `DagsterInvalidPropertyError`, which a direct invocation's context raises
    when asked for its step, so code written against that error still catches this one.

    Parameters
    ----------
    function
        The function that needs the running step.
    """

    def __init__(self, function: str) -> None:
        self.function = function
        super().__init__(
            f"{function} hands the invalid rows to the running step's IO manager, and a direct "
            f"invocation has no step. Use dd.wiring.file_writer in a direct call, or call the "
            f"asset with dd.testing.call_asset, which keeps the quarantine in memory."
        )

"""Refusals of a declaration: arguments, schemas, Collections, columns, rule names and dtypes."""

import dataclasses
from collections.abc import Mapping, Sequence

import dagster as dg

from dagster_dataframely.errors.error_base import (
    _CHECK_NAME_CHARACTERS,
    InvalidDefinitionError,
    _bulleted,
    _quoted,
)


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

    function: str
    problem: str
    fix: str

    def _message(self) -> str:
        return f"{self.function}: {self.problem}. {self.fix}"


class SchemaTypeError(InvalidDefinitionError, TypeError):
    """Raised when a Dataframely schema or Collection class is expected and something else given.

    Also a `TypeError`, as it was before this package gave it a class of its own.

    Also raised for `dy.Schema` or `dy.Collection` itself, the base class, where a subclass
    is expected: it declares no column (no member), so validating against it would keep no
    column and so no row.

    Parameters
    ----------
    expected
        What was expected, such as `a dataframely Schema class (a subclass of dy.Schema)`.
    given
        The `repr` of what was given instead (`dy.Schema` for the base class).
    problem
        Why what was given cannot be used, when it is a class of the right kind, such as the
        base class itself; empty when `given` is no such class at all.
    fix
        What to pass instead.
    """

    expected: str
    given: str
    _: dataclasses.KW_ONLY
    problem: str = ""
    fix: str = "Pass the class itself, not an instance or a frame."

    def _message(self) -> str:
        problem = f": {self.problem}" if self.problem else ""
        return f"Expected {self.expected}, got {self.given}{problem}. {self.fix}"


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

    file: str
    field: str
    problem: str
    fix: str

    def _message(self) -> str:
        return f"{self.file}: attributes.{self.field}: {self.problem}. {self.fix}"


class CollectionNotSupportedError(InvalidDefinitionError):
    """Raised when the decorator is given a `dy.Collection` instead of a `dy.Schema`.

    An asset is one table, and a Collection describes several, so there is no single
    schema to check it against.

    Parameters
    ----------
    collection_name
        The name of the `dy.Collection` that was passed.
    """

    collection_name: str

    def _message(self) -> str:
        return (
            f"`schema=` was given the Dataframely Collection {self.collection_name!r}, but this "
            "asset is checked against a single `dy.Schema`. Validate the Collection's members "
            f"together with `dd.collection_asset({self.collection_name})`, check members' existing "
            f"tables with `dd.table_checks({self.collection_name}, {{member: asset, ...}})`, or "
            "give each member an asset of its own with that member's schema."
        )


class CollectionWithoutMembersError(InvalidDefinitionError):
    """Raised when a `dy.Collection` with no member is declared as assets.

    Each member becomes one asset, so a Collection without members would declare none.

    Parameters
    ----------
    collection_name
        The name of the `dy.Collection`.
    """

    collection_name: str

    def _message(self) -> str:
        return (
            f"The Dataframely Collection {self.collection_name!r} has no members, so there is no "
            "asset to declare. Annotate at least one member on it, such as `orders: "
            "dy.LazyFrame[Orders]`."
        )


class UnknownCollectionMemberError(InvalidDefinitionError):
    """Raised when a declaration names members the Collection does not have.

    In `outs=`, `dd.table_checks`' targets or `dd.quarantine_spec`'s key: a misspelled name
    would otherwise be dropped without a word. A function that returns a frame under such a
    name raises `MultiAssetReturnError`, as a `dd.multi_asset` does.

    Parameters
    ----------
    collection_name
        The name of the `dy.Collection`.
    unknown
        The names that are not members.
    members
        The Collection's members, in declaration order.
    """

    collection_name: str
    unknown: Sequence[str]
    members: Sequence[str]

    def _message(self) -> str:
        return (
            f"The declaration names {_quoted(self.unknown)}, which "
            f"{'is not a member' if len(self.unknown) == 1 else 'are not members'} of the "
            f"Collection {self.collection_name!r}. Its members are: {_quoted(self.members)}. "
            "Name each member as the Collection declares it."
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

    schema_name: str
    columns: list[str]

    def _message(self) -> str:
        return (
            f"Schema {self.schema_name!r} has columns in the `dy_` namespace, which "
            "dagster-dataframely keeps for the checks and rule columns it generates: "
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

    schema_name: str
    columns: list[str]

    def _message(self) -> str:
        return (
            f"Schema {self.schema_name!r} has column names that cannot be part of an asset check "
            f"name: {_quoted(self.columns)}. Check names are built from column names and Dagster "
            f"accepts only {_CHECK_NAME_CHARACTERS} in them. Rename each column, or change the "
            "`alias=` that gives it this name, so that it uses only those characters."
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

    schema_name: str
    rules: list[str]

    def _message(self) -> str:
        return (
            f"Schema {self.schema_name!r} has rule names that cannot be part of an asset check "
            f"name: {_quoted(self.rules)}. Apart from the `|` between a column and its rule, "
            f"Dagster accepts only {_CHECK_NAME_CHARACTERS} in a check name. Rename each rule (the "
            "key in a `check=` dict, or the method name of a `@dy.rule()`) so that it uses only "
            "those characters."
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

    schema_name: str
    first: str
    second: str
    name: str

    def _message(self) -> str:
        return (
            f"In schema {self.schema_name!r}, the rules {self.first!r} and {self.second!r} both "
            f"become the asset check {self.name!r}, and an asset cannot have two checks with the "
            "same name. Rename one of these two rules."
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

    schema_name: str
    problems: Sequence[Mapping[str, str]]

    def _message(self) -> str:
        listing = _bulleted(
            f"{problem['column']!r}: {problem['dtype']} ({problem['reason']})"
            for problem in self.problems
        )
        return (
            f"Schema {self.schema_name!r} declares columns with a dtype Polars cannot hold, so no "
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

    schema_name: str
    columns: Mapping[str, str]

    def _message(self) -> str:
        listing = _bulleted(f"{column!r}: a {kind}" for column, kind in self.columns.items())
        return (
            f"Schema {self.schema_name!r} marks columns with a `pii` metadata value that is not "
            f"True or False:{listing}\ndagster-dataframely reads `metadata={{'pii': True}}` as the "
            "mark of a sensitive column: its values are masked in every sample and left out of the "
            "statistics. Write `True` to mark the column sensitive or `False` to say it is not."
        )


class SchemaHintMismatchError(InvalidDefinitionError):
    """Raised when a decorator's schema argument and the function's return hint differ.

    The hint (`-> dy.DataFrame[Orders]`) and the argument both say which schema the frame
    follows; two different answers leave the package unable to tell which one the user meant.

    Parameters
    ----------
    function
        The decorated function's name.
    argument
        The name of the schema passed to the decorator.
    hinted
        The name of the schema the return hint names.
    output
        The multi-asset's output whose `dd.AssetOut` names `argument`, or None for the
        decorator's own argument.
    kind
        What the argument and the hint name: `schema`, or `Collection` for
        `dd.collection_asset`.
    """

    function: str
    argument: str
    hinted: str
    _: dataclasses.KW_ONLY
    output: str | None = None
    kind: str = "schema"

    def _message(self) -> str:
        if self.output is not None:
            return (
                f"The output {self.output!r} of {self.function!r} is declared with the "
                f"{self.kind} {self.argument} but the return hint names {self.hinted} for it. "
                f"Name one {self.kind}: write its dd.AssetOut without the {self.kind} to use the "
                f"hint's, or change the hint to name {self.argument}."
            )
        return (
            f"{self.function!r} is declared with the {self.kind} {self.argument} but its return "
            f"hint names {self.hinted}. Name one {self.kind}: drop the decorator's {self.kind} "
            f"argument to use the hint's, or change the hint to name {self.argument}."
        )


class UnreadableInputHintError(InvalidDefinitionError):
    """Raised when an input's hint names a schema in a form the package cannot read.

    An input hinted with a schema loads as its Polars type (`dy.DataFrame[Orders]` as
    `pl.DataFrame`); a union of two schemas, a `list[...]` of frames or a `dy.Collection`
    name no one Polars type to load. The message lists the forms that do.

    Parameters
    ----------
    function
        The decorated function's name.
    parameter
        The name of the parameter whose hint names the schema.
    hint
        The parameter's hint, as written.
    problem
        Why the package cannot read it.
    """

    function: str
    parameter: str
    hint: str
    problem: str

    def _message(self) -> str:
        return (
            f"The hint of input {self.parameter!r} of {self.function!r}, `{self.hint}`, "
            f"{self.problem}. Annotate the input with one schema: `dy.DataFrame[Orders]`, "
            "`dy.LazyFrame[Orders]`, `Annotated[pl.DataFrame, Orders]` or "
            "`Annotated[pl.LazyFrame, Orders]`, each optionally `| None`, or a `dict[str, ...]` "
            "of one of them to read several partitions; or with its Polars type, `pl.DataFrame`."
        )


class UnresolvedAnnotationError(InvalidDefinitionError):
    """Raised when a parameter's annotation names something its module does not define at run time.

    Under `from __future__ import annotations` every annotation is a string. Dagster reads the
    parameters' annotations when the asset is declared (the `context`'s to choose its context
    class, an input's to choose what its IO manager loads), so the decorator evaluates each
    one in the function's module first; a name imported only under `if TYPE_CHECKING:`, or a
    class defined inside a function, is not there to evaluate.

    Parameters
    ----------
    function
        The decorated function's name.
    parameter
        The parameter whose annotation does not resolve, such as `context`.
    annotation
        The annotation, as written.
    problem
        What Python could not resolve in it, such as `name 'dg' is not defined`.
    """

    function: str
    parameter: str
    annotation: str
    problem: str

    def _message(self) -> str:
        return (
            f"The annotation of parameter {self.parameter!r} of {self.function!r}, "
            f"`{self.annotation}`, does not resolve in the function's module ({self.problem}). "
            "Under `from __future__ import annotations` an annotation is a string, and Dagster "
            "evaluates the parameters' annotations when the asset is declared, so every name in "
            "one must exist in the module when it runs: a name imported only under `if "
            "TYPE_CHECKING:` (where ruff's flake8-type-checking rules move an import used only "
            "in annotations) or a class defined inside a function is missing. Import it at the "
            "top of the module, such as `import dagster as dg`; to keep ruff from moving it, "
            "list the decorator under `lint.flake8-type-checking.runtime-evaluated-decorators` "
            '(`"dagster_dataframely.asset"`).'
        )


class UnreadableReturnHintError(InvalidDefinitionError):
    """Raised when a return hint names a schema in a form the package cannot read.

    A union of two schemas, a `list[...]` of frames or a `dy.Collection` do not say which one
    schema the returned frame follows; the message lists the forms that do.

    Parameters
    ----------
    function
        The decorated function's name.
    hint
        The return hint, as written (or the name Python could not resolve in it).
    problem
        Why the package cannot read it.
    """

    function: str
    hint: str
    problem: str

    def _message(self) -> str:
        return (
            f"The return hint of {self.function!r}, `{self.hint}`, {self.problem}. Annotate the "
            "function with one schema: `-> dy.DataFrame[Orders]`, `-> dy.LazyFrame[Orders]`, "
            "`-> Annotated[pl.DataFrame, Orders]`, `-> Annotated[pl.LazyFrame, Orders]` or "
            "`-> dg.MaterializeResult[dy.DataFrame[Orders]]` (or of `dy.LazyFrame[Orders]`), "
            "each optionally `| None`; or pass the schema: `@dd.asset(Orders)`."
        )


class OutputHintError(InvalidDefinitionError):
    """Raised when a return hint does not say which schema each output of a step follows.

    `dd.multi_asset` reads an output's schema from `-> tuple[...]` (one entry per output, in
    the order of `outs`) or a `TypedDict` (one field per output), and `dd.collection_asset`
    its Collection from `-> OrderBook`; a hint of another shape, or one that does not match
    the outputs, cannot say which schema is whose.

    Parameters
    ----------
    function
        The decorated function's name.
    hint
        The return hint, as written.
    problem
        What does not match, naming the outputs (or the Collection) it was read against.
    fix
        What to write instead.
    """

    function: str
    hint: str
    problem: str
    fix: str

    def _message(self) -> str:
        return f"The return hint of {self.function!r}, `{self.hint}`, {self.problem}. {self.fix}"

"""The schema a function's return hint names: `-> dy.DataFrame[Orders]` and its readable kin.

Dataframely's own way to say "this frame follows `Orders`" is the hint, so a decorator may take
its schema from there instead of an argument. The hint is resolved as Dagster resolves a
return annotation (`typing.get_type_hints` against the function's globals), so a string hint
under `from __future__ import annotations` reads the same. Only the hint's schema is read:
what the function returns at run time still decides how the frame is validated.

An input's hint is read by the same parser, for its Polars type only: Dagster refuses
`dy.DataFrame[Orders]` on a parameter, and the IO managers choose what to load from the
annotation, so an input hinted `dy.DataFrame[Orders]` is shown to both as `pl.DataFrame`.

Every hint is first read through its aliases (`annotations.unaliased`): a PEP 695 `type`
alias, generic or not, and a `NewType` stand for what they name, at any depth. `dy.Schema`
and `dy.Collection` themselves name no schema the package can read (`schema.base_class`).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Sequence
from typing import Annotated

import dagster as dg
import dataframely as dy
import polars as pl

from dagster_dataframely.errors import (
    OutputHintError,
    SchemaHintMismatchError,
    UnreadableInputHintError,
    UnreadableReturnHintError,
)

from .annotations import ALIAS_TYPES, UNREADABLE, Unreadable, annotations_of, unaliased
from .schema import COLLECTION_BASE, SCHEMA_BASE, BaseClass, base_class

_FRAMES = (pl.DataFrame, pl.LazyFrame)
NONE = type(None)
_TYPED_FRAMES = (dy.DataFrame, dy.LazyFrame)


_NO_HINT = object()
"""What `_return_hint` gives for a function without a return hint, or one it may leave unread."""


def _return_hint(function: Callable[..., object], *, must_resolve: bool) -> object:
    annotations = annotations_of(function)
    try:
        if "return" in annotations.unresolved:
            raise annotations.unresolved["return"]
        return (
            unaliased(annotations.resolved["return"])
            if "return" in annotations.resolved
            else _NO_HINT
        )
    except UNREADABLE as error:
        # NOTE: left unread where it need not resolve: a decorator given its schema never needed it.
        if not must_resolve:
            return _NO_HINT
        raise UnreadableReturnHintError(
            _function_name(function),
            written(getattr(function, "__annotations__", {}).get("return")),
            unresolved(error),
        ) from None


def written(annotation: object) -> str:
    """An annotation as its author wrote it: the string under PEP 563, else the hint shown."""
    return annotation if isinstance(annotation, str) else shown(annotation)


def unresolved(error: Unreadable) -> str:
    """Why a hint cannot be read: a name its module lacks, or an alias that cannot be expanded."""
    if isinstance(error, NameError):
        return (
            f"does not resolve in its module ({error}): each name in a hint must be defined "
            "when the module runs, not only imported under `if TYPE_CHECKING:`"
        )
    return f"cannot be read as a type ({error})"


def _function_name(function: Callable[..., object]) -> str:
    return getattr(function, "__name__", repr(function))


def schema_from_return_hint(
    function: Callable[..., object], *, must_resolve: bool = True
) -> type[dy.Schema] | None:
    """The one schema `function`'s return hint names, or None when it names none.

    Raises `UnreadableReturnHintError` when the hint names schemas in a form that does not
    say which one the frame follows (two schemas, a `list[...]`, a Collection), or when a
    name in it cannot be resolved and `must_resolve` (without it, such a hint names none:
    a decorator given its schema never needed the hint, and did not read it before).
    """
    hint = _return_hint(function, must_resolve=must_resolve)
    return None if hint is _NO_HINT else _one_schema(hint, _function_name(function))


def shown_return_hint(function: Callable[..., object]) -> str:
    """`function`'s return hint as written, for a message; `(none)` without one."""
    try:
        hint = _return_hint(function, must_resolve=True)
    except UnreadableReturnHintError as error:
        return error.hint
    return "(none)" if hint is _NO_HINT else shown(hint)


def schema_named_by(hint: object) -> type[dy.Schema] | None:
    """The one schema `hint` (`dy.DataFrame[Orders]` and its kin, as a value) names, else None.

    What `dd.AssetOut` accepts in place of a schema: a hint that names none, several, or one
    in a form the package cannot read names none here, and the caller says what it expected.
    A hint naming `dy.Schema` itself (`dy.DataFrame[dy.Schema]`) gives that class, which
    `read_schema` refuses with its reason.
    """
    try:
        expanded = unaliased(hint)
        return _one_schema(expanded, "")
    except UnreadableReturnHintError:
        named = _base_classes(expanded)
        return dy.Schema if named == {SCHEMA_BASE} else None
    except UNREADABLE:
        return None


def _one_schema(hint: object, function: str) -> type[dy.Schema] | None:
    schemas = _schemas(hint, function)
    if len(schemas) > 1:
        raise UnreadableReturnHintError(function, shown(hint), "names more than one schema")
    return next(iter(schemas), None)


MULTI_ASSET_FORMS = (
    "Annotate one entry per output, in the order of outs: "
    "`-> tuple[dy.DataFrame[Orders], dy.DataFrame[Lines]]`; or a TypedDict with one field per "
    "output name, each such as `orders: dy.DataFrame[Orders]`; or give each dd.AssetOut its "
    "schema: `dd.AssetOut(Orders)`."
)
"""The fix of a multi-asset hint that does not say which output follows which schema."""

COLLECTION_FORMS = (
    "Annotate the Collection class itself, `-> OrderBook` (optionally `| None`), or pass it: "
    "`@dd.collection_asset(OrderBook)`."
)
"""The fix of a Collection asset's hint that names no one Collection."""


def schemas_by_output(
    function: Callable[..., object], outputs: Sequence[str], *, needed: bool
) -> dict[str, type[dy.Schema]]:
    """The schema `function`'s return hint names for each of `outputs`, by output name.

    A multi-asset's hint names one per output as Dagster reads a multi-output return: a
    `tuple[...]` with one entry per output in the order of `outs`; or, since a `dd.multi_asset`
    returns a mapping, a `TypedDict` with one field per output. Each entry is read as
    `dd.asset`'s hint is; an entry that names no schema (`pl.DataFrame`) leaves its output out.
    A hint of neither shape names none, unless a schema appears in it: then it is refused.
    When the hint is not `needed` (every output has its schema), a hint that cannot be read
    names none, as it did before the package read hints: only a readable one is compared.

    Raises
    ------
    OutputHintError
        The hint is `needed`, and the tuple's length or the TypedDict's fields are not the
        outputs, an entry names a schema in a form `dd.asset` cannot read, the hint names
        schemas in another shape, or a name in it does not resolve.
    """
    try:
        return _schemas_by_output(function, outputs)
    except OutputHintError:
        if needed:
            raise
        return {}


def _schemas_by_output(
    function: Callable[..., object], outputs: Sequence[str]
) -> dict[str, type[dy.Schema]]:
    hint = _resolved(function, fix=MULTI_ASSET_FORMS)
    name = _function_name(function)
    if hint is _NO_HINT:
        return {}
    entries = _entries_by_output(hint, name, outputs)
    schemas = {}
    for output, entry in entries.items():
        try:
            schema = _one_schema(entry, name)
        except UnreadableReturnHintError as error:
            raise OutputHintError(
                name,
                shown(hint),
                f"gives the output {output!r} `{shown(entry)}`, which {error.problem}",
                MULTI_ASSET_FORMS,
            ) from None
        if schema is not None:
            schemas[output] = schema
    return schemas


def _resolved(function: Callable[..., object], *, fix: str) -> object:
    try:
        return _return_hint(function, must_resolve=True)
    except UnreadableReturnHintError as error:
        raise OutputHintError(error.function, error.hint, error.problem, fix) from None


def _entries_by_output(hint: object, function: str, outputs: Sequence[str]) -> dict[str, object]:
    listed = ", ".join(repr(output) for output in outputs)
    if typing.get_origin(hint) is tuple:
        entries = typing.get_args(hint)
        if Ellipsis in entries:
            problem = "is a tuple of any length, which does not say which entry is which output"
        elif len(entries) != len(outputs):
            problem = f"has {_entries(len(entries))} for the {len(outputs)} outputs {listed}"
        else:
            return dict(zip(outputs, entries, strict=True))
        raise OutputHintError(function, shown(hint), problem, MULTI_ASSET_FORMS)
    if typing.is_typeddict(hint):
        try:
            fields = typing.get_type_hints(hint, include_extras=True)
            missing = [output for output in outputs if output not in fields]
            extra = [field for field in fields if field not in outputs]
            if not missing and not extra:
                return {output: unaliased(_field_type(fields[output])) for output in outputs}
        except UNREADABLE as error:
            problem = unresolved(error)
            raise OutputHintError(function, shown(hint), problem, MULTI_ASSET_FORMS) from None
        said = [
            *([f"has no field for the outputs {', '.join(map(repr, missing))}"] if missing else []),
            *([f"has fields {', '.join(map(repr, extra))} that are no output"] if extra else []),
        ]
        problem = f"{' and '.join(said)} (the outputs are {listed})"
        raise OutputHintError(function, shown(hint), problem, MULTI_ASSET_FORMS)
    if _names_schema(hint):
        problem = f"names schemas without saying which of the outputs {listed} follows which"
        raise OutputHintError(function, shown(hint), problem, MULTI_ASSET_FORMS)
    return {}


def _entries(count: int) -> str:
    return f"{count} entry" if count == 1 else f"{count} entries"


def _field_type(field: object) -> object:
    # NOTE: `Required[...]` and `NotRequired[...]` say nothing here: any output may be skipped.
    if typing.get_origin(field) in (typing.Required, typing.NotRequired):
        return typing.get_args(field)[0]
    return field


def collection_from_return_hint(
    function: Callable[..., object], *, needed: bool
) -> type[dy.Collection] | None:
    """The one Collection `function`'s return hint names (`-> OrderBook`, `| None`), or None.

    A hint naming no Collection and no schema (`-> dict[str, pl.DataFrame]`, the base class
    `dy.Collection`) names none; so does one the package cannot read when it is not `needed`
    (the Collection is given): only a readable hint is compared with the argument.

    Raises
    ------
    OutputHintError
        The hint is `needed` and names several Collections, one in another form
        (`list[OrderBook]`), or a schema (a Collection asset returns its members, not one
        frame), or a name in it does not resolve.
    """
    try:
        return _collection(function)
    except OutputHintError:
        if needed:
            raise
        return None


def _collection(function: Callable[..., object]) -> type[dy.Collection] | None:
    hint = _resolved(function, fix=COLLECTION_FORMS)
    if hint is _NO_HINT or not _names_schema(hint):
        return None
    members = (
        typing.get_args(hint)
        if typing.get_origin(hint) in (typing.Union, types.UnionType)
        else (hint,)
    )
    named = [member for member in members if member is not type(None)]
    if len(named) == 1 and _is_collection(named[0]):
        return typing.cast("type[dy.Collection]", named[0])
    problem = _base_class_problem(hint, COLLECTION_BASE) or (
        "names a Collection in a form the package cannot read"
        if _names_collection(hint)
        else "names a schema, but a Collection asset returns the members of a Collection"
    )
    raise OutputHintError(_function_name(function), shown(hint), problem, COLLECTION_FORMS)


def _schemas(hint: object, function: str) -> set[type[dy.Schema]]:
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return {schema for member in arguments for schema in _schemas(member, function)}
    if origin is dg.MaterializeResult and len(arguments) == 1:
        return _schemas(arguments[0], function)
    frame = _frame(hint)
    if frame is not None:
        return set(frame[0])
    if not _names_schema(hint):
        return set()
    problem = _base_class_problem(hint, SCHEMA_BASE) or (
        "names a dy.Collection, which is several tables: declare it with dd.collection_asset"
        if _names_collection(hint)
        else "names a schema in a form the package cannot read"
    )
    raise UnreadableReturnHintError(function, shown(hint), problem)


def _frame(hint: object) -> tuple[list[type[dy.Schema]], type[pl.DataFrame | pl.LazyFrame]] | None:
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin in _TYPED_FRAMES and len(arguments) == 1 and _is_schema(arguments[0]):
        return [arguments[0]], pl.DataFrame if origin is dy.DataFrame else pl.LazyFrame
    # NOTE: an `Annotated` frame's other metadata may be anything but a schema named otherwise.
    if origin is Annotated and arguments[0] in _FRAMES:
        named = [meta for meta in arguments[1:] if _is_schema(meta)]
        if len(named) == len([meta for meta in arguments[1:] if _names_schema(meta)]):
            return named, arguments[0]
    return None


def polars_input_hint(hint: object, function: str, parameter: str) -> object:
    """The annotation Dagster and the IO manager see for an input hinted `hint`.

    A hint naming one schema becomes its Polars type (`dy.DataFrame[Orders] | None` becomes
    `pl.DataFrame | None`, `dict[str, dy.LazyFrame[Orders]]` becomes `dict[str, pl.LazyFrame]`),
    so the input loads exactly as the plain annotation does; the frame is not validated again.
    A hint naming no schema is returned as written. Raises `UnreadableInputHintError` for a
    schema named in any other form, or an alias whose value names something its module lacks.
    """
    try:
        expanded = unaliased(hint)
    except UNREADABLE as error:
        raise UnreadableInputHintError(
            function, parameter, shown(hint), unresolved(error)
        ) from None
    if not _names_schema(expanded):
        return hint
    plain = _polars(expanded)
    if plain is not None:
        return plain
    problem = _base_class_problem(expanded, SCHEMA_BASE) or (
        "names a dy.Collection, whose members are assets of their own: "
        "annotate one input per member"
        if _names_collection(expanded)
        else "names more than one schema"
        if len(_named_schemas(expanded)) > 1
        else "names a schema in a form the package cannot read"
    )
    raise UnreadableInputHintError(function, parameter, shown(expanded), problem)


def _polars(hint: object) -> object | None:
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    frame = _frame(hint)
    if frame is not None:
        return frame[1] if len(frame[0]) == 1 else None
    if origin in (typing.Union, types.UnionType) and len(arguments) == 2 and NONE in arguments:
        (inner,) = [member for member in arguments if member is not NONE]
        plain = _polars(inner)
        return None if plain is None else typing.Optional[plain]  # noqa: UP045  # built, not written
    if origin is dict and len(arguments) == 2:
        plain = _polars(arguments[1])
        return None if plain is None else types.GenericAlias(dict, (arguments[0], plain))
    return None


def _named_schemas(hint: object) -> set[type[dy.Schema]]:
    found = {typing.cast("type[dy.Schema]", hint)} if _is_schema(hint) else set()
    return found.union(*(_named_schemas(argument) for argument in typing.get_args(hint)))


def _is_schema(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, dy.Schema) and value is not dy.Schema


def _is_collection(value: object) -> bool:
    return (
        isinstance(value, type) and issubclass(value, dy.Collection) and value is not dy.Collection
    )


def _names_schema(hint: object, seen: frozenset[int] = frozenset()) -> bool:
    if _is_schema(hint) or _is_collection(hint) or base_class(hint) is not None:
        return True
    if isinstance(hint, ALIAS_TYPES):
        # NOTE: an alias is left in an expanded hint only where it recurs into itself: it names
        # a schema if its value does (read once: `seen` stops it at itself again).
        return id(hint) not in seen and _names_schema(unaliased(hint), seen | {id(hint)})
    return any(_names_schema(argument, seen) for argument in typing.get_args(hint))


def _base_classes(hint: object) -> set[BaseClass]:
    named = base_class(hint)
    found = set() if named is None else {named}
    return found.union(*(_base_classes(argument) for argument in typing.get_args(hint)))


def _base_class_problem(hint: object, expected: BaseClass) -> str | None:
    named = sorted(_base_classes(hint), key=lambda base: base.name)
    return named[-1].named_in_hint(expected) if named else None


def _names_collection(hint: object) -> bool:
    return _is_collection(hint) or any(_names_collection(a) for a in typing.get_args(hint))


def shown(hint: object) -> str:
    """`hint` as a user writes it (`dy.DataFrame[Orders] | None`), never a schema's long repr."""
    if hint is NONE:
        return "None"
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(shown(member) for member in arguments)
    if origin is Annotated:
        return f"Annotated[{', '.join(shown(part) for part in arguments)}]"
    if origin is not None:
        return f"{_name(origin)}[{', '.join(shown(part) for part in arguments)}]"
    return _name(hint)


_PREFIXES: dict[object, str] = {
    **dict.fromkeys((dy.DataFrame, dy.LazyFrame, dy.Schema, dy.Collection), "dy."),
    **dict.fromkeys((pl.DataFrame, pl.LazyFrame), "pl."),
}


def _name(value: object) -> str:
    if value is dg.MaterializeResult:
        return "dg.MaterializeResult"
    if isinstance(value, type):
        return _PREFIXES.get(value, "") + value.__qualname__
    return repr(value)


def mismatch(
    function: str, given: type, hinted: type, *, output: str | None = None, kind: str = "schema"
) -> SchemaHintMismatchError:
    """The refusal of a schema (or Collection) argument the return hint contradicts.

    Each is named by its class name, or with its module where the two names are equal (two
    `Orders` from two modules), so the message never says "Orders but ... Orders".
    """
    given_name, hinted_name = distinct_names(given, hinted)
    return SchemaHintMismatchError(function, given_name, hinted_name, output=output, kind=kind)


def distinct_names(first: type, second: type) -> tuple[str, str]:
    """The two classes' names, each with its module where the names alone are equal."""
    if first.__name__ != second.__name__:
        return first.__name__, second.__name__
    named = (
        f"{first.__module__}.{first.__qualname__}",
        f"{second.__module__}.{second.__qualname__}",
    )
    if named[0] != named[1]:
        return named
    # NOTE: one module made two classes of one qualified name (one redefined, or both made by
    # one function): nothing in a name tells them apart, so say that they differ.
    return named[0], f"{named[1]} (another class of that name)"

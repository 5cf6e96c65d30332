"""A function's annotations as the hint readers see them: each evaluated, its aliases expanded.

Under `from __future__ import annotations` every annotation is a string, evaluated in the
function's module as `typing.get_type_hints` (and Dagster) evaluates it; each one on its own,
so a parameter's name that does not resolve fails that parameter, not the return hint too.

A type checker reads a PEP 695 alias (`type OrdersFrame = dy.DataFrame[Orders]`),
typing_extensions' `TypeAliasType` and a `NewType` as what they name, so `-> OrdersFrame` says
what `-> dy.DataFrame[Orders]` says. At run time they are objects of their own that
`typing.get_origin` does not see through, and a hint reader would find no schema in them. So
every hint is expanded here first, at any depth, and read after that as if it had been written
without them.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated

import typing_extensions

ALIAS_TYPES: tuple[type, ...] = tuple(
    {typing_extensions.TypeAliasType, getattr(typing, "TypeAliasType", object)} - {object}
)
"""The classes of a type alias: typing_extensions', and from Python 3.12 the `type` statement's.

Two different classes until typing_extensions takes Python's own (3.15); each is read alike.
"""

_TYPE_PARAMETERS = (typing.TypeVar, typing.ParamSpec, typing.TypeVarTuple)

Unreadable = NameError | TypeError | SyntaxError
"""What evaluating a hint raises: a name its module lacks, something no type, a string no
expression (`TypeAliasType("Note", "of the day")`)."""
UNREADABLE = (NameError, TypeError, SyntaxError)
"""The same classes, to catch."""


@dataclasses.dataclass(frozen=True, slots=True)
class Annotations:
    """A function's annotations, each evaluated in its module (`return` for its return hint)."""

    resolved: Mapping[str, object]
    """Each annotation that resolves, as `typing.get_type_hints` gives it."""
    unresolved: Mapping[str, Unreadable]
    """Each annotation that does not, with what Python raised evaluating it."""


def annotations_of(function: Callable[..., object]) -> Annotations:
    """`function`'s annotations evaluated in its module, those that resolve apart from the rest.

    Evaluated together as Dagster evaluates them, and where that fails each on its own: a
    return hint a decorator given its schema never reads must not fail the parameters, nor a
    parameter the return hint.
    """
    try:
        return Annotations(typing.get_type_hints(function, include_extras=True), {})
    except UNREADABLE:
        pass  # one of them does not resolve: each is evaluated alone below, to say which
    namespace = getattr(inspect.unwrap(function), "__globals__", {})
    resolved: dict[str, object] = {}
    unresolved: dict[str, Unreadable] = {}
    for name, written in getattr(function, "__annotations__", {}).items():
        try:
            resolved[name] = _evaluated_in(written, namespace)
        except UNREADABLE as error:
            unresolved[name] = error
    return Annotations(resolved, unresolved)


def _evaluated_in(written: object, namespace: Mapping[str, object]) -> object:
    def holder() -> None: ...

    holder.__annotations__ = {"value": written}
    return typing.get_type_hints(holder, globalns=dict(namespace), include_extras=True)["value"]


def unaliased(hint: object) -> object:
    """`hint` with every alias in it replaced by what it names, at any depth.

    A type alias reads as its value, a generic one given its arguments (`Frame[Orders]` for
    `type Frame[S: dy.Schema] = dy.DataFrame[S]`) as its value with them in place of its type
    parameters, and a `NewType` as its supertype; inside `| None`, `Annotated` (its metadata
    too), `dg.MaterializeResult[...]`, a tuple or any other generic. A value written as a
    string (`TypeAliasType("Frame", "dy.DataFrame[Orders]")`) is evaluated in the alias's
    module, as Python evaluates a `type` statement's. A hint without an alias is returned as
    it is; a recursive alias is expanded once, and names what its other branches name.

    Raises
    ------
    NameError
        An alias's value names something its module does not define (Python evaluates the
        value of a `type` statement only when it is read, so this is where it fails).
    TypeError
        A generic that holds an alias cannot be rebuilt around its expanded arguments, or a
        string value is no type.
    SyntaxError
        A string value is no Python expression.
    """
    return _Expansion().of(hint)


@dataclasses.dataclass(frozen=True)
class _Expansion:
    """Where an expansion is: inside which aliases, with which type arguments, in which module."""

    bound: Mapping[object, object] = dataclasses.field(default_factory=dict)
    """A generic alias's type parameters, each mapped to the argument it was given."""
    expanding: frozenset[int] = frozenset()
    """The aliases being expanded, by id: one met again inside itself is left as it is."""
    module: str | None = None
    """The module of the alias whose value this is, where a string in it is evaluated; None
    outside any alias, where `typing.get_type_hints` has evaluated every string already."""

    def of(self, hint: object) -> object:
        if isinstance(hint, _TYPE_PARAMETERS):
            return self.bound.get(hint, hint)
        if isinstance(hint, str | typing.ForwardRef) and self.module is not None:
            return self.of(_evaluated(hint, self.module))
        if isinstance(hint, ALIAS_TYPES):
            return self._alias(hint, ())
        if isinstance(hint, typing.NewType):
            return self.of(hint.__supertype__)
        origin = typing.get_origin(hint)
        arguments = typing.get_args(hint)
        if isinstance(origin, ALIAS_TYPES):
            return self._alias(origin, tuple(self.of(argument) for argument in arguments))
        if origin is Annotated:
            # NOTE: the metadata is read as written, never evaluated: a string there is a
            # note (`Annotated[pl.DataFrame, "of the day"]`), not a type.
            expanded = (self.of(arguments[0]), *(self._metadata(m) for m in arguments[1:]))
        else:
            expanded = tuple(self.of(argument) for argument in arguments)
        if all(new is old for new, old in zip(expanded, arguments, strict=True)):
            return hint
        return _rebuilt(hint, origin, expanded)

    def _alias(self, alias: typing.Any, arguments: tuple[object, ...]) -> object:
        # NOTE: an alias that recurs into itself stays an alias there.
        if id(alias) in self.expanding:
            return alias if not arguments else types.GenericAlias(alias, arguments)
        inner = _Expansion(
            bound=dict(zip(alias.__type_params__, arguments, strict=False)),
            expanding=self.expanding | {id(alias)},
            module=alias.__module__,
        )
        return inner.of(alias.__value__)

    def _metadata(self, value: object) -> object:
        # NOTE: a string in `Annotated` metadata is data, not a forward reference to evaluate.
        if isinstance(value, str | typing.ForwardRef):
            return value
        return self.of(value)


def _evaluated(value: str | typing.ForwardRef, module: str) -> object:
    return _evaluated_in(value, vars(sys.modules[module]) if module in sys.modules else {})


def _rebuilt(hint: object, origin: object, arguments: tuple[object, ...]) -> object:
    if origin in (typing.Union, types.UnionType):
        return typing.Union[arguments]  # noqa: UP007  # built, not written
    if origin is Annotated:
        return Annotated[arguments]
    if isinstance(hint, types.GenericAlias):
        return types.GenericAlias(origin, arguments)  # type: ignore[arg-type]
    copy_with = getattr(hint, "copy_with", None)
    # NOTE: a generic form typing cannot rebuild is read as written, its aliases unexpanded.
    return hint if copy_with is None else copy_with(arguments)

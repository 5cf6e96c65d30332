"""The schema a function's return hint names: `-> dy.DataFrame[Orders]` and its readable kin.

Dataframely's own way to say "this frame follows `Orders`" is the hint, so a decorator may take
its schema from there instead of an argument. The hint is resolved as Dagster resolves a
return annotation (`typing.get_type_hints` against the function's globals), so a string hint
under `from __future__ import annotations` reads the same. Only the hint's schema is read:
what the function returns at run time still decides how the frame is validated.

An input's hint is read by the same parser, for its Polars type only: Dagster refuses
`dy.DataFrame[Orders]` on a parameter, and the IO managers choose what to load from the
annotation, so an input hinted `dy.DataFrame[Orders]` is shown to both as `pl.DataFrame`.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Annotated

import dagster as dg
import dataframely as dy
import polars as pl

from dagster_dataframely.errors import UnreadableInputHintError, UnreadableReturnHintError

_FRAMES = (pl.DataFrame, pl.LazyFrame)
NONE = type(None)
_TYPED_FRAMES = (dy.DataFrame, dy.LazyFrame)


def schema_from_return_hint(
    function: Callable[..., object], *, must_resolve: bool = True
) -> type[dy.Schema] | None:
    """The one schema `function`'s return hint names, or None when it names none.

    Raises `UnreadableReturnHintError` when the hint names schemas in a form that does not
    say which one the frame follows (two schemas, a `list[...]`, a Collection), or when a
    name in it cannot be resolved and `must_resolve` (without it, such a hint names none:
    a decorator given its schema never needed the hint, and did not read it before).
    """
    name = getattr(function, "__name__", repr(function))
    try:
        hints = typing.get_type_hints(function, include_extras=True)
    except NameError as error:
        if not must_resolve:
            return None
        raise UnreadableReturnHintError(
            name,
            str(getattr(function, "__annotations__", {}).get("return")),
            f"does not resolve in its module ({error})",
        ) from None
    if "return" not in hints:
        return None
    hint = hints["return"]
    schemas = _schemas(hint, name)
    if len(schemas) > 1:
        raise UnreadableReturnHintError(name, shown(hint), "names more than one schema")
    return next(iter(schemas), None)


def _schemas(hint: object, function: str) -> set[type[dy.Schema]]:
    """The schemas `hint` names in an accepted form; a schema named any other way is refused."""
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
    problem = (
        "names a dy.Collection, which is several tables: declare it with dd.collection_asset"
        if _names_collection(hint)
        else "names a schema in a form the package cannot read"
    )
    raise UnreadableReturnHintError(function, shown(hint), problem)


def _frame(hint: object) -> tuple[list[type[dy.Schema]], type[pl.DataFrame | pl.LazyFrame]] | None:
    """The schemas a frame hint names and its Polars type; None if `hint` is no frame hint.

    The frame hints are `dy.DataFrame[S]`, `dy.LazyFrame[S]` and `Annotated[pl.DataFrame, S]`
    (or of `pl.LazyFrame`), whose other metadata may name no schema in another way.
    """
    origin = typing.get_origin(hint)
    arguments = typing.get_args(hint)
    if origin in _TYPED_FRAMES and len(arguments) == 1 and _is_schema(arguments[0]):
        return [arguments[0]], pl.DataFrame if origin is dy.DataFrame else pl.LazyFrame
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
    schema named in any other form.
    """
    if not _names_schema(hint):
        return hint
    plain = _polars(hint)
    if plain is not None:
        return plain
    if _names_collection(hint):
        problem = (
            "names a dy.Collection, whose members are assets of their own: "
            "annotate one input per member"
        )
    elif len(_named_schemas(hint)) > 1:
        problem = "names more than one schema"
    else:
        problem = "names a schema in a form the package cannot read"
    raise UnreadableInputHintError(function, parameter, shown(hint), problem)


def _polars(hint: object) -> object | None:
    """`hint` with its one-schema frame hint replaced by the Polars type; None if unreadable."""
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
    """Every schema named anywhere in `hint`."""
    found = {typing.cast("type[dy.Schema]", hint)} if _is_schema(hint) else set()
    return found.union(*(_named_schemas(argument) for argument in typing.get_args(hint)))


def _is_schema(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, dy.Schema)


def _is_collection(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, dy.Collection)


def _names_schema(hint: object) -> bool:
    """Whether a schema or Collection appears anywhere in `hint`."""
    if _is_schema(hint) or _is_collection(hint):
        return True
    return any(_names_schema(argument) for argument in typing.get_args(hint))


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


def _name(value: object) -> str:
    prefixes: dict[object, str] = {
        dy.DataFrame: "dy.",
        dy.LazyFrame: "dy.",
        pl.DataFrame: "pl.",
        pl.LazyFrame: "pl.",
    }
    if value is dg.MaterializeResult:
        return "dg.MaterializeResult"
    if isinstance(value, type):
        return prefixes.get(value, "") + value.__qualname__
    return repr(value)

"""What the decorated function returned, read as one value per output, each unwrapped to a frame.

`dd.asset`'s function returns its one output's value; a `dd.multi_asset`'s a mapping by output
name; a `dd.collection_asset`'s a mapping by member name or an instance of the Collection. Each
value is then a frame, a `dg.MaterializeResult` around one, or None to skip.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import dagster as dg
import polars as pl

from dagster_dataframely._model.collection import CollectionInfo
from dagster_dataframely.errors import (
    MaterializeResultFieldError,
    MaterializeResultValueError,
    MultiAssetReturnError,
)

Frame = pl.DataFrame | pl.LazyFrame
"""What an output's value holds once unwrapped: the rows to validate."""

Unpack = Callable[[object], Mapping[str, object]]
"""Turn what the function returned into a value per output name; raise a package error for
anything it cannot read."""


def one_output(name: str) -> Unpack:
    """`dd.asset`'s: the function returns its one output's value."""
    return lambda returned: {name: returned}


def output_mapping(op_name: str, outputs: Sequence[str]) -> Unpack:
    """`dd.multi_asset`'s: a mapping whose keys are all output names, or a tuple of all outputs.

    A tuple holds one value per output in the order of `outs`, as Dagster reads a multi-output
    return (and as `-> tuple[dy.DataFrame[A], dy.DataFrame[B]]` declares it).
    """

    def unpack(returned: object) -> Mapping[str, object]:
        if type(returned) is tuple:  # a NamedTuple is one value, as Dagster reads it
            if len(returned) != len(outputs):
                raise MultiAssetReturnError(
                    op_name,
                    f"returned a tuple of {len(returned)} values for its {len(outputs)} outputs "
                    "(a tuple holds one value per output, in the order of outs)",
                    list(outputs),
                )
            return dict(zip(outputs, returned, strict=True))
        if not isinstance(returned, Mapping):
            raise MultiAssetReturnError(
                op_name,
                f"returned a {type_name(returned)}, not a mapping or a tuple",
                list(outputs),
            )
        unknown = [repr(k) for k in returned if k not in outputs]
        if unknown:
            raise MultiAssetReturnError(
                op_name,
                f"returned values for {', '.join(unknown)}, but it has no output of that name",
                list(outputs),
            )
        return returned

    return unpack


def collection_members(info: CollectionInfo, op_name: str) -> Unpack:
    """`dd.collection_asset`'s: a mapping by member name, or an instance of the Collection.

    None returns no member, which skips every member.
    """

    def unpack(returned: object) -> Mapping[str, object]:
        if returned is None:
            return {}
        if isinstance(returned, info.collection):
            return returned.to_dict()
        if not isinstance(returned, Mapping):
            raise MultiAssetReturnError(
                op_name,
                f"returned a {type_name(returned)}, neither a mapping of members nor an "
                f"instance of {info.name}",
                list(info.members),
            )
        unknown = [repr(member) for member in returned if member not in info.members]
        if unknown:
            # The mistake `output_mapping` refuses, refused by the same error: it is the
            # function's return that is wrong, not the declaration.
            raise MultiAssetReturnError(
                op_name,
                f"returned frames for {', '.join(unknown)}, but {info.name} has no member of "
                f"that name",
                list(info.members),
            )
        return returned

    return unpack


def unwrap(
    value: object, key: dg.AssetKey, *, output: str, op_name: str | None = None
) -> tuple[Frame | None, dg.MaterializeResult[Any] | None]:
    """The frame to validate, and the user's own `MaterializeResult` if they returned one.

    `op_name` is given when the value is one output of several: a value of another type is
    then a `MultiAssetReturnError` naming `output`, where `dd.asset` raises the
    `DagsterInvariantViolationError` the spec names.
    """
    if value is None or isinstance(value, pl.DataFrame | pl.LazyFrame):
        return value, None
    asset_name = key.to_user_string()
    if isinstance(value, dg.MaterializeResult):
        if value.asset_key is not None:
            raise MaterializeResultFieldError(asset_name, "asset_key")
        if value.check_results:
            raise MaterializeResultFieldError(asset_name, "check_results")
        if value.value is None:
            raise MaterializeResultValueError(asset_name)
        if not isinstance(value.value, pl.DataFrame | pl.LazyFrame):
            raise MaterializeResultValueError(asset_name, value_type=type_name(value.value))
        return value.value, value
    if op_name is not None:
        raise MultiAssetReturnError(
            op_name, f"returned a {type_name(value)} for output {output!r}", [output]
        )
    raise dg.DagsterInvariantViolationError(
        f"Asset '{asset_name}' returned a {type_name(value)}. A dd.asset function returns "
        "a pl.DataFrame, a pl.LazyFrame, a dg.MaterializeResult with one of those as `value`, "
        "or None to skip."
    )


def type_name(value: object) -> str:
    """Name a value's type with its top-level package: `pandas.DataFrame`, not `DataFrame`.

    The bare class name cannot tell a pandas or Arrow frame from a Polars one, which is the
    very mistake the message reports; a builtin keeps its plain name (`dict`).
    """
    cls = type(value)
    package = cls.__module__.partition(".")[0]
    return cls.__qualname__ if package == "builtins" else f"{package}.{cls.__qualname__}"

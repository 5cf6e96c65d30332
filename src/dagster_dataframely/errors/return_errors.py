"""What a decorated function or a Collection filter returned, that the package cannot use."""

import dataclasses
from collections.abc import Sequence

from dagster_dataframely.errors.error_base import InvalidReturnError, _quoted, _rows


class CollectionMemberMissingError(InvalidReturnError):
    """Raised when some members of a Collection are given but a required one is not.

    The Collection's filters need every required member to decide which rows to keep, so no
    member can be validated without it. A `dd.collection_asset` function that returns no
    member at all skips every one instead.

    Parameters
    ----------
    collection_name
        The name of the `dy.Collection`.
    missing
        The required members with no frame (absent, or `None`).
    """

    collection_name: str
    missing: Sequence[str]

    def _message(self) -> str:
        return (
            "Nothing was given for the required "
            f"{'member' if len(self.missing) == 1 else 'members'} {_quoted(self.missing)} of the "
            f"Collection {self.collection_name!r}, so its filters cannot run and nothing was "
            "validated or written. Give every required member: return a frame for it from a "
            "dd.collection_asset function (an empty one if it has no rows), or declare the member "
            "optional (`dy.LazyFrame[Schema] | None`); "
            "or return no member at all to skip the step."
        )


class CollectionFilterDuplicatesError(InvalidReturnError):
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

    collection_name: str
    member: str
    input_count: int
    output_count: int
    primary_key: Sequence[str]
    filters: Sequence[str]

    def _message(self) -> str:
        key = ", ".join(self.primary_key)
        which = (
            f"the {'filter' if len(self.filters) == 1 else 'filters'} {_quoted(self.filters)}"
            if self.filters
            else "a `@dy.filter`"
        )
        selected = ", ".join(repr(column) for column in self.primary_key)
        return (
            f"The filters of the Collection {self.collection_name!r} turned the "
            f"{_rows(self.input_count)} of member {self.member!r} into {_rows(self.output_count)}, "
            f"so nothing was written: {which} returned the same ({key}) on more than one row. "
            f"Collection.filter keeps only the common primary key ({key}) of what a filter returns "
            "and joins every member on it, so each repeat of a key repeats that key's rows; a "
            "`.unique()` over rows that keep other columns (a join's) does not remove the repeats. "
            f"End the filter with `.select({selected}).unique()`."
        )


class MaterializeResultValueError(InvalidReturnError):
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

    asset: str
    _: dataclasses.KW_ONLY
    value_type: str | None = None

    def _message(self) -> str:
        if self.value_type is None:
            held = "holds no frame"
            convert = ""
        else:
            held = f"holds a {self.value_type}, not a Polars frame"
            convert = (
                " (convert it in the asset body, for example with `pl.from_pandas(...)` for a "
                "pandas frame or `pl.from_arrow(...)` for an Arrow table)"
            )
        return (
            f"Asset {self.asset!r} returned a `dg.MaterializeResult` whose `value` {held}, so "
            "there is nothing to validate. Put a `pl.DataFrame` or `pl.LazyFrame` in "
            f"`value=`{convert}; or return the frame itself and attach metadata with "
            "`context.add_asset_metadata`; or, for an asset that should not be validated, use a "
            "plain `@dg.asset` with `dd.wiring.schema_metadata`."
        )


class MaterializeResultFieldError(InvalidReturnError):
    """Raised when a returned `dg.MaterializeResult` sets `asset_key` or `check_results`.

    The decorator fills in both fields itself, so a value from the asset would conflict.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    field
        The field that was set: `asset_key` or `check_results`.
    """

    asset: str
    field: str

    def _message(self) -> str:
        return (
            f"Asset {self.asset!r} returned a `dg.MaterializeResult` that sets `{self.field}`, a "
            f"field the decorator fills in itself. Remove `{self.field}=` from the result."
        )


class MultiAssetReturnError(InvalidReturnError):
    """Raised when a `dd.multi_asset` function returns something it cannot validate.

    It returns a mapping from output name, or a tuple in the order of `outs`, to a frame (or a
    `dg.MaterializeResult` with one, or None): anything else, a tuple of another length, a
    name that is no output, or a value of another type for an output fails the step before any
    output is validated, so nothing is written.

    Parameters
    ----------
    asset
        The multi-asset's name.
    problem
        What the function returned instead.
    outputs
        The output names the mapping may have.
    """

    asset: str
    problem: str
    outputs: list[str]

    def _message(self) -> str:
        return (
            f"Multi-asset {self.asset!r} {self.problem}. A dd.multi_asset function returns a "
            f"mapping from output name ({_quoted(self.outputs)}), or a tuple in that order, to "
            "a pl.DataFrame, a pl.LazyFrame, a dg.MaterializeResult with one of those as "
            "`value`, or None to skip that output."
        )

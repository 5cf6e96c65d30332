"""What a decorated function or a Collection filter returned, that the package cannot use."""

from collections.abc import Sequence

from dagster_dataframely.errors.error_base import (
    InvalidReturnError,
    _quoted,
    _rows,
)


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

    def __init__(self, asset: str, field: str) -> None:
        self.asset = asset
        self.field = field
        super().__init__(
            f"Asset {asset!r} returned a `dg.MaterializeResult` that sets `{field}`, a field "
            f"the decorator fills in itself. Remove `{field}=` from the result."
        )


class MultiAssetReturnError(InvalidReturnError):
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

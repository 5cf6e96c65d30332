"""`dd.suggest_schema`: a Dataframely schema's source code, suggested from a table's data."""

from __future__ import annotations

import dataclasses
import keyword
import re
from collections.abc import Callable, Collection, Sequence

import polars as pl

from dagster_dataframely._suggest.column_rules import MARGIN, ColumnSuggestion, suggest_columns
from dagster_dataframely._suggest.key_search import find_primary_key
from dagster_dataframely._suggest.schema_code import render_schema
from dagster_dataframely._suggest.table_profile import TableProfile, profile_table
from dagster_dataframely._suggest.table_source import Source, refused, scan_source, source_label
from dagster_dataframely.errors import InvalidArgumentsError

# NOTE: names that usually hold personal data; without `sensitive=` such columns are treated
# as sensitive (no value shown) and the header says so, for the user to confirm or override.
_PERSONAL_NAME = re.compile(
    r"e_?mail|phone|mobile|first_?name|last_?name|full_?name|surname|address|street|zip|"
    r"postcode|ssn|passport|birth|\bdob\b|iban|card_?number|ip_?address",
    re.IGNORECASE,
)


# NOTE: how many times one suggestion calls `progress`: twice as its profile's passes start,
# once when the key is found; the command line's bar counts them.
PROGRESS_STEPS = 3


def guessed_sensitive(names: Sequence[str]) -> list[str]:
    """The columns whose names suggest personal data."""
    return [name for name in names if _PERSONAL_NAME.search(name)]


@dataclasses.dataclass(frozen=True)
class Suggested:
    """A suggestion before it is written out: what was seen, and each column's rules."""

    name: str
    label: str
    profile: TableProfile
    primary_key: tuple[str, ...]
    columns: list[ColumnSuggestion]
    guessed: tuple[str, ...] = ()

    def code(self, notes: Sequence[str] = ()) -> str:
        key = ", ".join(self.primary_key) or "none found"
        header = [
            f"{self.name}: suggested by dagster-dataframely from {self.profile.rows:,} rows of "
            f"{self.label}. Review each rule before use; the comments say what was seen.",
            f"Primary key: {key}.",
            *(
                [
                    f"Treated as sensitive by their names (no value shown): "
                    f"{', '.join(self.guessed)}. Pass sensitive=[...] to choose yourself."
                ]
                if self.guessed
                else []
            ),
            *notes,
        ]
        return render_schema(self.name, self.columns, header)


def check_name(name: str) -> None:
    """Refuse a schema name that cannot be a Python class name."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise InvalidArgumentsError(
            function="suggest_schema",
            problem=f"name={name!r} is not a Python class name",
            fix="Pass a name such as 'Orders': letters, digits and underscores, not a digit first.",
        )


def suggest_frame(
    frame: pl.LazyFrame,
    source: Source,
    *,
    name: str,
    sensitive: Collection[str] | None = None,
    margin: float = MARGIN,
    progress: Callable[[str], None] | None = None,
) -> Suggested:
    """Profile the frame, find its primary key and suggest each column's rules."""
    check_name(name)
    guessed: tuple[str, ...] = ()
    if sensitive is None:
        guessed = tuple(guessed_sensitive(frame.collect_schema().names()))
        sensitive = guessed
    unknown = sorted(set(sensitive) - set(frame.collect_schema().names()))
    if unknown:
        raise refused(
            source,
            f"sensitive= names columns it does not have: {', '.join(map(repr, unknown))}",
            "Name columns of the source in sensitive=.",
        )
    schema = frame.collect_schema()
    enums = [name for name in sensitive if isinstance(schema[name], pl.Enum)]
    if enums:
        # NOTE: an Enum's categories are its values, and its declaration must list them.
        raise refused(
            source,
            f"the sensitive columns {', '.join(map(repr, enums))} are Enums, whose declaration "
            f"would list their values",
            "Cast them to String (`pl.col(...).cast(pl.String)`) before suggesting.",
        )
    profile = profile_table(frame, source, progress=progress)
    primary_key = find_primary_key(frame, profile)
    if progress is not None:
        progress("searched the primary key")
    columns = suggest_columns(profile, primary_key, sensitive, margin)
    return Suggested(name, source_label(source), profile, primary_key, columns, guessed)


def suggest_schema(
    source: Source,
    *,
    name: str,
    sensitive: Collection[str] | None = None,
    margin: float = MARGIN,
    storage_options: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> str:
    """Suggest a Dataframely schema for an existing table, as Python source code to review.

    The table is profiled lazily, in one streaming aggregation (a second, small one counts the
    values of the few low-cardinality columns, and a third tests a bounded number of primary
    key candidates), so a table larger than memory works. The code declares each column's
    dtype and nullability, the primary key (a complete unique column, else the smallest
    complete unique combination of up to three columns), numeric `min`/`max` widened by a
    margin, `is_in` for low-cardinality columns, string length bounds and a `regex` for clear
    classes (digits, ISO dates, emails, fixed-width codes). A comment above each column says
    what was seen. The code is formatted as `ruff format` writes it, passes `mypy --strict`,
    and accepts every row it was suggested from.

    Parameters
    ----------
    source
        A Polars DataFrame or LazyFrame, or the path of a parquet file or folder (local, a URL
        such as ``"s3://bucket/orders/"``, or a `UPath` with its options), or a DuckDB table as
        ``(database path, table name)``.
    name
        The schema's class name, such as ``"Orders"``.
    sensitive
        Columns whose values must not appear: they get ``metadata={"pii": True}``, and neither
        the code nor its comments show any of their values (no bounds, no `is_in`). `None`:
        the columns whose names suggest personal data (email, phone, name, address, birth,
        ...), listed in the code's header for you to confirm; ``[]``: none.
    margin
        The share of a column's seen range added to each side of its bounds.
    storage_options
        Passed to `pl.scan_parquet` for a URL source. A `UPath` source brings its own: its
        fsspec options for S3 (`key`, `secret`, `token`, `endpoint_url`, `region_name`, also
        under `client_kwargs`, and `anon`) are given to Polars' reader under Polars' names.
    progress
        Called with a short line as each pass ends (the command line prints them on stderr).

    Returns
    -------
    str
        The source code of a module declaring the schema.

    Raises
    ------
    InvalidArgumentsError
        The source cannot be read, has no rows, or has a column of a dtype no Dataframely
        column is suggested for; or `name` is not a class name.

    Examples
    --------
    >>> print(dd.suggest_schema(orders_frame, name="Orders"))  # doctest: +SKIP
    """
    frame = scan_source(source, storage_options)
    return suggest_frame(
        frame, source, name=name, sensitive=sensitive, margin=margin, progress=progress
    ).code()

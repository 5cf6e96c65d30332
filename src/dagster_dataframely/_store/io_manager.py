"""`QuarantineAwareIOManager`: route quarantines to their own IO manager, invisibly otherwise.

Invalid rows often hold the very records that broke the rules (malformed emails, wrong
accounts), so teams want them in a restricted bucket or schema. This wrapper sits where the
`io_manager` resource was, passes every ordinary output and input through to the manager it
wraps, and sends a quarantine write (from `delegating_writer`) or read (an input declared with
`quarantine_spec`) to `quarantine_io_manager`, under the same partition key.
"""

# No `from __future__ import annotations` here: Dagster reads the resource's field annotations
# at class creation and would not recognize a `ResourceDependency` written as a string.
from collections.abc import Mapping
from typing import Any, Self

import dagster as dg
from pydantic import PrivateAttr

from dagster_dataframely._credentials import refuse_credentials
from dagster_dataframely._upstream import NestedResourceFactory, resource_config_of
from dagster_dataframely.errors import QuarantineIOManagerError

from .manager_kinds.kind_choice import kind_of
from .manager_kinds.manager_kind import ManagerKind
from .manager_kinds.router import QuarantineRouter, WrappedManager


class QuarantineAwareIOManager(NestedResourceFactory):
    """Wrap your IO manager so quarantines can live somewhere else, and say where they went.

    Bind it where the `io_manager` resource was. Ordinary outputs and inputs reach `io_manager`
    with the same context and value, and its metadata appears on the materialization unchanged,
    but for an output of `dd.asset`, `dd.multi_asset` or `dd.collection_asset`: there, the
    metadata holding values (dagster-polars' `table` and `stats`) is dropped when `row_sample`
    is 0, and otherwise loses the sensitive columns and has its cells cut, as the package's own
    samples do; the column types it records show a sensitive column's without categories. The
    same previews of every other output it stores (a plain `@dg.asset`'s, an op's) are dropped
    unless `plain_asset_previews=True`: such an asset often holds the raw rows that a
    `dd.asset` downstream marks sensitive, and has no schema to say which of its columns are.
    A quarantine goes to `quarantine_io_manager` when set, else to `io_manager`, and the table's
    `dataframely/quarantine_address` becomes the location written (a path, a URI, or a
    `schema.table`, never with credentials) instead of the asset key. A key is a quarantine only
    when the mapping `<name>` → `<name>_quarantine` and the definitions agree: the step of
    `<name>` writing it, or a `quarantine_spec` declaring it; an asset of your own named
    `foo_quarantine` is ordinary.

    With `staged_writes=True`, a failed or killed write leaves the last good table and
    quarantine as they were, with both managers: a parquet file is written beside the table
    and renamed into place (on an object store, uploaded whole), and a DuckDB slice is
    replaced in one transaction. See the Guarantees page for what each manager keeps without
    it. A DuckDB table is fitted to each frame either way (a column the frame brings is added,
    the frame inserted by column name), and a DuckDB quarantine is always replaced in one
    transaction, so a schema change never fails a write nor empties a slice. Only a
    `UPathIOManager` (such as `PolarsParquetIOManager`) on a local disk or an object store and
    a `DuckDBIOManager` (such as `DuckDBPolarsIOManager`) can be staged; any other manager is
    refused.

    Each wrapped manager's config is read when the resource starts, so a `dg.EnvVar` in it
    works as for a manager bound directly. A manager whose configuration holds a URL with a
    user name or password in it (`s3://KEY:SECRET@bucket`) is refused with
    `CredentialsInUrlError`, here and when the resource starts (on the value an `EnvVar`
    gives), so the secret never reaches metadata, errors or logs.

    Attributes
    ----------
    io_manager
        The IO manager that stores your tables and every other output and input: a
        `ConfigurableIOManager`, a `ConfigurableIOManagerFactory` (such as
        `DuckDBPolarsIOManager`) or a plain `dg.IOManager` / `@dg.io_manager`.
    quarantine_io_manager
        The IO manager that stores the quarantines and loads a `quarantine_spec` input, of the
        same kinds. `None` stores them with `io_manager`.
    staged_writes
        Whether every write goes through a staging step, so that a failed or killed write
        leaves the previous table and quarantine in place. `False` by default.
    plain_asset_previews
        Whether the previews a manager records of an output the package did not declare (a
        plain `@dg.asset`'s or an op's) stay on its materialization: its table and markdown
        values, such as dagster-polars' `table` (the first rows) and `stats` (every column's
        min and max). `False` by default: they are dropped, and the rest (the path, the row
        count, the column types) stays. Set it where no plain asset stored by this resource
        holds a value to keep out of the event log.

    Raises
    ------
    QuarantineIOManagerError
        When the resource starts: a manager is not an IO manager, cannot store a
        `pl.DataFrame`, is itself a `QuarantineAwareIOManager`, or cannot be staged.
    CredentialsInUrlError
        A manager's configuration holds a URL with a user name or password in it.
    StorageWriteError
        A write failed for an output whose settings hide values (a sensitive column, or
        `row_sample=0`): the manager's own error, whose message may quote a value, is left out.

    Examples
    --------
    ```python
    import tempfile

    import dagster as dg
    import dataframely as dy
    import polars as pl
    from dagster_polars import PolarsParquetIOManager

    import dagster_dataframely as dd


    class Orders(dy.Schema):
        amount = dy.Float64(min=0.0)


    @dd.asset(Orders, quarantine=True)
    def orders() -> pl.DataFrame:
        return pl.DataFrame({"amount": [12.5, -3.0]})


    restricted = tempfile.mkdtemp()
    result = dg.materialize(
        [orders, dd.quarantine_spec(Orders, orders)],
        resources={
            "io_manager": dd.QuarantineAwareIOManager(
                io_manager=PolarsParquetIOManager(base_dir=tempfile.mkdtemp()),
                quarantine_io_manager=PolarsParquetIOManager(base_dir=restricted),
            )
        },
    )
    (table,) = result.asset_materializations_for_node("orders")
    print(table.metadata["dataframely/quarantine_address"].value)
    assert pl.read_parquet(f"{restricted}/orders_quarantine.parquet").height == 1
    ```
    """

    io_manager: dg.ResourceDependency[Any]
    # Dagster recognizes a nested resource only by a bare `ResourceDependency` annotation, so
    # the optional one cannot be spelled `... | None`.
    quarantine_io_manager: dg.ResourceDependency[Any] = None  # type: ignore[assignment]
    staged_writes: bool = False
    plain_asset_previews: bool = False

    _passed: dict[str, object] = PrivateAttr(default_factory=dict)
    _passed_names: dict[str, str] = PrivateAttr(default_factory=dict)

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        # Nested factories arrive in `create_io_manager` already turned into the managers they
        # create, and a manager such as DuckDB's reads its settings from each context's
        # `resource_config`. So keep each manager as the user passed it, to read its config
        # from when the resource starts (an `EnvVar` has its value only then).
        fields = [f for f in ("io_manager", "quarantine_io_manager") if data.get(f) is not None]
        self._passed = {field: data[field] for field in fields}
        # Errors name the class the user wrote, not the manager a factory later builds.
        self._passed_names = {field: type(data[field]).__name__ for field in fields}
        for field in fields:
            config = resource_config_of(data[field])
            if config is not None:
                _refuse_credentials_in(config, self._argument(field))

    def carry_over_to(self, rebuilt: Self) -> None:
        # Dagster rebuilds the resource with its nested resources already resolved, which
        # would lose the managers kept above: carry them over to the rebuilt instance.
        rebuilt._passed = {**rebuilt._passed, **self._passed}
        rebuilt._passed_names = {**rebuilt._passed_names, **self._passed_names}

    def create_io_manager(self, context: dg.InitResourceContext) -> dg.IOManager:
        table = self._wrap("io_manager", self.io_manager)
        quarantine = (
            self._wrap("quarantine_io_manager", self.quarantine_io_manager)
            if self.quarantine_io_manager is not None
            else table
        )
        return QuarantineRouter(
            table=table, quarantine=quarantine, plain_asset_previews=self.plain_asset_previews
        )

    def _argument(self, field: str) -> str:
        return f"{self._passed_names[field]} (the {field} argument)"

    def _wrap(self, field: str, manager: object) -> WrappedManager:
        self._passed_names.setdefault(field, type(manager).__name__)
        name = self._argument(field)
        # Read now that the resource starts, so an `EnvVar` has its value: the config the
        # wrapped manager's contexts carry, and what the credential check reads.
        config = resource_config_of(self._passed.get(field, manager))
        if config is not None:
            _refuse_credentials_in(config, name)
        return WrappedManager(
            _checked(name, manager), name, config, staged_writes=self.staged_writes
        )


def _refuse_credentials_in(config: object, name: str, key: str = "") -> None:
    if isinstance(config, str):
        refuse_credentials(config, f"The {key or 'configuration'} of {name}")
    elif isinstance(config, Mapping):
        for inner, value in config.items():
            _refuse_credentials_in(value, name, f"{key}.{inner}" if key else str(inner))
    elif isinstance(config, list | tuple):
        for value in config:
            _refuse_credentials_in(value, name, key)


def _checked(name: str, manager: object) -> ManagerKind:
    if not isinstance(manager, dg.IOManager):
        raise QuarantineIOManagerError(
            name,
            "it is not an IO manager",
            "Pass a ConfigurableIOManager, a ConfigurableIOManagerFactory, a dg.IOManager or an "
            "@dg.io_manager, such as PolarsParquetIOManager or DuckDBPolarsIOManager.",
        )
    kind = kind_of(manager)
    kind.check_wrappable(name)
    return kind

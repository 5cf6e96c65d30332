"""Path managers: any `dg.UPathIOManager`, dagster-polars' parquet manager the common one.

Each asset key (and each partition) is a file of its own under the manager's base directory,
replaced whole by each write. So a quarantine is a sibling file, checked to stay inside the
base; a range of partitions is several files, which `UPathIOManager` refuses to write in one
output; a write is staged by writing elsewhere and moving the file into place
(`staged_writes`); and the stored keys are read from the files found under the asset's folder
by one listing, each scanned lazily with the manager's own scan.
"""

from __future__ import annotations

import itertools
import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import dagster as dg
from upath import UPath

from dagster_dataframely import _upstream
from dagster_dataframely._store.staged_writes import staged
from dagster_dataframely.errors import PartitionRangeError

from .manager_kind import ManagerKind, StoredPartition

DAGSTER_POLARS_VALUE_KEYS = {"table": "its first rows", "stats": "every column's min and max"}
"""The metadata of dagster-polars' managers that holds values, and what each holds."""


class PathManager(ManagerKind):
    """A `dg.UPathIOManager`: a file per asset key and partition, replaced whole."""

    manager: dg.UPathIOManager

    @classmethod
    def claims(cls, manager: dg.IOManager) -> bool:
        return isinstance(manager, dg.UPathIOManager)

    def staged(self, name: str) -> dg.IOManager:
        return staged(self.manager, name)

    @property
    def sinks_lazy(self) -> bool:
        # NOTE: dagster-polars picks `sink_df_to_path` by the output's type, and records only
        # the path and the column types of a `LazyFrame`.
        return callable(getattr(self.manager, "sink_df_to_path", None))

    def files(self, context: dg.OutputContext) -> list[UPath]:
        return _upstream.upath_output_locations(self.manager, context)

    def base(self) -> UPath:
        return _upstream.upath_base(self.manager)

    def check_range(self, asset: str, partitions: str, name: str, context: Any) -> None:
        files = self.files(context)
        if len(files) > 1:
            raise PartitionRangeError(
                asset,
                partitions,
                self._range_problem(name, len(files)),
                "Launch the backfill with one run per partition "
                "(`backfill_policy=dg.BackfillPolicy.multi_run()`), or store the asset with "
                "an IO manager that writes a range in one step, such as DuckDBPolarsIOManager.",
            )

    def _range_problem(self, name: str, count: int) -> str:
        return (
            f"{name} stores each partition in a file of its own, so it would write {count} "
            "files for this one output, which it refuses to do"
        )

    def stored_check(self, context: dg.OutputContext) -> Callable[[], bool]:
        return lambda: all(path.exists() for path in self.files(context))

    def stored_partitions(
        self,
        context: dg.OutputContext,
        partitions_def: dg.PartitionsDefinition,
        instance: dg.DagsterInstance,
    ) -> dict[str, StoredPartition] | None:
        if not hasattr(self.manager, "scan_df_from_path"):
            return None
        with _upstream.no_resources(instance) as resources:
            if _upstream.upath_lays_out_partitions_as_dagster(self.manager):
                files = _listed_files(self.manager, context, partitions_def, instance)
            else:
                files = _probed_files(
                    self.manager, context.asset_key, partitions_def, instance, resources
                )
            # The manager's own scan, with its storage options (S3's credentials and endpoint).
            scan: Any = self.manager.scan_df_from_path
            reading = _upstream.input_context(context.asset_key, instance, resources)
            return _scanned({key: scan(path, reading) for key, path in files.items()})

    def previews(self) -> Mapping[str, str] | None:
        if self.sinks_lazy and _records_dagster_polars_metadata(self.manager):
            return None  # handed a `LazyFrame` wherever the output hides values
        if type(self.manager).get_metadata is dg.UPathIOManager.get_metadata:
            return None  # Dagster's own `path`, nothing else
        return {}

    def types_key(self) -> str | None:
        dagster_polars = _records_dagster_polars_metadata(self.manager)
        return "`dagster/column_schema`" if dagster_polars else None


def _records_dagster_polars_metadata(manager: dg.IOManager) -> bool:
    get_metadata = getattr(type(manager), "get_metadata", None)
    return str(getattr(get_metadata, "__module__", "")).split(".")[0] == "dagster_polars"


def _scanned(scans: Mapping[str, Any]) -> dict[str, StoredPartition]:
    return {
        key: StoredPartition(scan, frozenset(scan.collect_schema().names()))
        for key, scan in sorted(scans.items())
    }


StoredPaths = Callable[[Iterable[str]], Iterable[str]]
"""The stored partitions among the paths found under an asset's folder: a path manager's are
its files."""


def _stored_names(folder: UPath, extension: str, stored: StoredPaths) -> dict[str, str]:
    found: dict[str, str] = {}
    for path in stored(folder.fs.find(folder.path)):
        relative = posixpath.relpath(path, folder.path)
        if relative.endswith(extension) and len(relative) > len(extension):
            found[path] = relative[: len(relative) - len(extension)]
    return found


def _listed_files(
    manager: dg.UPathIOManager,
    context: dg.OutputContext,
    partitions_def: dg.PartitionsDefinition,
    instance: dg.DagsterInstance,
    stored: StoredPaths = iter,
) -> dict[str, UPath]:
    folder = _upstream.upath_asset_folder(manager, context)
    # NOTE: an object store's listing may be cached by an earlier read in this process, and
    # the files written since are not in it.
    folder.fs.invalidate_cache(folder.path)
    found = _stored_names(folder, manager.extension or "", stored)
    holds = _holds_by_dimension(partitions_def, instance)
    held = {key for name in found.values() for key in _held_keys_named(name, holds)}
    located = _upstream.upath_partition_locations(manager, context, sorted(held, key=str))
    # NOTE: a key counts only where the manager writes it to exactly this file, so a name
    # that merely looks like a key (another layout, an escaped `/`) never adds a partition.
    return {str(key): path for key, path in located.items() if path.path in found}


_Holds = Callable[[str], bool]


def _holds_by_dimension(
    partitions_def: dg.PartitionsDefinition, instance: dg.DagsterInstance
) -> dict[str | None, _Holds]:

    def holds(dimension: dg.PartitionsDefinition) -> _Holds:
        if isinstance(dimension, dg.TimeWindowPartitionsDefinition):
            return dimension.has_partition_key  # NOTE: parsed, no window listed
        return frozenset(
            dimension.get_partition_keys(dynamic_partitions_store=instance)
        ).__contains__

    if isinstance(partitions_def, dg.MultiPartitionsDefinition):
        return {d.name: holds(d.partitions_def) for d in partitions_def.partitions_defs}
    return {None: holds(partitions_def)}


def _held_keys_named(name: str, holds: Mapping[str | None, _Holds]) -> Iterator[Any]:
    # NOTE: Every reading a layout like Dagster's allows: a leading `/` escaped as `%2F` or not; a
    # multi-partition key's parts in the order of their dimension names, joined by `/`, each part
    # perhaps holding a `/` itself (every split into one part per dimension); and a part's leading
    # or trailing `/`, which a local path drops where it doubles a separator.
    texts = {name, "/" + name[3:]} if name.startswith("%2F") else {name}
    if None in holds:
        yield from (key for text in texts for key in (text, text + "/") if holds[None](key))
        return
    dimensions = sorted(name for name in holds if name is not None)
    for text in texts:
        segments = text.split("/")
        for cuts in itertools.combinations(range(1, len(segments)), len(dimensions) - 1):
            bounds = zip((0, *cuts), (*cuts, len(segments)), strict=True)
            parts = ["/".join(segments[start:end]) for start, end in bounds]
            choices = [
                [
                    shaped
                    for lead in ("", "/")[: 1 if position == 0 else 2]
                    for shaped in (lead + part, lead + part + "/")
                    if holds[dimension](shaped)
                ]
                for position, (dimension, part) in enumerate(zip(dimensions, parts, strict=True))
            ]
            for chosen in itertools.product(*choices):
                yield dg.MultiPartitionKey(dict(zip(dimensions, chosen, strict=True)))


def _probed_files(
    manager: dg.UPathIOManager,
    asset_key: dg.AssetKey,
    partitions_def: dg.PartitionsDefinition,
    instance: dg.DagsterInstance,
    resources: _upstream.Resources,
) -> dict[str, UPath]:
    keys = partitions_def.get_partition_keys(dynamic_partitions_store=instance)
    if not keys:
        return {}
    context = dg.build_output_context(
        asset_key=asset_key,
        asset_partitions_def=partitions_def,
        asset_partition_key_range=dg.PartitionKeyRange(keys[0], keys[-1]),
        instance=instance,
        resources=resources,
    )
    paths = _upstream.upath_output_locations(manager, context)
    return {
        str(partition): path
        for partition, path in zip(context.asset_partition_keys, paths, strict=True)
        if path.exists()
    }

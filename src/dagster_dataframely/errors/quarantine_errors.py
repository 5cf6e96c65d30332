"""Refusals to store the quarantine where its rows would collide, be lost or be exposed."""

from dagster_dataframely.errors.error_base import (
    StorageRefusedError,
)


class QuarantineKeyCollisionError(StorageRefusedError):
    """Raised when another asset already materializes the quarantine's asset key.

    Both would write to the same place, and whichever ran second would overwrite the other,
    so the run stops before the asset's function is called.

    Parameters
    ----------
    asset
        The key of the asset with `quarantine=True`, as a string.
    quarantine
        Its quarantine's key, which the other asset also materializes.
    """

    def __init__(self, asset: str, quarantine: str) -> None:
        self.asset = asset
        self.quarantine = quarantine
        super().__init__(
            f"Asset {asset!r} has `quarantine=True` and writes its invalid rows under the key "
            f"{quarantine!r}, but another asset in this code location already materializes "
            f"{quarantine!r}. Rename that other asset, or drop `quarantine=True` from "
            f"{asset!r}. If the other asset is a quarantine table you declared yourself, "
            f"remove it and use `quarantine_spec`, which puts the quarantine in the asset "
            f"graph for you."
        )


class QuarantineStorageCollisionError(QuarantineKeyCollisionError):
    """Raised when another asset's key would write inside a partitioned asset's quarantine.

    A path-based IO manager stores the partitions of `<name>_quarantine` as files in the
    directory `<name>_quarantine/`, so an asset keyed `<name>_quarantine/<part>` writes a
    file among them and replaces the one partition its last part names. A subclass of
    `QuarantineKeyCollisionError`, so code that catches that error catches this one too.

    Parameters
    ----------
    asset
        The key of the partitioned asset with `quarantine=True`, as a string.
    quarantine
        Its quarantine's key.
    other
        The key of the asset that would write among the quarantine's partition files.
    """

    def __init__(self, asset: str, quarantine: str, other: str) -> None:
        self.other = other
        super().__init__(asset, quarantine)
        message = (
            f"Asset {asset!r} has `quarantine=True` and is partitioned, so a path-based IO "
            f"manager stores its invalid rows as one file per partition under {quarantine!r}. "
            f"The asset {other!r}, also in this code location, has a key that starts with "
            f"{quarantine!r}, so it would write into that storage and replace a partition of "
            f"the quarantine. Rename or re-prefix {other!r}, or drop `quarantine=True` from "
            f"{asset!r}."
        )
        self.args = (message,)
        self.message = message


class QuarantineStorageError(StorageRefusedError):
    """Raised in a run, before anything is written, when the quarantine has no safe place.

    The asset's IO manager (or `QuarantineAwareIOManager`'s `quarantine_io_manager`) would
    store the quarantine where the table goes, where the table's next write replaces it,
    or outside its own base directory; or it stores by step output rather than by asset key,
    as `dg.mem_io_manager` does, so the quarantine and the table would share one slot.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    manager
        The IO manager that would store the quarantine, by class name.
    problem
        Why the quarantine has no safe place there.
    """

    def __init__(self, asset: str, manager: str, problem: str) -> None:
        self.asset = asset
        self.manager = manager
        self.problem = problem
        super().__init__(
            f"Asset {asset!r} cannot write its quarantine through {manager}: {problem}. Nothing "
            f"was written. Use an IO manager that stores each asset under its own asset key "
            f"(a UPathIOManager such as PolarsParquetIOManager, or a database IO manager such "
            f"as DuckDBPolarsIOManager), or wrap yours in QuarantineAwareIOManager with such a "
            f"quarantine_io_manager."
        )


class UnsafePathKeyError(StorageRefusedError):
    """Raised in a run, before anything is written, for a key a file path cannot hold as is.

    A path-based IO manager joins the asset key and the partition key into a path, and the
    filesystem resolves a `..` segment and drops a `.` or empty one, so such a key can put
    the table and its quarantine in one file, or either outside the manager's directory.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    key
        The asset or partition key a path cannot hold as it is.
    problem
        What is wrong with it: a `..`, `.` or empty segment.
    """

    def __init__(self, asset: str, key: str, problem: str) -> None:
        self.asset = asset
        self.key = key
        self.problem = problem
        super().__init__(
            f"Asset {asset!r} cannot be written under the key {key!r} through a path-based IO "
            f"manager: {problem}, so its table and quarantine could land in one file or outside "
            f"the manager's base directory. Nothing was written. Rename the partition or key "
            f"part so that no `/`-separated segment is `..`, `.` or empty."
        )


class ConcurrentRunError(StorageRefusedError):
    """Raised when another run is writing the same asset partition at the same time.

    Its table and quarantine writes could interleave with this run's, leaving one run's table
    beside the other run's quarantine, so the run that notices stops before writing anything.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    partition
        The partition both runs write, or None for an unpartitioned asset.
    other_run_id
        The id of the run already writing it.
    """

    def __init__(self, asset: str, partition: str | None, other_run_id: str) -> None:
        self.asset = asset
        self.partition = partition
        self.other_run_id = other_run_id
        where = f"partition {partition!r} of {asset!r}" if partition is not None else repr(asset)
        super().__init__(
            f"Run {other_run_id} is writing {where} right now, so this run stopped before "
            f"writing anything: interleaved writes could pair one run's table with the other's "
            f"quarantine. Re-run once that run has finished. To queue such runs instead, give "
            f"the asset a concurrency pool with a limit of 1 (`dd.asset(..., pool=...)`). If "
            f"run {other_run_id} is dead, mark it failed so it no longer counts as in progress."
        )


class QuarantineDirError(StorageRefusedError):
    """Raised when a directly called asset has invalid rows and no quarantine directory.

    A run hands invalid rows to its IO manager, but a direct call has none, and there is no
    default directory so rows never land somewhere nobody picked.

    Parameters
    ----------
    asset
        The key of the asset that was called, as a string.
    """

    def __init__(self, asset: str) -> None:
        self.asset = asset
        super().__init__(
            f"Asset {asset!r} was called directly and has invalid rows to quarantine, but no "
            f"quarantine directory is configured and a direct call has no IO manager to "
            f"write them. In a test, call it with `dd.testing.call_asset(asset, ...)`, which "
            f"keeps the invalid rows in memory; or set DAGSTER_DATAFRAMELY_QUARANTINE_DIR to a "
            f"directory; or materialize the asset in a run."
        )


class QuarantineIOManagerError(StorageRefusedError):
    """Raised when `QuarantineAwareIOManager` is given something it cannot route rows to.

    Raised when the resource initializes, or on the first write a manager turns out unable to
    take, so a misconfigured deployment fails on its first run rather than losing rows.

    Parameters
    ----------
    manager
        The manager that was passed, named by its class and the argument it was passed as.
    problem
        What is wrong with it.
    fix
        What to pass instead.
    """

    def __init__(self, manager: str, problem: str, fix: str) -> None:
        self.manager = manager
        self.problem = problem
        self.fix = fix
        super().__init__(f"QuarantineAwareIOManager cannot use {manager}: {problem}. {fix}")

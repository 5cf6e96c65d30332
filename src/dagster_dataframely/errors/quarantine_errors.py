"""Refusals to store the quarantine where its rows would collide, be lost or be exposed."""

from dagster_dataframely.errors.error_base import StorageRefusedError


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

    asset: str
    quarantine: str

    def _message(self) -> str:
        return (
            f"Asset {self.asset!r} has `quarantine=True` and writes its invalid rows under the key "
            f"{self.quarantine!r}, but another asset in this code location already materializes "
            f"{self.quarantine!r}. Rename that other asset, or drop `quarantine=True` from "
            f"{self.asset!r}. If the other asset is a quarantine table you declared yourself, "
            "remove it and use `quarantine_spec`, which puts the quarantine in the asset graph for "
            "you."
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

    other: str

    def _message(self) -> str:
        return (
            f"Asset {self.asset!r} has `quarantine=True` and is partitioned, so a path-based IO "
            f"manager stores its invalid rows as one file per partition under "
            f"{self.quarantine!r}. The asset {self.other!r}, also in this code location, has a key "
            f"that starts with {self.quarantine!r}, so it would write into that storage and "
            f"replace a partition of the quarantine. Rename or re-prefix {self.other!r}, or drop "
            f"`quarantine=True` from {self.asset!r}."
        )


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

    asset: str
    manager: str
    problem: str

    def _message(self) -> str:
        return (
            f"Asset {self.asset!r} cannot write its quarantine through {self.manager}: "
            f"{self.problem}. Nothing was written. Use an IO manager that stores each asset under "
            "its own asset key (a UPathIOManager such as PolarsParquetIOManager, or a database IO "
            "manager such as DuckDBPolarsIOManager), or wrap yours in QuarantineAwareIOManager "
            "with such a quarantine_io_manager."
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

    asset: str
    key: str
    problem: str

    def _message(self) -> str:
        return (
            f"Asset {self.asset!r} cannot be written under the key {self.key!r} through a "
            f"path-based IO manager: {self.problem}, so its table and quarantine could land in one "
            "file or outside the manager's base directory. Nothing was written. Rename the "
            "partition or key part so that no `/`-separated segment is `..`, `.` or empty."
        )


class ConcurrentRunError(StorageRefusedError):
    """Raised when another run is writing the same asset partition at the same time.

    Its table and quarantine writes could interleave with this run's, leaving one run's table
    beside the other run's quarantine, so this run stops before writing anything. Of runs that
    reach the write of one partition together, the one created first writes and every other
    stops; a run that arrives while another writes stops.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    partition
        The partition both runs write, or None for an unpartitioned asset.
    other_run_id
        The id of the run already writing it.
    """

    asset: str
    partition: str | None
    other_run_id: str

    def _message(self) -> str:
        where = (
            f"partition {self.partition!r} of {self.asset!r}"
            if self.partition is not None
            else repr(self.asset)
        )
        return (
            f"Run {self.other_run_id} is writing {where} right now (of runs that reach it "
            "together, the one created first writes), so this run stopped before writing "
            "anything: interleaved writes could pair one run's table with the other's "
            "quarantine. Re-run once that run has finished. To queue such runs instead, give the "
            "asset a concurrency pool with a limit of 1 (`dd.asset(..., pool=...)`). If run "
            f"{self.other_run_id} is dead, mark it failed so it no longer counts as in progress."
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

    asset: str

    def _message(self) -> str:
        return (
            f"Asset {self.asset!r} was called directly and has invalid rows to quarantine, but no "
            "quarantine directory is configured and a direct call has no IO manager to write them. "
            "In a test, call it with `dd.testing.call_asset(asset, ...)`, which keeps the invalid "
            "rows in memory; or set DAGSTER_DATAFRAMELY_QUARANTINE_DIR to a directory; or "
            "materialize the asset in a run."
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

    manager: str
    problem: str
    fix: str

    def _message(self) -> str:
        return f"QuarantineAwareIOManager cannot use {self.manager}: {self.problem}. {self.fix}"

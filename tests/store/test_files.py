"""Quarantine files for direct invocation: their layout, their escaping and how they are written."""

from __future__ import annotations

import datetime as dt
import ntpath
import os
import signal
import socket
import string
import subprocess
import sys
from decimal import Decimal
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import unquote

import dagster as dg
import polars as pl
import pytest
from dagster._core.storage.upath_io_manager import escape_dotdot_segments, escape_leading_slash
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal
from upath import UPath

from dagster_dataframely import errors
from dagster_dataframely._model.keys import quarantine_key
from dagster_dataframely._store.files import (
    NAME_MAX,
    file_writer,
    quarantine_path,
    staging_directory,
)

ORDERS = dg.AssetKey(["orders"])
PREFIXED = dg.AssetKey(["sales", "eu", "orders"])


class _ParquetPaths(dg.UPathIOManager):
    """Dagster's own path layout, with the extension a parquet manager uses."""

    extension = ".parquet"

    def dump_to_path(self, context: dg.OutputContext, obj: Any, path: UPath) -> None:
        raise NotImplementedError

    def load_from_path(self, context: dg.InputContext, path: UPath) -> Any:
        raise NotImplementedError


class _EscapingParquetPaths(_ParquetPaths):
    """As Dagster's filesystem IO manager escapes partition keys: `..` and a leading `/`."""

    def make_safe_partition_path(self, base_path: UPath, partition: str) -> UPath:
        return base_path / escape_dotdot_segments(escape_leading_slash(partition))


def _dagster_path(manager: dg.UPathIOManager, key: dg.AssetKey, partition_key: str | None) -> UPath:
    """Where `manager` would store the quarantine asset of `key`."""
    context = dg.build_output_context(asset_key=quarantine_key(key), partition_key=partition_key)
    if partition_key is None:
        return manager._get_path(context)
    (path,) = manager._get_paths_for_partitions(context).values()
    return path


def _partition_segments(path: UPath, key: dg.AssetKey, base: str) -> list[str]:
    """The segments a partition key became, the extension removed from the last."""
    directory = str(quarantine_path(key, base)).removesuffix(".parquet")
    text = str(path)
    assert text.startswith(directory + "/")
    assert text.endswith(".parquet")
    return text[len(directory) + 1 : -len(".parquet")].split("/")


def _unescape(segment: str) -> str:
    """Invert the documented escaping of one segment."""
    return "" if segment == "%" else unquote(segment)


# ---------------------------------------------------------------------------------------------
# Layout


@pytest.mark.parametrize(
    ("key", "partition_key", "expected"),
    [
        (ORDERS, None, "/q/orders_quarantine.parquet"),
        (PREFIXED, None, "/q/sales/eu/orders_quarantine.parquet"),
        (ORDERS, "2026-01-02", "/q/orders_quarantine/2026-01-02.parquet"),
        (PREFIXED, "eu", "/q/sales/eu/orders_quarantine/eu.parquet"),
        (ORDERS, "2026-01-02-05:00", "/q/orders_quarantine/2026-01-02-05:00.parquet"),
        (ORDERS, "north east", "/q/orders_quarantine/north east.parquet"),
        (ORDERS, "zürich-東京", "/q/orders_quarantine/zürich-東京.parquet"),
        (ORDERS, "~draft", "/q/orders_quarantine/~draft.parquet"),
        (ORDERS, "100%", "/q/orders_quarantine/100%.parquet"),
        (ORDERS, "v1.2", "/q/orders_quarantine/v1.2.parquet"),
        # A plain string is one key even if it looks like a multi-partition key.
        (ORDERS, "2026-01-02|eu", "/q/orders_quarantine/2026-01-02|eu.parquet"),
    ],
)
def test_layout_follows_the_spec(
    key: dg.AssetKey, partition_key: str | None, expected: str
) -> None:
    path = quarantine_path(key, "/q", partition_key)
    assert isinstance(path, UPath)
    assert str(path) == expected


def test_a_multi_partition_key_orders_its_dimensions_by_name() -> None:
    # Declared region first, but "day" < "region".
    key = dg.MultiPartitionKey({"region": "eu", "day": "2026-01-02"})
    assert str(quarantine_path(ORDERS, "/q", key)) == ("/q/orders_quarantine/2026-01-02/eu.parquet")


class _DeclarationOrderKey(dg.MultiPartitionKey):
    """A key that reports its dimensions unsorted, which Dagster's own keys never do."""

    @property
    def keys_by_dimension(self) -> dict[str, str]:
        return dict(reversed(list(super().keys_by_dimension.items())))


def test_dimensions_are_sorted_here_not_only_by_dagster() -> None:
    key = _DeclarationOrderKey({"region": "eu", "day": "2026-01-02"})
    assert list(key.keys_by_dimension) == ["region", "day"]
    assert str(quarantine_path(ORDERS, "/q", key)) == "/q/orders_quarantine/2026-01-02/eu.parquet"


def test_three_dimensions_give_two_directories_and_a_file() -> None:
    key = dg.MultiPartitionKey({"region": "eu", "channel": "web", "day": "2026-01-02"})
    assert str(quarantine_path(PREFIXED, "/q", key)) == (
        "/q/sales/eu/orders_quarantine/web/2026-01-02/eu.parquet"
    )


def test_a_multi_partition_key_from_a_definition_uses_the_same_layout() -> None:
    grid = dg.MultiPartitionsDefinition(
        {
            "region": dg.StaticPartitionsDefinition(["eu", "us"]),
            "day": dg.DailyPartitionsDefinition(start_date="2026-01-01", end_date="2026-01-03"),
        }
    )
    paths = {str(quarantine_path(ORDERS, "/q", key)) for key in grid.get_partition_keys()}
    assert paths == {
        f"/q/orders_quarantine/{day}/{region}.parquet"
        for day in ("2026-01-01", "2026-01-02")
        for region in ("eu", "us")
    }


def test_the_directory_may_be_a_str_a_path_or_a_upath() -> None:
    expected = "/q/orders_quarantine/eu.parquet"
    for directory in ("/q", Path("/q"), UPath("/q"), "/q/"):
        assert str(quarantine_path(ORDERS, directory, "eu")) == expected


def test_a_relative_directory_stays_relative() -> None:
    assert str(quarantine_path(ORDERS, "q", "eu")) == "q/orders_quarantine/eu.parquet"


# ---------------------------------------------------------------------------------------------
# Agreement with Dagster's UPathIOManager

ORDINARY_KEYS: list[str | None] = [
    None,
    "2026-01-02",
    "2026-01-02-05:00",
    "eu",
    "north east",
    "zürich-東京",
    "~draft",
    "100%",
    "a.b.",
    "v1.2",
    "2026/01/02",
    dg.MultiPartitionKey({"region": "eu", "day": "2026-01-02"}),
    dg.MultiPartitionKey({"region": "us", "channel": "web", "day": "2026-01-03"}),
]


@pytest.mark.parametrize("partition_key", ORDINARY_KEYS)
@pytest.mark.parametrize("key", [ORDERS, PREFIXED])
def test_ordinary_keys_land_where_upath_io_manager_puts_them(
    tmp_path: Path, key: dg.AssetKey, partition_key: str | None
) -> None:
    manager = _ParquetPaths(base_path=UPath(tmp_path))
    assert quarantine_path(key, tmp_path, partition_key) == _dagster_path(
        manager, key, partition_key
    )


@pytest.mark.parametrize("partition_key", ["/2026-01-02", "..", "../../etc", "a/../b", "/../x"])
def test_dot_dot_and_a_leading_slash_are_escaped_as_dagster_escapes_them(
    tmp_path: Path, partition_key: str
) -> None:
    manager = _EscapingParquetPaths(base_path=UPath(tmp_path))
    assert quarantine_path(ORDERS, tmp_path, partition_key) == _dagster_path(
        manager, ORDERS, partition_key
    )


def test_a_remote_directory_matches_upath_io_manager_too() -> None:
    manager = _ParquetPaths(base_path=UPath("s3://bucket/q"))
    key = dg.MultiPartitionKey({"region": "eu", "day": "2026-01-02"})
    assert str(quarantine_path(PREFIXED, "s3://bucket/q", key)) == str(
        _dagster_path(manager, PREFIXED, key)
    )


_ORDINARY_SEGMENT = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="/\\%|[],"),
    min_size=1,
    max_size=12,
).filter(lambda s: s not in {".", ".."} and s[1:2] != ":")


@settings(max_examples=30, deadline=None)
@given(segments=st.lists(_ORDINARY_SEGMENT, min_size=1, max_size=3))
def test_any_ordinary_key_lands_where_upath_io_manager_puts_it(segments: list[str]) -> None:
    partition_key = "/".join(segments)
    manager = _ParquetPaths(base_path=UPath("/q"))
    assert quarantine_path(PREFIXED, "/q", partition_key) == _dagster_path(
        manager, PREFIXED, partition_key
    )


@settings(max_examples=20, deadline=None)
@given(
    dimensions=st.dictionaries(
        st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=6),
        _ORDINARY_SEGMENT,
        min_size=2,
        max_size=3,
    )
)
def test_any_ordinary_multi_partition_key_lands_where_upath_io_manager_puts_it(
    dimensions: dict[str, str],
) -> None:
    partition_key = dg.MultiPartitionKey(dimensions)
    manager = _ParquetPaths(base_path=UPath("/q"))
    assert quarantine_path(ORDERS, "/q", partition_key) == _dagster_path(
        manager, ORDERS, partition_key
    )


# ---------------------------------------------------------------------------------------------
# Escaping

_HAZARDS = st.sampled_from(
    [
        *("..", ".", "", "/", "//", "\\", "\\\\", "\x00", "\n", "~", "C:", "c:\\"),
        *("%", "%2F", "%2E%2E", "%25", "%zz", "é", "東京", " ", "a", "2026-01-02", "|", ":"),
        *("?", "#", "memory::", "aC::", "data:", ","),
    ]
)
ADVERSARIAL_KEYS = st.one_of(
    st.lists(_HAZARDS, max_size=8).map("".join),
    st.lists(st.sampled_from(["..", ".", "", "~", "a", "/"]), max_size=6).map("/".join),
    st.text(max_size=16),
)
ADVERSARIAL_MULTI_KEYS = st.dictionaries(
    st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=4),
    ADVERSARIAL_KEYS,
    min_size=2,
    max_size=3,
).map(dg.MultiPartitionKey)


def _assert_stays_inside(path: UPath, key: dg.AssetKey, base: Path) -> None:
    """Assert `path` is a file strictly inside the key's quarantine directory, on any OS."""
    directory = Path(str(quarantine_path(key, base)).removesuffix(".parquet"))
    local = Path(str(path))
    assert os.path.normpath(local).startswith(os.path.normpath(directory) + os.sep)
    assert local.resolve().is_relative_to(directory.resolve())
    assert local.resolve() != directory.resolve()
    # The same segments joined on Windows must not change drive or climb out either.
    segments = _partition_segments(path, key, str(base))
    windows_directory = PureWindowsPath("C:\\q\\orders_quarantine")
    windows = windows_directory.joinpath(*segments[:-1], segments[-1] + ".parquet")
    assert windows.drive == "C:"
    assert ntpath.normpath(windows).startswith(str(windows_directory) + "\\")
    for segment in segments:
        assert segment not in {"", ".", ".."}
        assert not {"/", "\\", "\x00"} & set(segment)


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(partition_key=ADVERSARIAL_KEYS)
def test_no_partition_key_escapes_the_quarantine_directory(
    tmp_path: Path, partition_key: str
) -> None:
    path = quarantine_path(ORDERS, tmp_path, partition_key)
    _assert_stays_inside(path, ORDERS, tmp_path)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(partition_key=ADVERSARIAL_MULTI_KEYS)
def test_no_multi_partition_key_escapes_the_quarantine_directory(
    tmp_path: Path, partition_key: dg.MultiPartitionKey
) -> None:
    path = quarantine_path(ORDERS, tmp_path, partition_key)
    _assert_stays_inside(path, ORDERS, tmp_path)
    # Exactly one segment per dimension.
    segments = _partition_segments(path, ORDERS, str(tmp_path))
    assert len(segments) == len(partition_key.keys_by_dimension)


@pytest.mark.parametrize(
    "partition_key",
    ["..", "../../etc", "/abs", "/abs/../../x", "a/../..", ".", "./.", "a//b", "//", "/", ""],
)
def test_known_traversals_stay_inside(tmp_path: Path, partition_key: str) -> None:
    _assert_stays_inside(quarantine_path(ORDERS, tmp_path, partition_key), ORDERS, tmp_path)


@pytest.mark.parametrize(
    ("partition_key", "escaped"),
    [
        ("..", "%2E%2E"),
        ("../../etc", "%2E%2E/%2E%2E/etc"),
        ("/abs", "%2Fabs"),
        ("a/../..", "a/%2E%2E/%2E%2E"),
        (".", "%2E"),
        ("a/./b", "a/%2E/b"),
        ("a//b", "a/%2Fb"),
        ("a/", "a%2F"),
        ("", "%"),
        ("%", "%25"),
        ("%2F", "%252F"),
        ("50%", "50%"),
        ("a\\..\\b", "a%5C..%5Cb"),
        ("x\x00y", "x%00y"),
        ("C:evil", "C%3Aevil"),
        ("...", "..."),
        ("a..b", "a..b"),
    ],
)
def test_the_escaping_scheme(tmp_path: Path, partition_key: str, escaped: str) -> None:
    path = quarantine_path(ORDERS, tmp_path, partition_key)
    assert str(path) == f"{tmp_path}/orders_quarantine/{escaped}.parquet"


def test_a_slash_inside_a_dimension_is_escaped() -> None:
    key = dg.MultiPartitionKey({"a": "x/y", "b": "", "c": ".."})
    assert str(quarantine_path(ORDERS, "/q", key)) == "/q/orders_quarantine/x%2Fy/%/%2E%2E.parquet"


@settings(max_examples=300)
@given(partition_key=ADVERSARIAL_KEYS)
def test_the_escaping_can_be_undone(partition_key: str) -> None:
    segments = _partition_segments(quarantine_path(ORDERS, "/q", partition_key), ORDERS, "/q")
    assert "/".join(_unescape(segment) for segment in segments) == partition_key


@settings(max_examples=200)
@given(partition_key=ADVERSARIAL_MULTI_KEYS)
def test_the_escaping_of_each_dimension_can_be_undone(
    partition_key: dg.MultiPartitionKey,
) -> None:
    segments = _partition_segments(quarantine_path(ORDERS, "/q", partition_key), ORDERS, "/q")
    by_name = sorted(partition_key.keys_by_dimension.items())
    assert [_unescape(segment) for segment in segments] == [value for _, value in by_name]


@settings(max_examples=300)
@given(first=ADVERSARIAL_KEYS | _ORDINARY_SEGMENT, second=ADVERSARIAL_KEYS | _ORDINARY_SEGMENT)
def test_distinct_keys_get_distinct_paths(first: str, second: str) -> None:
    assume(first != second)
    assert quarantine_path(ORDERS, "/q", first) != quarantine_path(ORDERS, "/q", second)


@pytest.mark.parametrize("base", ["/q", "s3://bucket/q"])
@pytest.mark.parametrize("key", ["aC::", "memory::x", "s3::bucket", "data:text/plain,hi", "data:,"])
def test_a_key_that_reads_as_a_url_stays_a_file_name(base: str, key: str) -> None:
    """`UPath` would take these for another protocol when joining, and fail or leave the base."""
    path = quarantine_path(ORDERS, base, key)
    assert path.protocol == UPath(base).protocol
    assert str(path).startswith(str(quarantine_path(ORDERS, base)).removesuffix(".parquet"))
    assert [_unescape(s) for s in _partition_segments(path, ORDERS, base)] == key.split("/")


def test_distinct_keys_that_pathlib_would_merge_get_distinct_paths() -> None:
    keys = ["a/b", "a//b", "a/./b", "a/b/", "/a/b", "a\\b", "%2Fa/b", "", "%", ".", "%2E"]
    paths = {str(quarantine_path(ORDERS, "/q", key)) for key in keys}
    assert len(paths) == len(keys)


def test_an_absolute_asset_key_part_is_made_relative_as_dagster_does(tmp_path: Path) -> None:
    key = dg.AssetKey(["/etc", "orders"])
    path = quarantine_path(key, tmp_path)
    assert path == _dagster_path(_ParquetPaths(base_path=UPath(tmp_path)), key, None)
    assert Path(str(path)).is_relative_to(tmp_path)


# ---------------------------------------------------------------------------------------------
# No side effects before the write


def test_quarantine_path_creates_nothing(tmp_path: Path) -> None:
    base = tmp_path / "missing"
    path = quarantine_path(PREFIXED, base, dg.MultiPartitionKey({"a": "x", "b": "y"}))
    file_writer(PREFIXED, base, "2026-01-02")
    assert not base.exists()
    assert list(tmp_path.iterdir()) == []
    assert str(path).startswith(str(base))


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.usefixtures("no_network")
def test_an_s3_directory_needs_no_network() -> None:
    path = quarantine_path(PREFIXED, "s3://bucket/q", "2026-01-02")
    assert isinstance(path, UPath)
    assert path.protocol == "s3"
    assert str(path) == "s3://bucket/q/sales/eu/orders_quarantine/2026-01-02.parquet"
    unpartitioned = quarantine_path(ORDERS, UPath("s3://bucket/q/"))
    assert str(unpartitioned) == "s3://bucket/q/orders_quarantine.parquet"
    file_writer(ORDERS, "s3://bucket/q", "eu")


@pytest.mark.usefixtures("no_network")
def test_storage_options_stay_out_of_the_path_string() -> None:
    directory = UPath("s3://bucket/q", key="AKIA_EXAMPLE", secret="SECRET_EXAMPLE")
    path = quarantine_path(ORDERS, directory, "eu")
    assert str(path) == "s3://bucket/q/orders_quarantine/eu.parquet"
    assert path.storage_options["key"] == "AKIA_EXAMPLE"


# ---------------------------------------------------------------------------------------------
# Writing


def _rich_frame() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "amount": pl.Series([Decimal("1.50"), None, Decimal("-3.25")], dtype=pl.Decimal(10, 2)),
            "at": pl.Series(
                [dt.datetime(2026, 1, 2, 3, 4, 5), None, dt.datetime(2026, 3, 29, 1, 30)],
                dtype=pl.Datetime("us", "Europe/Amsterdam"),
            ),
            "tags": pl.Series([["a", "b"], [], None], dtype=pl.List(pl.String)),
            "address": pl.Series(
                [{"city": "Gent", "zip": 9000}, None, {"city": "東京", "zip": None}],
                dtype=pl.Struct({"city": pl.String, "zip": pl.Int32}),
            ),
            "dy_rule__amount__min": ["invalid", "unknown", "valid"],
        }
    )


def _unwritable_frame() -> pl.DataFrame:
    return pl.DataFrame({"thing": pl.Series([object()], dtype=pl.Object)})


def _siblings(path: Path) -> list[str]:
    return sorted(entry.name for entry in path.parent.iterdir())


@pytest.mark.parametrize(
    "partition_key", [None, "2026-01-02", dg.MultiPartitionKey({"b": "eu", "a": "2026"})]
)
def test_file_writer_writes_a_readable_parquet(tmp_path: Path, partition_key: str | None) -> None:
    frame = _rich_frame()
    written = file_writer(PREFIXED, tmp_path, partition_key)(frame)
    expected = quarantine_path(PREFIXED, tmp_path, partition_key)
    assert written == str(expected)
    back = pl.read_parquet(written)
    assert back.schema == frame.schema
    assert_frame_equal(back, frame)
    assert _siblings(Path(written)) == [Path(written).name]


def test_file_writer_accepts_a_file_url(tmp_path: Path) -> None:
    frame = _rich_frame()
    written = file_writer(ORDERS, UPath(tmp_path.as_uri()), "eu")(frame)
    assert_frame_equal(pl.read_parquet(tmp_path / "orders_quarantine" / "eu.parquet"), frame)
    assert written.endswith("/orders_quarantine/eu.parquet")


def test_a_second_write_replaces_the_file(tmp_path: Path) -> None:
    write = file_writer(ORDERS, tmp_path, "eu")
    write(_rich_frame())
    smaller = pl.DataFrame({"x": [1, 2]})
    written = write(smaller)
    assert_frame_equal(pl.read_parquet(written), smaller)
    assert _siblings(Path(written)) == ["eu.parquet"]


def test_a_failed_write_keeps_the_old_file_and_names_the_path(tmp_path: Path) -> None:
    write = file_writer(ORDERS, tmp_path, "eu")
    good = _rich_frame()
    written = write(good)
    before = Path(written).read_bytes()
    with pytest.raises(pl.exceptions.ComputeError) as raised:
        write(_unwritable_frame())
    assert any(written in note for note in raised.value.__notes__)
    assert Path(written).read_bytes() == before
    assert_frame_equal(pl.read_parquet(written), good)
    assert _siblings(Path(written)) == ["eu.parquet"]


def test_a_failed_rename_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = Path(str(quarantine_path(ORDERS, tmp_path, "eu")))
    target.mkdir(parents=True)  # a directory where the file should go
    # Windows reports a rename onto a directory as a permission error.
    with pytest.raises((IsADirectoryError, PermissionError)) as raised:
        file_writer(ORDERS, tmp_path, "eu")(_rich_frame())
    assert any(str(target) in note for note in raised.value.__notes__)
    assert _siblings(target) == ["eu.parquet"]
    assert target.is_dir()


def test_an_escaped_key_is_written_inside_the_directory(tmp_path: Path) -> None:
    base = tmp_path / "q"
    written = file_writer(ORDERS, base, "../../escaped")(pl.DataFrame({"x": [1]}))
    assert Path(written).resolve().is_relative_to(base.resolve())
    assert [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.parquet")] == [
        "q/orders_quarantine/%2E%2E/%2E%2E/escaped.parquet"
    ]


def test_the_file_gets_the_usual_permissions(tmp_path: Path) -> None:
    written = file_writer(ORDERS, tmp_path, "eu")(pl.DataFrame({"x": [1]}))
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    assert Path(written).stat().st_mode == plain.stat().st_mode


def test_file_writer_writes_to_a_remote_filesystem() -> None:
    directory = "memory://dagster-dataframely-tests/writes"
    frame = _rich_frame()
    written = file_writer(PREFIXED, directory, "2026-01-02")(frame)
    assert written == f"{directory}/sales/eu/orders_quarantine/2026-01-02.parquet"
    with UPath(written).open("rb") as file:
        assert_frame_equal(pl.read_parquet(file), frame)


def test_a_failed_remote_write_leaves_the_old_object() -> None:
    directory = "memory://dagster-dataframely-tests/failures"
    write = file_writer(ORDERS, directory, "eu")
    good = pl.DataFrame({"x": [1, 2, 3]})
    written = write(good)
    before = UPath(written).read_bytes()
    with pytest.raises(pl.exceptions.ComputeError) as raised:
        write(_unwritable_frame())
    assert any(written in note for note in raised.value.__notes__)
    assert UPath(written).read_bytes() == before


def test_windows_separators_are_not_special_on_posix() -> None:
    # The escaped form is the same on every platform.
    path = quarantine_path(ORDERS, "/q", "a\\b")
    assert PurePosixPath(str(path)).name == "a%5Cb.parquet"


# --- what a crash, a long key or a read-only URL leave behind -----------------------------------

_KILLED_MID_WRITE = """
import os, signal, sys

import dagster as dg
import polars as pl

from dagster_dataframely._store.files import file_writer

write_parquet = pl.DataFrame.write_parquet


def write_then_die(frame, file, *args, **kwargs):
    write_parquet(frame, file, *args, **kwargs)  # the new rows are in the temporary file...
    file.flush()
    os.kill(os.getpid(), signal.SIGKILL)  # ...and the process dies before the rename


pl.DataFrame.write_parquet = write_then_die
file_writer(dg.AssetKey(["orders"]), sys.argv[1], "2026-01-02")(pl.DataFrame({"x": [9, 9]}))
"""


@pytest.mark.fault_injection
def test_a_write_killed_mid_way_leaves_nothing_a_directory_scan_sees(tmp_path: Path) -> None:
    root = tmp_path / "quarantine"
    good = pl.DataFrame({"x": [1, 2, 3]})
    written = Path(file_writer(ORDERS, root, "2026-01-02")(good))

    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_MID_WRITE, str(root)],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()

    # A scan of the directory, or of the asset's part of it, reads the last good rows...
    assert_frame_equal(pl.scan_parquet(root).collect(), good)
    assert_frame_equal(pl.scan_parquet(written.parent).collect(), good)
    assert_frame_equal(pl.read_parquet(written), good)
    assert sorted(p.name for p in root.rglob("*")) == ["2026-01-02.parquet", "orders_quarantine"]
    # ...though the killed write did leave its temporary file: outside the directory.
    staging = staging_directory(root)
    assert staging is not None
    (leftover,) = staging.iterdir()
    assert leftover.name.startswith(".dy-quarantine-")
    assert leftover.stat().st_size > 0


def test_where_no_staging_directory_can_be_made_the_write_stages_beside_the_file(
    tmp_path: Path,
) -> None:
    root = tmp_path / "quarantine"
    staging = staging_directory(root)
    assert staging is not None
    staging.write_bytes(b"a file where the staging directory would go")
    written = file_writer(ORDERS, root, "eu")(pl.DataFrame({"x": [1]}))
    assert_frame_equal(pl.read_parquet(written), pl.DataFrame({"x": [1]}))
    assert _siblings(Path(written)) == ["eu.parquet"]


def test_a_filesystem_root_has_no_staging_directory() -> None:
    assert staging_directory(Path("/")) is None
    assert staging_directory(Path("/q")) == Path("/.q.dy-staging")


@pytest.mark.parametrize(
    "partition_key",
    [
        "k" * (NAME_MAX - len(".parquet") + 1),
        "é" * 124,  # 248 bytes of UTF-8, 256 with `.parquet`
        "d" * 256 + "/2026",  # a directory segment
        dg.MultiPartitionKey({"day": "2026-01-02", "region": "r" * 300}),
        "\\" * 85,  # 170 characters, escaped to 510 bytes
    ],
    ids=["ascii", "utf-8", "directory", "multi-partition", "escaped"],
)
def test_a_partition_key_too_long_for_a_file_name_is_refused_before_writing(
    tmp_path: Path, partition_key: str
) -> None:
    with pytest.raises(errors.PartitionKeyTooLongError) as raised:
        file_writer(ORDERS, tmp_path / "quarantine", partition_key)
    assert raised.value.partition_key == str(partition_key)
    assert raised.value.limit == NAME_MAX
    assert len(raised.value.name.encode()) > NAME_MAX
    assert "255 bytes" in str(raised.value)
    assert list(tmp_path.iterdir()) == []


def test_the_longest_partition_key_that_fits_is_written(tmp_path: Path) -> None:
    longest = "k" * (NAME_MAX - len(".parquet"))
    written = file_writer(ORDERS, tmp_path, longest)(pl.DataFrame({"x": [1]}))
    assert Path(written).name == longest + ".parquet"


def test_an_object_store_takes_a_partition_key_longer_than_a_file_name() -> None:
    directory = "memory://dagster-dataframely-tests/long-keys"
    written = file_writer(ORDERS, directory, "k" * 300)(pl.DataFrame({"x": [1]}))
    assert written.endswith("k" * 300 + ".parquet")


@pytest.mark.usefixtures("no_network")
@pytest.mark.parametrize("protocol", ["http", "https"])
def test_a_read_only_url_fails_with_an_error_naming_the_protocol(protocol: str) -> None:
    write = file_writer(ORDERS, f"{protocol}://127.0.0.1:9/quarantine", "eu")
    with pytest.raises(errors.QuarantineDirProtocolError) as raised:
        write(pl.DataFrame({"x": [1]}))
    assert raised.value.protocol == protocol
    assert f"{protocol!r}" in str(raised.value)
    assert "s3://" in str(raised.value)
    assert isinstance(raised.value.__cause__, NotImplementedError)
    assert any("orders_quarantine/eu.parquet" in note for note in raised.value.__notes__)

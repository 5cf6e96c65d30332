"""A URL with a user name or password in it is refused wherever the package is given one.

Whatever the password's characters: about half of all AWS secret keys hold a `/`, which ends
the URL's authority early for a parser, and `@`, `+`, `?`, `#` and `%2F` all occur.
"""

from __future__ import annotations

import pickle

import dagster as dg
import polars as pl
import pytest

import dagster_dataframely as dd
from dagster_dataframely._credentials import carries_credentials, without_credentials
from dagster_dataframely.errors import CredentialsInUrlError
from dagster_dataframely.wiring import file_writer, quarantine_path

from .schemas import Orders

ORDERS = dg.AssetKey("orders")
KEY = "AKIAUSERNAMEPART"
# Each part is long and distinct, so a test can tell whether any piece of a secret shows.
PARTS = ("firstpiecexx", "secondpiece", "thirdpiecezz")
SECRETS = {
    "slash": f"{PARTS[0]}/{PARTS[1]}",
    "plus": f"{PARTS[0]}+{PARTS[1]}",
    "at": f"{PARTS[0]}@{PARTS[1]}",
    "percent-encoded-slash": f"{PARTS[0]}%2F{PARTS[1]}",
    "slash-and-at": f"{PARTS[0]}/{PARTS[1]}@{PARTS[2]}",
    "question-mark": f"{PARTS[0]}?{PARTS[1]}",
    "hash": f"{PARTS[0]}#{PARTS[1]}",
    "plain": PARTS[0],
}
URLS = {
    **{name: f"s3://{KEY}:{secret}@bucket/q" for name, secret in SECRETS.items()},
    "user-only": f"s3://{KEY}@bucket/q",
    "memory-scheme": f"memory://{KEY}:{SECRETS['slash']}@bucket/q",
}


def _assert_nothing_secret(text: str) -> None:
    assert KEY not in text
    for part in PARTS:
        assert part not in text


@pytest.mark.parametrize("url", list(URLS.values()), ids=list(URLS))
def test_a_url_with_credentials_is_recognized(url: str) -> None:
    assert carries_credentials(url)


@pytest.mark.parametrize(
    "location",
    [
        "/tmp/q",
        "relative/q",
        "C:/q",
        "s3://bucket/q",
        "s3://bucket/q/a@b.parquet",
        "s3://bucket/q:x",
        "http://127.0.0.1:9000/bucket",
        "http://[::1]:9000/bucket",
        "file:///tmp/q",
        "memory://q",
    ],
)
def test_a_location_without_credentials_is_left_alone(location: str) -> None:
    assert not carries_credentials(location)
    assert without_credentials(location) == location


@pytest.mark.parametrize("url", list(URLS.values()), ids=list(URLS))
def test_stripping_leaves_no_piece_of_the_credentials(url: str) -> None:
    shown = without_credentials(url + "/orders_quarantine.parquet")
    _assert_nothing_secret(shown)
    assert shown.endswith("orders_quarantine.parquet")


@pytest.mark.parametrize("url", list(URLS.values()), ids=list(URLS))
@pytest.mark.parametrize("call", ["file_writer", "quarantine_path"])
def test_file_writer_and_quarantine_path_refuse_credentials(url: str, call: str) -> None:
    function = file_writer if call == "file_writer" else quarantine_path
    with pytest.raises(CredentialsInUrlError) as raised:
        function(ORDERS, url, "eu")
    error = raised.value
    assert error.given_as == f"the quarantine_dir given to {call}"
    assert error.scheme == url.split("://")[0]
    _assert_nothing_secret(str(error))
    _assert_nothing_secret(repr(pickle.loads(pickle.dumps(error)).__dict__))


@pytest.mark.parametrize("url", list(URLS.values()), ids=list(URLS))
def test_the_quarantine_dir_variable_is_refused_at_declaration(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", url)

    with pytest.raises(CredentialsInUrlError) as raised:

        @dd.asset(Orders, quarantine=True)
        def orders() -> pl.DataFrame:
            return pl.DataFrame({"order_id": ["a"], "amount": [-1.0]})

    assert raised.value.given_as == ("the environment variable DAGSTER_DATAFRAMELY_QUARANTINE_DIR")
    _assert_nothing_secret(str(raised.value))


def test_the_quarantine_dir_variable_is_refused_when_a_call_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @dd.asset(Orders, quarantine=True)
    def orders() -> pl.DataFrame:
        return pl.DataFrame({"order_id": ["a"], "amount": [-1.0]})

    monkeypatch.setenv("DAGSTER_DATAFRAMELY_QUARANTINE_DIR", URLS["slash"])
    with pytest.raises(CredentialsInUrlError) as raised:
        list(orders(dg.build_asset_context()))
    _assert_nothing_secret(str(raised.value))
    _assert_nothing_secret("".join(getattr(raised.value, "__notes__", [])))

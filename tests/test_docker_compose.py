"""`docker-compose.yml`, checked without a Docker engine: parsed and read as the suite needs it.

The file starts MinIO for the S3 integration suite. Nothing here runs Docker; the test reads
the YAML and checks what the suite and the README rely on: a MinIO service with a health
check, reachable on loopback only, a one-shot service that makes the test bucket once MinIO
is healthy, and credentials that agree everywhere they are written.
"""

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = ROOT / "docker-compose.yml"
SUITE_CONFTEST = ROOT / "integration_tests" / "s3" / "conftest.py"
BUCKET = "dagster-dataframely-it"


class _StrictLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice, which PyYAML otherwise lets win silently."""


def _mapping_without_duplicates(loader: _StrictLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    keys = [loader.construct_object(key, deep=True) for key, _ in node.value]
    duplicates = sorted({str(k) for k in keys if keys.count(k) > 1})
    if duplicates:
        raise yaml.constructor.ConstructorError(
            None, None, f"duplicate keys {duplicates}", node.start_mark
        )
    return loader.construct_mapping(node, deep=True)


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates
)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.load(COMPOSE_FILE.read_text(encoding="utf-8"), Loader=_StrictLoader)
    assert isinstance(loaded, dict)
    return loaded


@pytest.fixture(scope="module")
def minio(compose: dict[str, Any]) -> dict[str, Any]:
    service: dict[str, Any] = compose["services"]["minio"]
    return service


@pytest.fixture(scope="module")
def create_bucket(compose: dict[str, Any]) -> dict[str, Any]:
    service: dict[str, Any] = compose["services"]["create-bucket"]
    return service


def words(value: str | list[str]) -> list[str]:
    return value.split() if isinstance(value, str) else [str(v) for v in value]


def test_there_is_a_minio_service_and_a_one_shot_bucket_service(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {"minio", "create-bucket"}
    assert set(compose) <= {"services", "volumes"}


def test_the_images_are_pinned_to_a_release(
    minio: dict[str, Any], create_bucket: dict[str, Any]
) -> None:
    assert re.fullmatch(r"minio/minio:RELEASE\.[0-9T:-]+Z", minio["image"]), minio["image"]
    assert re.fullmatch(r"minio/mc:RELEASE\.[0-9T:-]+Z", create_bucket["image"])


def test_minio_has_a_health_check(minio: dict[str, Any]) -> None:
    check = minio["healthcheck"]
    assert check["test"][0] in {"CMD", "CMD-SHELL"}
    assert "ready" in words(check["test"][1:])
    assert int(check["retries"]) >= 1
    for duration in ("interval", "timeout"):
        assert re.fullmatch(r"[0-9]+(ms|s|m)", check[duration]), check[duration]


def test_minio_serves_s3_on_loopback_only(minio: dict[str, Any]) -> None:
    published = {}
    for port in minio["ports"]:
        host_ip, host_port, container_port = str(port).split(":")
        assert host_ip == "127.0.0.1", port
        published[int(container_port)] = int(host_port)
    assert published[9000] == 9000
    assert words(minio["command"])[:2] == ["server", "/data"]


def test_the_bucket_is_made_once_minio_is_healthy(create_bucket: dict[str, Any]) -> None:
    assert create_bucket["depends_on"] == {"minio": {"condition": "service_healthy"}}
    assert create_bucket["restart"] == "no"
    command = words(create_bucket.get("entrypoint", [])) + words(create_bucket.get("command", []))
    assert command[:3] == ["mc", "mb", "--ignore-existing"]
    alias, _, bucket = command[-1].partition("/")
    assert bucket == BUCKET
    # The alias is defined by an MC_HOST_<alias> URL carrying MinIO's root credentials.
    target = urlsplit(create_bucket["environment"][f"MC_HOST_{alias}"])
    assert (target.hostname, target.port) == ("minio", 9000)


def test_the_credentials_agree_everywhere(
    minio: dict[str, Any], create_bucket: dict[str, Any]
) -> None:
    user = minio["environment"]["MINIO_ROOT_USER"]
    password = minio["environment"]["MINIO_ROOT_PASSWORD"]
    assert len(user) >= 3
    assert len(password) >= 8  # MinIO refuses to start with a shorter root password
    (mc_host,) = (v for k, v in create_bucket["environment"].items() if k.startswith("MC_HOST_"))
    target = urlsplit(mc_host)
    assert (target.username, target.password) == (user, password)

    # The exports in the file's header are what the suite reads from the environment.
    exported = dict(re.findall(r"^#\s+export (\w+)=(\S+)$", COMPOSE_FILE.read_text(), re.M))
    assert exported == {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
        "AWS_ACCESS_KEY_ID": user,
        "AWS_SECRET_ACCESS_KEY": password,
    }


def test_the_suite_expects_the_bucket_the_file_makes() -> None:
    assert f'DEFAULT_BUCKET = "{BUCKET}"' in SUITE_CONFTEST.read_text(encoding="utf-8")

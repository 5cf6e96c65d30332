"""What the suite leaves out where a package is missing (`collectable.missing_packages`)."""

from pathlib import Path

from .collectable import missing_packages

ABSENT = "dagster_dataframely_no_such_package"


def _write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return path


def test_a_missing_package_is_named_through_the_repositorys_own_modules(tmp_path: Path) -> None:
    _write(tmp_path / "tests" / "__init__.py", "")
    _write(tmp_path / "tests" / "support.py", f"import polars\nfrom {ABSENT}.io import Manager\n")
    module = _write(tmp_path / "tests" / "test_x.py", "import dagster\nfrom .support import x\n")

    assert missing_packages(module) == [ABSENT]


def test_an_import_inside_a_function_is_not_needed_to_collect(tmp_path: Path) -> None:
    module = _write(tmp_path / "test_x.py", f"def read():\n    import {ABSENT}\n")
    assert missing_packages(module) == []


def test_an_import_only_for_the_type_checker_is_not_needed_to_collect(tmp_path: Path) -> None:
    source = (
        f"import typing\nif typing.TYPE_CHECKING:\n    import {ABSENT}\nelse:\n    import json\n"
    )
    plain = f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import {ABSENT}\n"
    assert missing_packages(_write(tmp_path / "test_x.py", source)) == []
    assert missing_packages(_write(tmp_path / "test_y.py", plain)) == []

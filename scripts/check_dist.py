"""`make wheel-test`: check what `make dist` built, then run the demo from the installed wheel.

A file the wheel lacks fails here, not on a user's machine: the wheel is installed, not the
checkout, into a fresh virtual environment outside the project, with the demo's IO managers at
the versions in uv.lock, and the demo runs from there. The sdist is read member by member, so a
virtual environment, the demo's output or the tools never ship in it.

Usage: python scripts/check_dist.py dist
"""

import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from email.parser import HeaderParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UV = ROOT / ".tools" / "bin" / "uv"
PACKAGE = "dagster_dataframely"
DISTRIBUTION = "dataframely-dagster"
EXTRAS = ["parquet", "duckdb"]
"""The extras the demo's IO managers come from, as `make demo` installs them."""
EXTRAS_ARGS = [argument for extra in EXTRAS for argument in ("--extra", extra)]

SDIST_MUST_HAVE = ["pyproject.toml", "README.md", "CHANGELOG.md", "LICENSE"]
"""Files of the project root every sdist carries, beside the package's own files."""

NEVER_SHIPPED = {".venv", ".demo", ".tools", ".git", "dist", "__pycache__", ".pytest_cache"}
"""Path parts that mark a local environment, build output or cache, in either archive."""


def main(dist: Path) -> None:
    wheel, sdist = _one(dist, "*.whl"), _one(dist, "*.tar.gz")
    version = _package_files_and_version(wheel)
    _check_sdist(sdist, version)
    with tempfile.TemporaryDirectory(prefix="wheel-test-") as scratch:
        python = _install(wheel, Path(scratch))
        _check_installed(python, Path(scratch), version)
        _run_demo(python, Path(scratch))
    print(f"wheel-test: {wheel.name} and {sdist.name} are complete; the demo ran from the wheel")


def _one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    if len(found) != 1:
        sys.exit(f"wheel-test: expected one {pattern} in {dist}, found {[p.name for p in found]}")
    return found[0]


def _source_files() -> set[str]:
    """The package's files as they sit under `src/`: every module and the `py.typed` marker."""
    package = ROOT / "src" / PACKAGE
    return {
        path.relative_to(package.parent).as_posix()
        for path in package.rglob("*")
        if path.is_file() and path.suffix in {".py", ".typed"}
    }


def _package_files_and_version(wheel: Path) -> str:
    """Check the wheel holds every package file and the license; return its version."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata_name,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        metadata = HeaderParser().parsestr(archive.read(metadata_name).decode())
    _fail_on(wheel, "is missing", sorted(_source_files() - set(names)))
    _fail_on(wheel, "ships", sorted(n for n in names if NEVER_SHIPPED & set(n.split("/"))))
    licenses = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    _fail_on(wheel, "is missing", [] if licenses else ["the LICENSE file"])
    if metadata["Name"] != DISTRIBUTION or metadata["License-Expression"] != "MIT":
        sys.exit(
            f"wheel-test: {wheel.name} says Name {metadata['Name']!r}, license "
            f"{metadata['License-Expression']!r}; expected {DISTRIBUTION!r} and 'MIT'"
        )
    return str(metadata["Version"])


def _check_sdist(sdist: Path, version: str) -> None:
    top = f"{DISTRIBUTION.replace('-', '_')}-{version}"
    with tarfile.open(sdist) as archive:
        names = [member.name for member in archive.getmembers() if member.isfile()]
    outside = sorted(n for n in names if not n.startswith(f"{top}/"))
    _fail_on(sdist, f"has files outside {top}/", outside)
    relative = {n.removeprefix(f"{top}/") for n in names}
    wanted = SDIST_MUST_HAVE + sorted(f"src/{f}" for f in _source_files())
    _fail_on(sdist, "is missing", [f for f in wanted if f not in relative])
    shipped = sorted(n for n in relative if NEVER_SHIPPED & set(n.split("/")) or n.endswith(".pyc"))
    _fail_on(sdist, "ships", shipped)


def _fail_on(archive: Path, what: str, names: list[str]) -> None:
    if names:
        sys.exit(f"wheel-test: {archive.name} {what}: {', '.join(names)}")


def _install(wheel: Path, scratch: Path) -> Path:
    """A new virtual environment with the wheel, its extras and the demo's locked dependencies."""
    requirements = scratch / "demo-requirements.txt"
    _run(
        [
            str(UV),
            "export",
            "--frozen",
            "--no-default-groups",
            *EXTRAS_ARGS,
            "--group",
            "demo",
            "--no-emit-project",
            "--no-hashes",
            "--quiet",
            "--output-file",
            str(requirements),
        ]
    )
    venv = scratch / "venv"
    _run([str(UV), "venv", "--quiet", "--python", sys.executable, str(venv)])
    python = venv / "bin" / "python"
    _run(
        [
            str(UV),
            "pip",
            "install",
            "--quiet",
            "--python",
            str(python),
            "-r",
            str(requirements),
            f"{DISTRIBUTION}[{','.join(EXTRAS)}] @ {wheel.resolve().as_uri()}",
        ]
    )
    return python


def _check_installed(python: Path, scratch: Path, version: str) -> None:
    """The package imports from the new environment, not the checkout, with the wheel's version."""
    probe = (
        "import importlib.metadata, dagster_dataframely as dd;"
        f"print(dd.__file__); print(dd.__version__, importlib.metadata.version({DISTRIBUTION!r}))"
    )
    where, versions = _run([str(python), "-c", probe], cwd=scratch).splitlines()
    if not Path(where).is_relative_to(scratch / "venv"):
        sys.exit(f"wheel-test: {PACKAGE} was imported from {where}, not from the installed wheel")
    if versions != f"{version} {version}":
        sys.exit(f"wheel-test: __version__ and installed metadata say {versions}; wheel {version}")


def _run_demo(python: Path, scratch: Path) -> None:
    """`make demo` from the wheel: only the demo's own package comes from the checkout."""
    home = scratch / "demo" / "dagster_home"
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    environment = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "examples"),
        "DAGSTER_HOME": str(home),
        "DAGSTER_DATAFRAMELY_DEMO_DIR": str(scratch / "demo"),
    }
    printed = _run(
        [str(python), "-m", "dagster_dataframely_demo.demo"], cwd=scratch, env=environment
    )
    print(printed)
    if "every run succeeded" not in printed:
        sys.exit("wheel-test: the demo ran from the wheel but not every run succeeded")


def _run(command: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(
            f"wheel-test: {' '.join(command)} failed ({done.returncode}):\n"
            f"{done.stdout}{done.stderr}"
        )
    return done.stdout


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))

"""`help()` on every public name documents it in one convention, every parameter included.

The API reference is generated from the same docstrings, so what is checked here is what a
reader of the site and of `help()` gets.
"""

from __future__ import annotations

import inspect
import pkgutil
import pydoc
import re
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pytest

import dagster_dataframely as dd

_SECTION = re.compile(r"^(?P<title>[A-Z][A-Za-z ]+)\n-+$", re.MULTILINE)
_GOOGLE_SECTION = re.compile(r"^\s*(Args|Arguments|Returns|Raises|Yields|Examples?):\s*$", re.M)
_ENTRY = re.compile(
    r"^(?P<names>\*{0,2}[A-Za-z_][A-Za-z0-9_]*(, \*{0,2}[A-Za-z_][A-Za-z0-9_]*)*)(\s*:.*)?$"
)

# "Every keyword parameter not described below is `@dg.asset`'s, passed to it unchanged:
# `ins`, `deps`, ... and `pool`." names a decorator's pass-through parameters once.
_PASSED_ON = re.compile(r"passed to it\s+unchanged:\s+(?P<names>.*?)\.(?:\s|$)", re.S)

PASS_THROUGH_TARGETS: dict[str, Callable[..., object]] = {
    "dd.asset": dg.asset,
    "dd.AssetOut": dg.AssetOut,
    "dd.multi_asset": dg.multi_asset,
    "dd.collection_asset": dg.multi_asset,
}
"""The Dagster callable each front-end passes its undescribed parameters to."""

TYPE_ALIASES = {
    "dd.Granularity": dd.Granularity,
    "dd.SchemaRules": dd.SchemaRules,
    "dd.wiring.QuarantineWriter": dd.wiring.QuarantineWriter,
    "dd.wiring.AssetYield": dd.wiring.AssetYield,
}


def public_names() -> dict[str, object]:
    found: dict[str, object] = {}
    for prefix, module in (("dd", dd), ("dd.wiring", dd.wiring), ("dd.errors", dd.errors)):
        for name in module.__all__:
            value = getattr(module, name)
            if not inspect.ismodule(value):
                found[f"{prefix}.{name}"] = value
    return found


def sections(doc: str) -> dict[str, str]:
    """A numpy docstring's sections by title, each with its body."""
    matches = list(_SECTION.finditer(doc))
    return {
        match["title"]: doc[match.end() : matches[i + 1].start() if i + 1 < len(matches) else None]
        for i, match in enumerate(matches)
    }


def documented_parameters(doc: str) -> set[str]:
    """The names the `Parameters` and `Attributes` sections describe."""
    names = set()
    for title in ("Parameters", "Attributes"):
        for line in sections(doc).get(title, "").splitlines():
            entry = _ENTRY.match(line)
            if entry and not line.startswith(" "):
                names.update(name.lstrip("*") for name in entry["names"].split(", "))
    return names


def passed_on_parameters(doc: str) -> list[str]:
    """The parameters the docstring names once as passed on to Dagster unchanged."""
    found = _PASSED_ON.search(doc.split("Parameters\n----------")[0])
    return re.findall(r"`(\w+)`", found["names"]) if found else []


def documented_in_order(doc: str) -> list[str]:
    """The names the `Parameters` section describes, in the order it describes them."""
    names: list[str] = []
    for line in sections(doc).get("Parameters", "").splitlines():
        entry = _ENTRY.match(line)
        if entry and not line.startswith(" "):
            names.extend(name.lstrip("*") for name in entry["names"].split(", "))
    return names


def signature_parameters(value: object) -> list[str]:
    """The parameters a caller passes: a class's constructor arguments, a function's own."""
    if isinstance(value, type) and hasattr(value, "model_fields"):  # a Pydantic resource
        return list(value.model_fields)
    target: Callable[..., object] = value.__init__ if isinstance(value, type) else value  # type: ignore[assignment,misc]
    parameters = inspect.signature(target).parameters.values()
    return [p.name for p in parameters if p.name not in ("self", "cls")]


CALLABLES = {
    name: value
    for name, value in public_names().items()
    if callable(value) and name not in TYPE_ALIASES
}


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_every_parameter_is_described(name: str) -> None:
    value = CALLABLES[name]
    doc = inspect.getdoc(value) or ""
    in_signature = signature_parameters(value)
    described = documented_parameters(doc)
    passed_on = set(passed_on_parameters(doc))
    missing = [p for p in in_signature if p not in described | passed_on]
    assert not missing, f"{name} does not describe {missing}"
    stale = sorted((described | passed_on) - set(in_signature))
    assert not stale, f"{name} describes parameters it does not take: {stale}"
    twice = sorted(described & passed_on)
    assert not twice, f"{name} describes {twice} and also lists them as passed on unchanged"


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_parameters_are_described_in_signature_order(name: str) -> None:
    value = CALLABLES[name]
    described = documented_in_order(inspect.getdoc(value) or "")
    in_signature = [p for p in signature_parameters(value) if p in described]
    assert described == in_signature, f"{name} describes its parameters out of order"


@pytest.mark.parametrize("name", sorted(PASS_THROUGH_TARGETS))
def test_parameters_passed_on_unchanged_are_dagsters(name: str) -> None:
    """A listed pass-through parameter is one the Dagster counterpart takes, under that name."""
    passed_on = passed_on_parameters(inspect.getdoc(public_names()[name]) or "")
    assert passed_on, f"{name} lists no parameter passed on to Dagster"
    theirs = set(inspect.signature(PASS_THROUGH_TARGETS[name]).parameters)
    assert set(passed_on) <= theirs, sorted(set(passed_on) - theirs)


@pytest.mark.parametrize("name", sorted(public_names()))
def test_one_docstring_convention(name: str) -> None:
    """Numpy sections only: a Google-style `Raises:` would render as plain text on the site."""
    doc = inspect.getdoc(public_names()[name]) or ""
    assert doc, f"{name} has no docstring"
    assert not _GOOGLE_SECTION.search(doc), f"{name} uses a Google-style section"
    allowed = {"Parameters", "Attributes", "Returns", "Yields", "Raises", "Examples", "Notes"}
    assert set(sections(doc)) <= allowed, f"{name} has sections {set(sections(doc))}"


def test_no_private_module_uses_google_sections() -> None:
    """The convention holds inside the package too, where contributors read the docstrings."""
    offenders = []
    for info in pkgutil.iter_modules(dd.__path__, "dagster_dataframely."):
        module = pydoc.locate(info.name)
        for _, member in inspect.getmembers(module, inspect.isfunction):
            if member.__module__ == info.name and _GOOGLE_SECTION.search(
                inspect.getdoc(member) or ""
            ):
                offenders.append(f"{info.name}.{member.__name__}")
    assert not offenders


def test_help_of_asset_names_every_setting_and_error() -> None:
    text = pydoc.render_doc(dd.asset, renderer=pydoc.plaintext)
    passed_on = passed_on_parameters(inspect.getdoc(dd.asset) or "")
    for parameter in inspect.signature(dd.asset).parameters:
        shown = f"`{parameter}`" if parameter in passed_on else f"\n    {parameter}\n"
        assert shown in text, parameter
    for error in ("CollectionNotSupportedError", "InvalidSettingError", "ReservedColumnError"):
        assert error in text


@pytest.mark.parametrize("name", sorted(TYPE_ALIASES))
def test_help_of_a_type_alias_is_its_own(name: str) -> None:
    """`help()` on a `TypeAliasType` would print typing_extensions' text about the backport."""
    text = pydoc.render_doc(TYPE_ALIASES[name], renderer=pydoc.plaintext)
    assert "backport" not in text
    assert "Type aliases are created" not in text
    assert "Create named, parameterized type aliases" not in text
    own = inspect.getdoc(TYPE_ALIASES[name]) or ""
    assert own.splitlines()[0] in text


def test_help_of_granularity_lists_its_values() -> None:
    text = pydoc.render_doc(dd.Granularity, renderer=pydoc.plaintext)
    for value in ("rule", "column", "schema", "DAGSTER_DATAFRAMELY_CHECK_GRANULARITY"):
        assert value in text


def test_the_api_reference_lists_every_public_name() -> None:
    """A new public name fails here until its reference page renders it."""
    reference = Path(__file__).resolve().parents[1] / "docs" / "reference"
    rendered = set()
    for page in reference.glob("*.md"):
        rendered |= set(re.findall(r"^::: ([\w.]+)", page.read_text(encoding="utf-8"), re.M))
    missing = [
        f"{module.__name__}.{name}"
        for module in (dd, dd.wiring)
        for name in module.__all__
        if not inspect.ismodule(getattr(module, name))
        and f"{module.__name__}.{name}" not in rendered
    ]
    assert not missing, f"add these to docs/reference/: {missing}"
    assert "dagster_dataframely.errors" in rendered  # the whole module, every error

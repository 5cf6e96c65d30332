"""The Component's settings against the settings model and `dd.table_checks`: the same, by test.

A setting the model says the Component honours needs a YAML field of the model's type and
default, and a field the model does not list fails; every argument `dd.table_checks` takes is
a field or comes from the target. On generated settings, the YAML declares and decides exactly
what `dd.table_checks` does in Python, refusals included.
"""

import dataclasses
import inspect
import re
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml  # type: ignore[import-untyped]
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import dagster_dataframely as dd
from dagster_dataframely._model.quality_policy import QualityPolicy
from dagster_dataframely._model.setting_model import EntryPoint, setting, settings_of
from dagster_dataframely.errors import ComponentFieldError
from tests.api.test_table_checks_component import load
from tests.dg_project import ROOT_MODULE

COMPONENT_SETTINGS = {spec.name for spec in settings_of(EntryPoint.COMPONENT)}
TABLE_CHECKS_ARGUMENTS = {"severity": "severity", "lazy": "lazy", "name": "name"}
"""`dd.table_checks`' arguments that are not package settings, by the field that takes each."""
FROM_THE_TARGET = {"partitions_def"}
"""Arguments the Component reads from the target's own definition in the project, as
`dd.table_checks` does for a definition or spec (it refuses `partitions_def` with one)."""
TARGET_FIELDS = {"dataframely_schema", "assets", "members"}
"""`dd.table_checks`' positional `schema` and `asset`, written as YAML."""

YAML_FORM: dict[object, object] = {
    Iterable[str]: Sequence[str],
    QualityPolicy: Mapping[str, Any],
}
"""A setting's Python type that YAML writes as another: a list, a mapping of a policy's keys."""


def _fields() -> set[str]:
    return {field.name for field in dataclasses.fields(dd.TableChecksComponent)}


def test_the_yaml_fields_are_the_settings_the_model_gives_the_component() -> None:
    own = TARGET_FIELDS | set(TABLE_CHECKS_ARGUMENTS.values())
    assert _fields() - own == COMPONENT_SETTINGS


def test_the_component_takes_every_argument_dd_table_checks_takes() -> None:
    table_checks_settings = {spec.name for spec in settings_of(EntryPoint.TABLE_CHECKS)}
    assert table_checks_settings <= COMPONENT_SETTINGS
    keywords = {
        name
        for name, parameter in inspect.signature(dd.table_checks).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    }
    assert keywords - table_checks_settings == set(TABLE_CHECKS_ARGUMENTS) | FROM_THE_TARGET
    assert set(TABLE_CHECKS_ARGUMENTS.values()) <= _fields()


def _without_none(hint: object) -> object:
    return typing.Union[tuple(arg for arg in typing.get_args(hint) if arg is not type(None))]  # noqa: UP007


def test_each_setting_field_has_the_type_dd_table_checks_gives_it() -> None:
    component = typing.get_type_hints(dd.TableChecksComponent)
    python = typing.get_type_hints(dd.table_checks)
    # The settings arrive as `**settings: Unpack[...]`, each typed in that dict.
    (keywords,) = typing.get_args(python.pop("settings"))
    python |= typing.get_type_hints(keywords)
    for name in COMPONENT_SETTINGS:
        assert type(None) in typing.get_args(component[name]), name  # unset: the environment
        python_type = _without_none(python[name])
        assert _without_none(component[name]) == YAML_FORM.get(python_type, python_type), name


def test_the_yaml_schema_lists_each_settings_choices_and_the_models_default() -> None:
    properties = dd.TableChecksComponent.model().model_json_schema()["properties"]
    for name in COMPONENT_SETTINGS:
        assert properties[name]["default"] == setting(name).default_for(EntryPoint.COMPONENT)
    for name, alias in (("check_granularity", dd.Granularity), ("schema_rules", dd.SchemaRules)):
        enums = [option["enum"] for option in properties[name]["anyOf"] if "enum" in option]
        assert enums == [list(typing.get_args(alias.__value__))]


RULES = ("amount|min", "primary_key", "amount|max")
"""The scratch Orders' two rules, and one it lacks, which both ways must refuse alike."""
TARGETS = {"orders": None, "sales/daily_orders": "2026-01-02"}

_bound = st.sampled_from([0, 1, 0.5, 0.1])
_threshold = st.fixed_dictionaries(
    {}, optional={"warn_above": _bound, "fail_above": _bound}
).filter(bool)
_severity = st.sampled_from(["WARN", "ERROR"])
_policy = st.fixed_dictionaries(
    {},
    optional={
        "threshold": _threshold,
        "rules": st.dictionaries(st.sampled_from(RULES), _threshold, max_size=2),
        "severity": _severity | st.dictionaries(st.sampled_from(RULES), _severity, max_size=2),
        "blocking": st.booleans() | st.lists(st.sampled_from(RULES), max_size=2, unique=True),
    },
)
_attributes = st.fixed_dictionaries(
    {"assets": st.sampled_from(sorted(TARGETS)).map(lambda key: [key]), "severity": _severity},
    optional={
        "lazy": st.booleans(),
        "check_granularity": st.sampled_from(["rule", "column", "schema"]),
        "schema_rules": st.sampled_from(["collapsed", "per_rule"]),
        "max_failure_samples": st.integers(0, 3),
        "warning_rules": st.lists(st.sampled_from(RULES), max_size=2, unique=True),
        "quality_policy": _policy,
    },
)


def _python_policy(policy: Mapping[str, Any]) -> dd.QualityPolicy:
    """The YAML policy written in Python, as the docs say a user translates it."""
    severity = policy.get("severity")
    return dd.QualityPolicy(
        threshold=dd.Threshold(**policy["threshold"]) if "threshold" in policy else None,
        rules={rule: dd.Threshold(**bounds) for rule, bounds in policy.get("rules", {}).items()},
        severity={rule: dg.AssetCheckSeverity(level) for rule, level in severity.items()}
        if isinstance(severity, dict)
        else None
        if severity is None
        else dg.AssetCheckSeverity(severity),
        blocking=policy.get("blocking", False),
    )


def _python_checks(
    asset: dg.AssetsDefinition, attributes: Mapping[str, Any]
) -> dg.AssetChecksDefinition:
    from scratch.schemas import Orders  # type: ignore[import-not-found]

    settings = {k: v for k, v in attributes.items() if k not in (*TARGET_FIELDS, "quality_policy")}
    settings["severity"] = dg.AssetCheckSeverity(settings["severity"])
    if "quality_policy" in attributes:
        settings["quality_policy"] = _python_policy(attributes["quality_policy"])
    return dd.table_checks(Orders, asset, **settings)


def _python_side(
    asset: dg.AssetsDefinition, attributes: Mapping[str, Any]
) -> tuple[dg.AssetChecksDefinition | None, type[Exception] | None]:
    """`dd.table_checks` with the settings, or the class of the package error it raised."""
    try:
        return _python_checks(asset, attributes), None
    except dd.errors.DagsterDataframelyError as error:
        return None, type(error)


def _refusal(error: BaseException) -> type[BaseException]:
    """The package error under Dagster's wrapping and the Component's `ComponentFieldError`."""
    found: BaseException | None = error
    while found is not None and not isinstance(found, ComponentFieldError):
        found = found.__cause__ or found.__context__
    assert isinstance(found, ComponentFieldError), f"no ComponentFieldError in {error!r}"
    assert found.__cause__ is not None, f"the Component refused on its own: {found}"
    return type(found.__cause__)


def _outcomes(
    asset: dg.AssetsDefinition, checks: dg.AssetsDefinition, partition: str | None
) -> list[tuple[object, ...]]:
    result = dg.materialize([asset, checks], partition_key=partition, raise_on_error=False)
    return sorted(
        (str(e.check_name), e.passed, e.severity, sorted(e.metadata.items()))
        for e in result.get_asset_check_evaluations()
    )


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(attributes=_attributes)
def test_on_any_settings_the_yaml_declares_and_decides_as_dd_table_checks(
    project: Path, attributes: dict[str, Any]
) -> None:
    key = attributes["assets"][0]
    written = yaml.safe_dump(
        {"dataframely_schema": f"{ROOT_MODULE}.schemas:Orders", **attributes}, sort_keys=False
    )
    python_checks, refused = _python_side(_asset(project, key), attributes)
    event("refused alike" if refused else "declared and run alike")
    if refused is not None:
        with pytest.raises(Exception) as raised:  # noqa: PT011 (Dagster wraps it; see _refusal)
            load(project, written)
        assert _refusal(raised.value) is refused
        return
    assert python_checks is not None
    defs = load(project, written)
    (component_checks,) = defs.asset_checks or []
    assert component_checks.partitions_def == python_checks.partitions_def
    assert [(s.key, s.description, s.blocking) for s in component_checks.check_specs] == [
        (s.key, s.description, s.blocking) for s in python_checks.check_specs
    ]
    asset = defs.resolve_assets_def(dg.AssetKey.from_user_string(key))
    outcomes = _outcomes(asset, component_checks, TARGETS[key])
    assert outcomes == _outcomes(asset, python_checks, TARGETS[key])
    assert outcomes  # the checks ran


_ASSETS: dict[tuple[Path, str], dg.AssetsDefinition] = {}


def _asset(project: Path, key: str) -> dg.AssetsDefinition:
    """The target's definition as the project defines it, partitions included."""
    if (project, key) in _ASSETS:
        return _ASSETS[project, key]
    defs = load(
        project,
        f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nassets: [orders]\nseverity: WARN",
    )
    _ASSETS[project, key] = defs.resolve_assets_def(dg.AssetKey.from_user_string(key))
    return _ASSETS[project, key]


def test_the_docs_quality_policy_example_loads_as_its_python_twin(project: Path) -> None:
    page = (Path(__file__).parents[2] / "docs" / "component.md").read_text()
    (block,) = [
        text
        for text in re.findall(r"```yaml\n(.*?)```", page, re.DOTALL)
        if "quality_policy:" in text
    ]
    attributes = yaml.safe_load(block.replace("my_project.", f"{ROOT_MODULE}."))["attributes"]
    defs = load(project, yaml.safe_dump(attributes))
    (component_checks,) = defs.asset_checks or []
    python_checks = _python_checks(_asset(project, attributes["assets"][0]), attributes)
    assert [(s.key, s.description, s.blocking) for s in component_checks.check_specs] == [
        (s.key, s.description, s.blocking) for s in python_checks.check_specs
    ]
    assert any(spec.blocking for spec in component_checks.check_specs)

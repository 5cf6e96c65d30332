"""The settings model against the entry points' real signatures: every setting decided for each."""

import inspect
from collections.abc import Callable
from typing import Annotated, Literal, TypedDict

import pytest
from typing_extensions import TypeAliasType

import dagster_dataframely as dd
from dagster_dataframely import wiring
from dagster_dataframely._model.setting_model import (
    SETTINGS,
    EntryPoint,
    SettingSpec,
    declared_settings,
    settings_of,
)
from dagster_dataframely._model.settings import resolve_setting, setting_variables
from dagster_dataframely.errors import InvalidSettingError

_CALLABLES: dict[EntryPoint, Callable[..., object]] = {
    EntryPoint.ASSET: dd.asset,
    EntryPoint.ASSET_OUT: dd.AssetOut,
    EntryPoint.ASSET_OUT_FROM_SPEC: dd.AssetOut.from_spec,
    EntryPoint.MULTI_ASSET: dd.multi_asset,
    EntryPoint.COLLECTION_ASSET: dd.collection_asset,
    EntryPoint.TABLE_CHECKS: dd.table_checks,
    EntryPoint.COMPONENT: dd.TableChecksComponent,
    EntryPoint.WIRING_CHECK_SPECS: wiring.check_specs,
    EntryPoint.WIRING_CHECK_RESULTS: wiring.check_results,
    EntryPoint.WIRING_VALIDATION_RESULTS: wiring.validation_results,
}
_SETTING_NAMES = {spec.name for spec in SETTINGS}


def test_every_entry_point_is_in_the_model() -> None:
    assert set(_CALLABLES) == set(EntryPoint)


@pytest.mark.parametrize("spec", SETTINGS, ids=lambda spec: spec.name)
def test_every_setting_is_decided_for_every_entry_point(spec: SettingSpec) -> None:
    """Each entry point honours the setting or refuses it with a reason; never neither."""
    assert set(spec.honoured_by) | set(spec.refused) == set(EntryPoint)
    assert not set(spec.honoured_by) & set(spec.refused)
    assert all(reason.strip() for reason in spec.refused.values())


@pytest.mark.parametrize("entry_point", list(EntryPoint), ids=lambda point: point.name)
def test_signature_has_exactly_the_settings_the_model_gives(entry_point: EntryPoint) -> None:
    """A setting added to one entry point's signature and not to the model fails here."""
    parameters = inspect.signature(_CALLABLES[entry_point]).parameters
    in_signature = {
        name: parameter.default for name, parameter in parameters.items() if name in _SETTING_NAMES
    }
    expected = {spec.name: spec.default_for(entry_point) for spec in settings_of(entry_point)}
    assert in_signature == expected
    if entry_point is not EntryPoint.COMPONENT:  # a dataclass: its fields are positional too
        kinds = {parameters[name].kind for name in in_signature}
        assert kinds <= {inspect.Parameter.KEYWORD_ONLY}


def test_the_variables_are_the_models() -> None:
    assert setting_variables() == tuple(
        f"DAGSTER_DATAFRAMELY_{spec.name.upper()}" for spec in SETTINGS if spec.env
    )


# --- a new setting is one key -------------------------------------------------------------------

_ONLY_HERE = {"a setting of this test only": frozenset(EntryPoint)}
_Speed = TypeAliasType("_Speed", Literal["slow", "fast"])


class _TestOnly(TypedDict, total=False):
    """Settings declared as the package declares each of its own: one annotated key."""

    test_retry_limit: Annotated[int | None, SettingSpec(3, "retries of a write", _ONLY_HERE)]
    test_dry_run: Annotated[bool | None, SettingSpec(False, "write nothing", _ONLY_HERE)]
    test_speed: Annotated[_Speed | None, SettingSpec("slow", "how fast", _ONLY_HERE)]


@pytest.mark.parametrize(
    ("name", "type_text", "text", "from_env", "argument", "bad_text", "allowed"),
    [
        (
            "test_retry_limit",
            "int | None",
            " 7 ",
            7,
            0,
            "-1",
            "a non-negative whole number in base 10",
        ),
        (
            "test_dry_run",
            "bool | None",
            "TRUE",
            True,
            False,
            "yes",
            "true or false, in any letter case",
        ),
        ("test_speed", "_Speed | None", "fast", "fast", "slow", "quick", ("slow", "fast")),
    ],
)
def test_a_setting_declared_once_is_read_from_its_variable_then_its_argument(
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    type_text: str,
    text: str,
    from_env: object,
    argument: object,
    bad_text: str,
    allowed: object,
) -> None:
    """Its variable comes from its name and its parser from its type; nothing else is written."""
    spec = {spec.name: spec for spec in declared_settings(_TestOnly)}[name]
    variable = f"DAGSTER_DATAFRAMELY_{name.upper()}"
    assert (spec.env_var, spec.type_text, spec.honoured_by) == (variable, type_text, frozenset())
    default = spec.package_default
    assert resolve_setting(spec, None, default) == default
    monkeypatch.setenv(variable, text)
    assert resolve_setting(spec, None, default) == from_env
    assert resolve_setting(spec, argument, default) == argument
    monkeypatch.setenv(variable, bad_text)
    with pytest.raises(InvalidSettingError) as raised:
        resolve_setting(spec, argument, default)
    assert (raised.value.setting, raised.value.env_var) == (name, variable)
    assert raised.value.allowed == allowed

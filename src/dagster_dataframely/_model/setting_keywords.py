"""The settings as keyword arguments, typed for a type checker and checked at run time.

An entry point takes its settings as `**settings: Unpack[...]` of one of the TypedDicts here,
each composed from one single-field TypedDict per setting, so mypy refuses a misspelt setting
or a value of the wrong type. `with_setting_keywords` gives the function the signature it had
when every setting was written out (the model's names, order and defaults), which `help()`,
`inspect.signature` and the API docs read; `checked_settings` refuses at run time what mypy
would have.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TypedDict, TypeVar

from dagster_dataframely._model.quality_policy import QualityPolicy, checked_policy
from dagster_dataframely._model.setting_model import EntryPoint, settings_of
from dagster_dataframely._model.settings import Granularity, SchemaRules
from dagster_dataframely.errors import InvalidArgumentsError

F = TypeVar("F", bound=Callable[..., object])


# One TypedDict per setting, keyed by its name, so an entry point's keywords compose them.
class Quarantine(TypedDict, total=False):
    quarantine: bool


class ClearQuarantine(TypedDict, total=False):
    clear_quarantine: bool | None


class WarningRules(TypedDict, total=False):
    warning_rules: Iterable[str] | None


class QualityPolicySetting(TypedDict, total=False):
    quality_policy: QualityPolicy | None


class CheckGranularity(TypedDict, total=False):
    check_granularity: Granularity | None


class SchemaRulesSetting(TypedDict, total=False):
    schema_rules: SchemaRules | None


class MaxFailureSamples(TypedDict, total=False):
    max_failure_samples: int | None


class Statistics(TypedDict, total=False):
    statistics: bool | None


class RowSample(TypedDict, total=False):
    row_sample: int | None


class Streaming(TypedDict, total=False):
    streaming: bool | None


class OutputKeywords(
    Quarantine,
    ClearQuarantine,
    WarningRules,
    QualityPolicySetting,
    CheckGranularity,
    SchemaRulesSetting,
    MaxFailureSamples,
    Statistics,
    RowSample,
    Streaming,
    total=False,
):
    """The settings of one output: `dd.asset`'s, `dd.AssetOut`'s and `AssetOut.from_spec`'s."""


KEYWORDS: Mapping[EntryPoint, type] = {
    EntryPoint.ASSET: OutputKeywords,
    EntryPoint.ASSET_OUT: OutputKeywords,
    EntryPoint.ASSET_OUT_FROM_SPEC: OutputKeywords,
}
"""The TypedDict of each entry point whose settings are `**settings`."""

_FLAG_OR_NONE = (bool, type(None))
_POLICY_NAMES = {EntryPoint.ASSET_OUT_FROM_SPEC: "dd.AssetOut"}
"""How a policy error names an entry point, where it is not the entry point's own name."""


def with_setting_keywords(
    entry_point: EntryPoint, *, described_as: str | None = None
) -> Callable[[F], F]:
    """Give the function the signature with `entry_point`'s settings written out.

    They take the place of `**settings`, before the function's other keyword-only
    parameters, with the model's defaults and annotations. With `described_as`, the
    docstring's Parameters section gets each setting with that text, before the parameter
    that follows them.
    """

    def sign(function: F) -> F:
        signature = inspect.signature(function)
        parameters = [
            parameter
            for parameter in signature.parameters.values()
            if parameter.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        first_keyword = next(
            (
                index
                for index, parameter in enumerate(parameters)
                if parameter.kind is inspect.Parameter.KEYWORD_ONLY
            ),
            len(parameters),
        )
        settings = [
            inspect.Parameter(
                spec.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=spec.default_for(entry_point),
                annotation=spec.type_text,
            )
            for spec in settings_of(entry_point)
        ]
        parameters[first_keyword:first_keyword] = settings
        if described_as is not None:
            following = parameters[first_keyword + len(settings)].name
            function.__doc__ = _describing(
                function.__doc__ or "", settings, following, described_as
            )
        function.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        return function

    return sign


def _describing(
    docstring: str, settings: list[inspect.Parameter], following: str, text: str
) -> str:
    """`docstring` with a paragraph `text` for each setting, before `following`'s paragraph."""
    match = re.search(rf"^(?P<indent>[ ]*){following}$", docstring, flags=re.MULTILINE)
    assert match is not None, f"the docstring describes no parameter {following}"
    indent = match["indent"]
    paragraphs = "".join(f"{indent}{setting.name}\n{indent}    {text}\n" for setting in settings)
    return docstring[: match.start()] + paragraphs + docstring[match.start() :]


def checked_settings(entry_point: EntryPoint, settings: OutputKeywords) -> OutputKeywords:
    """The settings, once a setting `entry_point` does not take or a non-bool flag is refused.

    The policy is checked to be a `dd.QualityPolicy`, named after `entry_point`; the other
    settings' values are checked where they are resolved (`InvalidSettingError`).

    Raises
    ------
    InvalidArgumentsError
        A keyword is not one of the settings, `quarantine` / `clear_quarantine` is not a bool,
        or the policy is not a `dd.QualityPolicy`.
    """
    taken = {spec.name for spec in settings_of(entry_point)}
    unknown = sorted(set(settings) - taken)
    if unknown:
        raise InvalidArgumentsError(
            entry_point.value,
            f"{', '.join(f'`{name}=`' for name in unknown)} is not one of its settings",
            f"Its settings are {', '.join(sorted(taken))}.",
        )
    for name, allowed in (("quarantine", (bool,)), ("clear_quarantine", _FLAG_OR_NONE)):
        value = settings.get(name)
        if name in settings and not isinstance(value, allowed):
            raise InvalidArgumentsError(
                entry_point.value,
                f"`{name}=` is a {type(value).__name__}, not a bool",
                f"Pass {name}=True or {name}=False.",
            )
    checked = settings.copy()
    if "quality_policy" in settings:
        checked["quality_policy"] = checked_policy(
            _POLICY_NAMES.get(entry_point, entry_point.value), settings["quality_policy"]
        )
    return checked

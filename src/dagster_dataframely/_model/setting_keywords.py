"""The settings as keyword arguments: written out in signatures and docs, checked at run time.

An entry point takes its settings as `**settings: Unpack[...]` of its TypedDict, the one that
declares them (`setting_model`), so mypy refuses a misspelt setting or a value of the wrong
type. `with_setting_keywords` gives the function the signature it had when every setting was
written out (the model's names, order and defaults), which `help()`, `inspect.signature` and
the API docs read; `checked_settings` refuses at run time what mypy would have.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from dagster_dataframely.errors import InvalidArgumentsError, UnexpectedArgumentError

from .quality_policy import checked_policy
from .setting_model import EntryPoint, SettingSpec, refusals, settings_of

T = TypeVar("T", bound=Callable[..., object])

_POLICY_NAMES = {
    EntryPoint.ASSET_OUT_FROM_SPEC: "dd.AssetOut",
    EntryPoint.TABLE_CHECKS: "table_checks",
    EntryPoint.WIRING_CHECK_SPECS: "check_specs",
    EntryPoint.WIRING_CHECK_RESULTS: "check_results",
    EntryPoint.WIRING_VALIDATION_RESULTS: "validation_results",
}
"""How a policy error names an entry point, where it is not the entry point's own name."""
RAISES = {
    "warning_rules": "UnknownWarningRuleError\n"
    "    A name in `warning_rules` is not one of the schema's rules.",
    "setting": "InvalidSettingError\n"
    "    A setting's argument or environment variable has a value the setting does not allow.",
    "names": "ReservedColumnError, InvalidColumnNameError, InvalidRuleNameError, "
    "CheckNameCollisionError\n"
    "    A column or rule name this package cannot use: in the reserved `dy_` namespace, with a\n"
    "    character Dagster does not allow in a check name, or one check name for two rules.",
    "quality_policy": "InvalidArgumentsError\n"
    "    `quality_policy` is not a `dd.QualityPolicy` (a dict of its fields, a bare\n"
    "    `dd.Threshold`).",
}
"""The Raises paragraphs entry points share, written once: `with_setting_keywords(raises=)`."""
WIRING_RAISES = ("warning_rules", "setting", "names", "quality_policy")
"""What each `dd.wiring` function raises for its settings and its schema's names."""
_RAISES = re.compile(r"^(?P<indent>[ ]*)Raises\n(?P=indent)-+\n", re.MULTILINE)
_SECTION = re.compile(r"^(?P<indent>[ ]*)[A-Z][a-z]+\n(?P=indent)-+$", re.MULTILINE)
_PARAMETERS = re.compile(r"^(?P<indent>[ ]*)Parameters\n(?P=indent)-+$", re.MULTILINE)


def with_setting_keywords(
    entry_point: EntryPoint,
    *,
    order: Sequence[str] | None = None,
    notes: Mapping[str, str] | None = None,
    raises: Sequence[str] = (),
) -> Callable[[T], T]:
    """Give the function (or class) the signature and docs with `entry_point`'s settings.

    The settings take the place of `**settings` with the model's defaults and annotations:
    before the other keyword-only parameters, or where `order` (every keyword-only name, in
    the signature's order) puts them. Each setting gets a Parameters paragraph from its
    model (`doc`, `detail`, the variable it falls back to) and its line of `notes`, before
    the paragraph of the parameter that follows it, so no entry point writes one out. The
    `RAISES` paragraphs named in `raises` open its Raises section, in that order.
    """

    def sign(target: T) -> T:
        function: Any = vars(target)["__init__"] if isinstance(target, type) else target
        specs = settings_of(entry_point)
        settings = [
            inspect.Parameter(
                spec.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=spec.default_for(entry_point),
                annotation=spec.type_text,
            )
            for spec in specs
        ]
        parameters = signed(function, lambda own: _placed(own, settings, order))
        notes_left = dict(notes or {})
        paragraphs = {
            spec.name: _paragraph(entry_point, spec, notes_left.pop(spec.name, ""))
            for spec in specs
        }
        assert not notes_left, (
            f"notes for settings {entry_point.value} does not take: {sorted(notes_left)}"
        )
        target.__doc__ = _with_raises(
            described(target.__doc__ or "", parameters, paragraphs), raises
        )
        return target

    return sign


def signed(
    function: Any, place: Callable[[list[inspect.Parameter]], list[inspect.Parameter]]
) -> list[inspect.Parameter]:
    """Give `function` the parameters `place` makes of its own in place of `**`; return them."""
    signature = inspect.signature(function)
    own = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    parameters = place(own)
    function.__signature__ = signature.replace(parameters=parameters)
    return parameters


def _placed(
    parameters: list[inspect.Parameter],
    settings: list[inspect.Parameter],
    order: Sequence[str] | None,
) -> list[inspect.Parameter]:
    keyword_only = [p for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]
    others = [p for p in parameters if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    if order is None:
        return others + settings + keyword_only
    by_name = {parameter.name: parameter for parameter in keyword_only + settings}
    assert sorted(order) == sorted(by_name), f"order {order} is not {sorted(by_name)}"
    return others + [by_name[name] for name in order]


def described(doc: str, parameters: list[inspect.Parameter], paragraphs: Mapping[str, str]) -> str:
    """`doc` with each of `paragraphs` before the next parameter `doc` already describes."""
    headings = re.findall(r"^ *(\w+(?:, \w+)*)$", doc, re.MULTILINE)
    already = {name for heading in headings for name in heading.split(", ")}
    order = [parameter.name for parameter in parameters]
    for name in (name for name in order if name in paragraphs):
        following = next(
            (later for later in order[order.index(name) + 1 :] if later in already), None
        )
        doc = inserted_paragraph(doc, following, name, paragraphs[name])
    return doc


def with_raises(*raises: str) -> Callable[[T], T]:
    """Open the function's Raises section with the `RAISES` paragraphs named in `raises`."""

    def describe(function: T) -> T:
        function.__doc__ = _with_raises(function.__doc__ or "", raises)
        return function

    return describe


def _with_raises(docstring: str, raises: Sequence[str]) -> str:
    if not raises:
        return docstring
    section = _RAISES.search(docstring)
    assert section is not None, "no Raises section to open with the shared paragraphs"
    indent = section["indent"]
    text = "".join(
        "".join(f"{indent}{line}\n" for line in RAISES[key].split("\n")) for key in raises
    )
    return docstring[: section.end()] + text + docstring[section.end() :]


def _paragraph(entry_point: EntryPoint, spec: SettingSpec, note: str) -> str:
    sentences = [spec.doc[0].upper() + spec.doc[1:] + ".", spec.detail, note]
    if spec.env_var is not None and spec.default_for(entry_point) is None:
        sentences.append(f"`None` uses `{spec.env_var}` if set, else `{spec.package_default}`.")
    return " ".join(sentence for sentence in sentences if sentence)


def inserted_paragraph(docstring: str, following: str | None, name: str, text: str) -> str:
    """`docstring` with `name`'s paragraph before `following`'s, or ending Parameters."""
    parameters = _PARAMETERS.search(docstring)
    assert parameters is not None, f"no Parameters section to describe {name} in"
    indent = parameters["indent"]
    lines = textwrap.wrap(text, 92 - len(indent), break_on_hyphens=False)
    paragraph = f"{indent}{name}\n" + "".join(f"{indent}    {line}\n" for line in lines)
    if following is not None:
        match = re.compile(rf"^{indent}{following}(, \w+)*$", re.M).search(
            docstring, parameters.end()
        )
        assert match is not None, f"the docstring describes no parameter {following}"
        return docstring[: match.start()] + paragraph + docstring[match.start() :]
    after = _SECTION.search(docstring, parameters.end())
    end = len(docstring[: after.start() if after else None].rstrip())
    return docstring[:end] + "\n" + paragraph.rstrip("\n") + docstring[end:]


def checked_settings(entry_point: EntryPoint, settings: Mapping[str, object]) -> dict[str, Any]:
    """The settings, once a setting `entry_point` does not take or a non-bool flag is refused.

    The policy is checked to be a `dd.QualityPolicy`, named after `entry_point`; the other
    settings' values are checked where they are resolved (`InvalidSettingError`).

    Raises
    ------
    UnexpectedArgumentError
        A setting the model says `entry_point` refuses; the message gives the reason.
    InvalidArgumentsError
        A keyword is not one of the settings, `quarantine` / `clear_quarantine` is not a bool,
        or the policy is not a `dd.QualityPolicy`.
    """
    refused = refusals(entry_point)
    for name in settings:
        if name in refused:
            raise refused_setting(entry_point, name)
    taken = {spec.name for spec in settings_of(entry_point)}
    unknown = sorted(set(settings) - taken)
    if unknown:
        raise InvalidArgumentsError(
            entry_point.value,
            f"{', '.join(f'`{name}=`' for name in unknown)} is not one of its settings",
            f"Its settings are {', '.join(sorted(taken))}.",
        )
    # NOTE: a flag no variable sets is read nowhere else; one a variable sets is checked where
    # it is resolved, with the other sources (`InvalidSettingError`).
    for spec in settings_of(entry_point):
        value = settings.get(spec.name)
        flag = not spec.env and spec.value_type is bool
        if flag and spec.name in settings and not isinstance(value, spec.annotation):
            raise InvalidArgumentsError(
                entry_point.value,
                f"`{spec.name}=` is a {type(value).__name__}, not a bool",
                f"Pass {spec.name}=True or {spec.name}=False.",
            )
    checked = dict(settings)
    if "quality_policy" in settings:
        checked["quality_policy"] = checked_policy(
            _POLICY_NAMES.get(entry_point, entry_point.value), settings["quality_policy"]
        )
    return checked


def refused_setting(entry_point: EntryPoint, name: str) -> UnexpectedArgumentError:
    """The refusal of a setting the model says `entry_point` does not take, with its reason."""
    reason = refusals(entry_point)[name]
    return UnexpectedArgumentError(
        entry_point.value, f"it does not take the setting `{name}=`: {reason}", "Leave it out."
    )

"""The Component's fields as its YAML wrote them: each value's kind checked, each error located.

A `dg` user fixes a YAML file, not a Python call, so every refusal, the Component's own or one
`dd.table_checks` raises, is reported with the file and line, the field and the fix.
"""

import contextlib
import difflib
import importlib
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import dagster as dg
import dataframely as dy
from dagster_shared.yaml_utils.source_position import SourcePositionTree
from typing_extensions import TypeAliasType

from dagster_dataframely._model.names import DAGSTER_NAME
from dagster_dataframely._model.schema import COLLECTION_BASE, SCHEMA_BASE, base_class
from dagster_dataframely._model.setting_model import (
    EntryPoint,
    Granularity,
    SchemaRules,
    SettingSpec,
    settings_of,
)
from dagster_dataframely.errors import (
    ComponentFieldError,
    DagsterDataframelyError,
    InvalidArgumentsError,
    InvalidSettingError,
    ThresholdNotApplicableError,
    UnknownCollectionMemberError,
    UnknownPolicyRuleError,
    UnknownWarningRuleError,
)

from .component_policy import NEEDS_RUN, POLICY_EXAMPLE

SEVERITIES = ("WARN", "ERROR")
COMPONENT = EntryPoint.COMPONENT


def _root_module(project_root: Path | None) -> str | None:
    """The project's root module from its `pyproject.toml`, for the placeholder schema path."""
    if project_root is None or not (project_root / "pyproject.toml").is_file():
        return None
    with (project_root / "pyproject.toml").open("rb") as file:
        config = tomllib.load(file)
    root = config.get("tool", {}).get("dg", {}).get("project", {}).get("root_module")
    return root if isinstance(root, str) else None


FieldPath = tuple[str | int, ...]
"""A field under `attributes`: `("assets", 0)` is the first asset key."""


@dataclass(frozen=True)
class _FieldKind:
    """What a field takes, once its templates are resolved, and how to write it."""

    accepts: Callable[[object], bool]
    expected: str
    example: str
    """The field written right, as YAML."""
    note: str = ""
    """What to mind when writing it, after the example: `, without quotes`."""


def _text(value: object) -> bool:
    return isinstance(value, str)


def _texts(value: object) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(item, str) for item in value)


def _optional(accepts: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda value: value is None or accepts(value)


_OWN_KINDS = {
    "dataframely_schema": _FieldKind(
        _text, "text", "dataframely_schema: my_project.schemas:Orders"
    ),
    "severity": _FieldKind(_text, "WARN or ERROR", "severity: WARN"),
    "assets": _FieldKind(
        _texts, "a list of asset keys", "assets: [orders]", ", a list even for one key"
    ),
    "members": _FieldKind(
        _optional(lambda value: isinstance(value, Mapping) and _texts([*value, *value.values()])),
        "a mapping from member name to asset key",
        "members: {orders: order_book/orders, lines: order_book/lines}",
    ),
    "lazy": _FieldKind(
        lambda value: isinstance(value, bool), "true or false", "lazy: false", ", without quotes"
    ),
    "name": _FieldKind(_optional(_text), "a name", "name: orders_checks"),
}
"""The kinds of the fields that are `dd.table_checks`' own arguments, not package settings."""


def _choice(alias: TypeAliasType) -> Callable[[SettingSpec], _FieldKind]:
    """A setting whose type is a `Literal` alias: text, one of its values."""
    choices: tuple[str, ...] = get_args(alias.__value__)

    def kind(spec: SettingSpec) -> _FieldKind:
        example = next(choice for choice in choices if choice != spec.package_default)
        expected = f"{', '.join(choices[:-1])} or {choices[-1]}"
        return _FieldKind(_optional(_text), expected, f"{spec.name}: {example}")

    return kind


_SETTING_KINDS: Mapping[str, Callable[[SettingSpec], _FieldKind]] = {
    "Granularity | None": _choice(Granularity),
    "SchemaRules | None": _choice(SchemaRules),
    "int | None": lambda spec: _FieldKind(
        _optional(lambda value: isinstance(value, int) and not isinstance(value, bool)),
        "a whole number of rows",
        f"{spec.name}: {spec.package_default}",
        ", without quotes",
    ),
    "Iterable[str] | None": lambda spec: _FieldKind(
        _optional(_texts),
        "a list of rule names",
        f"{spec.name}: [amount|max]",
        ", a list even for one rule",
    ),
    "QualityPolicy | None": lambda spec: _FieldKind(
        _optional(lambda value: isinstance(value, Mapping)), "a mapping", POLICY_EXAMPLE
    ),
}
"""How YAML writes a setting, by the type the settings model gives it (`SettingSpec.type_text`)."""

_FIELD_KINDS = {
    **_OWN_KINDS,
    **{spec.name: _SETTING_KINDS[spec.type_text](spec) for spec in settings_of(COMPONENT)},
}
"""Every field's kind, the settings' from the model. The YAML model lets text through to every
field (a `{{ template }}` may render to any value), so a quoted `'false'` or a single key
reaches the component as text and is refused here, as is whatever a template rendered to."""


def _yaml_kind(value: object) -> str:
    """A value's kind as YAML calls it: `text`, `a list`, `a boolean`."""
    if value is None:
        return "null"
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    return f"a Python {type(value).__name__}"


def _field_name(path: FieldPath) -> str:
    """`assets[0]`, `members.orders`: the field as a YAML author finds it."""
    name = str(path[0])
    for part in path[1:]:
        name += f"[{part}]" if isinstance(part, int) else f".{part}"
    return name


@dataclass(frozen=True)
class _Fields:
    """The component's fields as the YAML wrote them: each value checked, each error located."""

    positions: SourcePositionTree | None
    context: dg.ComponentLoadContext
    policy: Mapping[str, Any] | None = None
    """The `quality_policy` field as the YAML wrote it, to find the key a refusal is about."""

    def where(self, path: FieldPath) -> str:
        """The file and line of a field, from the project's root; else the component's folder."""
        position = (
            self.positions.lookup(["attributes", *path]) or self.positions.lookup(["attributes"])
            if self.positions is not None
            else None
        )
        if position is None:
            return self._relative(self.context.path)
        return f"{self._relative(Path(position.filename))}:{position.start.line}"

    def _relative(self, path: Path) -> str:
        """`path` from the project's root, as `dg` prints paths; absolute if outside it."""
        with contextlib.suppress(ValueError):
            return str(path.resolve().relative_to(Path(self.context.project_root).resolve()))
        return str(path)

    def at(self, path: FieldPath | str) -> tuple[str, str]:
        """A field's file and line and its name: the first two arguments of its error."""
        located = (path,) if isinstance(path, str) else path
        return self.where(located), _field_name(located)

    def require_kind(self, name: str, value: object, kind: _FieldKind) -> None:
        """Refuse a value of another kind than the field's, such as the text `'false'`."""
        if kind.accepts(value):
            return
        given = f"{value!r} is text" if isinstance(value, str) else f"it is {_yaml_kind(value)}"
        raise ComponentFieldError(
            *self.at(name),
            f"{given}, and the field takes {kind.expected}",
            f"Write it as in `{kind.example}`{kind.note}.",
        )

    def require_name(self, name: str, *, several: bool) -> None:
        """A check op's name: one Dagster accepts, for a single asset."""
        if not DAGSTER_NAME.fullmatch(name):
            raise ComponentFieldError(
                *self.at("name"),
                f"{name!r} is not a name Dagster accepts: only letters, digits and underscores "
                "(A-Za-z0-9_)",
                "Write a name such as orders_checks, or remove `name:` for "
                "<asset key>__dataframely_checks.",
            )
        if several:
            raise ComponentFieldError(
                *self.at("name"),
                "one name cannot name the check definitions of several assets",
                "Remove `name:`, or give each asset a component of its own.",
            )

    def require_once(self, keys: Sequence[dg.AssetKey]) -> None:
        """Each asset listed once: a second listing would declare every check twice."""
        first: dict[dg.AssetKey, int] = {}
        for index, key in enumerate(keys):
            if key in first:
                raise ComponentFieldError(
                    *self.at(("assets", index)),
                    f"the asset {key.to_user_string()!r} is already listed, as "
                    f"assets[{first[key]}], and its checks can be declared once",
                    "List each asset once.",
                )
            first[key] = index

    def schema_class(self, value: str) -> type[dy.Schema] | type[dy.Collection]:
        """The class `module:Class` names, imported."""
        module_name, colon, attribute = value.partition(":")
        if not colon or not module_name or not attribute:
            raise ComponentFieldError(
                *self.at("dataframely_schema"),
                f"{value!r} is not a module:Class reference",
                "Write the module, a colon and the class, such as my_project.schemas:Orders.",
            )
        root = _root_module(Path(self.context.project_root)) or "my_project"
        if module_name.startswith("."):
            raise ComponentFieldError(
                *self.at("dataframely_schema"),
                f"{module_name!r} is a relative module path, and a component has no package to "
                "resolve it from",
                f"Write the module's full dotted path, such as {root}.schemas:{attribute}.",
            )
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise ComponentFieldError(
                *self.at("dataframely_schema"),
                f"the module {module_name!r} cannot be imported ({error})",
                "Check the module's dotted path; it must be importable in the project's "
                f"environment, such as {root}.schemas.",
            ) from error
        except Exception as error:  # the module's own code failed: say so, with its error
            raise ComponentFieldError(
                *self.at("dataframely_schema"),
                f"importing the module {module_name!r} raised {type(error).__name__}: {error}",
                "Fix the module's code (the traceback above this error shows where it failed); "
                "it runs whenever the project loads.",
            ) from error
        found = getattr(module, attribute, None)
        given = base_class(found)
        if given is not None:
            expected, example = (
                (SCHEMA_BASE, "Orders") if given is SCHEMA_BASE else (COLLECTION_BASE, "OrderBook")
            )
            raise ComponentFieldError(
                *self.at("dataframely_schema"),
                f"{value} is {given.name} itself, the base class, which declares {given.declares}",
                f"Name {expected.subclass}, such as {root}.schemas:{example}.",
            )
        if not (isinstance(found, type) and issubclass(found, dy.Schema | dy.Collection)):
            classes = [
                name
                for name, member in vars(module).items()
                if isinstance(member, type)
                and issubclass(member, dy.Schema | dy.Collection)
                and member.__module__ == module.__name__
            ]
            raise ComponentFieldError(
                *self.at("dataframely_schema"),
                f"{module_name} has no dy.Schema or dy.Collection named {attribute!r}"
                if found is None
                else f"{value} is a {type(found).__name__}, not a dy.Schema or dy.Collection",
                f"Name one of its classes: {', '.join(sorted(classes))}."
                if classes
                else "Name a subclass of dy.Schema or dy.Collection.",
            )
        return found

    def severity(self, value: str) -> dg.AssetCheckSeverity:
        """The `severity` field as Dagster's enum."""
        if value.upper() not in SEVERITIES:
            raise ComponentFieldError(
                *self.at("severity"),
                f"{value!r} is not a check severity",
                f"Write one of {', '.join(SEVERITIES)}.",
            )
        return dg.AssetCheckSeverity(value.upper())

    def require_targets(
        self,
        schema: type[dy.Schema] | type[dy.Collection],
        *,
        assets: Sequence[str],
        members: Mapping[str, str] | None,
    ) -> None:
        """A schema takes `assets`, a Collection `members`: exactly one of the two."""
        if issubclass(schema, dy.Collection):
            if not members or assets:
                raise ComponentFieldError(
                    *self.at("assets" if assets else "members"),
                    f"{schema.__name__} is a dy.Collection, so its members' assets are mapped "
                    "under `members`, not listed under `assets`",
                    "Write `members:` with one `<member>: <asset key>` line per member, and "
                    "no `assets:`.",
                )
        elif members is not None or not assets:
            raise ComponentFieldError(
                *self.at("members" if members is not None else "assets"),
                f"{schema.__name__} is a dy.Schema, so the assets to check are listed under "
                "`assets`",
                "List their keys under `assets:`; `members:` is only for a dy.Collection.",
            )

    def target(
        self,
        known: Mapping[dg.AssetKey, dg.PartitionsDefinition[Any] | None] | None,
        path: FieldPath,
        value: str,
    ) -> dg.AssetSpec:
        """The asset a key names, with its own partitions, as the spec `dd.table_checks` takes."""
        key = dg.AssetKey.from_user_string(value)
        if known is None:  # a component built outside a project: nothing to look the key up in
            return dg.AssetSpec(key)
        if key not in known:
            names = [k.to_user_string() for k in known]
            close = difflib.get_close_matches(value, names, n=3)
            raise ComponentFieldError(
                *self.at(path),
                f"no asset in the project's defs folder has the key {value!r}",
                (f"Did you mean {', '.join(close)}? " if close else "")
                + "Write a key as `dg list defs` shows it, parts joined by /; an asset made "
                "outside Dagster needs a dg.AssetSpec in the defs folder.",
            )
        return dg.AssetSpec(key, partitions_def=known[key])

    def _policy_rule(self, parameter: str, rule: str) -> FieldPath:
        """Where `quality_policy.<parameter>` names `rule`: its key, or its place in the list."""
        written = (self.policy or {}).get(parameter)
        if isinstance(written, Mapping):
            key = next((key for key in written if str(key) == rule), None)
            if key is not None:
                return ("quality_policy", parameter, key)
        if isinstance(written, list) and rule in written:
            return ("quality_policy", parameter, written.index(rule))
        return ("quality_policy", parameter)

    @contextlib.contextmanager
    def reported(self) -> Iterator[None]:
        """Report a refusal of `dd.table_checks` against the field that caused it."""
        try:
            yield
        except InvalidSettingError as error:
            if error.source != "the argument":
                raise
            listed = error.allowed
            accepted = listed if isinstance(listed, str) else f"one of {', '.join(listed)}"
            raise ComponentFieldError(
                *self.at(error.setting),
                f"{error.value} is not a value it accepts",
                f"Write {accepted}; or remove the field to use {error.env_var} if it is set, "
                "else the package default.",
            ) from error
        except UnknownPolicyRuleError as error:
            close = difflib.get_close_matches(error.rules[0], error.valid_rules, n=1)
            raise ComponentFieldError(
                *self.at(self._policy_rule(error.parameter, error.rules[0])),
                f"{error.schema_name} has no rule named {', '.join(error.rules)}",
                (f"Did you mean {close[0]}? " if close else "")
                + f"Name its rules as Dataframely does: {', '.join(error.valid_rules)}.",
            ) from error
        except ThresholdNotApplicableError as error:
            # NOTE: stored tables' checks refuse only what needs the run that writes the table.
            written = [key for key in NEEDS_RUN if (self.policy or {}).get(key) is not None]
            fields = " and ".join(f"`{key}:`" for key in written)
            raise ComponentFieldError(
                *self.at(("quality_policy", written[0]) if written else "quality_policy"),
                error.problem.rstrip("."),
                f"Remove {fields} here, and declare {'it' if len(written) == 1 else 'them'} in "
                "the quality_policy of the dd.asset that writes the table."
                if written
                else error.fix,
            ) from error
        except UnknownWarningRuleError as error:
            raise ComponentFieldError(
                *self.at("warning_rules"),
                f"{error.schema_name} has no rule named {', '.join(error.rules)}",
                f"Name its rules as Dataframely does: {', '.join(error.valid_rules)}.",
            ) from error
        except UnknownCollectionMemberError as error:
            raise ComponentFieldError(
                *self.at("members"),
                f"{error.collection_name} has no member named {', '.join(error.unknown)}",
                f"Map its members: {', '.join(error.members)}.",
            ) from error
        except InvalidArgumentsError as error:
            raise ComponentFieldError(*self.at("members"), error.problem, error.fix) from error
        except DagsterDataframelyError as error:  # the schema's own names, read at declaration
            raise ComponentFieldError(
                *self.at("dataframely_schema"),
                error.message.rstrip("."),
                "Change the schema's code as that says, or name another class.",
            ) from error

"""`TableChecksComponent`: `dd.table_checks` declared in a `dg` project's YAML.

A team with a `dg` project (tables built by plain assets, dbt, Sling or SQL) adopts the schema's
checks in a `defs.yaml`, without writing Python around each asset. The component only reads its
fields and calls `dd.table_checks`, so the checks are the same as in Python; what it adds is
that a wrong value is reported against the YAML file and field it came from.
"""

# No `from __future__ import annotations`: Dagster reads the fields' annotations as types.
import contextlib
import difflib
import importlib
import json
import textwrap
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import dagster as dg
import dataframely as dy
from dagster_shared.yaml_utils.source_position import SourcePositionTree
from pydantic import StrictBool, StrictInt

from dagster_dataframely._model.names import DAGSTER_NAME
from dagster_dataframely._upstream import component_yaml_positions, project_asset_partitions
from dagster_dataframely.errors import (
    CollectionMemberMissingError,
    ComponentFieldError,
    DagsterDataframelyError,
    InvalidArgumentsError,
    InvalidSettingError,
    ThresholdNotApplicableError,
    UnknownCollectionMemberError,
    UnknownPolicyRuleError,
    UnknownWarningRuleError,
)

from .component_policy import POLICY_EXAMPLE, read_policy
from .table_checks import table_checks

SEVERITIES = ("WARN", "ERROR")


def _doc(description: str, *examples: Any) -> Any:
    """A YAML field's description and examples, for `dg` and the component's JSON schema."""
    return dg.Resolver.default(description=description, examples=list(examples) or None)


def _strict(read_as: Any, description: str, *examples: Any) -> Any:
    """`_doc` for a field the YAML model reads as `read_as`, a pydantic strict type.

    By default pydantic converts what it can: `true` would be the count 1, `1` the flag
    `true`. A strict type refuses both where the YAML is validated, with its file and line.
    """
    return dg.Resolver(
        _resolve_templates,
        model_field_type=read_as,
        description=description,
        examples=list(examples) or None,
        inject_before_resolve=False,
    )


def _resolve_templates(context: dg.ResolutionContext, value: Any) -> Any:
    """Render a `{{ template }}`; other text stays text, so `'5'` is not the count 5.

    Dagster's default resolver renders every string, and its rendering reads `'5'` as 5.
    """
    if isinstance(value, str) and "{{" not in value and "{%" not in value:
        return value
    return context.resolve_value(value)


def _resolve_nested_templates(context: dg.ResolutionContext, value: Any) -> Any:
    """`_resolve_templates` at every depth of a mapping or list, so `'0'` stays text inside."""
    if isinstance(value, Mapping):
        return {key: _resolve_nested_templates(context, item) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolve_nested_templates(context, item) for item in value]
    return _resolve_templates(context, value)


class TableChecksScaffoldParams(dg.Model):
    """What `dg scaffold defs` may fill in: `--dataframely-schema` and `--asset`."""

    dataframely_schema: str | None = None
    asset: str | None = None


class TableChecksScaffolder(dg.Scaffolder[TableChecksScaffoldParams]):
    """Writes a `defs.yaml` for `dg scaffold defs dagster_dataframely.TableChecksComponent`."""

    @classmethod
    def get_scaffold_params(cls) -> type[TableChecksScaffoldParams]:
        """The options `dg scaffold defs` takes for this component."""
        return TableChecksScaffoldParams

    def scaffold(self, request: dg.ScaffoldRequest[TableChecksScaffoldParams]) -> None:
        """A ready `defs.yaml`: every field, the required ones given or as placeholders."""
        root = _root_module(request.project_root) or "my_project"
        params = request.params
        request.target_path.mkdir(parents=True, exist_ok=True)
        (request.target_path / "defs.yaml").write_text(
            SCAFFOLD_YAML.format(
                type_name=request.type_name,
                schema=json.dumps(params.dataframely_schema or f"{root}.schemas:Orders"),
                asset=json.dumps(params.asset or "orders"),
            )
        )


def _root_module(project_root: Path | None) -> str | None:
    """The project's root module from its `pyproject.toml`, for the placeholder schema path."""
    if project_root is None or not (project_root / "pyproject.toml").is_file():
        return None
    with (project_root / "pyproject.toml").open("rb") as file:
        config = tomllib.load(file)
    root = config.get("tool", {}).get("dg", {}).get("project", {}).get("root_module")
    return root if isinstance(root, str) else None


SCAFFOLD_YAML = textwrap.dedent(
    """\
    type: {type_name}

    attributes:
      # The Dataframely schema the tables follow, as module:Class. A dy.Collection works too:
      # then map each member to its asset under `members:` instead of listing `assets:`.
      dataframely_schema: {schema}

      # The keys of the assets whose stored tables to check, as `dg list defs` shows them.
      # Each table is loaded by its asset's own IO manager.
      assets:
        - {asset}

      # The severity of a failing rule check: WARN or ERROR. dy_schema__columns is always ERROR.
      severity: WARN

      # Optional, as for dd.table_checks (unset: the DAGSTER_DATAFRAMELY_* variable, then the
      # package default). lazy: false for IO managers that load only DataFrames, such as DuckDB's.
      # lazy: true
      # check_granularity: rule        # rule, column or schema
      # schema_rules: collapsed        # collapsed or per_rule
      # max_failure_samples: 5         # 0 turns the failure samples off
      # warning_rules: [amount|max]    # rules whose checks fail at WARN only
    """
)


@dg.scaffold_with(TableChecksScaffolder)
@dataclass
class TableChecksComponent(dg.Component, dg.Resolvable):
    """A Dataframely schema's asset checks on tables the package did not build, from YAML.

    The component declares what `dd.table_checks` declares in Python, for each asset it names:
    the blocking `dy_schema__columns` check and one check per rule group, run against the
    stored table as the asset's own IO manager loads it. The assets can come from any other
    part of the project (a plain `@dg.asset`, a dbt or Sling component, a `dg.AssetSpec` for a
    table that SQL writes outside Dagster); each must be defined in the project's `defs`
    folder, so a misspelt key fails the load, naming the file and field, instead of declaring
    checks on nothing. A target's partitions come from its own definition.

    ```yaml
    type: dagster_dataframely.TableChecksComponent
    attributes:
      dataframely_schema: my_project.schemas:Orders
      assets: [orders, analytics/orders]
      severity: WARN
    ```

    Every field is typed strictly: text is not a flag, a number or a list (`lazy: 'false'` and
    `assets: orders` are refused), and a flag is not a number.

    Parameters
    ----------
    dataframely_schema
        The schema as `module:Class`: a `dy.Schema`, or a `dy.Collection` with `members`.
    severity
        `WARN` or `ERROR`: the severity of a failing rule check.
    assets
        For a schema: the keys of the assets to check, as `dg` writes them (`analytics/orders`).
        Each gets its own check definition.
    members
        For a Collection: a mapping from member name to the key of that member's asset. One
        check definition loads them all and splits them together.
    lazy
        As for `dd.table_checks`: `false` for IO managers that load only `pl.DataFrame`.
    check_granularity
        As for `dd.table_checks`: `rule`, `column` or `schema`.
    schema_rules
        As for `dd.table_checks`: `collapsed` or `per_rule`.
    max_failure_samples
        As for `dd.table_checks`: at most this many failing rows per rule; `0` turns them off.
    warning_rules
        As for `dd.table_checks`: the rules whose checks fail at `WARN` only. Refused with a
        Collection, as `dd.table_checks` refuses it.
    quality_policy
        As for `dd.table_checks`: a `dd.QualityPolicy` written as a mapping with its keys
        (`threshold` and each of `rules` as `{warn_above: ..., fail_above: ...}`, `severity`
        as `WARN`/`ERROR` or one per rule, `blocking` as a flag or rule names, `volume` as a
        `dd.VolumeCheck`'s keys, which `dd.table_checks` refuses on a stored table).
    name
        The check op's name; by default `<asset key>__dataframely_checks`. Only with one asset.

    Raises
    ------
    ComponentFieldError
        A field has a value the component cannot use: of another kind, a schema module that
        fails to import for any reason or is relative, an invalid `name`, an asset listed
        twice. The message names the YAML file and line, the field, and the fix.
    """

    dataframely_schema: Annotated[
        str,
        _doc(
            "The Dataframely schema the tables follow, as module:Class: a dy.Schema, or a "
            "dy.Collection whose members are mapped under `members`.",
            "my_project.schemas:Orders",
        ),
    ]
    severity: Annotated[
        str,
        _doc("The severity of a failing rule check: WARN or ERROR.", "WARN"),
    ]
    assets: Annotated[
        Sequence[str],
        _doc(
            "For a dy.Schema: the keys of the assets whose stored tables to check.",
            ["orders", "analytics/orders"],
        ),
    ] = field(default_factory=list)
    members: Annotated[
        Mapping[str, str] | None,
        _doc(
            "For a dy.Collection: each member's name mapped to its asset's key.",
            {"orders": "order_book/orders", "lines": "order_book/lines"},
        ),
    ] = None
    lazy: Annotated[
        bool,
        _strict(
            StrictBool,
            "Load each table as a pl.LazyFrame (true) or a pl.DataFrame (false, for DuckDB).",
        ),
    ] = True
    check_granularity: Annotated[
        str | None,
        _doc("How many checks report the rules: rule, column or schema.", "rule"),
    ] = None
    schema_rules: Annotated[
        str | None,
        _doc("At column granularity, the schema-level rules: collapsed or per_rule.", "per_rule"),
    ] = None
    max_failure_samples: Annotated[
        int | None,
        _strict(
            StrictInt | None,
            "At most this many failing rows per rule in a check's metadata; 0 for none.",
            5,
        ),
    ] = None
    warning_rules: Annotated[
        Sequence[str] | None,
        _doc("Rules, as Dataframely names them, whose checks fail at WARN only.", ["amount|max"]),
    ] = None
    quality_policy: Annotated[
        Mapping[str, Any] | None,
        dg.Resolver(
            _resolve_nested_templates,
            model_field_type=Mapping[str, Any] | None,
            description="As dd.QualityPolicy, key for key: threshold, rules, severity, "
            "blocking, volume.",
            examples=[{"threshold": {"warn_above": 0.01, "fail_above": 0.1}, "blocking": True}],
            inject_before_resolve=False,
        ),
    ] = None
    name: Annotated[
        str | None,
        _doc("The check op's name, for one asset; by default <asset key>__dataframely_checks."),
    ] = None

    def build_defs(self, context: dg.ComponentLoadContext) -> dg.Definitions:
        """One check definition per asset; for a Collection, one for all its members."""
        fields = _Fields(component_yaml_positions(context), context)
        for field_name, kind in _FIELD_KINDS.items():
            fields.require_kind(field_name, getattr(self, field_name), kind)
        schema = fields.schema_class(self.dataframely_schema)
        severity = fields.severity(self.severity)
        known = project_asset_partitions(context, skip=TableChecksComponent)
        collection = issubclass(schema, dy.Collection)
        fields.require_targets(schema, assets=self.assets, members=self.members)
        if collection and self.warning_rules is not None:
            raise ComponentFieldError(
                *fields.at("warning_rules"),
                f"{schema.__name__} is a dy.Collection, whose checks take no warning rules, as "
                "dd.table_checks and dd.collection_asset take none: a row kept for failing only "
                "a warning rule would come back after the Collection's filters removed the rows "
                "of other members that depend on it",
                "Remove `warning_rules:`; `severity: WARN` makes every rule check fail at WARN "
                "only.",
            )
        if self.name is not None:
            fields.require_name(self.name, several=len(self.assets) > 1)
        settings: dict[str, Any] = {
            "severity": severity,
            "lazy": self.lazy,
            "check_granularity": self.check_granularity,
            "schema_rules": self.schema_rules,
            "max_failure_samples": self.max_failure_samples,
            "name": self.name,
            "quality_policy": None
            if self.quality_policy is None
            else read_policy(self.quality_policy, fields.at),
        }
        if collection:
            members = {
                member: fields.target(known, ("members", member), key)
                for member, key in (self.members or {}).items()
            }
            with fields.reported():
                return dg.Definitions(asset_checks=[table_checks(schema, members, **settings)])
        targets = [
            fields.target(known, ("assets", index), key) for index, key in enumerate(self.assets)
        ]
        fields.require_once([target.key for target in targets])
        with fields.reported():
            checks = [
                table_checks(schema, target, warning_rules=self.warning_rules, **settings)
                for target in targets
            ]
        return dg.Definitions(asset_checks=checks)


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


_FIELD_KINDS = {
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
    "check_granularity": _FieldKind(
        _optional(_text), "rule, column or schema", "check_granularity: column"
    ),
    "schema_rules": _FieldKind(_optional(_text), "collapsed or per_rule", "schema_rules: per_rule"),
    "max_failure_samples": _FieldKind(
        _optional(lambda value: isinstance(value, int) and not isinstance(value, bool)),
        "a whole number of rows",
        "max_failure_samples: 5",
        ", without quotes",
    ),
    "warning_rules": _FieldKind(
        _optional(_texts),
        "a list of rule names",
        "warning_rules: [amount|max]",
        ", a list even for one rule",
    ),
    "quality_policy": _FieldKind(
        _optional(lambda value: isinstance(value, Mapping)), "a mapping", POLICY_EXAMPLE
    ),
    "name": _FieldKind(_optional(_text), "a name", "name: orders_checks"),
}
"""Every field's kind. The YAML model lets text through to every field (a `{{ template }}`
may render to any value), so a quoted `'false'` or a single key reaches the component as text
and is refused here, as is whatever a template rendered to."""


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
            raise ComponentFieldError(
                *self.at("quality_policy"),
                f"{error.schema_name} has no rule named {', '.join(error.rules)}",
                f"Name its rules as Dataframely does: {', '.join(error.valid_rules)}.",
            ) from error
        except ThresholdNotApplicableError as error:
            raise ComponentFieldError(
                *self.at("quality_policy"), error.problem.rstrip("."), error.fix
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
        except CollectionMemberMissingError as error:
            raise ComponentFieldError(
                *self.at("members"),
                f"{error.collection_name}'s required members {', '.join(error.missing)} have "
                "no asset",
                "Add a `<member>: <asset key>` line under `members:` for each.",
            ) from error
        except InvalidArgumentsError as error:
            raise ComponentFieldError(*self.at("members"), error.problem, error.fix) from error
        except DagsterDataframelyError as error:  # the schema's own names, read at declaration
            raise ComponentFieldError(
                *self.at("dataframely_schema"),
                error.message.rstrip("."),
                "Change the schema's code as that says, or name another class.",
            ) from error

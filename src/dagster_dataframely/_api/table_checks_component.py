"""`TableChecksComponent`: `dd.table_checks` declared in a `dg` project's YAML.

A team with a `dg` project (tables built by plain assets, dbt, Sling or SQL) adopts the schema's
checks in a `defs.yaml`, without writing Python around each asset. The component only reads its
fields and calls `dd.table_checks`, so the checks are the same as in Python; what it adds is
that a wrong value is reported against the YAML file and field it came from.
"""

# No `from __future__ import annotations`: Dagster reads the fields' annotations as types.
import dataclasses
import json
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import dagster as dg
import dataframely as dy
from pydantic import StrictBool, StrictInt

from dagster_dataframely._model.setting_model import (
    EntryPoint,
    Granularity,
    SchemaRules,
    settings_of,
)
from dagster_dataframely._suggest.command_line import write_schema_module
from dagster_dataframely._upstream import component_yaml_positions, project_asset_partitions
from dagster_dataframely.errors import ComponentFieldError

from .component_fields import _FIELD_KINDS, _Fields, _root_module
from .component_policy import read_policy
from .table_checks import table_checks


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
    """What `dg scaffold defs` may fill in: `--dataframely-schema` and `--asset`, or, for a
    table without a schema yet, `--source` (a parquet file or folder, local or a URL) and
    `--name`: the schema suggested from its data is written beside the `defs.yaml`."""

    dataframely_schema: str | None = None
    asset: str | None = None
    source: str | None = None
    name: str | None = None


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
        schema = params.dataframely_schema or f"{root}.schemas:{params.name or 'Orders'}"
        if params.source is not None:
            name = params.name or _class_name(params.asset or "Table")
            module = write_schema_module(params.source, name=name, folder=request.target_path)
            schema = f"{_module_path(module, root)}:{name}"
        request.target_path.mkdir(parents=True, exist_ok=True)
        (request.target_path / "defs.yaml").write_text(
            SCAFFOLD_YAML.format(
                type_name=request.type_name,
                schema=json.dumps(schema),
                asset=json.dumps(params.asset or "orders"),
            )
        )


def _class_name(asset: str) -> str:
    # NOTE: `analytics/daily_orders` gives `DailyOrders`, the asset's last part as a class.
    words = re.split(r"[^0-9A-Za-z]+", asset.rsplit("/", 1)[-1])
    name = "".join(word[:1].upper() + word[1:] for word in words)
    return name if name.isidentifier() else f"Table{name}"


def _module_path(module: Path, root: str) -> str:
    # NOTE: the dotted path from the project's root package, which `dg` puts on the path.
    parts = module.with_suffix("").parts
    return ".".join(parts[len(parts) - 1 - parts[::-1].index(root) :])


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
      # quality_policy:                # a dd.QualityPolicy, key for key ("The dg Component" page)
      #   threshold: {{warn_above: 0.01, fail_above: 0.1}}  # check fails above 1%, ERROR above 10%
      #   blocking: [primary_key]
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
        as `WARN`/`ERROR` or one per rule, `blocking` as a flag or rule names). A threshold's
        `fail_above` fails the check at `ERROR`: checks of a stored table fail no run. `volume`
        and `undeclared_columns` are refused at their own field, as `dd.table_checks` refuses
        them: they need the run that writes the table. A misspelt rule name is refused at its
        own line (`quality_policy.rules.amount|mn`, `quality_policy.blocking[1]`).
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
    severity: Annotated[str, _doc("The severity of a failing rule check: WARN or ERROR.", "WARN")]
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
        Granularity | None,
        _strict(
            Granularity.__value__ | None,
            "How many checks report the rules: rule, column or schema.",
            "rule",
        ),
    ] = None
    schema_rules: Annotated[
        SchemaRules | None,
        _strict(
            SchemaRules.__value__ | None,
            "At column granularity, the schema-level rules: collapsed or per_rule.",
            "per_rule",
        ),
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
            "blocking (volume and undeclared_columns need the run that writes the table).",
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
        fields = _Fields(component_yaml_positions(context), context, self.quality_policy)
        for each in dataclasses.fields(self):
            fields.require_kind(each.name, getattr(self, each.name), _FIELD_KINDS[each.name])
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
        # Every setting the model says the Component honours goes to `dd.table_checks` as its
        # field holds it; a Collection's `warning_rules` is None here, refused above.
        settings: dict[str, Any] = {
            spec.name: getattr(self, spec.name) for spec in settings_of(EntryPoint.COMPONENT)
        }
        if self.quality_policy is not None:
            settings["quality_policy"] = read_policy(self.quality_policy, fields.at)
        settings |= {"severity": severity, "lazy": self.lazy, "name": self.name}
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
            checks = [table_checks(schema, target, **settings) for target in targets]
        return dg.Definitions(asset_checks=checks)

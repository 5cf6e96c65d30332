"""`TableChecksComponent` loaded in-process from a scratch project's `defs.yaml`, as `dg` loads it.

`dg check defs` runs `dg.load_from_defs_folder` in a subprocess; calling it here is the same load
without the CLI's start-up, so every bad value the Component reports gets a test of its own.
The real CLI is exercised by `integration_tests/test_dg_component.py`.
"""

import dataclasses
import textwrap
from pathlib import Path

import dagster as dg
import pytest

import dagster_dataframely as dd
from dagster_dataframely.errors import ComponentFieldError
from tests.dg_project import COMPONENT, ROOT_MODULE, write_component


def load(project: Path, attributes: str) -> dg.Definitions:
    """Load the project with one component whose `attributes:` block is `attributes`."""
    write_component(
        project,
        "checks",
        f"type: {COMPONENT}\nattributes:\n" + textwrap.indent(textwrap.dedent(attributes), "  "),
    )
    return dg.load_from_defs_folder(path_within_project=project / "src" / ROOT_MODULE)


def field_error(project: Path, attributes: str) -> ComponentFieldError:
    """The package's error a load with these attributes fails on, under Dagster's wrapping."""
    with pytest.raises(Exception) as raised:  # noqa: PT011 (Dagster wraps it; the cause is checked)
        load(project, attributes)
    error: BaseException | None = raised.value
    while error is not None and not isinstance(error, ComponentFieldError):
        error = error.__cause__ or error.__context__
    assert isinstance(error, ComponentFieldError), f"no ComponentFieldError in {raised.value!r}"
    return error


FILE = f"src/{ROOT_MODULE}/defs/checks/defs.yaml"


def test_the_checks_of_one_asset_are_dd_table_checks_own(project: Path) -> None:
    defs = load(
        project,
        f"""
        dataframely_schema: {ROOT_MODULE}.schemas:Orders
        assets: [orders]
        severity: WARN
        check_granularity: column
        """,
    )
    (component_checks,) = defs.asset_checks or []
    from scratch.schemas import Orders  # type: ignore[import-not-found]

    python_checks = dd.table_checks(
        Orders, "orders", severity=dg.AssetCheckSeverity.WARN, check_granularity="column"
    )
    assert [(s.key, s.description) for s in component_checks.check_specs] == [
        (s.key, s.description) for s in python_checks.check_specs
    ]


def test_a_targets_partitions_come_from_its_own_definition(project: Path) -> None:
    defs = load(
        project,
        f"""
        dataframely_schema: {ROOT_MODULE}.schemas:Orders
        assets: [sales/daily_orders]
        severity: ERROR
        """,
    )
    (checks,) = defs.asset_checks or []
    assert checks.partitions_def == dg.DailyPartitionsDefinition(start_date="2026-01-01")
    assert {spec.asset_key for spec in checks.check_specs} == {
        dg.AssetKey(["sales", "daily_orders"])
    }


def test_a_collection_maps_each_member_to_its_asset(project: Path) -> None:
    defs = load(
        project,
        f"""
        dataframely_schema: {ROOT_MODULE}.collections:Book
        members:
          orders: book/orders
          lines: book/lines
        severity: WARN
        """,
    )
    (checks,) = defs.asset_checks or []
    names = {(spec.asset_key.to_user_string(), spec.name) for spec in checks.check_specs}
    assert ("book/lines", "dy_filter__every_line_has_an_order") in names
    assert ("book/orders", "dy_schema__columns") in names


@pytest.mark.parametrize(
    ("attributes", "line", "field", "fragments"),
    [
        pytest.param(
            "dataframely_schema: nowhere.schemas:Orders\nassets: [orders]\nseverity: WARN",
            3,
            "dataframely_schema",
            ["'nowhere.schemas' cannot be imported", "importable in the project's environment"],
            id="unknown-module",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.schemas.Orders\nassets: [orders]\nseverity: WARN",
            3,
            "dataframely_schema",
            ["is not a module:Class reference", "such as my_project.schemas:Orders"],
            id="no-colon",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.schemas:Order\nassets: [orders]\nseverity: WARN",
            3,
            "dataframely_schema",
            ["has no dy.Schema or dy.Collection named 'Order'", "Name one of its classes: Orders"],
            id="unknown-class",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nseverity: WARN\n"
            "assets:\n  - orders\n  - ordres",
            7,
            "assets[1]",
            ["no asset in the project's defs folder has the key 'ordres'", "Did you mean orders"],
            id="unknown-asset-key",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nassets: [orders]\nseverity: WARN\n"
            "check_granularity: per_column",
            6,
            "check_granularity",
            [
                "'per_column' is not a value it accepts",
                "Write one of rule, column, schema; or remove the field",
            ],
            id="bad-setting",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nassets: [orders]\nseverity: LOUD",
            5,
            "severity",
            ["'LOUD' is not a check severity", "Write one of WARN, ERROR"],
            id="bad-severity",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nassets: [orders]\nseverity: WARN\n"
            "warning_rules: [amount|max]",
            6,
            "warning_rules",
            ["Orders has no rule named amount|max", "amount|min"],
            id="unknown-warning-rule",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.collections:Book\nassets: [book/orders]\n"
            "severity: WARN",
            4,
            "assets",
            ["Book is a dy.Collection", "Write `members:`"],
            id="collection-with-assets",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.collections:Book\nseverity: WARN\n"
            "members:\n  orders: book/orders",
            5,
            "members",
            ["required member 'lines' of Book has no asset", "Map each required member"],
            id="collection-member-missing",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.broken_schemas:Orders\nassets: [orders]\n"
            "severity: WARN",
            3,
            "dataframely_schema",
            [
                f"importing the module '{ROOT_MODULE}.broken_schemas' raised RuntimeError: the "
                "schema registry is unreachable",
                "Fix the module's code",
            ],
            id="module-raising-on-import",
        ),
        pytest.param(
            "dataframely_schema: .schemas:Orders\nassets: [orders]\nseverity: WARN",
            3,
            "dataframely_schema",
            ["'.schemas' is a relative module path", f"such as {ROOT_MODULE}.schemas:Orders"],
            id="relative-module",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nassets: [orders]\nseverity: WARN\n"
            "name: orders checks",
            6,
            "name",
            ["'orders checks' is not a name Dagster accepts", "such as orders_checks"],
            id="invalid-name",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nseverity: WARN\n"
            "assets:\n  - orders\n  - sales/daily_orders\n  - orders",
            8,
            "assets[2]",
            ["the asset 'orders' is already listed, as assets[0]", "List each asset once"],
            id="duplicate-asset",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.collections:Book\nseverity: WARN\n"
            "members:\n  orders: book/orders\n  lines: book/orders",
            5,
            "members",
            ["orders and lines of Book are both mapped to the asset 'book/orders'"],
            id="two-members-one-asset",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nassets: [orders]\nseverity: WARN\n"
            "lazy: 'false'",
            6,
            "lazy",
            ["'false' is text, and the field takes true or false", "`lazy: false`, without quotes"],
            id="quoted-flag",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nassets: [orders]\nseverity: WARN\n"
            "max_failure_samples: '5'",
            6,
            "max_failure_samples",
            ["'5' is text, and the field takes a whole number", "without quotes"],
            id="quoted-count",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nassets: orders\nseverity: WARN",
            4,
            "assets",
            ["'orders' is text, and the field takes a list of asset keys", "`assets: [orders]`"],
            id="one-key-as-text",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nassets: [orders]\nseverity: WARN\n"
            "warning_rules: amount|min",
            6,
            "warning_rules",
            ["'amount|min' is text, and the field takes a list of rule names"],
            id="one-rule-as-text",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.collections:Book\nseverity: WARN\n"
            "members:\n  orders: book/orders\n  lines: book/lines\nwarning_rules: [primary_key]",
            8,
            "warning_rules",
            ["Book is a dy.Collection, whose checks take no warning rules", "Remove"],
            id="collection-warning-rules",
        ),
        pytest.param(
            f"dataframely_schema: {ROOT_MODULE}.collections:Book\nseverity: WARN\n"
            "members:\n  orders: book/orders\n  lines: book/lines\nwarning_rules: [no_such]",
            8,
            "warning_rules",
            ["Book is a dy.Collection, whose checks take no warning rules"],
            id="collection-unknown-warning-rule",
        ),
    ],
)
def test_a_bad_value_names_the_file_and_line_the_field_and_the_fix(
    project: Path, attributes: str, line: int, field: str, fragments: list[str]
) -> None:
    error = field_error(project, attributes)

    assert error.file == f"{FILE}:{line}"
    assert error.field == field
    assert str(error).startswith(f"{FILE}:{line}: attributes.{field}: ")
    for fragment in fragments:
        assert fragment in str(error)


@pytest.mark.parametrize(
    ("setting", "given"),
    [
        ("max_failure_samples: true", "input_value=True"),
        ("max_failure_samples: 5.0", "input_value=5.0"),
        ("lazy: 1", "input_value=1"),
    ],
    ids=["flag-as-count", "fraction-as-count", "number-as-flag"],
)
def test_a_value_pydantic_would_convert_is_refused_where_the_yaml_is_read(
    project: Path, setting: str, given: str
) -> None:
    # Dagster's own validation of the YAML refuses these, with the file, line and field; before,
    # `true` loaded as one failure sample and `1` as lazy loading.
    with pytest.raises(Exception) as raised:  # noqa: PT011 (Dagster wraps it; the cause is checked)
        load(
            project,
            f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nassets: [orders]\n"
            f"severity: WARN\n{setting}",
        )
    error: BaseException | None = raised.value
    while error is not None and type(error).__name__ != "ValidationError":
        error = error.__cause__ or error.__context__
    assert error is not None, f"no ValidationError in {raised.value!r}"
    field = setting.split(":")[0]
    assert f"attributes.{field}." in str(error)
    assert f"{FILE}:6" in str(error)
    assert given in str(error)


@pytest.mark.parametrize(
    "settings",
    [
        "lazy: false\nmax_failure_samples: 0",
        'lazy: "{{ false }}"\nmax_failure_samples: "{{ 2 + 1 }}"',
    ],
    ids=["plain", "templates"],
)
def test_a_flag_and_a_count_of_their_own_kind_load_as_dd_table_checks_takes_them(
    project: Path, settings: str
) -> None:
    defs = load(
        project,
        f"dataframely_schema: {ROOT_MODULE}.schemas:Orders\nassets: [orders]\nseverity: WARN\n"
        + settings,
    )
    (component_checks,) = defs.asset_checks or []
    from scratch.schemas import Orders  # type: ignore[import-not-found]

    python_checks = dd.table_checks(
        Orders, "orders", severity=dg.AssetCheckSeverity.WARN, lazy=False
    )
    assert component_checks.node_def.input_defs[0].dagster_type.typing_type == (
        python_checks.node_def.input_defs[0].dagster_type.typing_type
    )


def test_every_field_has_a_kind_it_is_checked_against() -> None:
    from dagster_dataframely._api.table_checks_component import _FIELD_KINDS

    assert set(_FIELD_KINDS) == {
        field.name for field in dataclasses.fields(dd.TableChecksComponent)
    }


# Each case: the policy as YAML, the same as Python, and the partition to run (None: unpartitioned).
POLICIES = {
    "warn above a tolerated count": (
        "{rules: {amount|min: {warn_above: 0}}}",
        dd.QualityPolicy(rules={"amount|min": dd.Threshold(warn_above=0)}),
    ),
    "tolerated by a fraction": (
        "{threshold: {warn_above: 0.5}}",
        dd.QualityPolicy(threshold=dd.Threshold(warn_above=0.5)),
    ),
    "failing threshold, blocking": (
        "{threshold: {fail_above: 0}, blocking: true}",
        dd.QualityPolicy(threshold=dd.Threshold(fail_above=0), blocking=True),
    ),
    "severity per rule, one rule blocking": (
        "{severity: {amount|min: ERROR}, blocking: [amount|min]}",
        dd.QualityPolicy(
            severity={"amount|min": dg.AssetCheckSeverity.ERROR}, blocking=["amount|min"]
        ),
    ),
}
TARGETS = {"orders": ("orders", None), "daily": ("sales/daily_orders", "2026-01-02")}


def _outcomes(
    asset: dg.AssetsDefinition, checks: dg.AssetsDefinition, partition: str | None
) -> list[tuple[object, ...]]:
    """Each check's key, passed flag and severity after the asset is materialized with them."""
    result = dg.materialize([asset, checks], partition_key=partition, raise_on_error=False)
    return sorted(
        (str(e.check_name), e.passed, e.severity) for e in result.get_asset_check_evaluations()
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", POLICIES)
def test_a_quality_policy_declares_and_decides_as_dd_table_checks(
    project: Path, case: str, target: str
) -> None:
    yaml_policy, policy = POLICIES[case]
    key, partition = TARGETS[target]
    defs = load(
        project,
        f"""
        dataframely_schema: {ROOT_MODULE}.schemas:Orders
        assets: [{key}]
        severity: WARN
        quality_policy: {yaml_policy}
        """,
    )
    (component_checks,) = defs.asset_checks or []
    asset = defs.resolve_assets_def(dg.AssetKey.from_user_string(key))
    from scratch.schemas import Orders

    python_checks = dd.table_checks(
        Orders, asset, severity=dg.AssetCheckSeverity.WARN, quality_policy=policy
    )
    assert component_checks.partitions_def == asset.partitions_def
    assert [(s.key, s.description, s.blocking) for s in component_checks.check_specs] == [
        (s.key, s.description, s.blocking) for s in python_checks.check_specs
    ]
    outcomes = _outcomes(asset, component_checks, partition)
    assert outcomes == _outcomes(asset, python_checks, partition)
    assert outcomes  # the checks ran


def test_a_threshold_from_yaml_says_the_check_fails_at_error_never_the_run(
    project: Path,
) -> None:
    defs = load(
        project,
        f"""
        dataframely_schema: {ROOT_MODULE}.schemas:Orders
        assets: [orders]
        severity: WARN
        quality_policy:
          threshold: {{warn_above: 0.01, fail_above: 0.1}}
          rules: {{primary_key: {{fail_above: 0}}}}
        """,
    )
    (checks,) = defs.asset_checks or []
    descriptions = {spec.name: spec.description for spec in checks.check_specs}
    assert descriptions["dy_rule__primary_key"] == (
        "primary key (order_id). Threshold: the check fails at ERROR on any failing row."
    )
    assert descriptions["dy_rule__amount__min"] == (
        "amount >= 0.0. Threshold: the check fails above 1% of the rows, at ERROR above 10% of "
        "the rows."
    )


def test_a_volume_check_is_refused_at_its_field_as_dd_table_checks_refuses_it(
    project: Path,
) -> None:
    from scratch.schemas import Orders

    with pytest.raises(dd.errors.ThresholdNotApplicableError):
        dd.table_checks(
            Orders,
            "orders",
            severity=dg.AssetCheckSeverity.WARN,
            quality_policy=dd.QualityPolicy(volume=dd.VolumeCheck(min_rows=1)),
        )
    error = field_error(
        project,
        f"""
        dataframely_schema: {ROOT_MODULE}.schemas:Orders
        assets: [orders]
        severity: WARN
        quality_policy: {{volume: {{min_rows: 1}}}}
        """,
    )
    assert (error.file, error.field) == (f"{FILE}:7", "quality_policy.volume")


def test_an_anomaly_check_from_yaml_declares_as_dd_table_checks_and_a_bad_value_is_refused(
    project: Path,
) -> None:
    from scratch.schemas import Orders

    python_checks = dd.table_checks(
        Orders,
        "orders",
        severity=dg.AssetCheckSeverity.WARN,
        quality_policy=dd.QualityPolicy(
            anomaly=dd.AnomalyCheck(
                metrics=["row_count"], direction="drop", severity=dg.AssetCheckSeverity.ERROR
            )
        ),
    )
    defs = load(
        project,
        f"""
        dataframely_schema: {ROOT_MODULE}.schemas:Orders
        assets: [orders]
        severity: WARN
        quality_policy: {{anomaly: {{metrics: [row_count], direction: drop, severity: ERROR}}}}
        """,
    )
    (component_checks,) = defs.asset_checks or []
    declared = [(s.key, s.description) for s in component_checks.check_specs]
    assert declared == [(s.key, s.description) for s in python_checks.check_specs]
    assert "dy_anomaly__row_count" in [key.name for key, _ in declared]
    wrong = field_error(
        project,
        f"""
        dataframely_schema: {ROOT_MODULE}.schemas:Orders
        assets: [orders]
        severity: WARN
        quality_policy: {{anomaly: {{direction: up}}}}
        """,
    )
    assert wrong.field == "quality_policy.anomaly"
    assert "direction" in str(wrong)


@pytest.mark.parametrize(
    ("policy", "field", "problem"),
    [
        ("{threshold: {fail_above: '0'}}", "quality_policy.threshold.fail_above", "is text"),
        ("{blocking: 'false'}", "quality_policy.blocking", "neither true"),
        ("{severity: LOUD}", "quality_policy.severity", "not a check severity"),
        ("{rules: {amount|nope: {fail_above: 0}}}", "quality_policy.rules.amount|nope", "no rule"),
        ("{threshold: {warn_above: 1.5}}", "quality_policy.threshold", "1.5"),
        ("{limits: {}}", "quality_policy", "not a setting"),
    ],
)
def test_a_wrong_policy_names_its_field(
    project: Path, policy: str, field: str, problem: str
) -> None:
    error = field_error(
        project,
        f"""
        dataframely_schema: {ROOT_MODULE}.schemas:Orders
        assets: [orders]
        severity: WARN
        quality_policy: {policy}
        """,
    )
    assert error.field == field
    assert problem in error.problem
    assert error.file == f"{FILE}:7"


ORDERS_RULES = (
    "primary_key, order_id|nullability, amount|nullability, amount|min, amount|inf, amount|nan"
)


def _policy_error(project: Path, policy: str) -> ComponentFieldError:
    """The refusal of a `quality_policy:` written in block style, one key per line from line 8."""
    return field_error(
        project,
        f"\ndataframely_schema: {ROOT_MODULE}.schemas:Orders\nassets: [orders]\nseverity: WARN\n"
        f"quality_policy:\n{textwrap.indent(textwrap.dedent(policy).strip(), '  ')}\n",
    )


@pytest.mark.parametrize(
    ("policy", "line", "field"),
    [
        (
            """
            rules:
              amount|min: {warn_above: 1}
              amount|mn: {fail_above: 0}
            """,
            10,
            "quality_policy.rules.amount|mn",
        ),
        (
            """
            blocking: true
            severity:
              amount|mn: ERROR
            """,
            10,
            "quality_policy.severity.amount|mn",
        ),
        (
            """
            threshold: {warn_above: 1}
            blocking:
              - amount|min
              - amount|mn
            """,
            11,
            "quality_policy.blocking[1]",
        ),
    ],
    ids=["rules", "severity", "blocking"],
)
def test_a_misspelt_rule_name_is_refused_at_its_own_field_and_line(
    project: Path, policy: str, line: int, field: str
) -> None:
    error = _policy_error(project, policy)
    assert str(error) == (
        f"{FILE}:{line}: attributes.{field}: Orders has no rule named amount|mn. Did you mean "
        f"amount|min? Name its rules as Dataframely does: {ORDERS_RULES}."
    )


def test_undeclared_columns_are_refused_because_they_need_the_run_that_writes_the_table(
    project: Path,
) -> None:
    error = _policy_error(
        project,
        """
        threshold: {warn_above: 1}
        undeclared_columns: check
        """,
    )
    assert str(error) == (
        f"{FILE}:9: attributes.quality_policy.undeclared_columns: `undeclared_columns=` needs "
        "the run that writes the table (the undeclared columns are those of the frame a run "
        "returns, which the write drops), and these checks only read a stored table. Remove "
        "`undeclared_columns:` here, and declare it in the quality_policy of the dd.asset that "
        "writes the table."
    )


def test_an_unknown_policy_key_lists_the_keys_a_stored_tables_checks_use(project: Path) -> None:
    error = _policy_error(project, "limits: {}")
    assert str(error) == (
        f"{FILE}:7: attributes.quality_policy: 'limits' is not a setting of a quality policy. "
        "Use threshold, rules, severity, blocking, anomaly, as in `quality_policy: {threshold: "
        "{warn_above: 0.01, fail_above: 0.1}, rules: {amount|min: {fail_above: 0}}, severity: "
        "ERROR, blocking: true}`."
    )


@pytest.mark.parametrize(
    ("reference", "problem", "fix"),
    [
        (
            "dataframely:Schema",
            "dataframely:Schema is dy.Schema itself, the base class, which declares no column, so "
            "a frame validated against it keeps no column and no row",
            "Name a subclass of dy.Schema that declares the frame's columns, such as "
            f"{ROOT_MODULE}.schemas:Orders",
        ),
        (
            "dataframely.collection:Collection",
            "dataframely.collection:Collection is dy.Collection itself, the base class, which "
            "declares no member, so there is no table to validate",
            "Name a subclass of dy.Collection that declares its members, such as "
            f"{ROOT_MODULE}.schemas:OrderBook",
        ),
    ],
    ids=["dy.Schema", "dy.Collection"],
)
def test_the_base_class_itself_is_refused_at_its_field(
    project: Path, reference: str, problem: str, fix: str
) -> None:
    # Before, `dataframely:Schema` declared a check on a schema without a column.
    error = field_error(
        project, f"dataframely_schema: {reference}\nassets: [orders]\nseverity: WARN"
    )

    assert str(error) == f"{FILE}:3: attributes.dataframely_schema: {problem}. {fix}."

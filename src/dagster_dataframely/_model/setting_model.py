"""Every setting declared once: a key of the TypedDicts that type an entry point's `**settings`.

A setting is one key, annotated with its type and a `SettingSpec` of the rest (defaults, docs
line, the reason each entry point that does not take it refuses it). From that one place come
its variable (`DAGSTER_DATAFRAMELY_<NAME>`, from the name), its parser (`settings.py`, from the
type), its signature and Parameters paragraph (`setting_keywords.py`), and the entry points that
honour it: those whose TypedDict includes its key. Dataframely derives its options from one
`Options` TypedDict the same way.
"""

import dataclasses
import enum
import functools
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, field
from types import MappingProxyType, NoneType, UnionType
from typing import Annotated, Any, Literal, TypedDict, Union, get_args, get_origin, get_type_hints

from typing_extensions import TypeAliasType

from dagster_dataframely._upstream import document_type_alias

from .quality_policy import QualityPolicy

ENV_PREFIX = "DAGSTER_DATAFRAMELY_"

REPOSITORY_VARIABLES: Mapping[str, str] = MappingProxyType(
    {
        "DAGSTER_DATAFRAMELY_DEMO_DIR": "where the repository's demo writes its tables",
        "DAGSTER_DATAFRAMELY_THOROUGH": "the long profile of the streamed-rules properties",
        "DAGSTER_DATAFRAMELY_RANGE_EXAMPLES": "how many runs the partition-range property draws",
    }
)
"""The variables the repository's demo and tests read, which are no setting: never warned of."""

RESERVED_PREFIXES = ("DAGSTER_DATAFRAMELY_TEST_", "DAGSTER_DATAFRAMELY_BENCH_")
"""Prefixes of the repository's test and benchmark variables: never a setting, never warned of."""

Granularity = TypeAliasType("Granularity", Literal["rule", "column", "schema"])
document_type_alias(
    Granularity,
    """How many asset checks report a schema's rules: `"rule"`, `"column"` or `"schema"`.

- `"rule"` (the default): one check per rule, `dy_rule__<rule>`.
- `"column"`: one check per column with rules, `dy_col__<column>`, and the schema-level rules
  as `schema_rules` says.
- `"schema"`: one check for every rule, `dy_schema__rules`.

The value of `check_granularity=` and of `DAGSTER_DATAFRAMELY_CHECK_GRANULARITY`. Changing it
renames the checks, so their history starts over.
""",
)
SchemaRules = TypeAliasType("SchemaRules", Literal["collapsed", "per_rule"])
document_type_alias(
    SchemaRules,
    """Which checks report the schema-level rules at `column` granularity.

- `"collapsed"` (the default): one check, `dy_schema__rules`, for the primary key and every
  `@dy.rule()`.
- `"per_rule"`: one check per schema-level rule, `dy_rule__<rule>`.

The value of `schema_rules=` and of `DAGSTER_DATAFRAMELY_SCHEMA_RULES`.
""",
)
GRANULARITIES: tuple[str, ...] = get_args(Granularity.__value__)
SCHEMA_RULES: tuple[str, ...] = get_args(SchemaRules.__value__)


class EntryPoint(enum.Enum):
    """A public function or class that takes settings, by how the user writes it."""

    ASSET = "dd.asset"
    ASSET_OUT = "dd.AssetOut"
    ASSET_OUT_FROM_SPEC = "dd.AssetOut.from_spec"
    MULTI_ASSET = "dd.multi_asset"
    COLLECTION_ASSET = "dd.collection_asset"
    TABLE_CHECKS = "dd.table_checks"
    COMPONENT = "dd.TableChecksComponent"
    WIRING_CHECK_SPECS = "dd.wiring.check_specs"
    WIRING_CHECK_RESULTS = "dd.wiring.check_results"
    WIRING_VALIDATION_RESULTS = "dd.wiring.validation_results"


@dataclass(frozen=True, slots=True)
class SettingSpec:
    """One setting: what its key's annotation declares beside the type, and what follows from it.

    `keyword_default` is the keyword's default in a signature (`None`: the environment, then
    `package_default`); `keyword_defaults` the entry points whose keyword defaults otherwise.
    `refusing` gives each reason and the entry points that refuse the setting for it (a
    multi-asset refuses every setting). `name`,
    `annotation` and `honoured_by` come from the key (`declared_settings`).
    """

    package_default: object
    doc: str
    """The setting's line in the documentation's settings table, which opens its paragraph."""
    refusing: Mapping[str, Set[EntryPoint]]
    detail: str = ""
    """What every entry point's Parameters paragraph adds to `doc`: how the value is read."""
    env: bool = True
    """Whether `DAGSTER_DATAFRAMELY_<NAME>` sets it."""
    keyword_default: object = None
    keyword_defaults: Mapping[EntryPoint, object] = field(default_factory=dict)
    name: str = ""
    annotation: Any = None
    honoured_by: frozenset[EntryPoint] = frozenset()

    @property
    def refused(self) -> Mapping[EntryPoint, str]:
        """The reason each entry point that does not honour the setting refuses it."""
        # NOTE: a multi-asset takes no setting of its own: each output's are its dd.AssetOut's.
        return {EntryPoint.MULTI_ASSET: "each output's settings are its dd.AssetOut's"} | {
            point: reason for reason, points in self.refusing.items() for point in points
        }

    @property
    def env_var(self) -> str | None:
        """The environment variable, derived from the name, or None without one."""
        return ENV_PREFIX + self.name.upper() if self.env else None

    @property
    def value_type(self) -> Any:
        """The type of the setting's value: its annotation without `None`."""
        (value,) = (kind for kind in _union(self.annotation) if kind is not NoneType)
        return value

    @property
    def type_text(self) -> str:
        """The keyword's annotation as the signatures write it: `int | None`."""
        return _type_text(self.annotation)

    def default_for(self, entry_point: EntryPoint) -> object:
        """The keyword's default in `entry_point`'s signature."""
        return self.keyword_defaults.get(entry_point, self.keyword_default)


def _union(annotation: Any) -> tuple[Any, ...]:
    return get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)


def _type_text(annotation: Any) -> str:
    if len(kinds := _union(annotation)) > 1:
        return " | ".join(_type_text(kind) for kind in kinds)
    origin: Any = get_origin(annotation)
    if arguments := get_args(annotation):
        return f"{origin.__name__}[{', '.join(map(_type_text, arguments))}]"
    return "None" if annotation is NoneType else str(annotation.__name__)


_E = EntryPoint
_CHECKING = frozenset(
    {_E.TABLE_CHECKS, _E.COMPONENT, _E.WIRING_CHECK_SPECS, _E.WIRING_CHECK_RESULTS}
)
_WRITES_NOTHING = "it checks a table or frame and writes no rows, so there is no quarantine"
_NO_MATERIALIZATION = "it reports checks only, with no materialization metadata"
_PII = (
    '**The rows go to the Dagster event log**, with only a column marked `metadata={"pii": True}`'
    " masked and every cell cut to 256 characters."
)


# NOTE: a group holds the settings the same entry points take, so that each entry point's
# TypedDict below composes groups and no key is written twice; the order in which `_Every`
# composes them is the order of the settings in every signature.
class _Quarantined(TypedDict, total=False):
    quarantine: Annotated[
        bool,
        SettingSpec(
            False,
            "write valid rows and quarantine the invalid ones instead of failing the run",
            {
                _WRITES_NOTHING: _CHECKING,
                "the quarantine is on when a quarantine_writer is given": {
                    _E.WIRING_VALIDATION_RESULTS
                },
            },
            detail="With `True` the invalid rows go to `<asset name>_quarantine`, through the "
            "same IO manager, and the valid rows are written; with `False` any invalid row fails "
            "the run with `ValidationAbortError` and nothing is written.",
            env=False,
            keyword_default=False,
        ),
    ]


class _Cleared(TypedDict, total=False):
    clear_quarantine: Annotated[
        bool | None,
        SettingSpec(
            False,
            "a clean run writes an empty quarantine, so no stale invalid rows stay",
            {_WRITES_NOTHING: _CHECKING},
            detail="With `True` (and a quarantine), a run whose rows are all valid writes an "
            "empty quarantine, so no stale invalid rows of an earlier run (of the same "
            "partition) stay beside a clean table. `None` or `False` leaves it as it was.",
            env=False,
            keyword_defaults={_E.WIRING_VALIDATION_RESULTS: False},
        ),
    ]


class _Warned(TypedDict, total=False):
    warning_rules: Annotated[
        Iterable[str] | None,
        SettingSpec(
            (),
            "rules whose failures only warn and never keep a row out of the table",
            {
                "one Collection.filter decides every member's rows together in memory: a "
                "warning-only rule cannot keep a row its filters drop in another member": (
                    {_E.COLLECTION_ASSET}
                ),
            },
            detail="Named as Dataframely names them (`amount|max`, a `@dy.rule` method, "
            "`primary_key`); a single string names one rule. Their checks fail at `WARN`. See "
            'the documentation\'s "Warning rules" page.',
            env=False,
        ),
    ]


class _Named(TypedDict, total=False):
    quality_policy: Annotated[
        QualityPolicy | None,
        SettingSpec(
            None,
            "failing rows each rule tolerates, severities, blocking, volume checks",
            {},
            detail="A `dd.QualityPolicy`, its rule names checked against the schema's rules. "
            "`None`: the failure policy alone decides. See the documentation's \"Quality "
            'policy" page.',
            env=False,
        ),
    ]
    check_granularity: Annotated[
        Granularity | None,
        SettingSpec(
            "rule",
            "how many checks report the rules: rule, column or schema",
            {},
            detail="One check per rule, per column with rules, or one for the schema. Changing "
            "it on an asset that has already run starts a new check history.",
        ),
    ]
    schema_rules: Annotated[
        SchemaRules | None,
        SettingSpec(
            "collapsed",
            "at column granularity, the schema-level rules collapsed or per_rule",
            {},
            detail="`collapsed` into one check, `dy_schema__rules`, or `per_rule`, one check each.",
        ),
    ]


class CheckSpecKeywords(_Warned, _Named, total=False):
    """`dd.wiring.check_specs`' settings: what names and describes the checks."""


class _Sampled(TypedDict, total=False):
    max_failure_samples: Annotated[
        int | None,
        SettingSpec(
            5,
            "rows per rule in check metadata; 0 turns it off",
            {
                "it declares the check specs only; no check result is reported": {
                    _E.WIRING_CHECK_SPECS
                },
            },
            detail=f"Under `dy_failed_sample`. {_PII}",
        ),
    ]


class CheckKeywords(CheckSpecKeywords, _Sampled, total=False):
    """The settings of checks on a stored table: `dd.table_checks`, `dd.wiring.check_results`."""


class _Reported(TypedDict, total=False):
    statistics: Annotated[
        bool | None,
        SettingSpec(
            True,
            "statistics of the written rows in the materialization metadata",
            {_NO_MATERIALIZATION: _CHECKING},
            detail="One table per dtype group; the main cost a run adds to the filter.",
        ),
    ]
    row_sample: Annotated[
        int | None,
        SettingSpec(
            5,
            "valid and invalid rows in the materialization; 0 turns it off",
            {_NO_MATERIALIZATION: _CHECKING},
            detail="At most this many valid and this many invalid rows; `0` also keeps the rows "
            f"out of what the IO manager records. {_PII}",
        ),
    ]


class ValidationKeywords(_Cleared, CheckKeywords, _Reported, total=False):
    """`dd.wiring.validation_results`' settings; its quarantine is on with a writer."""


class OutputKeywords(_Quarantined, ValidationKeywords, total=False):
    """The settings of one output: `dd.asset`'s, `dd.AssetOut`'s and `AssetOut.from_spec`'s."""

    streaming: Annotated[
        bool | None,
        SettingSpec(
            False,
            "validate a returned LazyFrame without collecting it",
            {
                "one Collection.filter decides every member's rows together in memory, and "
                "streaming needs each frame staged alone": {_E.COLLECTION_ASSET},
                "streamed validation stages the frame of a decorated asset's step alone": (
                    _CHECKING | {_E.WIRING_VALIDATION_RESULTS}
                ),
            },
            detail="Its plan runs once into a local staging file, the rules run in streaming "
            "passes over it, and the IO manager (one that writes a `LazyFrame`, as "
            "dagster-polars' do) sinks the valid rows. Same rows, checks and metadata. See the "
            'documentation\'s "Performance" page.',
        ),
    ]
    keys_across_partitions: Annotated[
        bool | None,
        SettingSpec(
            False,
            "check the primary key and unique columns over every stored partition",
            {
                "one Collection.filter decides its members' rows together; their keys are not "
                "checked across partitions": {_E.COLLECTION_ASSET},
                "it runs after a materialization, which only a decorated asset's step writes": (
                    _CHECKING | {_E.WIRING_VALIDATION_RESULTS}
                ),
            },
            detail="A partitioned asset only: one check, `dy_keys_across_partitions`, reads the "
            "key columns of every stored partition after each materialization and fails on a "
            'key stored in two partitions. See the documentation\'s "Partitioned checks" page.',
            env=False,
        ),
    ]


class CollectionKeywords(_Quarantined, _Cleared, _Named, _Sampled, _Reported, total=False):
    """`dd.collection_asset`'s: no warning rules or streaming (one filter, in memory)."""


class _Every(OutputKeywords, total=False):
    quarantine_dir: Annotated[
        str,
        SettingSpec(
            None,
            "where direct calls write invalid rows",
            {"it is read from the environment only": frozenset(EntryPoint)},
        ),
    ]


KEYWORDS: Mapping[EntryPoint, type] = {
    _E.ASSET: OutputKeywords,
    _E.ASSET_OUT: OutputKeywords,
    _E.ASSET_OUT_FROM_SPEC: OutputKeywords,
    _E.COLLECTION_ASSET: CollectionKeywords,
    _E.TABLE_CHECKS: CheckKeywords,
    _E.WIRING_CHECK_SPECS: CheckSpecKeywords,
    _E.WIRING_CHECK_RESULTS: CheckKeywords,
    _E.WIRING_VALIDATION_RESULTS: ValidationKeywords,
}
"""The TypedDict of each entry point whose settings are `**settings`."""
# NOTE: the Component's YAML fields are `dd.table_checks`' settings; a multi-asset takes none.
_TAKES = {**KEYWORDS, _E.COMPONENT: CheckKeywords}


def declared_settings(keywords: type) -> tuple[SettingSpec, ...]:
    """The settings the keys of the TypedDict `keywords` declare, in its order."""
    return tuple(
        dataclasses.replace(
            spec,
            name=name,
            annotation=get_args(hint)[0],
            honoured_by=frozenset(p for p, kind in _TAKES.items() if name in kind.__annotations__),
        )
        for name, hint in get_type_hints(keywords, include_extras=True).items()
        for spec in hint.__metadata__
    )


SETTINGS = declared_settings(_Every)
"""Every setting, in the order the signatures list them."""

_BY_NAME: Mapping[str, SettingSpec] = MappingProxyType({spec.name: spec for spec in SETTINGS})


def setting(name: str) -> SettingSpec:
    """The setting called `name`."""
    return _BY_NAME[name]


# NOTE: cached, as the model is fixed at import: every declaration asks both questions, once
# for its decorator and once for its output.
@functools.cache
def settings_of(entry_point: EntryPoint) -> tuple[SettingSpec, ...]:
    """The settings `entry_point` honours, in the model's order."""
    return tuple(spec for spec in SETTINGS if entry_point in spec.honoured_by)


@functools.cache
def refusals(entry_point: EntryPoint) -> Mapping[str, str]:
    """The reason `entry_point` refuses each setting it does not honour, by setting name."""
    return MappingProxyType(
        {spec.name: spec.refused[entry_point] for spec in SETTINGS if entry_point in spec.refused}
    )

"""Every setting of the package declared once: its type, defaults, variable and entry points.

Each entry point either honours a setting (it is one of its keywords) or refuses it with a
reason; a test compares each entry point's real signature with this table, so a setting added
to one entry point and not decided for the others fails there. The resolver in `settings.py`
reads its package defaults and variable names from here.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "ENV_PREFIX",
    "REPOSITORY_VARIABLES",
    "RESERVED_PREFIXES",
    "SETTINGS",
    "EntryPoint",
    "SettingSpec",
    "refusals",
    "setting",
    "settings_of",
]

ENV_PREFIX = "DAGSTER_DATAFRAMELY_"

REPOSITORY_VARIABLES: Mapping[str, str] = MappingProxyType(
    {
        "DAGSTER_DATAFRAMELY_DEMO_DIR": "where the repository's demo writes its tables",
        "DAGSTER_DATAFRAMELY_THOROUGH": "the long profile of the streamed-rules properties",
        "DAGSTER_DATAFRAMELY_RANGE_EXAMPLES": "how many runs the partition-range property draws",
    }
)
"""The variables the repository's demo and tests read, which are no setting of the package.

The package knows them so that it does not warn of them as misspelt settings."""

RESERVED_PREFIXES = ("DAGSTER_DATAFRAMELY_TEST_", "DAGSTER_DATAFRAMELY_BENCH_")
"""Prefixes of the repository's test and benchmark variables: never a setting, never warned of."""


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


_E = EntryPoint
_DECLARES_OUTPUT = frozenset({_E.ASSET, _E.ASSET_OUT, _E.ASSET_OUT_FROM_SPEC})
_READS_ONLY = frozenset({_E.TABLE_CHECKS, _E.COMPONENT, _E.WIRING_CHECK_RESULTS})

_PER_OUTPUT = "each output's settings are its dd.AssetOut's"
_WRITES_NOTHING = "it checks a table or frame and writes no rows, so there is no quarantine"
_NO_MATERIALIZATION = "it reports checks only, with no materialization metadata"
_SPECS_ONLY = "it declares the check specs only; no check result is reported"
_STREAM_IN_STEP = "streamed validation stages the frame of a decorated asset's step alone"
_COLLECTION_FILTER = (
    "one Collection.filter decides every member's rows together in memory: a warning-only "
    "rule cannot keep a row its filters drop in another member"
)
_COLLECTION_STREAM = (
    "one Collection.filter decides every member's rows together in memory, and streaming "
    "needs each frame staged alone"
)


@dataclass(frozen=True, slots=True)
class SettingSpec:
    """One setting: how it is written, what it defaults to, and which entry points take it.

    `keyword_default` is the keyword's default in a signature (`None`: the environment, then
    `package_default`); `keyword_defaults` the entry points whose keyword defaults otherwise.
    `refused` gives, for each entry point that does not honour the setting, the reason.
    """

    name: str
    type_text: str
    """The keyword's annotation as the signatures write it."""
    package_default: object
    keyword_default: object
    env: bool
    """Whether `DAGSTER_DATAFRAMELY_<NAME>` sets it."""
    honoured_by: frozenset[EntryPoint]
    refused: Mapping[EntryPoint, str]
    doc: str
    """The line the settings table of the documentation's "Settings" page gives it."""
    detail: str = ""
    """What every entry point's Parameters paragraph adds to `doc`: how the value is read."""
    keyword_defaults: Mapping[EntryPoint, object] = field(
        default_factory=lambda: MappingProxyType({})
    )

    @property
    def env_var(self) -> str | None:
        """The environment variable, derived from the name, or None without one."""
        return ENV_PREFIX + self.name.upper() if self.env else None

    def default_for(self, entry_point: EntryPoint) -> object:
        """The keyword's default in `entry_point`'s signature."""
        return self.keyword_defaults.get(entry_point, self.keyword_default)


def _refusing(
    honoured: frozenset[EntryPoint], reasons: Mapping[str, frozenset[EntryPoint]]
) -> Mapping[EntryPoint, str]:
    """The reason for each entry point not in `honoured`, from groups of entry points."""
    refused = {
        entry_point: reason
        for reason, entry_points in reasons.items()
        for entry_point in entry_points
        if entry_point not in honoured
    }
    return MappingProxyType(refused)


def _spec(
    name: str,
    type_text: str,
    package_default: object,
    *,
    honoured_by: frozenset[EntryPoint],
    reasons: Mapping[str, frozenset[EntryPoint]],
    doc: str,
    keyword_default: object = None,
    env: bool = True,
    keyword_defaults: Mapping[EntryPoint, object] | None = None,
    detail: str = "",
) -> SettingSpec:
    return SettingSpec(
        name=name,
        type_text=type_text,
        package_default=package_default,
        keyword_default=keyword_default,
        env=env,
        honoured_by=honoured_by,
        refused=_refusing(honoured_by, reasons),
        doc=doc,
        detail=detail,
        keyword_defaults=MappingProxyType(dict(keyword_defaults or {})),
    )


_ALL_BUT_MULTI = frozenset(EntryPoint) - {_E.MULTI_ASSET}
_QUARANTINING = _DECLARES_OUTPUT | {_E.COLLECTION_ASSET}
_MULTI = frozenset({_E.MULTI_ASSET})
_CHECKING = _READS_ONLY | {_E.WIRING_CHECK_SPECS}
_REPORTING = _DECLARES_OUTPUT | {_E.COLLECTION_ASSET, _E.WIRING_VALIDATION_RESULTS}

SETTINGS: tuple[SettingSpec, ...] = (
    _spec(
        "quarantine",
        "bool",
        False,
        keyword_default=False,
        env=False,
        honoured_by=_QUARANTINING,
        reasons={
            _PER_OUTPUT: _MULTI,
            _WRITES_NOTHING: _CHECKING,
            "the quarantine is on when a quarantine_writer is given": frozenset(
                {_E.WIRING_VALIDATION_RESULTS}
            ),
        },
        doc="write valid rows and quarantine the invalid ones instead of failing the run",
        detail=(
            "With `True` the invalid rows go to `<asset name>_quarantine`, through the same "
            "IO manager, and the valid rows are written; with `False` any invalid row fails "
            "the run with `ValidationAbortError` and nothing is written."
        ),
    ),
    _spec(
        "clear_quarantine",
        "bool | None",
        False,
        env=False,
        honoured_by=_QUARANTINING | {_E.WIRING_VALIDATION_RESULTS},
        reasons={_PER_OUTPUT: _MULTI, _WRITES_NOTHING: _CHECKING},
        doc="a clean run writes an empty quarantine, so no stale invalid rows stay",
        detail=(
            "With `True` (and a quarantine), a run whose rows are all valid writes an empty "
            "quarantine, so no stale invalid rows of an earlier run (of the same partition) "
            "stay beside a clean table. `None` or `False` leaves it as it was."
        ),
        keyword_defaults={_E.WIRING_VALIDATION_RESULTS: False},
    ),
    _spec(
        "warning_rules",
        "Iterable[str] | None",
        (),
        env=False,
        honoured_by=_ALL_BUT_MULTI - {_E.COLLECTION_ASSET},
        reasons={_PER_OUTPUT: _MULTI, _COLLECTION_FILTER: frozenset({_E.COLLECTION_ASSET})},
        doc="rules whose failures only warn and never keep a row out of the table",
        detail=(
            "Named as Dataframely names them (`amount|max`, a `@dy.rule` method, "
            "`primary_key`); a single string names one rule. Their checks fail at `WARN`. See"
            ' the documentation\'s "Warning rules" page.'
        ),
    ),
    _spec(
        "quality_policy",
        "QualityPolicy | None",
        None,
        env=False,
        honoured_by=_ALL_BUT_MULTI,
        reasons={_PER_OUTPUT: _MULTI},
        doc="failing rows each rule tolerates, severities, blocking, volume checks",
        detail=(
            "A `dd.QualityPolicy`, its rule names checked against the schema's rules. `None`:"
            ' the failure policy alone decides. See the documentation\'s "Quality policy" page.'
        ),
    ),
    _spec(
        "check_granularity",
        "Granularity | None",
        "rule",
        honoured_by=_ALL_BUT_MULTI,
        reasons={_PER_OUTPUT: _MULTI},
        doc="how many checks report the rules: rule, column or schema",
        detail=(
            "One check per rule, per column with rules, or one for the schema. Changing it on"
            " an asset that has already run starts a new check history."
        ),
    ),
    _spec(
        "schema_rules",
        "SchemaRules | None",
        "collapsed",
        honoured_by=_ALL_BUT_MULTI,
        reasons={_PER_OUTPUT: _MULTI},
        doc="at column granularity, the schema-level rules collapsed or per_rule",
        detail=("`collapsed` into one check, `dy_schema__rules`, or `per_rule`, one check each."),
    ),
    _spec(
        "max_failure_samples",
        "int | None",
        5,
        honoured_by=_ALL_BUT_MULTI - {_E.WIRING_CHECK_SPECS},
        reasons={_PER_OUTPUT: _MULTI, _SPECS_ONLY: frozenset({_E.WIRING_CHECK_SPECS})},
        doc="rows per rule in check metadata; 0 turns it off",
        detail=(
            "Under `dy_failed_sample`. **The rows go to the Dagster event log**, with only a "
            'column marked `metadata={"pii": True}` masked and every cell cut to 256 '
            "characters."
        ),
    ),
    _spec(
        "statistics",
        "bool | None",
        True,
        honoured_by=_REPORTING,
        reasons={_PER_OUTPUT: _MULTI, _NO_MATERIALIZATION: _CHECKING},
        doc="statistics of the written rows in the materialization metadata",
        detail=("One table per dtype group; the main cost a run adds to the filter."),
    ),
    _spec(
        "row_sample",
        "int | None",
        5,
        honoured_by=_REPORTING,
        reasons={_PER_OUTPUT: _MULTI, _NO_MATERIALIZATION: _CHECKING},
        doc="valid and invalid rows in the materialization; 0 turns it off",
        detail=(
            "At most this many valid and this many invalid rows; `0` also keeps the rows out "
            "of what the IO manager records. **The rows go to the Dagster event log**, with "
            'only a column marked `metadata={"pii": True}` masked and every cell cut to 256 '
            "characters."
        ),
    ),
    _spec(
        "streaming",
        "bool | None",
        False,
        honoured_by=_DECLARES_OUTPUT,
        reasons={
            _PER_OUTPUT: _MULTI,
            _COLLECTION_STREAM: frozenset({_E.COLLECTION_ASSET}),
            _STREAM_IN_STEP: _CHECKING | {_E.WIRING_VALIDATION_RESULTS},
        },
        doc="validate a returned LazyFrame without collecting it",
        detail=(
            "Its plan runs once into a local staging file, the rules run in streaming passes "
            "over it, and the IO manager (one that writes a `LazyFrame`, as dagster-polars' "
            "do) sinks the valid rows. Same rows, checks and metadata. See "
            'the documentation\'s "Performance" page.'
        ),
    ),
    _spec(
        "keys_across_partitions",
        "bool | None",
        False,
        env=False,
        honoured_by=_DECLARES_OUTPUT,
        reasons={
            _PER_OUTPUT: _MULTI,
            "one Collection.filter decides its members' rows together; their keys are not "
            "checked across partitions": frozenset({_E.COLLECTION_ASSET}),
            "it runs after a materialization, which only a decorated asset's step writes": (
                _CHECKING | {_E.WIRING_VALIDATION_RESULTS}
            ),
        },
        doc="check the primary key and unique columns over every stored partition",
        detail=(
            "A partitioned asset only: one check, `dy_keys_across_partitions`, reads the key "
            "columns of every stored partition after each materialization and fails on a key "
            'stored in two partitions. See the documentation\'s "Partitioned checks" page.'
        ),
    ),
    _spec(
        "quarantine_dir",
        "str",
        None,
        honoured_by=frozenset(),
        reasons={"it is read from the environment only": frozenset(EntryPoint)},
        doc="where direct calls write invalid rows",
    ),
)
"""Every setting, in the order the signatures list them."""

_BY_NAME: Mapping[str, SettingSpec] = MappingProxyType({spec.name: spec for spec in SETTINGS})


def setting(name: str) -> SettingSpec:
    """The setting called `name`."""
    return _BY_NAME[name]


def settings_of(entry_point: EntryPoint) -> tuple[SettingSpec, ...]:
    """The settings `entry_point` honours, in the model's order."""
    return tuple(spec for spec in SETTINGS if entry_point in spec.honoured_by)


def refusals(entry_point: EntryPoint) -> Mapping[str, str]:
    """The reason `entry_point` refuses each setting it does not honour, by setting name."""
    return MappingProxyType(
        {spec.name: spec.refused[entry_point] for spec in SETTINGS if entry_point in spec.refused}
    )

"""Refusals of a declaration's settings: rules named in settings, thresholds, keys, partitions."""

import dataclasses
from collections.abc import Sequence

import dagster as dg

from dagster_dataframely.errors.error_base import InvalidDefinitionError, _quoted, _unknown_rules


class UnknownWarningRuleError(InvalidDefinitionError):
    """Raised when `warning_rules=` names a rule the schema does not have.

    A misspelt name must not leave the rule it meant blocking while the user believes it only
    warns, nor be dropped in silence, so every name is checked where the asset is declared.

    Parameters
    ----------
    schema_name
        The schema's name.
    rules
        The names given that are not rules of the schema.
    valid_rules
        Every rule of the schema, as Dataframely names them.
    """

    schema_name: str
    rules: list[str]
    valid_rules: list[str]

    def _message(self) -> str:
        return (
            f"`warning_rules=` names rules that schema {self.schema_name!r} does not have: "
            f"{_unknown_rules(self.rules, self.valid_rules)}"
        )


class UnknownPolicyRuleError(InvalidDefinitionError):
    """Raised when a `dd.QualityPolicy` names a rule the schema does not have.

    A misspelt name would leave the rule it meant without its threshold, severity or blocking
    while the user believes it has them, so every name is checked where the asset is declared.

    Parameters
    ----------
    schema_name
        The schema's name (a Collection's, for `dd.collection_asset`).
    parameter
        The policy's parameter that names them: `rules`, `severity` or `blocking`.
    rules
        The names given that are not rules of the schema.
    valid_rules
        Every rule the policy may name, as Dataframely names them.
    """

    schema_name: str
    parameter: str
    rules: list[str]
    valid_rules: list[str]

    def _message(self) -> str:
        return (
            f"The quality policy's `{self.parameter}=` names rules that schema "
            f"{self.schema_name!r} does not have: "
            f"{_unknown_rules(self.rules, self.valid_rules, filters=True)}"
        )


class InvalidThresholdError(InvalidDefinitionError):
    """Raised when a `dd.Threshold`, `dd.VolumeCheck` or `dd.QualityPolicy` gets an unusable bound.

    A bound is checked where it is written, so a fraction of `5` (meant as 5%) or a warn bound
    above the fail bound never reaches a run, where it would pass or fail everything.

    Parameters
    ----------
    parameter
        The parameter given the value, such as `warn_above`.
    value
        The value, as its `repr`.
    problem
        Why it cannot be used.
    """

    parameter: str
    value: str
    problem: str

    def _message(self) -> str:
        return (
            f"`{self.parameter}={self.value}` is not a bound this package can use: {self.problem}. "
            "An int counts rows (10 means ten rows), a float is a fraction of the rows between 0 "
            'and 1 (0.05 means 5%); see the documentation\'s "Quality policy" page.'
        )


class ThresholdNotApplicableError(InvalidDefinitionError):
    """Raised when a quality policy sets something that cannot apply where it is declared.

    A threshold on a rule whose failing rows already fail the run would promise a tolerance the
    run cannot give, since those rows have nowhere to go; a volume check where nothing is
    written has nothing to count.

    Parameters
    ----------
    schema_name
        The schema's name.
    problem
        What cannot apply, and why.
    fix
        What to declare instead.
    """

    schema_name: str
    problem: str
    fix: str

    def _message(self) -> str:
        return (
            f"The quality policy of an asset of schema {self.schema_name!r} cannot apply: "
            f"{self.problem}. {self.fix}"
        )


class InvalidSettingError(InvalidDefinitionError):
    """Raised when a setting resolves to a value it does not accept.

    Settings come from the package default, an environment variable or an argument, so the
    error is raised while resolving and says which of those supplied the bad value.

    Parameters
    ----------
    setting
        The setting's name, such as `statistics`.
    value
        The rejected value, as its `repr`.
    allowed
        The accepted values, or a phrase describing them when they cannot be listed.
    source
        Where the value came from: the argument, an environment variable or the package default.
    env_var
        The setting's environment variable, such as `DAGSTER_DATAFRAMELY_STATISTICS`.
    takes_argument
        Whether the setting also has an argument; `quarantine_dir` is read only from the
        environment.
    """

    setting: str
    value: str
    allowed: Sequence[str] | str
    _: dataclasses.KW_ONLY
    source: str
    env_var: str
    takes_argument: bool = True

    def __post_init__(self) -> None:
        super().__post_init__()
        # NOTE: the accepted values stay a tuple, as callers compare them with one (the base copies
        # a sequence into a list).
        if not isinstance(self.allowed, str):
            self.allowed = tuple(self.allowed)

    def _message(self) -> str:
        allowed = self.allowed
        accepted = allowed if isinstance(allowed, str) else f"one of {_quoted(allowed)}"
        source, env_var = self.source, self.env_var
        if self.takes_argument:
            where = (
                f"Change {source} to an accepted value. The `{self.setting}=` argument takes "
                f"precedence over the environment variable {env_var}, which takes precedence "
                f"over the package default."
            )
        else:
            where = (
                f"Change {source} to an accepted value, or unset it. This setting has no "
                f"argument and is read only from the environment variable {env_var}."
            )
        return (
            f"The setting {self.setting!r} got {self.value} from {source}, which is not a value "
            f"it accepts (expected {accepted}). {where}"
        )


class MultiAssetKeyError(InvalidDefinitionError):
    """Raised when a function needs one asset of a multi-asset definition and cannot tell which.

    `dd.quarantine_spec`, `dd.wiring.delegating_writer` and `dd.wiring.validate_quarantine_key`
    work for one asset; given a definition with several (a multi-asset), they take the output's
    asset key too, and it must be one of the definition's.

    Parameters
    ----------
    definition
        The definition's name.
    keys
        The definition's asset keys, as strings.
    given
        The asset key passed, as a string, or None when none was.
    """

    definition: str
    keys: list[str]
    given: str | None

    def _message(self) -> str:
        problem = (
            f"has {len(self.keys)} assets, so it needs the asset key of the one meant"
            if self.given is None
            else f"has no asset {self.given!r}"
        )
        return (
            f"Definition {self.definition!r} {problem}. Pass `asset_key=` with one of "
            f"{_quoted(self.keys)}."
        )


class UnknownPartitionKeyError(InvalidDefinitionError, dg.DagsterUnknownPartitionError):
    """Raised when a direct call of a partitioned asset names a partition the asset does not have.

    A run of such a key never starts (Dagster raises `dg.DagsterUnknownPartitionError`), so a
    direct call (`dd.testing.call_asset(..., partition_key=...)`, or the asset called with
    `dg.build_asset_context(partition_key=...)`) refuses it too, before the asset's function
    runs; it is also a `dg.DagsterUnknownPartitionError`, so a test that expects a run's
    error catches it. A dimension of dynamic partitions is not checked: its keys live in an
    instance, which a direct call usually has none of.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    partition_key
        The key given, as text (a multi-partition's joined with `|`).
    first_key
        The asset's first partition key, shown as an example; None when it has none.
    """

    def __init__(self, asset: str, partition_key: str, first_key: str | None) -> None:
        self.asset = asset
        self.partition_key = str(partition_key)
        self.first_key = None if first_key is None else str(first_key)
        example = "" if self.first_key is None else f", such as {self.first_key!r}"
        super().__init__(
            f"The partition key {self.partition_key!r} is not a partition of {asset!r}, and a "
            f"run of it would be refused, so the call stopped before the asset's function ran. "
            f"Pass one of the asset's partition keys{example}, to "
            "`dg.build_asset_context(partition_key=...)` or "
            "`dd.testing.call_asset(..., partition_key=...)`."
        )


class ClearQuarantineError(InvalidDefinitionError):
    """Raised when `clear_quarantine=True` is set on an asset that writes no quarantine.

    Raised at decoration time by `dd.asset` without `quarantine=True`, and on the call by
    `validation_results` without a `quarantine_writer`: there is nothing to clear, and a flag
    that silently does nothing hides a mistake.

    Parameters
    ----------
    asset
        The asset's key, as a string.
    """

    asset: str

    def _message(self) -> str:
        return (
            f"Asset {self.asset!r} sets `clear_quarantine=True` but writes no quarantine, so a "
            "clean run has nothing to clear. Set `quarantine=True` on `dd.asset` (or pass a "
            "`quarantine_writer` to `validation_results`), or remove `clear_quarantine=True`."
        )

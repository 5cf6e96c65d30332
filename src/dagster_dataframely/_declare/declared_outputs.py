"""The outputs a decorator of this package declared on a definition, read back from it later.

`quarantine_spec` is given the definition a `dd.*` decorator returned and needs what that
decorator knew of each output: its schema (the quarantine's Columns tab) and whether it has a
quarantine at all. Dagster keeps neither, so the builder records them here, by the op the
definition runs: Dagster's own copies of a definition (`with_attributes`, a key prefix, a
subset, `dg.Definitions`) keep that op, so they find the same outputs.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import dagster as dg
import dataframely as dy

from dagster_dataframely._run.validated_output import ValidatedOutput


@dataclass(frozen=True, slots=True)
class DeclaredOutput:
    """One output as its decorator declared it."""

    output: ValidatedOutput
    collection: type[dy.Collection] | None
    """The Collection whose member the output is (`dd.collection_asset`); None for a schema."""


# NOTE: weak keys, so a definition a test (or a code location reload) drops takes its outputs
# with it instead of keeping every schema ever declared alive.
_DECLARED: weakref.WeakKeyDictionary[dg.NodeDefinition, dict[str, DeclaredOutput]] = (
    weakref.WeakKeyDictionary()
)


def remember_outputs(
    definition: dg.AssetsDefinition,
    outputs: Sequence[ValidatedOutput],
    *,
    collection: type[dy.Collection] | None = None,
) -> dg.AssetsDefinition:
    """Record `outputs` (members of `collection`, if given) as `definition`'s; return it."""
    _DECLARED[definition.node_def] = {
        output.name: DeclaredOutput(output, collection) for output in outputs
    }
    return definition


def declared_output(definition: dg.AssetsDefinition, key: dg.AssetKey) -> DeclaredOutput | None:
    """The output a `dd.*` decorator declared for `key`; None for a definition it did not build.

    `key` is one of the definition's keys; the outputs are recorded by the op's output name,
    which a key prefix added after the decorator does not change.
    """
    outputs = _DECLARED.get(definition.node_def)
    return None if outputs is None else outputs.get(definition.get_output_name_for_asset_key(key))

"""The signature Dagster reads on the compute wrapper: the user's inputs, and our context.

Every decorator wraps the user's function in one generator (`compute`). Dagster reads the
wrapper's signature to wire inputs and the context, so the wrapper advertises the user's
parameters, plus a `context` when this package needs one and the user did not ask for it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dagster_dataframely._model.annotations import annotations_of
from dagster_dataframely._model.return_hints import polars_input_hint, written
from dagster_dataframely._upstream import is_context_parameter
from dagster_dataframely.errors import UnresolvedAnnotationError


@dataclass(frozen=True, slots=True)
class ComputeSignature:
    """The signature Dagster sees, and how to split a call of it into context and user call."""

    signature: inspect.Signature
    parameters: tuple[inspect.Parameter, ...]
    user_has_context: bool
    injects_context: bool

    @classmethod
    def of(cls, function: Callable[..., object], *, needs_context: bool) -> ComputeSignature:
        """The user's parameters (annotations resolved), with a `context` first if needed."""
        user_params = list(inspect.signature(function).parameters.values())
        user_has_context = bool(user_params) and is_context_parameter(user_params[0].name)
        params = _resolved_parameters(function, user_params, skip_first=user_has_context)
        injects_context = needs_context and not user_has_context
        if injects_context:
            params.insert(0, inspect.Parameter("context", inspect.Parameter.POSITIONAL_OR_KEYWORD))
        return cls(inspect.Signature(params), tuple(params), user_has_context, injects_context)

    def bind(
        self,
        function: Callable[..., object],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        prepare_input: Callable[[object], object] | None = None,
    ) -> tuple[Any, Callable[[], object]]:
        """The call's context (None when neither side takes one), and the user's call.

        `prepare_input`, if given, replaces each input the user's call receives (never the
        context).
        """
        bound = self.signature.bind(*args, **kwargs)
        context: Any = None
        if self.injects_context:  # ours alone: the user's function does not take it
            context = bound.arguments.pop(self.parameters[0].name)
        elif self.user_has_context:
            context = bound.arguments[self.parameters[0].name]
        if prepare_input is not None:
            for name, value in bound.arguments.items():
                if not (self.user_has_context and name == self.parameters[0].name):
                    bound.arguments[name] = prepare_input(value)
        return context, lambda: function(*bound.args, **bound.kwargs)

    def apply(self, compute: Callable[..., object]) -> None:
        """Make Dagster read this signature on `compute` (a `functools.wraps` wrapper).

        No return annotation: what the wrapper yields is not what the user returns.
        """
        del compute.__wrapped__  # type: ignore[attr-defined]  # Dagster must read __signature__
        compute.__signature__ = self.signature  # type: ignore[attr-defined]
        compute.__annotations__ = {
            p.name: p.annotation for p in self.parameters if p.annotation is not p.empty
        }


def _resolved_parameters(
    function: Callable[..., object], params: list[inspect.Parameter], *, skip_first: bool
) -> list[inspect.Parameter]:
    # NOTE: a string annotation Dagster would evaluate in this package's module (blaming an `if
    # TYPE_CHECKING:` import, or resolving another name) is refused here; the context keeps its
    # resolved annotation, which Dagster checks against its own classes, and every input gets its
    # Polars type (`pl.DataFrame` for `dy.DataFrame[Orders]`).
    annotations = annotations_of(function)
    name = getattr(function, "__name__", repr(function))
    for param in params:
        error = annotations.unresolved.get(param.name)
        if error is not None:
            raise UnresolvedAnnotationError(name, param.name, written(param.annotation), str(error))
    hints = annotations.resolved
    return [
        p
        if p.name not in hints
        else p.replace(
            annotation=hints[p.name]
            if skip_first and i == 0
            else polars_input_hint(hints[p.name], name, p.name)
        )
        for i, p in enumerate(params)
    ]

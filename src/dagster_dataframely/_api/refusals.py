"""The common mistakes with the decorators, refused with the package's error and the fix.

A Dagster user writes `@dd.asset(Orders, key=[...])` or `check_specs=` out of habit, or
`@dd.asset` without its schema. Python's own errors ("unexpected keyword argument", "expected a
Schema class, got <function>") name neither the replacement nor the missing schema, so each
front-end is wrapped: the wrapper refuses those calls, naming what to write instead, and
passes every other call on unchanged (its signature and docstring stay the front-end's).
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, Protocol, TypeVar, cast, overload

from dagster_dataframely._model.return_hints import schema_from_return_hint
from dagster_dataframely._model.setting_keywords import refused_setting
from dagster_dataframely._model.setting_model import EntryPoint, refusals
from dagster_dataframely.errors import UnexpectedArgumentError

P = ParamSpec("P")
R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., object], contravariant=True)
D = TypeVar("D", covariant=True)

DAGSTER_KEYWORDS: Mapping[str, str] = {
    "key": (
        "The key is `key_prefix=` plus the asset's name (`name=`, or the member's or output's "
        "name): key=['sales', 'orders'] is key_prefix='sales', name='orders'."
    ),
    "check_specs": (
        "The checks come from the schema: one per rule, declared for you. Add a check of your "
        "own with a separate @dg.asset_check on the asset."
    ),
    "specs": (
        "Every output here is validated, so declare each as a dd.AssetOut under outs=; an asset "
        "without a schema belongs in a @dg.multi_asset of its own."
    ),
    "output_required": (
        "An output is already optional: return None to skip it, and the outcomes that write "
        "nothing end the step without it."
    ),
    "dagster_type": "The schema is the type: the package validates the frame against it.",
    "is_virtual": "A virtual asset has no function to validate: declare it with dg.AssetSpec.",
    "io_manager_def": (
        "Bind the IO manager with resource_defs={'io_manager': ...}, or name a resource with "
        "io_manager_key=."
    ),
    "compute_kind": "Use kinds={...}, which replaced it in Dagster.",
    "non_argument_deps": "Use deps=[...], which replaced it in Dagster.",
}
"""What to write instead of a `@dg.asset` / `@dg.multi_asset` keyword the decorators do not take."""


def refusing_mistakes(
    entry_point: EntryPoint,
    usage: str,
    *,
    hinted_usage: str | None = None,
    reads_hint: Callable[[Callable[..., object]], object] = schema_from_return_hint,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Wrap a front-end so its common mistakes raise `UnexpectedArgumentError` with the fix.

    `entry_point` names it as the user wrote it (`dd.asset`) and says which settings it refuses,
    and why; `usage` is a correct call, such as `@dd.asset(Orders)`, shown when the schema is
    missing. A front-end that can read its schema from the return hint gives `hinted_usage`
    (`-> dy.DataFrame[Orders]`): used bare, on a function whose hint `reads_hint` reads (not
    None), it decorates it.
    """
    public_name = entry_point.value
    refused = refusals(entry_point)

    def wrap(front_end: Callable[P, R]) -> Callable[P, R]:
        parameters = inspect.signature(front_end).parameters
        positional = [
            n for n, p in parameters.items() if p.kind is inspect.Parameter.POSITIONAL_ONLY
        ]
        keywords = [name for name in parameters if name not in positional]
        required = [
            name for name in positional if parameters[name].default is inspect.Parameter.empty
        ]

        @functools.wraps(front_end)
        def checked(*args: P.args, **kwargs: P.kwargs) -> R:
            for keyword in kwargs:
                if keyword in positional:
                    raise UnexpectedArgumentError(
                        public_name,
                        f"`{keyword}` is positional, not a keyword",
                        f"Write it first, as in {usage}.",
                    )
                if keyword in refused and keyword not in keywords:
                    raise refused_setting(entry_point, keyword)
                if keyword not in keywords:
                    raise UnexpectedArgumentError(
                        public_name,
                        f"`{keyword}=` is not one of its keywords",
                        _replacement(keyword, keywords),
                    )
            if args and inspect.isfunction(args[0]):
                function = args[0]
                written = f"Write {usage} above `def {function.__name__}(...)`"
                if hinted_usage is not None and len(args) == 1:
                    if reads_hint(function) is not None:
                        call: Any = front_end  # no schema: the call `@dd.asset()` makes
                        decorator = call(**kwargs)
                        return cast("R", decorator(function))
                    written += f", or annotate it `def {function.__name__}(...) {hinted_usage}`"
                raise UnexpectedArgumentError(
                    public_name,
                    f"it was given the function {function.__name__!r} where its "
                    f"{'schema' if positional else 'keywords'} should be",
                    f"{written}: a bare @{public_name} has no "
                    f"{'schema' if positional else 'outputs'}"
                    + (" without such a hint." if hinted_usage is not None else "."),
                )
            if len(args) < len(required):
                raise UnexpectedArgumentError(
                    public_name, "it was called without its schema", f"Write {usage}."
                )
            if len(args) > len(positional):
                raise UnexpectedArgumentError(
                    public_name,
                    f"it takes {len(positional)} positional arguments, and was given {len(args)}",
                    f"Pass everything but the schema by keyword, as in {usage}.",
                )
            return front_end(*args, **kwargs)

        return checked

    return wrap


def _replacement(keyword: str, keywords: list[str]) -> str:
    """The fix for a keyword the front-end does not take: its replacement, or the close names."""
    if keyword in DAGSTER_KEYWORDS and keyword not in keywords:
        return DAGSTER_KEYWORDS[keyword]
    close = difflib.get_close_matches(keyword, keywords, n=3)
    if close:
        return f"Did you mean {' or '.join(f'{name}=' for name in close)}?"
    return "Its keywords are listed in its docstring (help() shows it)."


class BareOrCalled(Protocol[P, F, D]):
    """A decorator a type checker accepts both ways: called, `@dd.asset(...)`, or bare.

    Called with its arguments `P`, it returns the decorator of an `F`; used bare on an `F`, it
    returns that decorator's result `D`, the same `dg.AssetsDefinition`.
    """

    @overload
    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Callable[[F], D]: ...
    @overload
    def __call__(self, function: F, /) -> D: ...


def usable_bare(front_end: Callable[P, Callable[[F], D]]) -> BareOrCalled[P, F, D]:
    """Type a front-end that `refusing_mistakes(hinted_usage=...)` lets decorate bare.

    The front-end is returned unchanged: its signature, docstring and behaviour stay its own,
    and only what a type checker reads gains the bare form.
    """
    return cast("BareOrCalled[P, F, D]", front_end)

"""How many examples each property test draws in a version job (`--examples-per-property`).

The root conftest.py applies `cap_examples` to the collected tests when the option is given.
"""

from collections.abc import Iterable

from hypothesis import settings


def cap_examples(tests: Iterable[object], cap: int) -> None:
    """No property test among `tests` (collected test functions) draws more than `cap` examples."""
    for test in tests:
        function = getattr(test, "__func__", test)
        current = getattr(function, "_hypothesis_internal_use_settings", None)
        if getattr(function, "is_hypothesis_test", False) and isinstance(current, settings):
            # NOTE: `@settings(max_examples=...)` on a test overrides any profile, so the cap
            # replaces the settings `@given` reads when the test is called (hypothesis has no
            # public way to lower an explicit count); every other setting is kept.
            function._hypothesis_internal_use_settings = settings(
                current, max_examples=min(current.max_examples, cap)
            )

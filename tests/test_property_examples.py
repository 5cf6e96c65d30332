"""`--examples-per-property` lowers every property test's count, and raises none."""

from hypothesis import given, settings
from hypothesis import strategies as st

from .property_examples import cap_examples


def counting_property(max_examples: int) -> tuple[object, list[int]]:
    drawn: list[int] = []

    @settings(max_examples=max_examples, database=None)
    @given(st.integers())
    def prop(value: int) -> None:
        drawn.append(value)

    return prop, drawn


def test_a_property_draws_at_most_the_cap() -> None:
    prop, drawn = counting_property(200)
    cap_examples([prop], 7)
    prop()  # type: ignore[operator]
    assert 0 < len(drawn) <= 7


def test_a_property_below_the_cap_keeps_its_count() -> None:
    capped, drawn_capped = counting_property(25)
    uncapped, drawn_uncapped = counting_property(25)
    cap_examples([capped], 1_000)
    capped()  # type: ignore[operator]
    uncapped()  # type: ignore[operator]
    assert len(drawn_capped) == len(drawn_uncapped) > 7


def test_other_tests_are_left_alone() -> None:
    def plain() -> None:
        pass

    cap_examples([plain, None], 3)
    assert not hasattr(plain, "_hypothesis_internal_use_settings")

"""The checks toolkit's wording: the article before a type name, whose result `differential` says a student's differs
from (or the rule it says is broken), and `refusal_problem`'s verdict on code that must refuse an input."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import strategies as st

from lab.grading.checks import Context, Fail, differential, expect_type, refusal_problem
from lab.spark.splits import OffsetRange

CTX = Context(ModuleType("student"), ModuleType("reference"), Path("student.py"), seed=3, quick=True)


class Upper:
    pass


@pytest.mark.parametrize(("value", "kind", "words"), [
    ("12", int, "the answer should be an int, not str ('12')"),
    ((1, 2), OffsetRange, "the answer should be an OffsetRange, not tuple ((1, 2))"),
    (1, bool, "the answer should be a bool, not int (1)"),
    (1, Upper, "the answer should be an Upper, not int (1)"),
    (1.5, (int, str), "the answer should be an int or str, not float (1.5)"),
])
def test_the_article_is_an_before_a_vowel_whatever_its_case(value: Any, kind: Any, words: str) -> None:
    with pytest.raises(Fail) as failed:
        expect_type(value, kind, "the answer")
    assert failed.value.message == words


def above_three(value: int) -> str | None:
    return f"{value} is above 3" if value > 3 else None


@pytest.mark.parametrize(("wording", "message"), [
    ({}, "random inputs (seed 3): your result differs from Kafka's on the smallest case found"),
    ({"against": "Spark's"}, "random inputs (seed 3): your result differs from Spark's on the smallest case found"),
    ({"verdict": "a rule is broken"}, "random inputs (seed 3): a rule is broken on the smallest case found"),
])
def test_differential_names_the_reference_or_the_rule(wording: dict[str, str], message: str) -> None:
    with pytest.raises(Fail) as failed:
        differential(CTX, st.integers(0, 100), above_three, name="input", **wording)
    assert (failed.value.message, failed.value.detail) == (message, "4 is above 3")


def refuses(value: int) -> None:
    if value < 0:
        raise ValueError("negative")


def stub(value: int) -> None:
    raise NotImplementedError


def test_a_refusal_is_none_and_anything_else_says_what_happened() -> None:
    assert refusal_problem(CTX, "f(-1)", lambda: refuses(-1)) is None
    assert refusal_problem(CTX, "f(1)", lambda: refuses(1)) == "f(1) did not raise; expected a ValueError"
    assert refusal_problem(CTX, "f(0)", lambda: 1 // 0) == \
        "f(0) raised ZeroDivisionError: integer division or modulo by zero; expected a ValueError"
    assert refusal_problem(CTX, "f(0)", lambda: refuses(-1), expected=IndexError) == \
        "f(0) raised ValueError: negative; expected an IndexError"


def test_a_stub_or_a_grader_fake_failing_is_a_failure_not_a_verdict() -> None:
    with pytest.raises(Fail, match=r"^f\(-1\) is not implemented yet \(it raises NotImplementedError"):
        refusal_problem(CTX, "f(-1)", lambda: stub(-1))

    def fake_gives_up() -> None:
        raise Fail("the fake clock was read 1000 times")

    with pytest.raises(Fail) as failed:
        refusal_problem(CTX, "f(-1)", fake_gives_up)
    assert failed.value.message == "the fake clock was read 1000 times"

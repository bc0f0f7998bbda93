"""What a grader is made of: named checks with points, run against the student's module, each passing, failing with a
message a student understands, or earning part of its points.

A grader module (in `lab/grading/graders/`) defines `checks(ctx) -> list[Check]`. A check's function takes the
`Context` and returns None (full points), a `Partial(fraction, message)`, or raises `Fail(message, detail)`:

    def checks(ctx: Context) -> list[Check]:
        return [Check("the example from the README", 2, example), Check("Kafka's own test cases", 4, vectors)]

`Context.call` calls into the student's code the safe way: it copies the arguments, turns an exception into a `Fail`
that names the student's line, and fails when the student's code changed its inputs. `differential` runs hypothesis
against the reference with a printed seed and reports the smallest failing input, the student's output beside the
expected one (`against="Spark's"` names another reference). `refusal_problem` says whether the student's code refuses
what it must refuse:

    refusal_problem(ctx, "TokenBucket(0)", lambda: cls(0))   # None if it raised ValueError, else what it did instead
"""

from __future__ import annotations

import copy
import random
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

NOT_IMPLEMENTED = "is not implemented yet (it raises NotImplementedError: fill in the # TODO)"


class Fail(Exception):
    """A check failed; `message` says why in a student's words, `detail` can hold a counterexample."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.message, self.detail = message, detail


class InputsChanged(Exception):
    """The student's code changed the arguments it was given (found in the student's process, after the call: the
    judge's own copies of them cannot show it)."""


class Stopped(BaseException):
    """The student's process was stopped during a check (it ran past its time, died, or the grade's budget ran out):
    the check scores 0 with `message`. A BaseException, so that neither a grader's `except Exception` nor
    hypothesis mistakes it for an answer."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Partial:
    fraction: float           # of the check's points earned, 0..1
    message: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Check:
    name: str
    points: float
    run: Callable[[Context], Partial | None]


@dataclass(frozen=True)
class CheckResult:
    name: str
    points: float
    earned: float
    message: str = ""          # empty when the check passed in full
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.earned >= self.points

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "points": self.points, "earned": self.earned, "message": self.message,
                "detail": self.detail}


@dataclass
class Context:
    student: Any                              # the module, or (judged apart) a proxy of it in the student's process
    reference: ModuleType
    student_path: Path
    seed: int
    quick: bool = False                       # fewer random examples (the course checks run every grader)
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def examples(self) -> int:
        return 25 if self.quick else 150

    def student_attr(self, name: str) -> Any:
        found = getattr(self.student, name, None)
        if found is None:
            raise Fail(f"your file has no {name}: keep the names of the stub")
        return found

    def call(self, what: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call the student's `function` on copies of the arguments; its exception, or a change to its inputs, is a
        `Fail` naming `what` and the line in the student's file."""
        before = copy.deepcopy((args, kwargs))
        try:
            result = function(*args, **kwargs)
        except NotImplementedError:
            raise Fail(f"{what} {NOT_IMPLEMENTED}") from None
        except Fail:
            raise
        except InputsChanged:
            changed = True
        except Exception as error:
            raise Fail(f"{what} raised {type(error).__name__}: {error}{self.where(error)}") from None
        else:
            changed = (args, kwargs) != before
        if changed:
            raise Fail(f"{what} changed its inputs: it must not modify the arguments it is given "
                       f"(copy them if you need to)")
        return result

    def where(self, error: BaseException) -> str:
        """` (your file, line N: code)` for the innermost frame in the student's file (an exception from the
        student's process carries its frames as `student_frames`)."""
        remote: list[tuple[int, str]] | None = getattr(error, "student_frames", None)
        if remote is not None:
            return f" (your file, line {remote[-1][0]}: {remote[-1][1]})" if remote else ""
        frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename) == self.student_path]
        if not frames:
            return ""
        last = frames[-1]
        return f" (your file, line {last.lineno}: {(last.line or '').strip()})"

    def rng(self, salt: str) -> random.Random:
        return random.Random(f"{self.seed}-{salt}")


def a_or_an(name: str) -> str:
    """`name` with its article, the simple way: "an" before a vowel ("an int", "an OffsetRange"), else "a"."""
    article = "an" if name[:1].lower() in {"a", "e", "i", "o", "u"} else "a"
    return f"{article} {name}"


def expect_type(value: Any, kind: type | tuple[type, ...], what: str) -> None:
    if not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise Fail(f"{what} should be {a_or_an(names)}, not {type(value).__name__} ({value!r:.80})")


def refusal_problem(ctx: Context, what: str, function: Callable[[], Any],
                    expected: type[Exception] = ValueError) -> str | None:
    """None if `function()` raises `expected` (a refusal the exercise asks for), else what it did instead. A stub's
    NotImplementedError, or a `Fail` from the grader's own fakes, is raised as a `Fail`."""
    try:
        function()
    except Fail:
        raise
    except expected:
        return None
    except NotImplementedError:
        raise Fail(f"{what} {NOT_IMPLEMENTED}") from None
    except Exception as error:
        return (f"{what} raised {type(error).__name__}: {error}{ctx.where(error)}; expected "
                f"{a_or_an(expected.__name__)}")
    return f"{what} did not raise; expected {a_or_an(expected.__name__)}"


def run_check(ctx: Context, check: Check) -> CheckResult:
    try:
        outcome = check.run(ctx)
    except Stopped as stopped:
        return CheckResult(check.name, check.points, 0.0, stopped.message)
    except Fail as failure:
        return CheckResult(check.name, check.points, 0.0, failure.message, failure.detail)
    except Exception as error:  # the student's code failed somewhere Context.call did not guard
        return CheckResult(check.name, check.points, 0.0,
                           f"{type(error).__name__}: {error}{ctx.where(error)}")
    if outcome is None:
        return CheckResult(check.name, check.points, check.points)
    fraction = min(max(outcome.fraction, 0.0), 1.0)
    return CheckResult(check.name, check.points, round(check.points * fraction, 2), outcome.message, outcome.detail)


def _problem(judge: Callable[[Any], str | None], value: Any) -> str | None:
    """What `judge` says is wrong with `value`, a `Fail` raised on the way counting as its message."""
    try:
        return judge(value)
    except Fail as failure:
        return failure.message


def score_cases(cases: Sequence[Any], judge: Callable[[Any], str | None], *, what: str = "case",
                show: int = 3) -> Partial | None:
    """Judge every case (`judge` returns None when right, else why); full points when all pass, else the fraction
    passed and the first failures."""
    failures = [problem for problem in (_problem(judge, case) for case in cases) if problem is not None]
    if not failures:
        return None
    passed = len(cases) - len(failures)
    message = f"{passed} of {len(cases)} {what}s right; first failure: {failures[0]}"
    others = list(dict.fromkeys(f for f in failures[1:] if f != failures[0]))[:show]
    return Partial(passed / len(cases) if cases else 0.0, message, "\n".join(others))


def differential(ctx: Context, strategy: Any, compare: Callable[[Any], str | None], *, name: str,
                 against: str = "Kafka's", verdict: str = "") -> None:
    """Random inputs from the hypothesis `strategy`; `compare(input)` runs the student's code and the reference and
    returns None when they agree, else a description of the difference. Raises `Fail` with the smallest failing input
    (hypothesis shrinks it), the seed printed so the run can be repeated. The failure says the result "differs from
    Kafka's", or from whatever `against` names ("Spark's", "the reference's"); a check that holds the result to rules
    rather than to a reference gives its own `verdict` instead ("a rule is broken")."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    found: list[str] = []

    @seed(ctx.seed)
    @settings(max_examples=ctx.examples, database=None, deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink], print_blob=False)
    @given(strategy)
    def property_holds(value: Any) -> None:
        difference = _problem(compare, value)
        if difference is not None:
            found.append(difference)
            raise AssertionError(difference)

    try:
        property_holds()
    except AssertionError:
        said = verdict or f"your result differs from {against}"
        raise Fail(f"random {name}s (seed {ctx.seed}): {said} on the smallest case found",
                   found[-1] if found else "") from None


def first_step_difference(header: str, theirs: Sequence[Any], run_mine: Callable[[], Sequence[Any]],
                          differ: Callable[[Any, Any], str | None]) -> str | None:
    """Two runs of the same script, step by step (each step with a `label`): the reference's (`theirs`) and the
    student's (`run_mine()`). The student's failure, or the first difference `differ` finds, with the script listed
    after it under `header`; None when the runs agree."""
    listing = [header, *(f"  step {n}: {step.label}" for n, step in enumerate(theirs, 1))]
    try:
        mine = run_mine()
    except Fail as failure:
        return "\n".join([failure.message, "", *listing])
    for number, (yours, expected) in enumerate(zip(mine, theirs, strict=True), start=1):
        difference = differ(yours, expected)
        if difference:
            return "\n".join([f"after step {number} ({expected.label}): {difference}", "", *listing])
    return None

"""Replaces the grader's judging functions in its own process as soon as it is loaded (every check passes in full),
and answers nothing right. Judged apart, the judge is not in this process."""

import sys
from pathlib import Path

import lab.grading.checks as checks


def full_marks(ctx, check):  # type: ignore[no-untyped-def]
    return checks.CheckResult(check.name, check.points, check.points)


checks.run_check = full_marks
sys.modules["__main__"].run_check = full_marks      # the grader process's own name for it
checks.score_cases = lambda cases, judge, **kwargs: None
checks.differential = lambda *args, **kwargs: None


exec((Path(__file__).with_name("never_commits.py")).read_text())   # the answer: never_commits.py's, unchanged

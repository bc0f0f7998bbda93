"""The student's process when the judge runs apart (`judge = "apart"` in the catalogue): `python -P -m
lab.grading.student_host SPEC` (JSON: exercise, path, limits, reference_allowed) lowers its limits, loads the
student's file, says whether that worked, then answers the judge's requests (`lab.grading.remote.StudentEnd`) until its
input ends. No grader and no judging code runs here.

The requests come on the original standard input and the replies go out on the original standard output, both moved
to descriptors of their own first: standard input becomes /dev/null and standard output is standard error, so a
student's `print` or `input` cannot touch the conversation.
"""

from __future__ import annotations

import json
import os
import sys

from lab.grading.remote import StudentEnd, send
from lab.grading.worker import prepare


def main(argv: list[str]) -> int:
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    student, _exercise, path, why = prepare(json.loads(argv[1]))
    if student is None:
        send(replies, {"load-error": why})
        return 0
    send(replies, {"ready": True})
    StudentEnd(student, path, requests, replies).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

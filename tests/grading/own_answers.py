"""Answers of the student's own (not the lab's implementation, which `lab grade` refuses), for the tests that grade
through the command line: `students/08/own.py`, and the same answer off by one."""

from __future__ import annotations

from pathlib import Path

OWN_08 = Path(__file__).parent / "students" / "08" / "own.py"


def off_by_one(folder: Path) -> Path:
    """Exercise 08 answered as in own.py, but committing one past the last acked offset in a row; written to
    `folder` as offset_manager.py."""
    wrong = folder / "offset_manager.py"
    wrong.write_text(OWN_08.read_text() + """

class OffByOne(OffsetManager):
    def find_next_commit_offset(self) -> int | None:
        found = super().find_next_commit_offset()
        return None if found is None else found + 1


OffsetManager = OffByOne  # type: ignore[misc]
""")
    return wrong

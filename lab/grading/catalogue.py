"""The exercise catalogue: `exercises/catalogue.toml` lists every exercise with its folder, the stub the student
edits, the lesson it belongs to, the reference module (the lab's own implementation) and its grader.

    >>> [e.number for e in load_catalogue()][:3]
    ['01', '02', '03']

An exercise folder holds `README.md` (the task), the stub, and `hints.md` (a ladder of hints, `## Hint 1`, ...).
"""

from __future__ import annotations

import importlib
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import Any

import lab

KINDS = ("pure", "live")


def exercises_dir() -> Path:
    """`exercises/` of the source tree (a clone or an editable install), or the copy shipped in the package."""
    source = Path(lab.__file__).resolve().parent.parent / "exercises"
    if source.is_dir():
        return source
    return Path(str(resources.files("lab") / "_exercises"))


class UnknownExercise(LookupError):
    def __init__(self, key: str, known: list[str]) -> None:
        super().__init__(f"no exercise {key!r}: choose one of {', '.join(known)}")


@dataclass(frozen=True)
class Exercise:
    number: str             # "01"
    folder: str             # "01_range"
    title: str
    lesson: str             # the lesson folder it belongs to, e.g. "05-assignors"
    stub: str               # the file the student edits, in the folder
    reference: str          # the module whose behaviour is the answer, e.g. "lab.assignors.range"
    grader: str             # "lab.grading.graders.assignors:range_checks"
    answers: tuple[str, ...] = ()   # what the student writes ("RangeAssignor"): never to be taken from `reference`
    kind: str = "pure"      # "live" exercises run against an embedded broker
    judge: str = "inside"   # "apart": the checks run in the lab's process, the student's code in its own
    check_timeout_s: float = 30.0
    version: str = "1"      # the grader's version, recorded with every grade

    def __post_init__(self) -> None:
        if self.kind not in ("pure", "live"):
            raise ValueError(f"exercise {self.number}: kind {self.kind!r} is not one of pure, live")
        if self.judge not in ("inside", "apart"):
            raise ValueError(f"exercise {self.number}: judge {self.judge!r} is not one of inside, apart")

    @property
    def directory(self) -> Path:
        return exercises_dir() / self.folder

    @property
    def stub_path(self) -> Path:
        return self.directory / self.stub

    @property
    def label(self) -> str:
        return f"{self.number}  {self.title}"

    def reference_module(self) -> ModuleType:
        return importlib.import_module(self.reference)

    def grader_function(self) -> Any:
        module, _, name = self.grader.partition(":")
        return getattr(importlib.import_module(module), name)

    def hints(self) -> list[str]:
        """The ladder, first hint first: the sections of hints.md under `## Hint N` headings."""
        path = self.directory / "hints.md"
        if not path.exists():
            return []
        sections, current = [], None
        for line in path.read_text().splitlines():
            if line.startswith("## "):
                if current is not None:
                    sections.append("\n".join(current).strip())
                current = [line[3:].strip() + ":"]
            elif current is not None:
                current.append(line)
        if current is not None:
            sections.append("\n".join(current).strip())
        return sections


@cache
def _load(path: str) -> tuple[Exercise, ...]:
    raw: dict[str, Any] = tomllib.loads(Path(path).read_text())
    entries = raw.get("exercises", [])
    return tuple(Exercise(**{**entry, "answers": tuple(entry.get("answers", ()))}) for entry in entries)


def load_catalogue(directory: Path | None = None) -> tuple[Exercise, ...]:
    return _load(str((directory or exercises_dir()) / "catalogue.toml"))


def find(key: str, catalogue: tuple[Exercise, ...] | None = None) -> Exercise:
    """An exercise by number ("1", "01") or folder ("01_range")."""
    exercises = catalogue if catalogue is not None else load_catalogue()
    for exercise in exercises:
        if key in (exercise.number, exercise.folder) or (key.isdigit() and int(key) == int(exercise.number)):
            return exercise
    raise UnknownExercise(key, [e.number for e in exercises])


def problems(exercises: tuple[Exercise, ...]) -> list[str]:
    """What is wrong with the catalogue: missing files, unknown modules, bad kinds (the course checks run this)."""
    from lab.lessons.catalogue import load_lessons

    lessons = {lesson.slug for lesson in load_lessons()}
    found = []
    for e in exercises:
        for path in (e.directory / "README.md", e.stub_path, e.directory / "hints.md"):
            if not path.exists():
                found.append(f"{e.number}: {path} is missing")
        if e.kind not in KINDS:
            found.append(f"{e.number}: kind {e.kind!r} is not one of {', '.join(KINDS)}")
        if e.lesson not in lessons:
            found.append(f"{e.number}: lesson {e.lesson!r} does not exist")
        try:
            e.reference_module()
            e.grader_function()
        except (ImportError, AttributeError) as error:
            found.append(f"{e.number}: {error}")
        if len(e.hints()) < 2:
            found.append(f"{e.number}: hints.md needs a ladder of at least two hints")
    return found

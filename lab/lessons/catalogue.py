"""The lessons, read from `docs/lessons/NN-topic/` (`lesson.md` and `lesson.toml`; see `docs/lessons/README.md`).

    >>> lessons = load_lessons()
    >>> lessons[0].slug
    '00-start'

`problems()` lists everything wrong with the content (unknown actions or arguments, a prediction without exactly one
correct choice, an unknown view): the course checks run it.
"""

from __future__ import annotations

import sys
import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import lab
from lab.extras import PARTS
from lab.lessons.actions import VIEWS, check_args
from lab.lessons.model import Choice, Lesson, Prediction, Step

STATUSES = ("ready", "coming")


def lessons_dir() -> Path:
    """`docs/lessons` of the source tree (a clone or an editable install), or the copy shipped in the package."""
    source = Path(lab.__file__).resolve().parent.parent / "docs" / "lessons"
    if source.is_dir():
        return source
    return Path(str(resources.files("lab") / "_lessons"))


class LessonError(ValueError):
    """A lesson's files are malformed; the message names the file and what is wrong."""


def _prediction(raw: dict[str, Any] | None) -> Prediction | None:
    if raw is None:
        return None
    choices = tuple(Choice(c["text"], bool(c.get("correct", False)), c.get("feedback", ""))
                    for c in raw.get("choices", []))
    return Prediction(raw["question"], choices)


def load_lesson(folder: Path) -> Lesson:
    toml_path = folder / "lesson.toml"
    try:
        meta = tomllib.loads(toml_path.read_text())
        markdown = (folder / "lesson.md").read_text()
        steps = tuple(Step(s["title"], s["action"], dict(s.get("args", {})), s.get("narration", ""),
                           _prediction(s.get("predict"))) for s in meta.get("steps", []))
        number = int(folder.name.split("-", 1)[0])
        return Lesson(number, folder.name, meta["title"], meta.get("summary", ""), markdown, steps,
                      tuple(meta.get("views", ())), str(meta.get("exercise", "")), meta.get("status", "ready"),
                      tuple(meta.get("needs", ())))
    except (OSError, tomllib.TOMLDecodeError, KeyError, ValueError) as error:
        raise LessonError(f"{folder.name}: {error!r}") from error


@cache
def _load(directory: str) -> tuple[Lesson, ...]:
    folders = sorted(p for p in Path(directory).iterdir() if p.is_dir() and p.name[:2].isdigit())
    return tuple(load_lesson(folder) for folder in folders)


def load_lessons(directory: Path | None = None) -> tuple[Lesson, ...]:
    return _load(str(directory or lessons_dir()))


def problems(lessons: tuple[Lesson, ...]) -> list[str]:
    """Everything wrong with the lessons' content, in words; empty when all is well."""
    found = []
    numbers = [lesson.number for lesson in lessons]
    if numbers != list(range(len(lessons))):
        found.append(f"lessons must be numbered 0, 1, 2, ... without gaps: {numbers}")
    for lesson in lessons:
        where = lesson.slug
        if lesson.status not in STATUSES:
            found.append(f"{where}: status {lesson.status!r} is not one of {', '.join(STATUSES)}")
        if lesson.ready and not lesson.steps:
            found.append(f"{where}: a ready lesson needs steps")
        if not lesson.markdown.strip():
            found.append(f"{where}: lesson.md is empty")
        found += [f"{where}: unknown view {v!r} (views: {', '.join(VIEWS)})" for v in lesson.views if v not in VIEWS]
        found += [f"{where}: needs unknown part {n!r} (parts: {', '.join(PARTS)})" for n in lesson.needs
                  if n not in PARTS]
        for n, step in enumerate(lesson.steps, 1):
            found += [f"{where} step {n} ({step.title}): {problem}" for problem in check_args(step.action, step.args)]
            if step.predict is not None:
                correct = sum(c.correct for c in step.predict.choices)
                if correct != 1 or len(step.predict.choices) < 2:
                    found.append(f"{where} step {n}: a prediction needs two or more choices, exactly one correct "
                                 f"(has {len(step.predict.choices)}, {correct} correct)")
                found += [f"{where} step {n}: choice {c.text!r} has no feedback"
                          for c in step.predict.choices if not c.feedback.strip()]
    return found


def main() -> int:
    """`python -m lab.lessons.catalogue`: check the lessons' content."""
    try:
        lessons = load_lessons()
    except LessonError as error:
        print(error)
        return 1
    found = problems(lessons)
    for problem in found:
        print(problem)
    print(f"{len(lessons)} lessons, {sum(len(lesson.steps) for lesson in lessons)} steps, {len(found)} problems")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

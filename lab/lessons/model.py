"""What a lesson is: prose, the live views it opens, and its "try it" steps, some with a prediction asked first."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Choice:
    text: str
    correct: bool
    feedback: str          # why: for a wrong choice, the misconception it reveals


@dataclass(frozen=True)
class Prediction:
    question: str
    choices: tuple[Choice, ...]

    def answer(self, index: int) -> Choice:
        return self.choices[index]


@dataclass(frozen=True)
class Step:
    title: str
    action: str
    args: dict[str, Any] = field(default_factory=dict)
    narration: str = ""
    predict: Prediction | None = None


@dataclass(frozen=True)
class Lesson:
    number: int
    slug: str               # the folder name, e.g. "03-consumers"
    title: str
    summary: str
    markdown: str
    steps: tuple[Step, ...] = ()
    views: tuple[str, ...] = ()
    exercise: str = ""      # the graded exercise it leads to, "" for none
    status: str = "ready"   # "ready", or "coming" when its machinery is not built yet
    needs: tuple[str, ...] = ()  # optional parts of the lab it needs (`lab.extras.PARTS`), installed on first use

    @property
    def ready(self) -> bool:
        return self.status == "ready"

    @property
    def label(self) -> str:
        return f"{self.number:02d}  {self.title}"

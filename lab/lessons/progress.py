"""A student's progress, kept in the user's data directory (`$XDG_DATA_HOME/kafka-internals-lab/progress.json`, or
`LAB_DATA_DIR`): lessons visited, predictions answered (and whether right the first time), exercises passed.

    >>> import tempfile, pathlib
    >>> progress = Progress(pathlib.Path(tempfile.mkdtemp()) / "progress.json")
    >>> progress.visit("03-consumers"); progress.answer("03-consumers", 2, correct=False)
    >>> progress.answer("03-consumers", 2, correct=True)     # only the first answer counts
    >>> progress.summary("03-consumers", predictions=2)
    'visited · 1/2 predicted (0 right)'
    >>> progress.summary("04-committing", predictions=3)
    'new · 3 predictions'
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any


def data_dir() -> Path:
    explicit = os.environ.get("LAB_DATA_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "kafka-internals-lab"


class Progress:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or data_dir() / "progress.json"
        self._lock = threading.Lock()
        self._data: dict[str, Any] = {"visited": [], "predictions": {}, "exercises": {}, "hints": {}}
        try:
            loaded = json.loads(self.path.read_text())
            if isinstance(loaded, dict):
                self._data.update({k: loaded[k] for k in self._data if k in loaded})
        except (OSError, ValueError):
            pass  # no progress yet, or an unreadable file: start afresh (it is rewritten on the next change)

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self._data, indent=2, sort_keys=True))
        temporary.replace(self.path)

    def visit(self, lesson: str) -> None:
        with self._lock:
            if lesson not in self._data["visited"]:
                self._data["visited"].append(lesson)
                self._save()

    def visited(self, lesson: str) -> bool:
        return lesson in self._data["visited"]

    def answer(self, lesson: str, step: int, *, correct: bool) -> None:
        """Record a prediction; the first answer to a step is the one that counts."""
        with self._lock:
            answers = self._data["predictions"].setdefault(lesson, {})
            if str(step) not in answers:
                answers[str(step)] = correct
                self._save()

    def answers(self, lesson: str) -> dict[int, bool]:
        return {int(step): bool(ok) for step, ok in self._data["predictions"].get(lesson, {}).items()}

    def pass_exercise(self, exercise: str, score: float) -> None:
        with self._lock:
            self._data["exercises"][exercise] = max(score, self._data["exercises"].get(exercise, 0.0))
            self._save()

    def exercise_score(self, exercise: str) -> float | None:
        score = self._data["exercises"].get(exercise)
        return float(score) if score is not None else None

    def hints_seen(self, exercise: str) -> int:
        return int(self._data["hints"].get(exercise, 0))

    def see_hint(self, exercise: str, available: int) -> int:
        """The next hint's index (0-based), remembered; past the last one, the last one again."""
        with self._lock:
            seen = int(self._data["hints"].get(exercise, 0))
            index = min(seen, available - 1)
            self._data["hints"][exercise] = min(seen + 1, available)
            self._save()
            return index

    def summary(self, lesson: str, predictions: int) -> str:
        parts = ["visited" if self.visited(lesson) else "new"]
        answers = self.answers(lesson)
        if predictions and answers:
            parts.append(f"{len(answers)}/{predictions} predicted ({sum(answers.values())} right)")
        elif predictions:
            parts.append(f"{predictions} prediction{'s' if predictions != 1 else ''}")
        return " · ".join(parts)

"""The grade log: every grade appended as a JSON line to `grades.jsonl` in the user's data directory, each entry
carrying the hash of the one before it, so that editing, removing or reordering an entry is detected when the grades
are exported. (Cutting entries off the end cannot be seen from the log alone; the export prints the last hash, which
an instructor can compare with the one a student reported earlier.)

    log = GradeLog()
    log.append(report)                       # after `lab grade`
    text = log.export("Ada", "csv")         # raises TamperedLog if the chain is broken
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
import threading
from pathlib import Path
from typing import Any

from lab.grading.runner import Report
from lab.lessons.progress import data_dir

GENESIS = "0" * 64
FIELDS = ("student", "exercise", "title", "score", "max_score", "time", "seconds", "grader_version", "seed", "status")
UNFINISHED = "did not finish: the grader was stopped before it could record a score"


class TamperedLog(ValueError):
    """The log's hash chain is broken; the message names the first entry that does not hold."""


def entry_hash(entry: dict[str, Any], key: bytes | None = None) -> str:
    """The entry's hash (every field but the hash itself): SHA-256, or HMAC-SHA256 with `key` (a classroom log,
    which only the holder of the key can extend or rewrite consistently)."""
    body = json.dumps({k: v for k, v in entry.items() if k != "hash"}, sort_keys=True, separators=(",", ":")).encode()
    return hmac.new(key, body, hashlib.sha256).hexdigest() if key is not None else hashlib.sha256(body).hexdigest()


class GradeLog:
    """The local log (no key: a convenience for self-study, which its owner can rewrite consistently), or with `key`
    a log whose chain only the key's holder can write (`lab.grading.classroom`)."""

    def __init__(self, path: Path | None = None, key: bytes | None = None) -> None:
        self.path = path or data_dir() / "grades.jsonl"
        self.key = key
        self._lock = threading.Lock()

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()]

    def begin(self, exercise: str, title: str, started: str, seed: int | None,
              student: str | None = None) -> dict[str, Any]:
        """Record that a grade starts, before any student code runs: if the grading process is then killed (by
        the student's code, say), the attempt still shows in the log and in the export, as unfinished. (`student`:
        whose, in a classroom log that holds a whole class.)"""
        entry = {"kind": "attempt", "exercise": exercise, "title": title, "time": started, "seed": seed}
        return self._write(entry if student is None else {**entry, "student": student})

    def append(self, report: Report, student: str | None = None) -> dict[str, Any]:
        entry = {"exercise": report.exercise, "title": report.title, "score": report.score,
                 "max_score": report.max_score, "time": report.started, "seconds": round(report.seconds, 2),
                 "grader_version": report.grader_version, "seed": report.seed, "error": report.error}
        return self._write(entry if student is None else {**entry, "student": student})

    def _write(self, entry: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            lines = self.path.read_text().splitlines() if self.path.exists() else []
            entry["prev"] = json.loads(lines[-1])["hash"] if lines else GENESIS
            entry["hash"] = entry_hash(entry, self.key)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a") as out:
                out.write(json.dumps(entry, sort_keys=True) + "\n")
            return entry

    def verify(self) -> None:
        """Raise TamperedLog at the first entry whose hash or link to the one before does not hold."""
        if not self.path.exists():
            return
        previous = GENESIS
        for number, line in enumerate(self.path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                raise TamperedLog(f"{self.path}: entry {number} is not valid JSON: the log was edited") from None
            if entry.get("prev") != previous:
                raise TamperedLog(f"{self.path}: entry {number} does not follow entry {number - 1}: an entry was "
                                  f"removed, inserted or moved")
            if not hmac.compare_digest(str(entry.get("hash")), entry_hash(entry, self.key)):
                raise TamperedLog(f"{self.path}: entry {number} was changed after it was written (exercise "
                                  f"{entry.get('exercise')}, score {entry.get('score')})")
            previous = entry["hash"]

    def export(self, student: str, fmt: str) -> str:
        """Every grade, as JSON or CSV, with the student's name; refuses a broken log."""
        if fmt not in ("json", "csv"):
            raise ValueError(f"unknown format {fmt!r}: choose json or csv")
        rows = self.rows(student)
        entries = self.entries()
        last = entries[-1]["hash"] if entries else GENESIS
        if fmt == "json":
            return json.dumps({"student": student, "grades": rows, "last_hash": last}, indent=2)
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=list(FIELDS))
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue()

    def rows(self, student: str) -> list[dict[str, Any]]:
        """One row a grade, and one for each attempt that never got its grade (the grader was stopped); refuses a
        broken log."""
        self.verify()
        entries = self.entries()
        rows = []
        for number, entry in enumerate(entries):
            if entry.get("kind") == "attempt":
                following = entries[number + 1] if number + 1 < len(entries) else None
                finished = (following is not None and following.get("kind") != "attempt"
                            and following.get("exercise") == entry.get("exercise")
                            and following.get("student") == entry.get("student"))
                if not finished:   # no grade followed: the grading process was stopped
                    rows.append({**{k: entry.get(k) for k in FIELDS if k != "student"},
                                 "student": entry.get("student", student), "score": 0, "status": UNFINISHED})
                continue
            rows.append({**{k: entry.get(k) for k in FIELDS if k not in ("student", "status")},
                         "student": entry.get("student", student), "status": entry.get("error") or "graded"})
        return rows

    def last_hash(self) -> str:
        entries = self.entries()
        return str(entries[-1]["hash"]) if entries else GENESIS

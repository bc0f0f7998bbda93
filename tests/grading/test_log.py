"""The grade log: export round trip (JSON and CSV) and tamper detection (an edited, removed, reordered or garbled
entry is named on export)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.grading.checks import CheckResult
from lab.grading.log import UNFINISHED, GradeLog, TamperedLog
from lab.grading.runner import Report


def report(exercise: str, earned: float, seed: int = 1) -> Report:
    graded = Report(exercise, f"exercise {exercise}", f"/x/{exercise}.py", seed, "1", "2026-11-22T10:00:00+00:00",
                    1.5)
    graded.results = [CheckResult("a", 2, earned), CheckResult("b", 3, 3)]
    return graded


def filled(tmp_path: Path, count: int = 3) -> GradeLog:
    log = GradeLog(tmp_path / "grades.jsonl")
    for n in range(count):
        log.append(report(f"0{n + 1}", n % 3, seed=n))
    return log


def test_export_round_trips_as_json_and_csv(tmp_path: Path) -> None:
    log = filled(tmp_path)
    exported = json.loads(log.export("Ada Lovelace", "json"))
    assert exported["student"] == "Ada Lovelace" and exported["last_hash"] == log.last_hash()
    assert [(g["exercise"], g["score"], g["max_score"], g["seed"], g["grader_version"]) for g in exported["grades"]] \
        == [("01", 3.0, 5.0, 0, "1"), ("02", 4.0, 5.0, 1, "1"), ("03", 5.0, 5.0, 2, "1")]
    rows = list(csv.DictReader(io.StringIO(log.export("Ada Lovelace", "csv"))))
    assert [(r["student"], r["exercise"], r["score"], r["time"]) for r in rows] == [
        ("Ada Lovelace", "01", "3.0", "2026-11-22T10:00:00+00:00"), ("Ada Lovelace", "02", "4.0",
                                                                     "2026-11-22T10:00:00+00:00"),
        ("Ada Lovelace", "03", "5.0", "2026-11-22T10:00:00+00:00")]


def rewrite(log: GradeLog, change: object) -> None:
    lines = log.path.read_text().splitlines()
    log.path.write_text("\n".join(change(lines)) + "\n")  # type: ignore[operator]


def test_an_edited_score_is_detected(tmp_path: Path) -> None:
    log = filled(tmp_path)

    def raise_score(lines: list[str]) -> list[str]:
        entry = json.loads(lines[1])
        entry["score"] = 5.0
        return [lines[0], json.dumps(entry, sort_keys=True), lines[2]]

    rewrite(log, raise_score)
    with pytest.raises(TamperedLog, match=r"entry 2 was changed after it was written \(exercise 02, score 5.0\)"):
        log.export("Ada", "json")


@pytest.mark.parametrize(("change", "words"), [
    (lambda lines: [lines[0], lines[2]], "entry 2 does not follow entry 1"),
    (lambda lines: [lines[1], lines[0], lines[2]], "entry 1 does not follow entry 0"),
    (lambda lines: [lines[0], lines[1][:-5], lines[2]], "entry 2 is not valid JSON"),
])
def test_removed_reordered_or_garbled_entries_are_detected(tmp_path: Path, change: object, words: str) -> None:
    log = filled(tmp_path)
    rewrite(log, change)
    with pytest.raises(TamperedLog, match=words):
        log.verify()


@given(st.lists(st.tuples(st.sampled_from(["01", "02", "08"]), st.floats(0, 2)), min_size=1, max_size=8),
       st.data())
def test_any_changed_score_breaks_the_chain(tmp_path_factory: pytest.TempPathFactory,
                                           grades: list[tuple[str, float]], data: st.DataObject) -> None:
    log = GradeLog(tmp_path_factory.mktemp("log") / "grades.jsonl")
    for exercise, earned in grades:
        log.append(report(exercise, round(earned, 2)))
    log.verify()
    lines = log.path.read_text().splitlines()
    index = data.draw(st.integers(0, len(lines) - 1))
    entry = json.loads(lines[index])
    entry["score"] = entry["score"] + 1
    lines[index] = json.dumps(entry, sort_keys=True)
    log.path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TamperedLog):
        log.verify()


def test_an_attempt_without_its_grade_is_exported_as_unfinished(tmp_path: Path) -> None:
    log = GradeLog(tmp_path / "grades.jsonl")
    log.begin("01", "Range", "2026-11-26T10:00:00+00:00", 7)
    log.append(report("01", 5, seed=7))
    log.begin("02", "Round robin", "2026-11-26T10:05:00+00:00", 8)          # and then the grader was killed
    rows = log.rows("Ada")
    assert [(r["exercise"], r["score"], r["status"]) for r in rows] == [("01", 8.0, "graded"), ("02", 0, UNFINISHED)]
    log.verify()                                                                 # attempts are in the hash chain


def test_a_student_file_that_kills_lab_grade_still_leaves_the_attempt_in_the_log(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    students = Path(__file__).parent / "students" / "hostile"
    env = {**os.environ, "LAB_DATA_DIR": str(tmp_path)}
    lab = Path(sys.executable).with_name("lab")
    result = subprocess.run([str(lab), "grade", "08", "--file", str(students / "kills_the_grader.py"), "--seed", "3"],
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == -9                                            # lab grade was killed
    rows = GradeLog(tmp_path / "grades.jsonl").rows("Ada")
    assert [(r["exercise"], r["score"], r["status"]) for r in rows] == [("08", 0, UNFINISHED)]

"""`lab exercises`, `lab grade`, `lab hint`, `lab reset`, `lab grades export` as a student and an instructor use them,
with progress and grades in a temporary data directory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import lab.grading.catalogue as catalogue
from lab.cli import app
from lab.grading.catalogue import find
from tests.cli.test_broker_cmd import words
from tests.grading.own_answers import off_by_one

runner = CliRunner()
STUDENTS = Path(__file__).resolve().parents[1] / "grading" / "students" / "08"


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LAB_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def test_exercises_lists_the_catalogue() -> None:
    result = runner.invoke(app, ["exercises"])
    assert result.exit_code == 0
    text = words(result.output)
    for exercise in catalogue.load_catalogue():
        assert f"{exercise.number} " in text and exercise.folder[:8] in text


def test_grade_a_file_reports_each_check_and_logs_the_grade(data_dir: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["grade", "08", "--file", str(off_by_one(tmp_path)), "--seed", "3"],
                           terminal_width=160)
    assert result.exit_code == 1  # not full marks
    text = words(result.output)
    assert "✗ the README's worked example (a compacted gap) 0/2" in text and "seed 3" in text
    good = runner.invoke(app, ["grade", "8", "--file", str(STUDENTS / "own.py"), "--json"])
    assert good.exit_code == 0 and json.loads(good.output)["score"] == 10
    exported = runner.invoke(app, ["grades", "export", "--student", "Ada", "--format", "json"])
    grades = json.loads(exported.output)["grades"]
    assert (grades[0]["exercise"], grades[0]["seed"]) == ("08", 3) and grades[1]["score"] == 10


def test_a_file_that_hands_in_the_labs_own_implementation_is_refused() -> None:
    result = runner.invoke(app, ["grade", "08", "--file", str(STUDENTS / "correct.py")], terminal_width=200)
    assert result.exit_code == 1
    assert "hands in the lab's own OffsetManager (lab.offsets.offset_manager)" in words(result.output)
    assert "score" not in result.output


def test_export_asks_for_the_name_and_refuses_a_tampered_log(data_dir: Path) -> None:
    runner.invoke(app, ["grade", "08", "--file", str(STUDENTS / "own.py")])
    asked = runner.invoke(app, ["grades", "export", "--format", "csv"], input="Grace Hopper\n")
    assert asked.exit_code == 0 and "Grace Hopper,08" in asked.output
    log = data_dir / "grades.jsonl"
    log.write_text(log.read_text().replace('"score": 10.0', '"score": 11.0'))
    refused = runner.invoke(app, ["grades", "export", "--student", "x"])
    assert refused.exit_code == 1 and "tampered with" in words(refused.output)
    assert runner.invoke(app, ["grades", "export", "--student", "x", "--format", "xml"]).exit_code == 2


def test_hints_come_one_at_a_time_and_are_remembered() -> None:
    ladder = find("08").hints()
    first = runner.invoke(app, ["hint", "08"], terminal_width=160)
    second = runner.invoke(app, ["hint", "8"], terminal_width=160)
    assert f"hint 1 of {len(ladder)}" in first.output and f"hint 2 of {len(ladder)}" in second.output
    for _ in range(len(ladder)):
        last = runner.invoke(app, ["hint", "08"], terminal_width=160)
    assert f"hint {len(ladder)} of {len(ladder)}" in last.output and "That is the last hint" in last.output


def test_unknown_exercises_are_refused_with_the_numbers_allowed() -> None:
    result = runner.invoke(app, ["grade", "42"])
    assert result.exit_code == 2 and "no exercise '42': choose one of 01, 02" in words(result.output)


def test_reset_restores_the_stub_and_keeps_a_backup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "exercises"
    shutil.copytree(catalogue.exercises_dir(), copy)
    monkeypatch.setattr(catalogue, "exercises_dir", lambda: copy)
    stub = copy / "08_offset_manager" / "offset_manager.py"
    original = stub.read_text()
    stub.write_text("# my work in progress\n")
    result = runner.invoke(app, ["reset", "08", "--yes"])
    assert result.exit_code == 0 and stub.read_text() == original
    backups = list(stub.parent.glob("offset_manager.py.bak-*"))
    assert len(backups) == 1 and backups[0].read_text() == "# my work in progress\n"
    again = runner.invoke(app, ["reset", "08", "--yes"])
    assert "already the original stub" in words(again.output)

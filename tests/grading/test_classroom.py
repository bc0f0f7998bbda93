"""`lab classroom` over real HTTP: a server on loopback grades what students send, logs it under its own key, and
refuses what is not a submission; its export refuses a log anyone without the key wrote to, including the offline
forgery that fools the local log (recomputing the chain with SHA-256)."""

from __future__ import annotations

import hashlib
import json
import re
import stat
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lab.cli import app
from lab.grading.classroom import MAX_BODY, Classroom, ClassroomServer, SubmitError, submit
from lab.grading.log import TamperedLog
from tests.cli.test_broker_cmd import words

STUDENTS = Path(__file__).parent / "students"
OWN = (STUDENTS / "08" / "own.py").read_text()
TOKEN = "class-token"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ClassroomServer]:
    running = ClassroomServer(Classroom(tmp_path / "classroom"), TOKEN, "127.0.0.1", 0)
    running.start()
    yield running
    running.shutdown()
    running.server_close()


def test_a_submission_is_graded_there_and_logged_under_the_servers_key(server: ClassroomServer) -> None:
    report = submit(server.url, TOKEN, "Ada Lovelace", "8", OWN)
    assert report["score"] == report["max_score"] == 10 and not report["error"]
    log = server.classroom.log
    rows = log.rows("")
    assert [(r["student"], r["exercise"], r["score"], r["status"]) for r in rows] == [
        ("Ada Lovelace", "08", 10.0, "graded")]
    assert report["log_entry"] == log.entries()[-1]["hash"]
    assert stat.S_IMODE(server.classroom.key_path.stat().st_mode) == 0o600


def test_the_offline_forgery_that_fools_the_local_log_does_not_fool_the_classroom_log(
        server: ClassroomServer) -> None:
    submit(server.url, TOKEN, "Ada", "08", "class OffsetManager:\n    pass\n")
    path = server.classroom.log.path
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    forged = {**entries[-1], "score": 10.0}
    body = {k: v for k, v in forged.items() if k != "hash"}
    forged["hash"] = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    path.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in [*entries[:-1], forged]))
    with pytest.raises(TamperedLog, match="entry 2 was changed after it was written"):
        server.classroom.log.verify()
    result = CliRunner().invoke(app, ["classroom", "export", "--folder", str(server.classroom.folder)])
    assert result.exit_code == 1 and "does not verify" in result.output


def test_a_submission_that_writes_to_the_class_log_during_its_grade_is_put_back_and_refused(
        server: ClassroomServer, monkeypatch: pytest.MonkeyPatch) -> None:
    submit(server.url, TOKEN, "Ada", "08", OWN)                # the log has an entry to chain to
    monkeypatch.setenv("LAB_TEST_CLASSROOM_LOG", str(server.classroom.log.path))
    hostile = (STUDENTS / "hostile" / "rewrites_the_class_log.py").read_text()
    report = submit(server.url, TOKEN, "Mallory", "08", hostile)
    assert report["score"] == 0 and "grades.jsonl (changed)" in report["error"], report["error"]
    server.classroom.log.verify()                              # the forged line is gone; the chain holds
    assert [r["student"] for r in server.classroom.log.rows("")] == ["Ada", "Mallory"]


@pytest.mark.parametrize(("change", "said"), [
    ({"token": "wrong"}, "(401): the class token is missing or wrong"),
    ({"exercise": "42"}, "(400): no exercise '42': choose one of 01, 02"),
    ({"student": "Robert'); DROP TABLE students;--"}, "(400): the student's name must be 1-80 letters"),
    ({"source": "x" * (MAX_BODY + 1)}, "over the server's 512 KiB limit: is this the right file?"),
])
def test_what_is_not_a_submission_is_refused_with_why(server: ClassroomServer, change: dict[str, str],
                                                      said: str) -> None:
    given = {"token": TOKEN, "student": "Ada", "exercise": "08", "source": OWN, **change}
    with pytest.raises(SubmitError, match=re.escape(said)):
        submit(server.url, given["token"], given["student"], given["exercise"], given["source"])
    assert server.classroom.log.entries() == []                # nothing graded, nothing logged


def test_a_body_that_is_not_a_submission_is_a_4xx_and_other_paths_404(server: ClassroomServer) -> None:
    for path, data, code in (("/grade", b"[1, 2]", 400), ("/grade", b"not json", 400), ("/other", b"{}", 404),
                             ("/grade", b"x" * (MAX_BODY + 1), 413)):   # past the client's own check
        request = urllib.request.Request(f"{server.url}{path}", data=data, method="POST",
                                         headers={"Authorization": f"Bearer {TOKEN}"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == code and "error" in json.loads(refused.value.read())


def test_cannot_reach_is_said_plainly() -> None:
    with pytest.raises(SubmitError, match=re.escape("cannot reach http://127.0.0.1:9")):
        submit("http://127.0.0.1:9", TOKEN, "Ada", "08", OWN, timeout=5)


def test_export_says_where_there_is_no_classroom(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["classroom", "export", "--folder", str(tmp_path)], terminal_width=200)
    assert result.exit_code == 2 and "holds no classroom (no key)" in words(result.output)

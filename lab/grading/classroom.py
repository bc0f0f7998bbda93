"""`lab classroom`: grades that count in a class. The instructor runs the server on their own machine; students send
their file over HTTP (`lab classroom submit`); the server grades it with its own copy of the lab, in the same
sandbox as `lab grade` (a process of the student's code's own, with limits; judged apart where the exercise allows),
and appends the grade to a log whose hash chain is an HMAC under a key only the server holds. `lab classroom
export` on that machine verifies every entry before it writes a row.

    server = ClassroomServer(Classroom(folder), token="...", host="127.0.0.1", port=8765)
    server.serve_forever()                                     # or start() in a thread, as the tests do
    report = submit("http://127.0.0.1:8765", token, "Ada", "08", source)

The wire: `POST /grade` with `Authorization: Bearer TOKEN` and a JSON body {"student", "exercise", "source"}
(at most 512 KiB); the answer is the report as `lab grade --json` prints it, plus the log entry's hash. Grades run
one at a time. Every answer that is not a grade is {"error": "..."} with a 4xx status that says why.

What the key protects: an entry written or edited by anyone without it (a copy of the log brought back, an edit on
disk) fails the export. During a grade the log and the key are among the files put back if the student's code
changes them (`lab.grading.integrity`). The key file is readable by whatever runs as the server's user, and that
includes the student's code during its grade: a submission can read the key and show it in its own report, after
which a consistent copy of the log can be forged elsewhere. The log on the server stays trustworthy: export there.
"""

from __future__ import annotations

import hmac
import json
import os
import re
import secrets
import tempfile
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib import error as urlerror
from urllib import request as urlrequest

from lab.grading.catalogue import UnknownExercise, find
from lab.grading.log import GradeLog
from lab.grading.runner import Report, grade

MAX_BODY = 512 * 1024
DRAIN_LIMIT = 8 * MAX_BODY      # an oversized body up to this size is read and dropped before the refusal
STUDENT = re.compile(r"[\w .'@-]{1,80}")      # a name as a class list writes it


@dataclass
class Classroom:
    """The server's folder: `key` (32 random bytes, created on first use, owner-only) and `grades.jsonl`."""

    folder: Path

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.key_path = self.folder / "key"
        if not self.key_path.exists():
            descriptor = os.open(self.key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as out:
                out.write(secrets.token_bytes(32))
        self.log = GradeLog(self.folder / "grades.jsonl", key=self.key_path.read_bytes())
        self.grading = threading.Lock()

    def grade(self, student: str, exercise_key: str, source: str) -> tuple[Report, str]:
        """Grade `source` as `student`'s answer to the exercise; the report and the hash of its log entry."""
        exercise = find(exercise_key)
        with self.grading, tempfile.TemporaryDirectory(prefix="lab-classroom-") as folder:
            answer = Path(folder) / exercise.stub
            answer.write_text(source)
            started = datetime.now(UTC).isoformat(timespec="seconds")
            self.log.begin(exercise.number, exercise.title, started, None, student=student)
            report = grade(exercise, answer, protect=(self.log.path, self.key_path))
            entry = self.log.append(report, student=student)
        return report, str(entry["hash"])


class _Handler(BaseHTTPRequestHandler):
    server: ClassroomServer
    server_version = "lab-classroom"
    timeout = 30           # seconds a client may take to send its request (a slow sender is dropped)

    def log_message(self, format: str, *args: Any) -> None:
        self.server.say(f"{self.client_address[0]} {format % args}")

    def _answer(self, status: HTTPStatus, body: dict[str, Any]) -> None:
        data = json.dumps(body, indent=2).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path != "/":
            self._answer(HTTPStatus.NOT_FOUND, {"error": f"no page {self.path}: POST /grade takes a submission"})
            return
        self._answer(HTTPStatus.OK, {"service": "Kafka Internals Lab classroom",
                                     "submit": "lab classroom submit EXERCISE --server URL --student NAME --token T"})

    def do_POST(self) -> None:
        if self.path != "/grade":
            self._answer(HTTPStatus.NOT_FOUND, {"error": f"no endpoint {self.path}: POST /grade takes a submission"})
            return
        given = self.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {self.server.token}".encode()):
            self._answer(HTTPStatus.UNAUTHORIZED, {"error": "the class token is missing or wrong (--token)"})
            return
        try:
            length = int(self.headers.get("Content-Length", ""))
        except ValueError:
            self._answer(HTTPStatus.LENGTH_REQUIRED, {"error": "a submission needs its Content-Length"})
            return
        if not 0 <= length <= MAX_BODY:
            # read (and drop) a body of moderate size first, so that the sender gets the answer rather than a reset
            # connection; beyond that the connection is closed after the answer
            if length <= DRAIN_LIMIT:
                remaining = length
                while remaining > 0 and (chunk := self.rfile.read(min(remaining, 1 << 16))):
                    remaining -= len(chunk)
            self.close_connection = True
            self._answer(HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                         {"error": f"a submission of {length} bytes is over the {MAX_BODY // 1024} KiB limit"})
            return
        try:
            body = json.loads(self.rfile.read(length))
            student, exercise, source = body["student"], body["exercise"], body["source"]
            if not all(isinstance(v, str) for v in (student, exercise, source)):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            self._answer(HTTPStatus.BAD_REQUEST, {"error": 'the body must be JSON: {"student": "...", "exercise": '
                                                           '"08", "source": "..."}, all strings'})
            return
        if not STUDENT.fullmatch(student):
            self._answer(HTTPStatus.BAD_REQUEST, {"error": "the student's name must be 1-80 letters, digits, spaces "
                                                           "or . ' @ - _"})
            return
        try:
            report, entry = self.server.classroom.grade(student, exercise, source)
        except UnknownExercise as unknown:
            self._answer(HTTPStatus.BAD_REQUEST, {"error": str(unknown)})
            return
        self.server.say(f"graded {student}, exercise {report.exercise}: {report.score:g}/{report.max_score:g}")
        self._answer(HTTPStatus.OK, {**report.as_dict(), "log_entry": entry})


class ClassroomServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, classroom: Classroom, token: str, host: str = "127.0.0.1", port: int = 8765,
                 say: Any = None) -> None:
        super().__init__((host, port), _Handler)
        self.classroom, self.token = classroom, token
        self.say = say or (lambda line: None)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host if isinstance(host, str) else host.decode()}:{port}"

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="classroom", daemon=True)
        thread.start()
        return thread


class SubmitError(RuntimeError):
    """The server refused the submission, or could not be reached; the message says why."""


def submit(server: str, token: str, student: str, exercise: str, source: str, timeout: float = 900) -> dict[str, Any]:
    """Send a file to a classroom server; its report (as `lab grade --json` prints one)."""
    data = json.dumps({"student": student, "exercise": exercise, "source": source}).encode()
    if len(data) > MAX_BODY:
        raise SubmitError(f"the submission is {len(data)} bytes, over the server's {MAX_BODY // 1024} KiB limit: is "
                          f"this the right file?")
    posted = urlrequest.Request(f"{server.rstrip('/')}/grade", data=data, method="POST",
                                headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urlrequest.urlopen(posted, timeout=timeout) as answer:
            found: dict[str, Any] = json.loads(answer.read())
            return found
    except urlerror.HTTPError as refused:
        try:
            why = json.loads(refused.read()).get("error", refused.reason)
        except ValueError:
            why = refused.reason
        raise SubmitError(f"the server refused the submission ({refused.code}): {why}") from None
    except (urlerror.URLError, OSError) as failed:
        raise SubmitError(f"cannot reach {server}: {getattr(failed, 'reason', failed)}") from None

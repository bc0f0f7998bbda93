"""Appends a full-marks entry to the classroom's grade log while it is graded (the test tells it where the log is,
as a submission could find out by looking), and answers nothing right."""

import json
import os
from pathlib import Path

log = Path(os.environ["LAB_TEST_CLASSROOM_LOG"])
last = json.loads(log.read_text().splitlines()[-1])
log.write_text(log.read_text() + json.dumps({"exercise": "08", "score": 10.0, "student": "Mallory", "prev":
                                             last["hash"], "hash": "0" * 64}) + "\n")


class OffsetManager:
    def __init__(self, initial_fetch_offset: int) -> None:
        raise RuntimeError("nothing here")

"""Kills the process that grades it (its parent's parent is `lab grade`: the worker's parent) as soon as it runs."""

import os
import signal

from lab.offsets.offset_manager import OffsetManager as Reference


class OffsetManager(Reference):
    def find_next_commit_offset(self) -> int | None:
        os.kill(os.getppid(), signal.SIGKILL)
        return super().find_next_commit_offset()

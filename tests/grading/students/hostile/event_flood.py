"""Writes 300 MiB without a newline straight to file descriptor 1, where the grader's events go."""

import os

from lab.offsets.offset_manager import OffsetManager as Reference

CHUNK = b"x" * (1 << 20)


class OffsetManager(Reference):
    def find_next_commit_offset(self) -> int | None:
        for _ in range(300):
            os.write(1, CHUNK)
        return super().find_next_commit_offset()

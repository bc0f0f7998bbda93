"""Prints 300 MiB without a newline, then answers rightly."""

import sys

from lab.offsets.offset_manager import OffsetManager as Reference

CHUNK = "x" * (1 << 20)


class OffsetManager(Reference):
    def find_next_commit_offset(self) -> int | None:
        for _ in range(300):
            sys.stdout.write(CHUNK)
        return super().find_next_commit_offset()

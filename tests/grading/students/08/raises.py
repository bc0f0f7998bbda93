"""Raises inside find_next_commit_offset."""

from lab.offsets.offset_manager import OffsetManager as Reference


class OffsetManager(Reference):
    def find_next_commit_offset(self) -> int | None:
        return 1 // 0

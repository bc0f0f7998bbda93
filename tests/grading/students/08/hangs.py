"""Loops for ever as soon as something is acked."""

from lab.offsets.offset_manager import OffsetManager as Reference


class OffsetManager(Reference):
    def find_next_commit_offset(self) -> int | None:
        while True:
            pass

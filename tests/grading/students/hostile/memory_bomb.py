"""Asks for 3 GB as soon as it is asked anything."""

from lab.offsets.offset_manager import OffsetManager as Reference


class OffsetManager(Reference):
    def find_next_commit_offset(self) -> int | None:
        hoard = bytearray(3 * 1024**3)
        return len(hoard)

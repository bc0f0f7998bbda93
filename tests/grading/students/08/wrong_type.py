"""Returns the offset as a string."""

from lab.offsets.offset_manager import OffsetManager as Reference


class OffsetManager(Reference):
    def find_next_commit_offset(self) -> int | None:  # type: ignore[override]
        found = super().find_next_commit_offset()
        return None if found is None else str(found)  # type: ignore[return-value]

"""Ends the whole process in the middle of a check."""

import os

from lab.offsets.offset_manager import OffsetManager as Reference


class OffsetManager(Reference):
    def commit(self, offset: int) -> int:
        os._exit(3)

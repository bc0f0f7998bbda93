"""Hands in the lab's own implementation under the stub's name, the plain way a student would try it."""

from lab.offsets.offset_manager import OffsetManager as Kafkas


class OffsetManager(Kafkas):
    """Nothing of its own."""

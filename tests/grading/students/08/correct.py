"""A correct answer: the lab's own reference under the stub's name."""

from lab.offsets.offset_manager import OffsetManager

__all__ = ["OffsetManager"]

"""A correct answer: the lab's own reference under the stub's name."""

from lab.assignors.sticky import StickyAssignor

__all__ = ["StickyAssignor"]

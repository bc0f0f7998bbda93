"""A correct answer: the lab's own reference under the stub's name."""

from lab.assignors.range import RangeAssignor

__all__ = ["RangeAssignor"]

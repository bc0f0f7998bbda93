"""A correct answer written from the README, as a student would, not taken from the lab: the file the command-line
tests grade (`lab grade` refuses a file that hands in the lab's own OffsetManager). `tests.grading.own_answers`
makes it wrong in one place."""

from __future__ import annotations


class OffsetManager:
    def __init__(self, initial_fetch_offset: int) -> None:
        self._committed = initial_fetch_offset
        self._emitted: set[int] = set()
        self._acked: set[int] = set()

    def add_to_emitted(self, offset: int) -> None:
        self._emitted.add(offset)

    def add_to_acked(self, offset: int) -> None:
        self._acked.add(offset)

    def find_next_commit_offset(self) -> int | None:
        position = self._committed
        for offset in sorted(self._acked):
            if offset < position:
                raise RuntimeError(f"offset {offset} was acked after {position} was committed")
            if offset > position:
                if position in self._emitted:
                    break                                    # in flight: at-least-once stops here
                after = [emitted for emitted in self._emitted if emitted >= position]
                if not after or offset != min(after):
                    break                                    # an emitted, un-acked offset lies in the gap
            position = offset + 1
        return None if position == self._committed else position

    def commit(self, offset: int) -> int:
        covered = {acked for acked in self._acked if acked < offset}
        self._acked -= covered
        self._emitted = {emitted for emitted in self._emitted if emitted >= offset}
        self._committed = offset
        return len(covered)

    @property
    def committed_offset(self) -> int:
        return self._committed


"""Exercise 08: at-least-once commit bookkeeping for one partition (see README.md). Fill in every # TODO."""

from __future__ import annotations


class OffsetManager:
    def __init__(self, initial_fetch_offset: int) -> None:
        # TODO: remember the committed offset, and keep the emitted and the acked offsets (sorted sets, or lists
        # kept sorted) that are not committed yet.
        raise NotImplementedError

    def add_to_emitted(self, offset: int) -> None:
        # TODO: record that the record at `offset` was emitted.
        raise NotImplementedError

    def add_to_acked(self, offset: int) -> None:
        # TODO: record that the record at `offset` is done.
        raise NotImplementedError

    def find_next_commit_offset(self) -> int | None:
        # TODO: walk the acked offsets upwards from the committed offset (README: the three rules); None if the walk
        # did not move.
        raise NotImplementedError

    def commit(self, offset: int) -> int:
        # TODO: Kafka accepted `offset`: remember it, forget the emitted and acked offsets below it, and return how
        # many acked offsets were forgotten.
        raise NotImplementedError

    @property
    def committed_offset(self) -> int:
        # TODO: the last committed offset.
        raise NotImplementedError

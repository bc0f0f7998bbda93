"""Exercise 08's grader: the student's `OffsetManager` against storm-kafka-client's behaviour (the lab's reference
`lab.offsets.offset_manager`, and the upstream test cases in `storm_kafka_offsets.json`)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from lab.grading.checks import Check, Context, Fail, Partial, differential, expect_type, score_cases
from lab.grading.offset_cases import replay
from lab.grading.reference_vectors import load


class Guarded:
    """The student's manager, every call through `ctx.call` (exceptions and wrong types become clear failures)."""

    def __init__(self, ctx: Context, initial: int) -> None:
        self.ctx = ctx
        cls = ctx.student_attr("OffsetManager")
        self.inner = ctx.call(f"OffsetManager({initial})", cls, initial)

    def add_to_emitted(self, offset: int) -> None:
        self.ctx.call(f"add_to_emitted({offset})", self.inner.add_to_emitted, offset)

    def add_to_acked(self, offset: int) -> None:
        self.ctx.call(f"add_to_acked({offset})", self.inner.add_to_acked, offset)

    def find_next_commit_offset(self) -> int | None:
        found = self.ctx.call("find_next_commit_offset()", self.inner.find_next_commit_offset)
        if found is not None:
            expect_type(found, int, "find_next_commit_offset()'s result")
        return found  # type: ignore[no-any-return]

    def commit(self, offset: int) -> int:
        dropped = self.ctx.call(f"commit({offset})", self.inner.commit, offset)
        expect_type(dropped, int, f"commit({offset})'s result")
        return dropped  # type: ignore[no-any-return]

    @property
    def committed_offset(self) -> int:
        value = self.ctx.call("committed_offset", lambda: self.inner.committed_offset)
        expect_type(value, int, "committed_offset")
        return value  # type: ignore[no-any-return]


def worked_example(ctx: Context) -> None:
    manager = Guarded(ctx, 0)
    for offset in (0, 1, 2, 5, 6):
        manager.add_to_emitted(offset)
    for offset in (0, 1, 2, 6):
        manager.add_to_acked(offset)
    got = manager.find_next_commit_offset()
    if got != 3:
        raise Fail(f"emitted 0, 1, 2, 5, 6 (3 and 4 compacted away), acked 0, 1, 2, 6: find_next_commit_offset() "
                   f"returned {got!r}, expected 3 (5 was emitted and is still in flight)")
    manager.add_to_acked(5)
    got = manager.find_next_commit_offset()
    if got != 7:
        raise Fail(f"then 5 acked too: find_next_commit_offset() returned {got!r}, expected 7 (5 is the next "
                   f"emitted offset after the gap 3-4, so the walk jumps the gap)")
    dropped = manager.commit(7)
    if dropped != 5:
        raise Fail(f"commit(7) returned {dropped}, expected 5: the acked offsets 0, 1, 2, 5, 6 are forgotten")
    got = manager.find_next_commit_offset()
    if got is not None:
        raise Fail(f"after commit(7) with nothing new acked, find_next_commit_offset() returned {got!r}, expected None")


def stops_in_flight(ctx: Context) -> None:
    manager = Guarded(ctx, 10)
    for offset in range(10, 15):
        manager.add_to_emitted(offset)
    for offset in (10, 11, 13, 14):
        manager.add_to_acked(offset)
    got = manager.find_next_commit_offset()
    if got != 12:
        raise Fail(f"emitted 10-14, acked 10, 11, 13, 14 (12 still in flight): find_next_commit_offset() returned "
                   f"{got!r}, expected 12: committing past 12 would lose it if the spout crashed")
    manager.add_to_acked(12)
    got = manager.find_next_commit_offset()
    if got != 15:
        raise Fail(f"then 12 acked: find_next_commit_offset() returned {got!r}, expected 15")


def bookkeeping(ctx: Context) -> None:
    manager = Guarded(ctx, 0)
    if manager.committed_offset != 0:
        raise Fail(f"a new OffsetManager(0) has committed_offset {manager.committed_offset}, expected 0")
    for offset in range(6):
        manager.add_to_emitted(offset)
    for offset in (0, 1, 2, 4):
        manager.add_to_acked(offset)
    dropped = manager.commit(3)
    if dropped != 3 or manager.committed_offset != 3:
        raise Fail(f"commit(3) with 0, 1, 2, 4 acked returned {dropped} and left committed_offset "
                   f"{manager.committed_offset}; expected 3 and 3 (0, 1, 2 are forgotten, 4 is kept)")
    manager.add_to_acked(3)
    got = manager.find_next_commit_offset()
    if got != 5:
        raise Fail(f"after commit(3), acking 3 (4 was acked before): find_next_commit_offset() returned {got!r}, "
                   f"expected 5: the acked 4 must survive the commit")


def upstream_cases(ctx: Context) -> Partial | None:
    cases = load("storm_kafka_offsets.json")["offset_manager"]

    def judge(case: dict[str, Any]) -> str | None:
        problem = replay(Guarded(ctx, case["initial_fetch_offset"]), case, core_only=True)
        return None if problem is None else f"{case['name']}: {problem}"

    return score_cases(cases, judge, what="upstream case")


# A random script: offsets emitted in order with holes (compaction), acked in any order, with commits between.
scripts = st.lists(st.tuples(st.sampled_from(("emit", "emit", "skip", "ack", "ack", "find", "commit")),
                             st.integers(min_value=0, max_value=9)), min_size=1, max_size=40)


def differential_scripts(ctx: Context) -> None:
    reference_class = ctx.reference.OffsetManager

    def compare(script: list[tuple[str, int]]) -> str | None:
        student, reference = Guarded(ctx, 0), reference_class(0)
        done: list[str] = []
        next_offset, emitted = 0, []
        for action, pick in script:
            if action in ("emit", "skip"):
                if action == "emit":
                    student.add_to_emitted(next_offset)
                    reference.add_to_emitted(next_offset)
                    emitted.append(next_offset)
                    done.append(f"emit {next_offset}")
                next_offset += 1
            elif action == "ack" and emitted:
                offset = emitted.pop(pick % len(emitted))
                student.add_to_acked(offset)
                reference.add_to_acked(offset)
                done.append(f"ack {offset}")
            elif action in ("find", "commit"):
                expected, got = reference.find_next_commit_offset(), student.find_next_commit_offset()
                done.append("find_next_commit_offset()")
                if got != expected:
                    return f"{'; '.join(done)}\n  yours: {got!r}\n  expected: {expected!r}"
                if action == "commit" and expected is not None:
                    want, have = reference.commit(expected), student.commit(expected)
                    done.append(f"commit({expected})")
                    if have != want:
                        return f"{'; '.join(done)}\n  yours returned: {have!r}\n  expected: {want!r}"
        return None

    differential(ctx, scripts, compare, name="emit/ack/commit script")


def offset_manager_checks(ctx: Context) -> list[Check]:
    return [
        Check("the README's worked example (a compacted gap)", 2, worked_example),
        Check("the walk stops at an offset still in flight", 2, stops_in_flight),
        Check("commit() forgets what is below it and counts the acked offsets it dropped", 1, bookkeeping),
        Check("storm-kafka-client's own test cases", 3, upstream_cases),
        Check("random emit/ack/commit scripts, compared with the reference", 2, differential_scripts),
    ]

"""The live graders (exercises 06 and 07) on fixture student files, each graded by the runner against an embedded broker
of its own: the score, and the words a student reads.

Exercise 06's fixtures: a correct policy and the lab's own; one committing the offset of the last record read (an
off-by-one: every rebalance repeats one record per partition); one whose commit raises when there is nothing to commit;
one whose on_lost never returns, and one whose on_revoke never returns; one passing commit() a dict (the wrong type);
one committing on lost; one committing asynchronously. Exercise 07's: correct, the lab's own, one including the
window's end (off-by-one), one raising on an empty window, one waiting for ever after the last record, one returning
records in the wrong order, one returning tuples. Neither exercise takes inputs that can be mutated (06's hooks get
the live consumer, 07's function four immutable values), so there is no mutation fixture.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from lab.clients import replay as lab_replay
from lab.grading.catalogue import find
from lab.grading.checks import Context
from lab.grading.graders import live
from lab.grading.runner import Report, grade

STUDENTS = Path(__file__).parent / "students"
LISTENER, REPLAY = find("06"), find("07")
EXAMPLE_06 = "the README's example: when c2 joins, c1's on_revoke commits its positions"
LOST, TWICE = "no record lost across three rebalances", "no record processed twice across three rebalances"
COMMITS, ON_LOST = "commits succeed, and no hook raises", "on_lost does not commit"
EXAMPLE_07, BETWEEN = "the README's example: the whole second minute", "windows that start or end between records"
EMPTY, PAST, ORDER = "empty windows", "windows past the end of the partitions", \
    "records partition by partition, each in offset order"
RANDOM = "random windows, against lab.clients.replay"


def graded(exercise: str, name: str | None = None, **overrides: float) -> Report:
    """Grade a fixture (the stub without a name), quickly, with seed 11."""
    found = replace(find(exercise), **overrides)
    path = STUDENTS / exercise / name if name else None
    report = grade(found, path, seed=11, quick=True, reference_allowed=True)
    assert not report.error, report.error
    return report


def checks(report: Report) -> dict[str, tuple[float, str]]:
    return {r.name: (r.earned, r.message) for r in report.results}


@pytest.mark.parametrize(("exercise", "points"), [("06", 13), ("07", 12)])
def test_the_labs_own_answer_gets_full_marks(exercise: str, points: float) -> None:
    report = graded(exercise, "reference.py")
    assert report.complete and report.score == points, [(r.name, r.message) for r in report.results]


# --- 06 --------------------------------------------------------------------------------------------------------------
def test_06_a_correct_policy_gets_full_marks_and_the_stub_none() -> None:
    correct = graded("06", "correct.py")
    assert correct.complete and correct.score == correct.max_score == 13
    stub = checks(graded("06"))
    assert all(earned == 0 for earned, _ in stub.values()), stub
    assert stub[ON_LOST][1] == "s1's on_lost is not implemented yet (it raises NotImplementedError: fill in the # TODO)"
    assert stub[TWICE][1].startswith("your policy committed nothing in the whole story (c1's on_revoke is not "
                                     "implemented yet")


def test_06_committing_the_last_offset_read_repeats_a_record_per_partition_at_each_rebalance() -> None:
    report = graded("06", "off_by_one.py")
    found = checks(report)
    earned, message = found[EXAMPLE_06]
    assert earned == 0 and message.startswith("after c1's on_revoke, example-0's committed offset is 4, expected 5: "
                                              "that is the offset of the last record c1 read")
    earned, message = found[TWICE]
    assert earned == 0, message  # every one of the three rebalances repeats records
    assert message.startswith("12 records processed twice (4 after the first rebalance, 4 after the second "
                              "rebalance, 4 after the third rebalance); first: orders-")
    assert " was processed by c1 and again by c" in message and "commit the position" in message
    assert found[LOST][0] == 3 and found[COMMITS][0] == 2 and found[ON_LOST][0] == 2
    assert report.score == 7


def test_06_a_commit_with_nothing_to_commit_raises_and_names_the_line() -> None:
    report = graded("06", "raises.py")
    earned, message = checks(report)[COMMITS]
    # c3 owns only orders-4 and orders-5, which never get a record: no position to commit
    assert earned == 0 and message.startswith("c3's on_revoke raised KafkaException: ")
    assert "_NO_OFFSET" in message
    assert "(your file, line 16: consumer.commit(offsets=consumer.position(partitions), asynchronous=False))" in message
    assert report.score == 11


def test_06_an_on_lost_that_never_returns_is_cut_off_and_costs_that_check_only() -> None:
    report = graded("06", "hangs.py")     # the catalogue's 120 s of wall time: the grader's own 15 s wait ends it
    earned, message = checks(report)[ON_LOST]
    assert earned == 0 and message.startswith("s1's on_lost did not return within 15 s"), message
    assert report.score == 11


def test_06_an_on_revoke_that_never_returns_is_named_and_the_checks_after_it_are_not_run() -> None:
    report = graded("06", "revoke_hangs.py")
    found = checks(report)
    earned, message = found[EXAMPLE_06]
    assert earned == 0 and message.startswith("c1's on_revoke has been running for ")
    assert "does it loop, or wait for something that never comes? (the grader gave up after 20 s waiting for c1 and " \
           "c2 to share example-0, example-1, example-2, example-3 after c2 joined)" in message
    assert all(found[name] == (0, f"not run: {message}") for name in (LOST, TWICE, COMMITS, ON_LOST))


def test_06_a_commit_given_a_dict_is_named_and_nothing_is_committed() -> None:
    report = graded("06", "wrong_type.py")
    found = checks(report)
    earned, message = found[EXAMPLE_06]
    assert earned == 0 and "nothing was committed" in message
    assert "c1's on_revoke raised TypeError: " in message and "(your file, line 17: " in message
    for name in (LOST, TWICE, COMMITS):
        assert found[name][0] == 0 and found[name][1].startswith("your policy committed nothing in the whole story")
    assert report.score == 2


def test_06_committing_on_lost_fails_that_check() -> None:
    report = graded("06", "commits_on_lost.py")
    earned, message = checks(report)[ON_LOST]
    assert earned == 0 and message.startswith("s1's on_lost committed lost-0 at offset 5")
    assert "s2 owns those partitions" in message
    assert report.score == 11


def test_06_an_asynchronous_commit_on_revoke_earns_half_of_its_check() -> None:
    report = graded("06", "asynchronous.py")
    earned, message = checks(report)[COMMITS]
    assert earned == 1 and message.startswith("c1's on_revoke committed asynchronously at the first rebalance")
    assert report.score == 12


# --- 07 --------------------------------------------------------------------------------------------------------------
def test_07_a_correct_replay_gets_full_marks_and_the_stub_none() -> None:
    correct = graded("07", "correct.py")
    assert correct.complete and correct.score == correct.max_score == 12
    stub = checks(graded("07"))
    assert all(earned == 0 for earned, _ in stub.values()), stub
    assert stub[EXAMPLE_07][1].endswith("is not implemented yet (it raises NotImplementedError: fill in the # TODO)")


def test_07_including_the_windows_end_is_named_record_by_record() -> None:
    report = graded("07", "off_by_one.py")
    found = checks(report)
    earned, message = found[EXAMPLE_07]
    assert earned == 0 and "13 records, expected 12; 1 not in the window: partition 0 offset 8 at " in message
    assert message.endswith(", exactly the window's end (the end is excluded)")
    assert found[BETWEEN][0] == 1 and found[BETWEEN][1].startswith("1 of 2 windows right")
    assert found[EMPTY][0] == 0.5 and "partition 1 offset 9 at " in found[EMPTY][1]
    assert found[PAST][0] == 2 and found[ORDER][0] == 1
    earned, message = found[RANDOM]
    assert 0 < earned < 3 and message.startswith("seed 11: ")


def test_07_an_exception_on_an_empty_window_names_the_line() -> None:
    report = graded("07", "raises.py")
    earned, message = checks(report)[EMPTY]
    assert earned == 0 and message.startswith("0 of 2 windows right; first failure: replay(bootstrap, 'clicks', ")
    assert message.endswith("raised ValueError: min() arg is an empty sequence (your file, line 11: "
                            "first = min(r.timestamp_ms for r in records))")
    assert checks(report)[EXAMPLE_07][0] == 3 and checks(report)[PAST][0] == 1


def test_07_a_replay_that_waits_for_ever_after_the_last_record_fails_that_window_only() -> None:
    report = graded("07", "hangs.py")
    found = checks(report)
    earned, message = found[PAST]
    assert earned == 1 and "did not return within 10 s: does it wait for records that never come?" in message
    assert found[EXAMPLE_07][0] == 3 and found[EMPTY][0] == 1 and found[ORDER][0] == 1


def test_07_records_sorted_by_offset_across_partitions_lose_part_of_the_order_check_only() -> None:
    report = graded("07", "interleaved.py")
    earned, message = checks(report)[ORDER]
    # the whole minute and the window of a minute between records interleave; the two windows holding one record of
    # partition 1 and one of partition 2 come out in order anyway
    assert earned == 0.5 and message.endswith(": a record of partition 0 comes after one of partition 2; return the "
                                              "records partition by partition, partition 0 first")
    assert report.score == 11.5


def test_07_tuples_instead_of_records_are_named() -> None:
    report = graded("07", "wrong_type.py")
    found = checks(report)
    earned, message = found[EXAMPLE_07]
    assert earned == 0 and message.startswith("item 0 of replay(bootstrap, 'clicks', ")
    assert "'s result (build it with Record.of(message)) should be a Record, not tuple ((0, 4, " in message
    assert found[EMPTY][0] == 1  # an empty list is the right answer there
    assert found[ORDER] == (0, "none of your replays returned two records or more, so there is no order to judge")


# --- the reference replay and the grader's windows, against the records written -----------------------------------
@pytest.fixture(scope="module")
def clicks_context() -> Context:
    """The grader's own topic on a broker in this process (stopped when the test session ends)."""
    return Context(ModuleType("nobody"), lab_replay, Path("nobody.py"), seed=5)


def test_07_the_reference_replays_exactly_the_records_written_in_each_window(clicks_context: Context) -> None:
    clicks = live._clicks(clicks_context)
    windows = [live._example_window(clicks), *live._between_windows(clicks), *live._empty_windows(clicks),
               *live._past_end_windows(clicks), *live._random_windows(clicks_context, clicks)]
    for window in windows:
        written = sorted((w.partition, w.offset, w.timestamp_ms) for w in clicks.written.values()
                         if window.start_ms <= w.timestamp_ms < window.end_ms)
        replayed = [(r.partition, r.offset, r.timestamp_ms)
                    for r in lab_replay.replay(clicks.bootstrap, clicks.topic, window.start_ms, window.end_ms)]
        assert replayed == written, window


def test_07_the_readmes_windows_hold_what_it_says(clicks_context: Context) -> None:
    clicks = live._clicks(clicks_context)

    def offsets(window: live.Window) -> list[tuple[int, int]]:
        return [(r.partition, r.offset)
                for r in lab_replay.replay(clicks.bootstrap, clicks.topic, window.start_ms, window.end_ms)]

    assert offsets(live._example_window(clicks)) == [(p, o) for p in range(3) for o in range(4, 8)]
    assert offsets(live._between_windows(clicks)[1]) == [(1, 5), (2, 5)]
    assert [offsets(w) for w in live._empty_windows(clicks)] == [[], []]
    assert [offsets(w) for w in live._past_end_windows(clicks)] == [[], [(1, 15), (2, 15)]]

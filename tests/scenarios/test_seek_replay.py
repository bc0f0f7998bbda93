"""seek-replay on a real broker: seek to an offset, to the beginning and the end, and replay one minute by time.

The expected numbers follow from how the scenario lays its records out, worked out here by hand: 20 records a minute
for three minutes, record n of a minute to partition n % 3, so partitions 0 and 1 hold 7 records a minute (21 in all)
and partition 2 holds 6 (18 in all); the middle minute starts at offsets 7, 7 and 6.
"""

from __future__ import annotations

from typing import Any

from lab.scenarios import runner
from lab.scenarios.scenario import Outcome
from tests.scenarios.conftest import describe

MINUTE_MS = 60_000
RECORDS_IN_A_MINUTE = 20
HIGH_WATERMARKS = {0: 21, 1: 21, 2: 18}


def noted(outcome: Outcome, key: str) -> Any:
    """The value of `key` in the one event whose data has it."""
    values = [event.data[key] for event in outcome.events if key in event.data]
    assert len(values) == 1, f"{key}: {values}"
    return values[0]


def test_seek_to_an_offset_the_beginning_a_minute_and_the_end(scenario_target: runner.Target) -> None:
    outcome = runner.run("seek-replay", scenario_target)
    assert outcome.ok, describe(outcome)
    assert len(outcome.parts) == 4
    assert all(part.verdict is not None and part.verdict.ok for part in outcome.parts), describe(outcome)

    # to an offset: assigned at 5, then seek(2) re-reads partition 0 from 2 to its last offset
    assert noted(outcome, "first_offsets") == [5, 6, 7, 8]
    assert noted(outcome, "after_seek_offsets") == list(range(2, HIGH_WATERMARKS[0]))

    # to the beginning: nothing was deleted, so every partition starts at 0
    assert noted(outcome, "low") == noted(outcome, "first") == {0: 0, 1: 0, 2: 0}

    # to a time: the lookup lands on the minute's first records, and the replay is that whole minute, nothing else
    minute_ms = noted(outcome, "minute_ms")
    assert minute_ms % MINUTE_MS == 0
    assert noted(outcome, "start") == {0: 7, 1: 7, 2: 6}
    timestamps = noted(outcome, "timestamps")
    assert len(timestamps) == noted(outcome, "replayed") == RECORDS_IN_A_MINUTE
    assert all(minute_ms <= t < minute_ms + MINUTE_MS for t in timestamps)
    assert len(set(timestamps)) == RECORDS_IN_A_MINUTE
    # after the last record there is no offset: librdkafka gives -1, its OFFSET_END
    assert noted(outcome, "beyond") == {0: -1, 1: -1, 2: -1}

    # to the end: the consumer waits at the high watermarks and reads only the one new record of each partition
    assert noted(outcome, "waiting_at") == HIGH_WATERMARKS
    assert sorted(map(tuple, noted(outcome, "new_records"))) == sorted(HIGH_WATERMARKS.items())
    assert noted(outcome, "position") == {p: high + 1 for p, high in HIGH_WATERMARKS.items()}
    assert not outcome.cleanup_problems

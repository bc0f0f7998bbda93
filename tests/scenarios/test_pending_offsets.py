"""pending-offsets on a real broker: the old spout skips failed records in silence or sticks behind a poison one;
the new spout's bookkeeping with a retry limit and dead letters does neither.

The expected numbers are worked out by hand from the scenario's setup, not taken from its checks: four waves of ten
orders into fresh one-partition topics (order n at offset n); order 3 fails once, order 13 always; the spout reads
each wave in one fetch and the back-off brings a failed record back once per wave.

* part 1, max_offset_behind=5: 3 fails with the read position at 10 (7 behind), 13 with it at 20 (7 behind): both
  skipped, then dropped from pending by the acks of 9 and 19. Commits 10, 20, 30, 40; lost: 3 and 13.
* part 2, defaults: 3 is pending after wave 1 (commit 3), retried and acked in wave 2, where 13 fails (commit 13);
  13 fails again in waves 3 and 4. Commits 3, 13, 13, 13.
* part 3, OffsetManager with two retries: the commit walk stops at 3, then at 13 (waves 2 and 3); 13's third
  failure, in wave 4, is past the limit: dead-lettered and acked, and the walk reaches 40. Commits 3, 13, 13, 40.
"""

from __future__ import annotations

from collections import defaultdict

from confluent_kafka import ConsumerGroupTopicPartitions
from confluent_kafka.admin import AdminClient

from lab.scenarios import runner
from lab.scenarios.scenario import ScenarioEvent
from tests.scenarios.conftest import describe


def test_the_old_spout_skips_or_sticks_and_the_new_one_does_neither(scenario_target: runner.Target) -> None:
    # What a lag tool sees: after each commit the scenario reports, ask the group's offsets through the Admin API
    # (OffsetFetch, as kafka-consumer-groups --describe does), not through the scenario's own read-back.
    admin = AdminClient({"bootstrap.servers": scenario_target.bootstrap})
    seen: dict[str, list[int]] = defaultdict(list)

    def on_event(event: ScenarioEvent) -> None:
        if event.kind == "commit":
            group = event.data["group"]
            request = [ConsumerGroupTopicPartitions(group)]
            [stored] = admin.list_consumer_group_offsets(request)[group].result(15).topic_partitions
            assert stored.topic == event.data["topic"] and stored.partition == 0
            seen[group].append(stored.offset)

    outcome = runner.run("pending-offsets", scenario_target, on_event=on_event)
    assert outcome.ok, describe(outcome)
    skip, stuck, fixed = outcome.parts
    assert [sorted(p.shown()) for p in outcome.parts] == [["lost"], [], []]

    # the committed offsets Kafka held after each wave, part by part
    assert list(seen.values()) == [[10, 20, 30, 40], [3, 13, 13, 13], [3, 13, 13, 40]], describe(outcome)

    # part 1: exactly the two failed records are lost, and the committed offset passed both
    assert skip.verdict is not None
    assert [(partition, offset) for _, _, partition, offset in skip.verdict.lost] == [(0, 3), (0, 13)]
    assert not (skip.verdict.duplicated or skip.verdict.out_of_order or skip.verdict.skipped)
    notes = [e.data for e in outcome.events if e.kind == "note"]
    assert [n["skipped"] for n in notes if "skipped" in n] == [3, 13]
    assert [n["dropped"] for n in notes if "dropped" in n] == [[3], [13]]

    # part 2: judged below the committed offset 13, the 13 records there were each processed once
    assert stuck.verdict is not None and stuck.verdict.ok
    assert stuck.totals() == {"lost": 0, "duplicated": 0, "out_of_order": 0, "skipped": 0}
    commits = [e.data for e in outcome.events if e.kind == "commit"]
    assert [c["log_end"] - c["stored"] for c in commits[4:8]] == [7, 7, 17, 27]  # the lag of the stuck group grows

    # part 3: 13 alone went to the dead-letter list, and nothing is lost or duplicated
    assert [n["dead_letter"] for n in notes if "dead_letter" in n] == [13]
    assert fixed.verdict is not None and fixed.verdict.ok
    assert not outcome.cleanup_problems

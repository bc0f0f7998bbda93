"""The reader's options and its feedback channel, without Spark."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.spark.feedback import ProgressLog, canonical_offsets, read_feedback, write_atomically
from lab.spark.options import OptionError, ReaderOptions

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092", "subscribe": "payments"}


def test_defaults_follow_spark() -> None:
    options = ReaderOptions.parse(BASE)
    assert options.starting_offsets == "latest"  # Spark's streaming default
    assert options.fail_on_data_loss is True
    assert (options.proportional, options.integral, options.derivative, options.min_rate) == (1.0, 0.2, 0.0, 100.0)
    assert options.backpressure is False
    assert options.splits == "perPartition"
    assert options.group_id.startswith("lab-kafka-source-")


def test_names_are_case_insensitive_and_kafka_options_pass_through() -> None:
    options = ReaderOptions.parse({**BASE, "MAXOFFSETSPERTRIGGER": "7", "kafka.security.protocol": "PLAINTEXT",
                                   "Backpressure.Enabled": "TRUE", "splits": "BALANCED"})
    assert options.max_offsets_per_trigger == 7
    assert options.backpressure is True
    assert options.splits == "balanced"
    config = options.consumer_config()
    assert config["security.protocol"] == "PLAINTEXT"
    assert config["enable.auto.commit"] is False and config["auto.offset.reset"] == "error"


def test_min_partitions_selects_sparks_calculator() -> None:
    assert ReaderOptions.parse({**BASE, "minPartitions": "4"}).splits == "minPartitions"


def test_group_id_is_stable_per_subscription() -> None:
    first = ReaderOptions.parse(BASE).group_id
    assert ReaderOptions.parse(BASE).group_id == first
    assert ReaderOptions.parse({**BASE, "subscribe": "other"}).group_id != first
    assert ReaderOptions.parse({**BASE, "groupIdPrefix": "etl"}).group_id.startswith("etl-")
    assert ReaderOptions.parse({**BASE, "kafka.group.id": "mine"}).group_id == "mine"


def test_the_readers_own_consumer_settings_win_over_kafka_options() -> None:
    config = ReaderOptions.parse({**BASE, "kafka.group.id": "g", "kafka.isolation.level": "read_committed",
                                  "kafka.fetch.wait.max.ms": "7"}).consumer_config(group_suffix="-reader")
    assert config["group.id"] == "g-reader" and config["isolation.level"] == "read_committed"
    assert config["fetch.wait.max.ms"] == "7" and config["enable.partition.eof"] is True
    assert ReaderOptions.parse(BASE).consumer_config()["isolation.level"] == "read_uncommitted"


def test_starting_timestamp_may_come_with_starting_offsets() -> None:
    options = ReaderOptions.parse({**BASE, "startingTimestamp": "5", "startingOffsets": "earliest"})
    assert options.starting_timestamp == 5  # and it wins: the planner looks at it first


def test_starting_offsets_json() -> None:
    options = ReaderOptions.parse({**BASE, "startingOffsets": '{"payments": {"0": 23, "1": -2}}'})
    assert options.starting_offsets == {"payments": {"0": 23, "1": -2}}


@pytest.mark.parametrize(("options", "words"), [
    ({"subscribe": "t"}, "kafka.bootstrap.servers is required"),
    ({"kafka.bootstrap.servers": "h:1"}, "exactly one of subscribe, subscribePattern or assign"),
    ({**BASE, "assign": '{"t": [0]}'}, "given: subscribe, assign"),
    ({**BASE, "startingOffsets": "yesterday"}, "expected earliest, latest, or JSON"),
    ({**BASE, "maxOffsetsPerTrigger": "lots"}, "maxOffsetsPerTrigger='lots': expected an integer"),
    ({**BASE, "maxOffsetsPerTrigger": "0"}, "must be >= 1"),
    ({**BASE, "splits": "random"}, "expected one of perPartition, minPartitions, balanced"),
    ({**BASE, "failOnDataLoss": "maybe"}, "expected true or false"),
    ({**BASE, "backpressure.pid.minRate": "0"}, "backpressure.pid.minRate"),
    ({"kafka.bootstrap.servers": "h:1", "subscribePattern": "("}, "is not a regular expression"),
    ({"kafka.bootstrap.servers": "h:1", "assign": "[0, 1]"}, 'expected JSON like {"topicA"'),
    ({**BASE, "maxOffsetPerTrigger": "5"}, "unknown option 'maxoffsetpertrigger'; did you mean maxOffsetsPerTrigger?"),
    ({**BASE, "minOffsetsPerTrigger": "5"}, "minOffsetsPerTrigger (from Spark's Kafka source) is not supported"),
    ({**BASE, "kafka.auto.offset.reset": "earliest"}, "kafka.auto.offset.reset is not allowed: use startingOffsets"),
    ({**BASE, "kafka.enable.auto.commit": "true"}, "kafka.enable.auto.commit is not allowed"),
])
def test_bad_options_say_what_is_allowed(options: dict[str, str], words: str) -> None:
    with pytest.raises(OptionError, match=re.escape(words)):
        ReaderOptions.parse(options)


def progress(batch_id: int, start_ms_iso: str, end: dict[str, Any], *, rows: int, add_batch: int,
             trigger: int) -> dict[str, Any]:
    return {"batchId": batch_id, "runId": "run-1", "timestamp": start_ms_iso,
            "durationMs": {"addBatch": add_batch, "triggerExecution": trigger},
            "sources": [{"description": "lab-kafka", "startOffset": {"t": {"0": 0}}, "endOffset": json.dumps(end),
                         "numInputRows": rows}]}


def test_feedback_round_trip_measures_lateness(tmp_path: Path) -> None:
    log = ProgressLog(tmp_path)
    ends = [{"t": {"0": 100}}, {"t": {"0": 250}}, {"t": {"0": 300}}]
    # batch 0 starts at 10:00:00.000 and takes 1.5 s of a 1 s interval; batch 1 starts 0.5 s late; batch 2 on time
    log.record("run-1", progress(0, "2026-11-22T10:00:00.000Z", ends[0], rows=100, add_batch=1400, trigger=1500))
    log.record("run-1", progress(1, "2026-11-22T10:00:01.500Z", ends[1], rows=150, add_batch=600, trigger=700))
    log.record("run-1", progress(2, "2026-11-22T10:00:02.500Z", ends[2], rows=50, add_batch=90, trigger=100))
    found = read_feedback(tmp_path, [canonical_offsets(e) for e in ends], 1000)
    assert [(f.batch_id, f.elements, f.processing_delay_ms, f.scheduling_delay_ms) for f in found] == [
        (0, 100, 1400, 0), (1, 150, 600, 500), (2, 50, 90, 0)]
    start_0 = 1795341600000  # 2026-11-22T10:00:00Z in epoch ms
    assert found[0].time_ms == start_0 + 1500
    assert read_feedback(tmp_path, [canonical_offsets(ends[1])], 1000)[0].batch_id == 1


def test_feedback_ignores_unplanned_and_broken_files(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"batches": "nope"}))
    log = ProgressLog(tmp_path)
    log.record("run-2", progress(0, "2026-11-22T10:00:00.000Z", {"t": {"0": 9}}, rows=9, add_batch=5, trigger=5))
    assert read_feedback(tmp_path, [canonical_offsets({"t": {"0": 10}})], 1000) == []
    assert read_feedback(tmp_path / "missing", ["x"], 1000) == []
    log.forget("run-2")
    assert not (tmp_path / "run-2.json").exists()


def test_progress_log_keeps_only_the_last_batches(tmp_path: Path) -> None:
    log = ProgressLog(tmp_path, keep=3)
    for batch in range(5):
        log.record("r", progress(batch, "2026-11-22T10:00:00.000Z", {"t": {"0": batch}}, rows=1, add_batch=1,
                                 trigger=1))
    kept = json.loads((tmp_path / "r.json").read_text())["batches"]
    assert [b["batch_id"] for b in kept] == [2, 3, 4]


def test_atomic_writes_are_never_seen_half_done(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    payloads = [{"n": n, "pad": "x" * 20_000} for n in range(200)]
    seen: list[int] = []
    done = threading.Event()

    def reader() -> None:
        while not done.is_set():
            if path.exists():
                seen.append(json.loads(path.read_text())["n"])  # raises on a torn file

    thread = threading.Thread(target=reader)
    thread.start()
    for payload in payloads:
        write_atomically(path, payload)
    done.set()
    thread.join()
    assert seen and seen == sorted(seen)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


@given(st.dictionaries(st.text(min_size=1, max_size=5),
                       st.dictionaries(st.integers(0, 50).map(str), st.integers(0, 10**12), min_size=1), min_size=1))
def test_canonical_offsets_agree_for_dicts_and_their_json(offsets: dict[str, dict[str, int]]) -> None:
    shuffled = json.dumps({t: dict(reversed(list(p.items()))) for t, p in reversed(list(offsets.items()))})
    assert canonical_offsets(offsets) == canonical_offsets(shuffled)


def test_an_idle_pause_is_not_lateness_and_only_an_overrun_is(tmp_path: Path) -> None:
    log = ProgressLog(tmp_path)
    ends = [{"t": {"0": n}} for n in (10, 20, 30, 40)]
    log.record("r", progress(0, "2026-11-22T10:00:00.000Z", ends[0], rows=10, add_batch=400, trigger=500))
    log.record("r", progress(1, "2026-11-22T10:00:01.000Z", ends[1], rows=10, add_batch=2400, trigger=2500))
    log.record("r", progress(2, "2026-11-22T10:00:03.500Z", ends[2], rows=10, add_batch=400, trigger=500))
    log.record("r", progress(3, "2026-11-22T10:00:33.500Z", ends[3], rows=10, add_batch=400, trigger=500))
    found = read_feedback(tmp_path, [canonical_offsets(e) for e in ends], 1000)
    # batch 2 waited for batch 1's 2.5 s run: 1.5 s late; batch 3 came after 30 s of nothing to read: on time
    assert [f.scheduling_delay_ms for f in found] == [0, 0, 1500, 0]


def test_feedback_from_another_query_with_the_same_end_is_not_taken(tmp_path: Path) -> None:
    log = ProgressLog(tmp_path)
    log.record("other", progress(0, "2026-11-22T10:00:00.000Z", {"t": {"0": 50}}, rows=50, add_batch=9, trigger=9))
    ours = {canonical_offsets({"t": {"0": 50}}): canonical_offsets({"t": {"0": 40}})}
    assert read_feedback(tmp_path, ours, 1000) == []  # the other query's batch started at 0, ours at 40
    theirs = {canonical_offsets({"t": {"0": 50}}): canonical_offsets({"t": {"0": 0}})}
    assert len(read_feedback(tmp_path, theirs, 1000)) == 1

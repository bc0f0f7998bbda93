"""pending-offsets: at-least-once bookkeeping as Storm's Kafka spouts did it, and the two traps of the old spout.

A Storm spout reads a partition and emits each record into a topology; later it hears, per record, "acked" (fully
processed) or "failed", in any order. Kafka keeps one number per partition and group, the committed offset, which
promises that everything below it is done. The spout's bookkeeping (`lab.offsets`) turns acks and fails into it:

* storm-kafka's `PartitionManager` commits its smallest *pending* offset. `max_offset_behind` makes it ignore a
  failure that far behind what it has read, and forget pending offsets that far behind an ack: the commit passes a
  record that was never processed (part 1). With unlimited retries, the default, a record that always fails stays
  pending for ever and the commit never passes it (part 2).
* storm-kafka-client's `OffsetManager` keeps the emitted and the acked offsets and commits up to the first emitted
  offset not acked. With a retry limit, a record that keeps failing is given up (here: put on a dead-letter list) and
  acked, so the commit moves on and nothing goes silently (part 3).

Each part sends the same 40 orders, in four waves of ten, through the same bolt: order 3 times out on its first
attempt and succeeds when retried; order 13 is not valid JSON and fails every time. Retries back off 100, 200, 400 ms
on the spout's own clock, which moves 1 s between waves (simulated, so every run is the same): a failed record is
retried once per wave. After each wave the spout commits to a consumer group that no member ever joins, and the
scenario reads the offset back from Kafka, as `kafka-consumer-groups --describe` would show it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

from lab.clients.producer import Written, produce_records
from lab.offsets import EmitState, ExponentialBackoffMsgRetryManager, OffsetManager, PartitionManager
from lab.offsets.kafka_log import KafkaPartitionLog, KafkaRecord
from lab.offsets.retry import LONG_MAX
from lab.scenarios.checker import Processed, check
from lab.scenarios.common import report_verdict
from lab.scenarios.scenario import Context, Part, Scenario
from lab.timer import MockTime

WAVES, PER_WAVE = 4, 10
FLAKY, POISON = 3, 13           # order numbers: times out once; malformed, fails every time
MAX_OFFSET_BEHIND = 5           # part 1's setting (storm-kafka's default is Long.MAX_VALUE)
RETRY_LIMIT = 2                 # part 3: two retries, then the dead-letter list
WAVE_MS = 1_000                 # the spout's clock between waves


def backoff(clock: MockTime, retry_limit: int = -1) -> ExponentialBackoffMsgRetryManager:
    # 100, 200, 400, ... ms, capped at WAVE_MS: whatever fails in one wave is due again in the next
    return ExponentialBackoffMsgRetryManager(100, 2.0, WAVE_MS, retry_limit, time=clock)


def order_value(n: int) -> bytes:
    text = json.dumps({"order": n, "amount": 10 + n})
    return (text[: len(text) // 2] if n == POISON else text).encode()  # the poison record: cut in half


def produce_orders(ctx: Context, topic: str, first: int, count: int) -> list[Written]:
    """Orders `first`.. to partition 0, keyed `order-n`; what the broker acknowledged."""
    return produce_records(ctx.bootstrap, topic, count, key_prefix="order", first=first, partition=0,
                           values=[order_value(n) for n in range(first, first + count)])


class Bolt:
    """The topology's work on an order: parse it, charge it. Keeps every attempt and every success."""

    def __init__(self, log: KafkaPartitionLog) -> None:
        self.log = log
        self.attempts: Counter[int] = Counter()   # by offset
        self.succeeded: list[int] = []            # offsets, in the order they were processed

    def process(self, offset: int) -> str | None:
        """Process the record at `offset`; None when done, else why it failed."""
        self.attempts[offset] += 1
        try:
            order = json.loads(self.log.record(offset).value or b"")
        except ValueError:
            return "its value is not valid JSON"
        if order["order"] == FLAKY and self.attempts[offset] == 1:
            return "the payment service timed out"
        self.succeeded.append(offset)
        return None

    def name(self, offset: int) -> str:
        key = self.log.record(offset).key
        return key.decode() if key else f"offset {offset}"


def offset_of(produced: list[Written], order: int) -> int:
    """Where the broker put order `order` (from its acknowledgement, not assumed from the order number)."""
    [offset] = [w.offset for w in produced if w.key == f"order-{order}".encode()]
    return offset


def history(group: str, topic: str, handled: list[tuple[str, int]]) -> list[Processed]:
    """What the checker judges. A topology promises no order (tuples run in parallel, retries come back late), so
    each processing is a session of its own: only lost and duplicated records count, not order or skips."""
    return [Processed(group, who, topic, 0, offset, session=n) for n, (who, offset) in enumerate(handled)]


def run_waves(ctx: Context, log: KafkaPartitionLog, clock: MockTime,
              work: Callable[[], int | None]) -> tuple[list[Written], list[int | None]]:
    """Four waves: produce ten orders, move the spout's clock, let `work` drain and commit, read the commit back."""
    produced: list[Written] = []
    stored: list[int | None] = []
    for wave in range(WAVES):
        first = wave * PER_WAVE
        ctx.note(f"wave {wave + 1}: orders {first}-{first + PER_WAVE - 1} arrive", wave=wave + 1)
        produced += produce_orders(ctx, log.topic, first, PER_WAVE)
        clock.sleep(WAVE_MS)
        committed = work()
        stored.append(log.committed())
        end = log.latest_offset()
        said = "nothing new to commit" if committed is None else f"the spout commits {committed}"
        ctx.emit("commit", f"{said}; Kafka's committed offset for {ctx.short(log.group_id)}, read back: "
                 f"{stored[-1]}; log end {end}, lag {end - (stored[-1] or 0)}",
                 group=log.group_id, topic=log.topic, committed=committed, stored=stored[-1], log_end=end)
    return produced, stored


# ---- storm-kafka's PartitionManager (parts 1 and 2) ----------------------------------------------------------------

def drain_partition_manager(ctx: Context, spout: PartitionManager, bolt: Bolt) -> int:
    """next() until the spout has nothing to emit, each record through the bolt and its ack or fail back; commit.
    (storm-kafka's `KafkaSpout.nextTuple` calls `next()` and commits every `stateUpdateIntervalMs`; here the bolt
    answers at once and the commit comes once the wave is drained.)"""
    for _ in range(10 * WAVES * PER_WAVE):
        emitted: list[int] = []
        state = spout.next(emitted.append)
        for offset in emitted:
            if bolt.attempts[offset]:
                ctx.note(f"the spout re-emits {bolt.name(offset)} (attempt {bolt.attempts[offset] + 1})")
            reason = bolt.process(offset)
            if reason is None:
                before = set(spout.pending)
                spout.ack(offset)
                if forgotten := sorted(before - set(spout.pending) - {offset}):
                    ctx.note(f"the ack of {offset} drops pending offset(s) {forgotten}: more than "
                             f"max_offset_behind={spout.max_offset_behind} behind it", dropped=forgotten)
                continue
            skipped = spout.skipped_failed_count
            spout.fail(offset)
            if spout.skipped_failed_count > skipped:
                ctx.note(f"{bolt.name(offset)} failed ({reason}), but offset {offset} is "
                         f"{spout.emitted_to_offset - offset} behind the read position {spout.emitted_to_offset}, "
                         f"more than max_offset_behind={spout.max_offset_behind}: no retry, no error", skipped=offset)
            else:
                ctx.note(f"{bolt.name(offset)} failed ({reason}): retry in "
                         f"{spout.retry_manager.retry_delay_ms(offset)} ms; offset {offset} stays pending")
        if state is EmitState.NO_EMITTED:
            offset = spout.commit()  # the smallest pending offset, or the read position when nothing is pending
            bolt.log.commit(offset)  # upstream writes it to ZooKeeper; here it goes to the group's committed offset
            return offset
    raise RuntimeError(f"the spout never ran out of records to emit: {spout!r}")


def old_spout(ctx: Context, base: str, max_offset_behind: int = LONG_MAX) -> tuple[
        KafkaPartitionLog, PartitionManager, Bolt, list[Written], list[int | None]]:
    topic, group = ctx.topic(base, 1), ctx.group(f"{base}-spout")
    log = KafkaPartitionLog(ctx.bootstrap, topic, 0, group_id=group)
    ctx.defer(log.close)
    clock, bolt = MockTime(), Bolt(log)
    spout = PartitionManager(log, committed_to=log.committed(), retry_manager=backoff(clock),
                             max_offset_behind=max_offset_behind)
    produced, stored = run_waves(ctx, log, clock, lambda: drain_partition_manager(ctx, spout, bolt))
    return log, spout, bolt, produced, stored


def silent_skip(ctx: Context) -> Part:
    ctx.step(f"Part 1: storm-kafka's PartitionManager with max_offset_behind={MAX_OFFSET_BEHIND}: each wave is "
             "read in one fetch, so a failure early in a wave is already too far behind to be retried")
    log, spout, bolt, produced, stored = old_spout(ctx, "skip", max_offset_behind=MAX_OFFSET_BEHIND)
    flaky, poison = offset_of(produced, FLAKY), offset_of(produced, POISON)
    verdict = report_verdict(ctx, "silent skip", check(produced, history(log.group_id, log.topic, [
        ("bolt", o) for o in bolt.succeeded]), groups=[log.group_id]))
    final, end = stored[-1], log.latest_offset()
    ctx.note(f"Kafka's committed offset is {final} with the log end at {end}: a lag tool shows a group that is all "
             f"caught up, yet offsets {flaky} and {poison} were never processed")
    return Part(f"old spout, max_offset_behind={MAX_OFFSET_BEHIND}: failed records skipped in silence",
                expect=frozenset({"lost"}), verdict=verdict, checks=[
        ctx.check(f"offset {flaky} (order {FLAKY}) failed once, was never retried, and Kafka's committed offset "
                  "passed it", bolt.attempts[flaky] == 1 and flaky not in bolt.succeeded
                  and final is not None and final > flaky, f"attempts {bolt.attempts[flaky]}, committed {final}"),
        ctx.check(f"the records lost are exactly offsets {flaky} and {poison}",
                  sorted(entry[3] for entry in verdict.lost) == [flaky, poison],
                  f"lost {[entry[3] for entry in verdict.lost]}"),
        ctx.check("the committed offset reached the log end all the same; both skips only counted, nothing raised",
                  final == end and spout.skipped_failed_count == 2,
                  f"committed {final}, log end {end}, skipped_failed_count {spout.skipped_failed_count}"),
    ])


def stuck_partition(ctx: Context) -> Part:
    ctx.step("Part 2: the same spout with storm-kafka's defaults: max_offset_behind unlimited, retries for ever")
    log, spout, bolt, produced, stored = old_spout(ctx, "stuck")
    poison, final = offset_of(produced, POISON), stored[-1]
    after = sorted(o for o in bolt.succeeded if o > poison)
    ctx.note(f"a restarted spout would resume at {final}: the {len(after)} records after it that were already "
             "processed would be processed again")
    ctx.note(f"the checker judges only the records below the committed offset {final}: that is all a commit "
             f"promises. Above it, {poison} is pending and the rest acked but not committed: for Kafka neither lost "
             "nor done yet. The harm is not an anomaly but a partition that no longer moves")
    below = [p for p in produced if final is not None and p.offset < final]
    verdict = report_verdict(ctx, f"the {len(below)} records below the committed offset", check(
        below, history(log.group_id, log.topic, [("bolt", o) for o in bolt.succeeded if o in
                                                  {p.offset for p in below}]), groups=[log.group_id]))
    return Part(f"old spout, retries for ever: stuck behind offset {poison} (judged: the records below the "
                "committed offset)", verdict=verdict, checks=[
        ctx.check(f"Kafka's committed offset stayed at {poison} from the wave of the poison record on",
                  stored[POISON // PER_WAVE:] == [poison] * (WAVES - POISON // PER_WAVE), f"after each wave: {stored}"),
        ctx.check(f"{len(after)} later records were acked while it held the commit",
                  after == [p.offset for p in produced if p.offset > poison], f"acked after {poison}: {len(after)}"),
        ctx.check(f"offset {poison} failed on every attempt and is still pending",
                  poison not in bolt.succeeded and spout.pending == (poison,) and bolt.attempts[poison] > 1,
                  f"attempts {bolt.attempts[poison]}, pending {spout.pending}"),
    ])


# ---- storm-kafka-client's bookkeeping (part 3) -----------------------------------------------------------------------

class ClientSpout:
    """storm-kafka-client's `KafkaSpout` for one partition, reduced to its bookkeeping (upstream `KafkaSpout.java`:
    `pollKafkaBroker`, `emitOrRetryTuple`, `ack`, `fail`, `commitOffsetsForAckedTuples`), with a dead-letter list."""

    def __init__(self, log: KafkaPartitionLog, retries: ExponentialBackoffMsgRetryManager) -> None:
        committed = log.committed()
        self.log, self.retries = log, retries
        self.position = committed if committed is not None else log.earliest_offset()
        self.offsets = OffsetManager(self.position)
        self.dead_letters: list[KafkaRecord] = []

    def poll(self) -> list[int]:
        """The records to emit now: retries that are due first (seek back to the earliest), else new records."""
        due = self.retries.next_failed_message_to_retry()
        if due is None:
            fetched = self.log.fetch(self.position, 1024)
            self.position = fetched[-1] + 1 if fetched else self.position
            return fetched
        ready = [o for o in self.log.fetch(due, 1024) if self.retries.should_re_emit_msg(o)]
        for offset in ready:
            self.retries.retry_started(offset)
        return ready

    def emit(self, offset: int) -> None:
        self.offsets.add_to_emitted(offset)

    def ack(self, offset: int) -> None:
        self.offsets.add_to_acked(offset)

    def fail(self, offset: int) -> bool:
        """Schedule a retry; past the limit, dead-letter the record and ack it (upstream acks it, and that is all).
        False when given up."""
        if self.retries.retry_further(offset):
            self.retries.failed(offset)
            return True
        self.dead_letters.append(self.log.record(offset))
        self.ack(offset)
        return False

    def commit(self) -> int | None:
        offset = self.offsets.find_next_commit_offset()
        if offset is not None:
            self.log.commit(offset)
            self.offsets.commit(offset)
        return offset


def drain_client_spout(ctx: Context, spout: ClientSpout, bolt: Bolt) -> int | None:
    for _ in range(10 * WAVES * PER_WAVE):
        polled = spout.poll()
        if not polled:
            return spout.commit()
        for offset in polled:
            if bolt.attempts[offset]:
                ctx.note(f"the spout seeks back and re-emits {bolt.name(offset)} (attempt {bolt.attempts[offset] + 1})")
            spout.emit(offset)
            reason = bolt.process(offset)
            if reason is None:
                spout.ack(offset)
            elif spout.fail(offset):
                ctx.note(f"{bolt.name(offset)} failed ({reason}, attempt {bolt.attempts[offset]}): retry in "
                         f"{spout.retries.retry_delay_ms(offset)} ms; the commit waits at it")
            else:
                ctx.note(f"{bolt.name(offset)} failed ({reason}, attempt {bolt.attempts[offset]}): out of retries, "
                         f"put on the dead-letter list (value {spout.dead_letters[-1].value!r}) and acked",
                         dead_letter=offset)
    raise RuntimeError(f"the spout never ran out of records to emit: {spout.offsets!r}")


def the_fix(ctx: Context) -> Part:
    ctx.step(f"Part 3: storm-kafka-client's OffsetManager, {RETRY_LIMIT} retries, then a dead-letter list")
    topic, group = ctx.topic("fixed", 1), ctx.group("fixed-spout")
    log = KafkaPartitionLog(ctx.bootstrap, topic, 0, group_id=group)
    ctx.defer(log.close)
    clock = MockTime()
    bolt, spout = Bolt(log), ClientSpout(log, backoff(clock, RETRY_LIMIT))
    produced, stored = run_waves(ctx, log, clock, lambda: drain_client_spout(ctx, spout, bolt))
    flaky, poison = offset_of(produced, FLAKY), offset_of(produced, POISON)
    dead = [record.offset for record in spout.dead_letters]
    handled = [("bolt", o) for o in bolt.succeeded] + [("dead-letter", o) for o in dead]
    verdict = report_verdict(ctx, "the fix", check(produced, history(group, topic, handled), groups=[group]))
    return Part(f"new spout: OffsetManager, {RETRY_LIMIT} retries, then a dead-letter list (counted as handled)",
                verdict=verdict, checks=[
        ctx.check(f"offset {flaky} failed once and was processed on its retry",
                  bolt.attempts[flaky] == 2 and flaky in bolt.succeeded, f"attempts {bolt.attempts[flaky]}"),
        ctx.check(f"offset {poison} was tried {RETRY_LIMIT + 1} times, then dead-lettered",
                  dead == [poison] and bolt.attempts[poison] == RETRY_LIMIT + 1,
                  f"dead letters {dead}, attempts {bolt.attempts[poison]}"),
        ctx.check(f"the commit waited at {flaky}, then at {poison}, then reached the log end",
                  stored[:1] == [flaky] and poison in stored and stored[-1] == log.latest_offset(),
                  f"after each wave: {stored}"),
    ])


def run(ctx: Context) -> list[Part]:
    ctx.note(f"the bolt: order {FLAKY} times out on its first attempt; order {POISON} is not valid JSON and fails "
             f"every time. Retries back off 100, 200, 400 ms on the spout's clock, which moves {WAVE_MS} ms a wave")
    return [silent_skip(ctx), stuck_partition(ctx), the_fix(ctx)]


SCENARIO = Scenario(
    name="pending-offsets",
    title="Pending offsets: what a spout may commit, and the two traps of storm-kafka",
    summary="Storm's old spout silently skips a failed record that falls behind, or sticks behind one that always "
            "fails; the new spout's OffsetManager with a retry limit and dead letters does neither.",
    run=run,
)

"""slow-fetch: a fetch that waits in the broker. A consumer's fetch request says "answer when you have at least
`fetch.min.bytes` for me, but do not keep me longer than `fetch.wait.max.ms`" (librdkafka's names; the Java client
says fetch.max.wait.ms). When the partition has less than that, the broker parks the fetch as a DelayedFetch in its
fetch purgatory (Kafka's `DelayedFetch.scala`); each produce to the partition tries to complete it, and the timer
expires it when the wait is over. Either way the broker then answers with whatever there is.

    fetch.min.bytes=1,      wait 3000 ms: parked; one record arrives -> completed by data at once
    fetch.min.bytes=100000, wait 1000 ms: parked; one small record is not enough -> expired after 1000 ms, and only
                                          then does the record reach the consumer
    fetch.min.bytes=100000, wait 1000 ms: parked; a burst of ~150 kB arrives -> completed by data at once

librdkafka keeps a fetch in flight all the time (it prefetches), so on an idle partition a fetch is parked, expires,
and the next one is parked again, on the client's own schedule. Each part therefore uses a fresh consumer on an empty
partition, waits until the broker reports that consumer's first fetch parked, and only then writes: the fetch that
answers is the last one the broker completed before the records reached the application.

Only the embedded broker shows its purgatory (the FetchParked and FetchCompleted events, by client.id). On docker or
an external Kafka the same steps run and the latencies are shown, without the broker's side.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition

from lab.broker.request_events import FetchCompleted, FetchParked
from lab.clients.producer import produce_records
from lab.scenarios.checker import Processed, check
from lab.scenarios.common import report_verdict
from lab.scenarios.scenario import Check, Context, Part, Scenario


@dataclass(frozen=True)
class Trial:
    """One consumer setting and what is written while its fetch waits."""

    title: str
    reader: str               # the consumer's client.id, as the broker's events name it
    min_bytes: int            # fetch.min.bytes
    max_wait_ms: int          # fetch.wait.max.ms
    records: int
    value_bytes: int
    expires: bool             # whether the parked fetch should end by its timer (or be completed by data)
    why: str


TRIALS = (
    Trial("fetch.min.bytes=1: the first record completes the parked fetch", "eager-reader", 1, 3000, 1, 100,
          False, "one byte is enough, so the record completes the waiting fetch at once"),
    Trial("fetch.min.bytes=100000: one small record waits for fetch.wait.max.ms", "patient-reader", 100_000, 1000,
          1, 100, True, "one small record is far below 100000 bytes: the fetch keeps waiting until its 1000 ms pass"),
    Trial("fetch.min.bytes=100000: a burst bigger than that completes the fetch at once", "burst-reader", 100_000,
          1000, 150, 1000, False, "150 records of 1000 bytes are more than 100000 bytes: enough to answer at once"),
)


@dataclass
class Reader:
    """A consumer polled from the scenario's thread, remembering what it read and when."""

    consumer: Consumer
    broker_events: list[object]
    offsets: list[int] = field(default_factory=list)
    at_end: bool = False                 # an end-of-partition event came: the consumer has caught up
    first_read_at: float | None = None   # time.monotonic() when the first record reached the application
    events_at_first_read: int = 0        # how many broker events had been recorded by then

    def poll(self) -> None:
        for message in self.consumer.consume(200, 0.05):
            error = message.error()
            if error is not None:
                self.at_end = self.at_end or error.code() == KafkaError._PARTITION_EOF
                continue
            if self.first_read_at is None:
                self.first_read_at = time.monotonic()
                self.events_at_first_read = len(self.broker_events)
            offset = message.offset()
            assert offset is not None
            self.offsets.append(offset)

    def wait(self, ctx: Context, condition: Callable[[], bool], what: str) -> None:
        """Keep polling until `condition()` holds."""

        def polled() -> bool:
            self.poll()
            return condition()

        ctx.wait(polled, what, state=lambda: f"{len(self.offsets)} records read")


def describe(event: FetchParked | FetchCompleted) -> str:
    if isinstance(event, FetchParked):
        return (f"FetchParked: {event.client_id}'s fetch waits in the purgatory (min_bytes={event.min_bytes}, "
                f"max_wait_ms={event.max_wait_ms}, {event.bytes_available} bytes available)")
    how = "expired: its max wait passed" if event.expired else "completed by data"
    return f"FetchCompleted: {event.client_id}'s fetch {how}, after waiting {event.waited_ms} ms"


def run_trial(ctx: Context, topic: str, partition: int, trial: Trial) -> Part:
    ctx.step(f"{trial.reader}: fetch.min.bytes={trial.min_bytes}, fetch.wait.max.ms={trial.max_wait_ms}, reading the "
             f"empty partition {ctx.short(topic)}[{partition}]")

    def ours(events: list[object]) -> list[FetchParked | FetchCompleted]:
        return [e for e in events if isinstance(e, FetchParked | FetchCompleted) and e.client_id == trial.reader
                and (topic, partition) in e.partitions]

    with ctx.broker_events((FetchParked, FetchCompleted)) as events:
        # librdkafka puts fetch.wait.max.ms and fetch.min.bytes in every Fetch request as MaxWaitTime and MinBytes
        # (rdkafka_fetcher.c); enable.partition.eof tells when it has caught up (the only sign off the embedded broker).
        reader = Reader(Consumer({
            "bootstrap.servers": ctx.bootstrap, "group.id": ctx.group(trial.reader), "client.id": trial.reader,
            "enable.auto.commit": False, "enable.partition.eof": True,
            "fetch.min.bytes": trial.min_bytes, "fetch.wait.max.ms": trial.max_wait_ms}), events)
        try:
            reader.consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
            if ctx.broker is not None:
                reader.wait(ctx, lambda: any(isinstance(e, FetchParked) for e in ours(events)),
                            f"{trial.reader}'s first fetch to be parked")
            else:
                reader.wait(ctx, lambda: reader.at_end, f"{trial.reader} to reach the end of the partition")
            written_at = len(events)
            before = ours(events[:written_at])
            show(ctx, before)
            ctx.step(f"write {trial.records} record{'s' if trial.records > 1 else ''} of {trial.value_bytes} bytes "
                     f"({trial.records * trial.value_bytes} bytes of values): {trial.why}")
            started = time.monotonic()
            written = produce_records(ctx.bootstrap, topic, trial.records, partition=partition,
                                      value=b"x" * trial.value_bytes, key_prefix=trial.reader)
            reader.wait(ctx, lambda: len(reader.offsets) >= len(written),
                        f"{trial.reader} to read {len(written)} records")
        finally:
            reader.consumer.close()
        assert reader.first_read_at is not None
        after = ours(events[written_at:reader.events_at_first_read])
    checks = judge(ctx, trial, before, after)
    latency_ms = round((reader.first_read_at - started) * 1000)
    ctx.note(f"the records reached {trial.reader} {latency_ms} ms after the produce call", latency_ms=latency_ms)
    processed = [Processed(trial.reader, trial.reader, topic, partition, o) for o in reader.offsets]
    verdict = report_verdict(ctx, trial.reader, check(written, processed, groups=[trial.reader]))
    return Part(trial.title, verdict=verdict, checks=checks)


def show(ctx: Context, events: list[FetchParked | FetchCompleted]) -> None:
    for event in events:
        ctx.emit("broker", describe(event), event=type(event).__name__, client_id=event.client_id,
                 expired=getattr(event, "expired", None), waited_ms=getattr(event, "waited_ms", None))


def judge(ctx: Context, trial: Trial, before: list[FetchParked | FetchCompleted],
          after: list[FetchParked | FetchCompleted]) -> list[Check]:
    """The broker's side: `before` are the consumer's fetch events until the records were written, `after` those
    from then until the first record reached the application."""
    if ctx.broker is None:  # no broker events to judge by
        return []
    completed = [i for i, e in enumerate(after) if isinstance(e, FetchCompleted)]
    # Published before its response was sent: the last completion before the records arrived is the one that
    # brought them (librdkafka's next fetch, parked right after, is left out).
    answer = after[completed[-1]] if completed else None
    show(ctx, after[:completed[-1] + 1] if completed else after)
    parked = [e for e in before if isinstance(e, FetchParked)]
    how = "expired after fetch.wait.max.ms" if trial.expires else "completed by data, before fetch.wait.max.ms"
    return [
        ctx.check(f"{trial.reader}'s fetch was parked in the purgatory before the records were written",
                  any(e.min_bytes == trial.min_bytes and e.max_wait_ms == trial.max_wait_ms for e in parked),
                  f"{len(parked)} parked, asking min_bytes={trial.min_bytes}, max_wait_ms={trial.max_wait_ms}"),
        ctx.check(f"the fetch that brought the records {how}",
                  isinstance(answer, FetchCompleted) and answer.expired == trial.expires,
                  "no parked fetch answered" if answer is None else describe(answer)),
    ]


def run(ctx: Context) -> list[Part]:
    topic = ctx.topic("quiet", len(TRIALS))
    if ctx.broker is None:
        ctx.note(f"on the {ctx.backend} backend the broker's purgatory cannot be watched: each part still runs and "
                 "shows how long the records took to arrive")
    return [run_trial(ctx, topic, partition, trial) for partition, trial in enumerate(TRIALS)]


SCENARIO = Scenario(
    name="slow-fetch",
    title="A fetch parked in the purgatory: fetch.min.bytes and fetch.wait.max.ms",
    summary="The broker holds a fetch until fetch.min.bytes arrive or fetch.wait.max.ms pass; latency follows.",
    run=run,
)

"""autocommit-loss: with enable.auto.commit and asynchronous processing, a crash loses records.

librdkafka's auto-commit commits the offsets of what poll() returned, not of what the application finished. A consumer
that hands records to a worker thread and goes back to polling has its offsets committed while the records still
wait in its queue; if it crashes then, its successor starts after records nobody processed. The fix: no auto-commit;
commit, per partition and synchronously, only what the worker thread has finished, and once more on close.
(librdkafka CONFIGURATION.md: enable.auto.commit, enable.auto.offset.store.)
"""

from __future__ import annotations

from lab.clients.producer import produce_records
from lab.scenarios.crash_restart import crash_and_restart, worker_spec
from lab.scenarios.scenario import Context, Part, Scenario

PARTITIONS = 3
RECORDS = 120
PROCESS_MS = 30             # the worker thread's time per record: the queue takes seconds to drain
INTERVAL_MS = 300           # auto.commit.interval.ms
CRASH_AFTER = 10            # records processed, and an auto-commit landed, then the crash


def run(ctx: Context) -> list[Part]:
    topic = ctx.topic("emails", PARTITIONS)
    ctx.step(f"Produce {RECORDS} records")
    produced = produce_records(ctx.bootstrap, topic, RECORDS)

    ctx.step(f"worker-1 polls records into a queue that a worker thread processes ({PROCESS_MS} ms a record); "
             f"auto-commit every {INTERVAL_MS} ms; it crashes once {CRASH_AFTER} records are processed and an "
             f"auto-commit has landed")
    faulty, crashed = crash_and_restart(ctx, "auto-commit with asynchronous processing, then a crash", worker_spec(
        ctx, ctx.group("auto"), topic, commit="auto", processing="queued", process_ms=PROCESS_MS,
        auto_commit_interval_ms=INTERVAL_MS, crash_after=CRASH_AFTER, crash_after_auto_commit=0),
        produced, PARTITIONS, expect=frozenset({"lost"}))

    crash_at = len(crashed.processed)
    ctx.step(f"The fix: no auto-commit; the poll loop commits, per partition and synchronously, what the worker "
             f"thread has finished; worker-1 crashes after the same {crash_at} records")
    fixed, _ = crash_and_restart(ctx, "commit what is processed, then the same crash", worker_spec(
        ctx, ctx.group("manual"), topic, commit="manual", processing="queued", process_ms=PROCESS_MS,
        crash_after=crash_at), produced, PARTITIONS)
    return [faulty, fixed]


SCENARIO = Scenario(
    name="autocommit-loss",
    title="Auto-commit runs ahead of asynchronous processing: a crash loses records",
    summary="Offsets of queued, unprocessed records are auto-committed; after a crash nobody processes them. "
            "Committing only what is finished loses nothing.",
    run=run,
)

"""autocommit-duplicates: with enable.auto.commit, a crash repeats the work done since the last auto-commit.

librdkafka commits, every auto.commit.interval.ms and from its own thread, the offsets of the records poll() has
returned (enable.auto.offset.store: the offset is stored as the record is handed over). A consumer that crashes
between two auto-commits leaves the group's offsets where the last one put them, and whoever takes over processes
again every record handled since. The fix: commit, synchronously and per partition, after processing.
(librdkafka CONFIGURATION.md: enable.auto.commit, auto.commit.interval.ms, enable.auto.offset.store.)
"""

from __future__ import annotations

from lab.clients.producer import produce_records
from lab.scenarios.crash_restart import crash_and_restart, worker_spec
from lab.scenarios.scenario import Context, Part, Scenario

PARTITIONS = 3
RECORDS = 300
PROCESS_MS = 10             # per record: 300 records take about 3 s, several auto-commit intervals
INTERVAL_MS = 1000          # auto.commit.interval.ms
AFTER_COMMIT = 20           # records processed after the first auto-commit, then the crash (well within one interval)


def run(ctx: Context) -> list[Part]:
    topic = ctx.topic("payments", PARTITIONS)
    ctx.step(f"Produce {RECORDS} records")
    produced = produce_records(ctx.bootstrap, topic, RECORDS)

    ctx.step(f"Auto-commit every {INTERVAL_MS} ms; worker-1 processes {PROCESS_MS} ms a record and crashes "
             f"{AFTER_COMMIT} records after the first auto-commit")
    faulty, crashed = crash_and_restart(ctx, "auto-commit, then a crash", worker_spec(
        ctx, ctx.group("auto"), topic, commit="auto", process_ms=PROCESS_MS, auto_commit_interval_ms=INTERVAL_MS,
        crash_after=1, crash_after_auto_commit=AFTER_COMMIT), produced, PARTITIONS, expect=frozenset({"duplicated"}))

    crash_at = len(crashed.processed)
    ctx.step(f"The fix: a synchronous commit of the record's partition after each record; worker-1 crashes after "
             f"the same {crash_at} records")
    fixed, _ = crash_and_restart(ctx, "commit after processing, then the same crash", worker_spec(
        ctx, ctx.group("manual"), topic, commit="manual", process_ms=PROCESS_MS, crash_after=crash_at),
        produced, PARTITIONS)
    return [faulty, fixed]


SCENARIO = Scenario(
    name="autocommit-duplicates",
    title="Auto-commit and a crash: the same records processed twice",
    summary="A consumer crashes between two auto-commits; its successor repeats what it did since the last one. "
            "Committing after processing repeats nothing.",
    run=run,
)

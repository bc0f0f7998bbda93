"""Crash a consumer, restart it, and judge what the group processed: the shared body of the auto-commit scenarios.

Worker 1 runs in a process of its own (`lab.scenarios.worker`) and is killed with SIGKILL mid-stream: no close(), no
last commit. Worker 2 then joins the same group, as a restarted application would, and carries on from the group's
committed offsets to the end of the log, committing synchronously before it closes. Whatever worker 1 processed
above those offsets is processed twice; whatever lies below them that worker 1 never processed is never processed.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from lab.scenarios.checker import Processed, check
from lab.scenarios.common import report_verdict
from lab.scenarios.scenario import Check, Context, Part
from lab.scenarios.worker import WorkerSpec

PACKAGE_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class WorkerRun:
    name: str
    processed: list[Processed] = field(default_factory=list)
    manual_commits: int = 0
    crashed: bool = False
    returncode: int | None = None


def run_worker(ctx: Context, spec: WorkerSpec, *, timeout: float = 120.0) -> WorkerRun:
    """Run a worker process to its crash or its end, turning its report lines into events and `Processed`."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE_ROOT),
                                                                      os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen([sys.executable, "-m", "lab.scenarios.worker", spec.to_json()], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def kill() -> None:
        if process.poll() is None:
            process.kill()
            process.wait(10)

    ctx.defer(kill)
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, name=f"pump-{spec.name}", daemon=True).start()
    result = WorkerRun(spec.name)
    sessions: dict[int, int] = {}
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            kill()
            raise TimeoutError(f"{spec.name} said nothing for {timeout:.0f} s") from None
        if line is None:
            break
        _handle(ctx, spec, json.loads(line), result, sessions)
    result.returncode = process.wait(30)
    if not result.crashed and result.returncode != 0:
        assert process.stderr is not None
        raise RuntimeError(f"{spec.name} failed (exit {result.returncode}): {process.stderr.read()[-2000:]}")
    return result


def _handle(ctx: Context, spec: WorkerSpec, line: dict[str, Any], result: WorkerRun,
            sessions: dict[int, int]) -> None:
    event = line["event"]
    if event == "processed":
        partition = line["partition"]
        result.processed.append(Processed(spec.group, spec.name, spec.topic, partition, line["offset"],
                                          sessions.get(partition, 0)))
    elif event == "assigned":
        for partition in line["partitions"]:
            sessions[partition] = sessions.get(partition, 0) + 1
        ctx.emit("group", f"{spec.name} is assigned partitions {line['partitions']}", member=spec.name,
                 partitions=line["partitions"])
    elif event == "committed" and line["how"] == "auto":
        ctx.emit("commit", f"{spec.name}: auto-commit landed, next offsets {_offsets(line['offsets'])} "
                           f"({len(result.processed)} records processed so far)", **line)
    elif event == "committed":
        result.manual_commits += 1
    elif event == "crash":
        result.crashed = True
        ctx.emit("crash", f"{spec.name} crashes (SIGKILL) after processing {line['processed']} records",
                 member=spec.name, processed=line["processed"])
    elif event == "done":
        ctx.note(f"{spec.name} reached the end of the log after {line['processed']} records"
                 + (f", {result.manual_commits} synchronous commits" if result.manual_commits else "")
                 + ", committed and closed", member=spec.name)


def _offsets(offsets: dict[str, int]) -> str:
    return ", ".join(f"[{p}] {o if o >= 0 else 'none'}" for p, o in sorted(offsets.items(), key=lambda i: int(i[0])))


def committed_offsets(ctx: Context, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offsets as the coordinator holds them (-1001: none), read without joining the group."""
    reader = Consumer({"bootstrap.servers": ctx.bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        found = reader.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=15)
        return {tp.partition: tp.offset for tp in found}
    finally:
        reader.close()


def end_offsets(ctx: Context, topic: str, partitions: int) -> dict[int, int]:
    reader = Consumer({"bootstrap.servers": ctx.bootstrap, "group.id": f"{topic}-watermarks"})
    try:
        return {p: reader.get_watermark_offsets(TopicPartition(topic, p), timeout=15)[1] for p in range(partitions)}
    finally:
        reader.close()


def crash_and_restart(ctx: Context, title: str, spec: WorkerSpec, produced: list[Any], partitions: int,
                      expect: frozenset[str] = frozenset()) -> tuple[Part, WorkerRun]:
    """Run `spec` (a worker that crashes), then restart the group with a well-behaved worker; judge the group.
    The part, and what the crashed worker did."""
    first = run_worker(ctx, spec)
    at_crash = committed_offsets(ctx, spec.group, spec.topic, partitions)
    done = {(r.partition, r.offset) for r in first.processed}

    def read_again(partition: int, offset: int) -> bool:  # no committed offset: the successor starts at the beginning
        committed = at_crash.get(partition, -1)
        return committed < 0 or offset >= committed

    above = sum(1 for p, o in done if read_again(p, o))
    below = sum(1 for r in produced if not read_again(r.partition, r.offset) and (r.partition, r.offset) not in done)
    ctx.note(f"at the crash the group's committed offsets are {_offsets({str(p): o for p, o in at_crash.items()})}: "
             f"{above} of the {len(done)} processed records lie at or above them (they will be processed again), "
             f"{below} records below them were never processed (nobody will read them again)")
    ctx.note(f"worker-2 joins {ctx.short(spec.group)} and starts from the committed offsets (first it waits for the "
             f"coordinator to drop the dead {spec.name}: session.timeout.ms={spec.session_timeout_ms})")
    restart = replace(spec, name="worker-2", commit="manual", processing="inline", process_ms=0, crash_after=0,
                      crash_after_auto_commit=-1)
    second = run_worker(ctx, restart)
    verdict = report_verdict(ctx, title, check(produced, first.processed + second.processed, groups=[spec.group]))
    final = committed_offsets(ctx, spec.group, spec.topic, partitions)
    ends = end_offsets(ctx, spec.topic, partitions)
    checks: list[Check] = [
        ctx.check(f"{spec.name} crashed", first.crashed and first.returncode == -signal.SIGKILL,
                  f"exit status {first.returncode}"),
        ctx.check("after worker-2 closed, the committed offsets are the ends of the log (nothing left to re-read)",
                  final == ends, f"committed {final}, ends {ends}"),
    ]
    return Part(title, expect=expect, verdict=verdict, checks=checks), first


def worker_spec(ctx: Context, group: str, topic: str, **settings: Any) -> WorkerSpec:
    """A worker with this backend's shortest allowed session, so the restart does not wait long for the dead one."""
    session = max(ctx.timeouts.min_session_timeout_ms, 1000)
    return WorkerSpec(bootstrap=ctx.bootstrap, group=group, topic=topic, name="worker-1",
                      session_timeout_ms=session, heartbeat_interval_ms=max(session // 4, 100), **settings)

"""Graders of the live exercises, judged against a real broker: the embedded one, started inside the grader's process
(`lab.scenarios.runner.embedded_target()`, configured for quick rebalances), one per grade, stopped when it ends.

06  a rebalance listener that commits on revoke. Real confluent-kafka members (`lab.clients.members.MemberThread`)
    run the student's `CommitOnRevoke` policy while records are produced: c1 alone, c2 joins (first rebalance), c3
    joins (second), c1 leaves (third). `lab.scenarios.checker.check` judges what was processed against what was
    produced; the student's commits are watched through the consumer their hooks are given, and at the coordinator.
07  replay by timestamp. Four minutes of records with known create times on three partitions; the student's
    `replay()` is called for chosen windows (a whole minute, windows starting between records, empty ones, ones past
    the end) and for random ones, and compared with `lab.clients.replay.replay` on the same broker.

The student's code runs on threads the grader can abandon but not stop: every wait here gives up after a bounded
time with a message naming what the student's code was doing, and the consumers are closed in `finally` blocks.
"""

from __future__ import annotations

import atexit
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition

from lab.assignors import TopicPartition
from lab.broker.coordinator.events import OffsetsCommitted
from lab.clients.admin import Admin
from lab.clients.members import MemberError, MemberThread, Policy
from lab.clients.producer import Written, produce_records
from lab.clients.replay import Record
from lab.clients.waits import WaitTimeout
from lab.grading.checks import Check, Context, Fail, Partial, expect_type, score_cases
from lab.scenarios import runner
from lab.scenarios.checker import Processed, Verdict, check
from lab.scenarios.common import wait_assigned, wait_consumed
from lab.scenarios.scenario import Context as Scenario

T = TypeVar("T")
WAIT_S = 20.0           # the longest the grader waits for the group, or for records, before it gives up
HOOK_S = 15.0           # the longest a student's call may take before the grader reports it as stuck
ORDINALS = ("", "first", "second", "third")


class Stuck(Fail):
    """The student's code did not return in time (and still runs, on a thread the grader abandoned)."""


# --- the broker, one per grade ---------------------------------------------------------------------------------------
def _target(ctx: Context) -> runner.Target:
    """The embedded broker of this grade, started on first use and stopped when the grader's process exits."""
    target: runner.Target | None = ctx.extras.get("target")
    if target is None:
        stack = ExitStack()
        target = stack.enter_context(runner.embedded_target())
        atexit.register(stack.close)
        ctx.extras["target"] = target
    return target


def _once(ctx: Context, key: str, make: Callable[[], T]) -> T:
    """`make()` once per grade; later checks get the same result, or the same failure."""
    if key not in ctx.extras:
        try:
            ctx.extras[key] = make()
        except Fail as failure:
            ctx.extras[key] = failure
        except Exception as error:  # the grader's own trouble, or the student's code failing where nothing guards it
            ctx.extras[key] = Fail(f"{type(error).__name__}: {error}{ctx.where(error)}")
    found = ctx.extras[key]
    if isinstance(found, Fail):
        raise type(found)(found.message, found.detail)
    return found  # type: ignore[no-any-return]


def _clock(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%H:%M:%S.%f")[:-3]


class _Story(Scenario):
    """A scenario context (topics, groups, waits, cleanup) whose waits give up after WAIT_S."""

    def wait(self, condition: Callable[[], T | None], what: str, *, timeout: float = 60.0,
             state: Callable[[], object] | None = None) -> T:
        return super().wait(condition, what, timeout=min(timeout, WAIT_S), state=state)


def _story(ctx: Context, name: str) -> _Story:
    target = _target(ctx)
    return _Story(name, target.bootstrap, backend=target.backend, broker=target.broker, timeouts=target.timeouts,
                  workdir=Path(tempfile.gettempdir()))


# --- 06: the student's policy, driven by real members and watched ----------------------------------------------------
@dataclass(frozen=True)
class Attempt:
    """A commit the student's code asked for, seen through the consumer its hook was given."""

    member: str
    hook: str
    rebalance: int                  # how many rebalances the grader had started by then
    asynchronous: bool
    offsets: tuple[tuple[str, int, int], ...] | None    # what it asked to commit; None: the stored offsets
    error: str = ""                 # why the client refused it, or why it raised


@dataclass(frozen=True)
class Committed:
    """A commit that reached the coordinator (the broker's own event)."""

    member: str
    rebalance: int
    topic: str
    partition: int
    offset: int
    error: str = ""


@dataclass
class Journal:
    """What happened in one story, written by the members' threads and the broker's, read by the grader's."""

    group: str
    rebalance: int = 0
    processed: list[Processed] = field(default_factory=list)      # session: the rebalances before the assignment
    attempts: list[Attempt] = field(default_factory=list)
    commits: list[Committed] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    running: dict[str, tuple[str, float]] = field(default_factory=dict)   # member -> (hook, since)
    returned: Counter[tuple[str, str]] = field(default_factory=Counter)   # (member, hook) -> calls that returned
    lock: threading.Lock = field(default_factory=threading.Lock)

    def on_broker_event(self, event: object) -> None:
        if isinstance(event, OffsetsCommitted) and event.group_id == self.group:
            member = event.member_id.split("-")[0] or "a member outside the group"
            error = "" if event.error_code == 0 else KafkaError(event.error_code).name()
            with self.lock:
                self.commits += [Committed(member, self.rebalance, t, p, o, error) for t, p, o in event.offsets]

    def stuck(self) -> str:
        """Which of the student's hooks has been running for long, if any."""
        now = time.monotonic()
        with self.lock:
            long = [f"{member}'s {hook} has been running for {now - since:.0f} s"
                    for member, (hook, since) in self.running.items() if now - since > 2]
        return "; ".join(long)


class WatchedConsumer:
    """The consumer handed to the student's hooks: every call goes to the real one, and commits are noted."""

    def __init__(self, consumer: Consumer, journal: Journal, member: str, hook: str) -> None:
        self._consumer, self._journal, self._member, self._hook = consumer, journal, member, hook

    def commit(self, *args: Any, **kwargs: Any) -> Any:
        # confluent-kafka: commit(message=None, offsets=None, asynchronous=True)
        named = dict(zip(("message", "offsets", "asynchronous"), args, strict=False)) | kwargs
        offsets = named.get("offsets")
        asked = None if not isinstance(offsets, list) else tuple(
            (tp.topic, tp.partition, tp.offset) for tp in offsets if isinstance(tp, KafkaTopicPartition))
        error = ""
        try:
            result = self._consumer.commit(*args, **kwargs)
            failed = [f"{tp.topic}-{tp.partition}: {tp.error}" for tp in result or [] if tp.error is not None]
            error = "; ".join(failed)
            return result
        except KafkaException as refused:
            error = refused.args[0].name() if refused.args else str(refused)
            raise
        except Exception as wrong:
            error = f"{type(wrong).__name__}: {wrong}"
            raise
        finally:
            attempt = Attempt(self._member, self._hook, self._journal.rebalance,
                              bool(named.get("asynchronous", True)), asked, error)
            with self._journal.lock:
                self._journal.attempts.append(attempt)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._consumer, name)


class Harness(Policy):
    """Runs the student's policy inside a MemberThread: each hook gets a watched consumer; an exception is noted
    (with the student's line) instead of escaping from poll(); each record is noted with its era."""

    def __init__(self, ctx: Context, student: Any, journal: Journal) -> None:
        self.ctx, self.student, self.journal = ctx, student, journal
        self.era = 0

    def _run(self, hook: str, member: MemberThread, consumer: Consumer, *rest: Any) -> None:
        function = getattr(self.student, hook, None)
        watched = WatchedConsumer(consumer, self.journal, member.name, hook)
        with self.journal.lock:
            self.journal.running[member.name] = (hook, time.monotonic())
        try:
            if function is not None:    # a hook the student's class lacks does nothing
                function(member, watched, *rest)
        except NotImplementedError:
            self._problem(f"{member.name}'s {hook} is not implemented yet (it raises NotImplementedError: fill in "
                          f"the # TODO)")
        except Exception as error:
            self._problem(f"{member.name}'s {hook} raised {type(error).__name__}: {error}{self.ctx.where(error)}")
        finally:
            with self.journal.lock:
                self.journal.running.pop(member.name, None)
                self.journal.returned[(member.name, hook)] += 1

    def _problem(self, text: str) -> None:
        with self.journal.lock:
            if len(self.journal.problems) < 50:
                self.journal.problems.append(text)

    def on_assign(self, member: MemberThread, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        self.era = self.journal.rebalance
        self._run("on_assign", member, consumer, partitions)

    def on_revoke(self, member: MemberThread, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        self._run("on_revoke", member, consumer, partitions)

    def on_lost(self, member: MemberThread, consumer: Consumer, partitions: list[KafkaTopicPartition]) -> None:
        self._run("on_lost", member, consumer, partitions)

    def on_record(self, member: MemberThread, consumer: Consumer, message: Message) -> None:
        topic, partition, offset = message.topic(), message.partition(), message.offset()
        assert topic is not None and partition is not None and offset is not None
        with self.journal.lock:
            self.journal.processed.append(Processed(self.journal.group, member.name, topic, partition, offset,
                                                    self.era))
        self._run("on_record", member, consumer, message)

    def before_close(self, member: MemberThread, consumer: Consumer) -> None:
        self._run("before_close", member, consumer)


def _member(ctx: Context, story: _Story, journal: Journal, name: str, topic: str,
            config: dict[str, Any] | None = None) -> MemberThread:
    student = ctx.call("CommitOnRevoke()", ctx.student_attr("CommitOnRevoke"))
    member = MemberThread(name, story.bootstrap, journal.group, [topic], "range",
                            {**story.timeouts.consumer_config(), **(config or {})}, Harness(ctx, student, journal))
    story.defer(lambda: member.stop(HOOK_S / 3))
    member.start()
    return member


def _waiting(journal: Journal, step: Callable[[], T]) -> T:
    """Run a wait of the story; when it gives up, say which of the student's hooks was still running."""
    try:
        return step()
    except (WaitTimeout, MemberError) as error:
        gave_up, _, state = str(error).partition("; last state: ")
        stuck = journal.stuck()
        if stuck:
            raise Stuck(f"{stuck}: does it loop, or wait for something that never comes? (the grader {gave_up})",
                        state) from None
        raise Fail(gave_up, "\n".join([*journal.problems[:5], f"last state: {state}"])) from None


def _unless_stuck(run: Callable[[Context], Partial | None]) -> Callable[[Context], Partial | None]:
    """A check that is not run once a hook of the student's never returned: it would only wait for it again."""
    def check(ctx: Context) -> Partial | None:
        if "stuck" in ctx.extras:
            raise Fail(f"not run: {ctx.extras['stuck']}")
        try:
            return run(ctx)
        except Stuck as stuck:
            ctx.extras["stuck"] = stuck.message
            raise
    return check


def _settle(story: _Story, journal: Journal, members: list[MemberThread], partitions: list[TopicPartition],
            when: str = "") -> None:
    """Wait until `members` share `partitions` out between them (each member's own assignment() says so)."""
    what = (f"{' and '.join(m.name for m in members)} to {'own' if len(members) == 1 else 'share'} "
            f"{', '.join(_tp(*tp) for tp in partitions)}{' ' + when if when else ''}")
    _waiting(journal, lambda: wait_assigned(story, members, partitions, what))


def _committed(bootstrap: str, group: str, partitions: list[TopicPartition]) -> dict[int, int]:
    """The group's committed offsets (-1001 where nothing is committed), read by a consumer that joins nothing."""
    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        found = reader.committed([KafkaTopicPartition(tp.topic, tp.partition) for tp in partitions], WAIT_S)
        return {tp.partition: tp.offset for tp in found}
    finally:
        reader.close()


EXAMPLE_PER_PARTITION = 5


def listener_example(ctx: Context) -> Partial | None:
    """The README's example: c1 reads offsets 0-4 of each of example-0..3, then c2 joins."""
    story = _story(ctx, "grade-06")
    try:
        topic, journal = story.topic("example", 4), Journal(story.group("example"))
        everything = [TopicPartition(topic, p) for p in range(4)]
        c1 = _member(ctx, story, journal, "c1", topic)
        _settle(story, journal, [c1], everything)
        produced = [w for p in range(4)
                    for w in produce_records(story.bootstrap, topic, EXAMPLE_PER_PARTITION, partition=p)]
        _waiting(journal, lambda: wait_consumed(story, [c1], produced, "c1 to read the 20 records"))
        journal.rebalance = 1
        c2 = _member(ctx, story, journal, "c2", topic)
        _settle(story, journal, [c1, c2], everything, "after c2 joined")
        committed = _committed(story.bootstrap, journal.group, everything)
    finally:
        story.close()
    position = EXAMPLE_PER_PARTITION
    wrong = []
    for p, offset in sorted(committed.items()):
        if offset == position:
            continue
        if offset < 0:
            why = "nothing was committed: on_revoke must commit c1's position before the partition goes"
        elif offset == position - 1:
            why = (f"that is the offset of the last record c1 read: commit the position, {position}, the offset of "
                   f"the next record to read, or the next owner reads offset {offset} again")
        elif offset > position:
            why = f"past c1's position {position}: the records in between would never be read"
        else:
            why = f"c1 had read up to offset {position - 1}"
        wrong.append(f"after c1's on_revoke, example-{p}'s committed offset is {offset}, expected {position}: {why}")
    if not wrong:
        return None
    with journal.lock:
        problems = list(journal.problems)
    message = wrong[0] + (f" ({problems[0]})" if problems else "")
    return Partial((len(committed) - len(wrong)) / len(committed), message, "\n".join(wrong + problems[:3]))


# The story: six partitions, records on 0-3 only (so a member can own partitions it never read from), three
# rebalances while records keep coming, then one last record per busy partition.
PARTITIONS, BUSY, BURST = 6, 4, 5


@dataclass
class StoryResult:
    produced: list[Written]
    processed: list[Processed]
    verdict: Verdict
    attempts: list[Attempt]
    commits: list[Committed]
    problems: list[str]


class Traffic:
    """Writes BURST records at a time to partitions 0..BUSY-1 in turn, on a thread, until stopped."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap, self.topic = bootstrap, topic
        self.written: list[Written] = []
        self.failure: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="grade-traffic", daemon=True)

    def _run(self) -> None:
        burst = 0
        try:
            while not self._stop.is_set():
                self.written = self.written + produce_records(
                    self.bootstrap, self.topic, BURST, partition=burst % BUSY, first=burst * BURST, key_prefix="r")
                burst += 1
        except BaseException as failure:
            self.failure = failure

    def start(self) -> Traffic:
        self._thread.start()
        return self

    def more(self, count: int) -> list[Written]:
        """Everything written once `count` more records are."""
        wanted = len(self.written) + count
        while len(self.written) < wanted and self.failure is None and self._thread.is_alive():
            time.sleep(0.05)
        return self.written

    def stop(self) -> list[Written]:
        self._stop.set()
        self._thread.join(WAIT_S)
        if self.failure is not None:
            raise Fail(f"the grader could not produce its records: {self.failure}")
        return self.written


def _caught_up(story: _Story, journal: Journal, written: list[Written]) -> None:
    """Wait until each partition's last record in `written` is processed. Not every record: a policy that commits too
    far loses some, and the grader must go on to tell which."""
    last: dict[tuple[str, int], int] = {}
    for w in written:
        last[(w.topic, w.partition)] = max(w.offset, last.get((w.topic, w.partition), -1))

    def behind() -> dict[str, int]:
        with journal.lock:
            reached: dict[tuple[str, int], int] = {}
            for r in journal.processed:
                reached[(r.topic, r.partition)] = max(r.offset, reached.get((r.topic, r.partition), -1))
        return {_tp(*tp): offset for tp, offset in last.items() if reached.get(tp, -1) < offset}

    _waiting(journal, lambda: story.wait(lambda: not behind(), f"the group to read up to offsets {last}",
                                         state=lambda: f"not read yet: {behind()}"))


def _run_story(ctx: Context) -> StoryResult:
    """c1 alone; c2 joins (the first rebalance), c3 joins (the second), c1 leaves (the third); records all along."""
    story, target = _story(ctx, "grade-06"), _target(ctx)
    journal = Journal(story.group("orders"))
    unsubscribe = target.broker.bus.subscribe(journal.on_broker_event)
    per_era = BURST * BUSY * (2 if ctx.quick else 5)
    try:
        topic = story.topic("orders", PARTITIONS)
        everything = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        members = [_member(ctx, story, journal, "c1", topic)]
        everyone = list(members)
        _settle(story, journal, members, everything)
        traffic = Traffic(story.bootstrap, topic).start()
        try:
            for rebalance in (0, 1, 2, 3):
                if rebalance:
                    journal.rebalance = rebalance
                    if rebalance < 3:
                        members.append(_member(ctx, story, journal, f"c{rebalance + 1}", topic))
                        everyone.append(members[-1])
                    else:
                        _waiting(journal, lambda: members.pop(0).stop(WAIT_S))
                    _settle(story, journal, members, everything, f"after the {ORDINALS[rebalance]} rebalance")
                _caught_up(story, journal, traffic.more(per_era))
        finally:
            produced = traffic.stop()
        produced += [w for p in range(BUSY) for w in produce_records(story.bootstrap, topic, 1, partition=p,
                                                                        key_prefix=f"last-{p}")]
        _caught_up(story, journal, produced)
        unsubscribe()
        with journal.lock:
            return StoryResult(produced, list(journal.processed), check(produced, journal.processed, [journal.group]),
                               list(journal.attempts), list(journal.commits), list(journal.problems))
    finally:
        unsubscribe()
        story.close()


def _tp(topic: str, partition: int) -> str:
    """orders-2: the topic without the prefix and suffix the story's context gave it."""
    parts = topic.split("-")
    return f"{parts[-2] if topic.startswith('lab-') else topic}-{partition}"


def _after(era: int, word: str = "after") -> str:
    """`after the second rebalance` (or `at the ...`); era 0 is before any."""
    return f"{word} the {ORDINALS[era]} rebalance" if 0 < era < len(ORDINALS) else "before any rebalance"


def _last_commit(result: StoryResult, topic: str, partition: int, era: int) -> Committed | None:
    accepted = [c for c in result.commits
                if (c.topic, c.partition) == (topic, partition) and not c.error and c.rebalance <= era]
    return accepted[-1] if accepted else None


def _per_rebalance(buckets: dict[int, list[str]], what: str) -> Partial | None:
    """Credit by rebalance: a third of the points for each of the three rebalances without the anomaly."""
    if not buckets:
        return None
    lines = [line for era in sorted(buckets) for line in buckets[era]]
    counts = ", ".join(f"{len(buckets[era])} {_after(era)}" for era in sorted(buckets))
    return Partial(max(0.0, (3 - len(buckets)) / 3), f"{len(lines)} records {what} ({counts}); first: {lines[0]}",
                   "\n".join(lines[:8]))


def _judged_story(ctx: Context) -> StoryResult:
    """The story's result, once a grade; a policy that never committed has nothing to judge."""
    result = _once(ctx, "story", lambda: _run_story(ctx))
    if not any(not c.error for c in result.commits):
        told = sorted(result.problems, key=lambda p: "on_revoke" not in p)   # on_revoke's trouble first
        problem = f" ({told[0]})" if told else ""
        raise Fail(f"your policy committed nothing in the whole story{problem}: after each rebalance every partition "
                   f"was read again from the beginning")
    return result


def listener_no_loss(ctx: Context) -> Partial | None:
    result = _judged_story(ctx)
    by_partition: dict[tuple[str, int], list[Processed]] = defaultdict(list)
    for record in result.processed:
        by_partition[(record.topic, record.partition)].append(record)
    buckets: dict[int, list[str]] = defaultdict(list)
    for _, topic, partition, offset in result.verdict.lost:
        later = [r for r in by_partition[(topic, partition)] if r.offset > offset]
        resumed = min(later, key=lambda r: r.offset) if later else None
        era = resumed.session if resumed is not None else 3
        line = f"{_tp(topic, partition)} offset {offset} was never processed"
        if resumed is not None:
            line += f": {resumed.consumer} resumed {_tp(topic, partition)} at offset {resumed.offset} {_after(era)}"
        last = _last_commit(result, topic, partition, era)
        if last is not None and last.offset > offset:
            line += f", where {last.member} had committed {last.offset} without having read offset {offset}"
        buckets[era].append(line)
    return _per_rebalance(buckets, "never processed")


def listener_no_duplicates(ctx: Context) -> Partial | None:
    result = _judged_story(ctx)
    times: dict[tuple[str, int, int], list[Processed]] = defaultdict(list)
    for record in result.processed:
        times[(record.topic, record.partition, record.offset)].append(record)
    buckets: dict[int, list[str]] = defaultdict(list)
    for _, topic, partition, offset, _n in result.verdict.duplicated:
        first, again = times[(topic, partition, offset)][:2]
        tp = _tp(topic, partition)
        line = f"{tp} offset {offset} was processed by {first.consumer} and again by {again.consumer} " \
               f"{_after(again.session)}"
        last = _last_commit(result, topic, partition, again.session)
        if last is None:
            line += f": nothing had been committed for {tp}, so it was read from the beginning"
        elif last.offset == offset:
            line += (f": {last.member} had committed {offset}, the offset of the record it had read; commit the "
                     f"position, {offset + 1}, the next offset to read")
        elif last.offset > offset:
            line += (f": {last.member} had committed {last.offset}, past it; a committed offset beyond the end of the "
                     f"partition is out of range, and sends the next owner back to auto.offset.reset (earliest)")
        else:
            line += f": the last commit of {tp} before it was offset {last.offset}"
        buckets[again.session].append(line)
    return _per_rebalance(buckets, "processed twice")


def listener_commits_succeed(ctx: Context) -> Partial | None:
    result = _judged_story(ctx)
    faults = result.problems + [f"the coordinator refused {c.member}'s commit of {_tp(c.topic, c.partition)} at "
                                f"offset {c.offset} {_after(c.rebalance, 'at')}: {c.error}"
                                for c in result.commits if c.error]
    if faults:
        more = f" (and {len(faults) - 1} more)" if len(faults) > 1 else ""
        return Partial(0.0, faults[0] + more, "\n".join(faults[:8]))
    hurried = [a for a in result.attempts if a.hook == "on_revoke" and a.asynchronous]
    if hurried:
        first = hurried[0]
        return Partial(0.5, f"{first.member}'s on_revoke committed asynchronously {_after(first.rebalance, 'at')}: the "
                            f"partitions may reach their next owner before the commit reaches the coordinator; pass "
                            f"asynchronous=False ({len(hurried)} asynchronous commits on revoke)")
    return None


LOST_CONFIG = {"session.timeout.ms": 1000, "heartbeat.interval.ms": 200, "max.poll.interval.ms": 1500}


def listener_on_lost(ctx: Context) -> Partial | None:
    """s1 and s2 share lost-0 and lost-1; s1 stops polling past max.poll.interval.ms, is put out of the group, and
    its on_lost runs when it polls again."""
    story = _story(ctx, "grade-06")
    try:
        topic, journal = story.topic("lost", 2), Journal(story.group("lost"))
        everything = [TopicPartition(topic, p) for p in range(2)]
        s1 = _member(ctx, story, journal, "s1", topic, LOST_CONFIG)
        s2 = _member(ctx, story, journal, "s2", topic, LOST_CONFIG)
        _settle(story, journal, [s1, s2], everything)
        produced = [w for p in range(2) for w in produce_records(story.bootstrap, topic, 5, partition=p)]
        _waiting(journal, lambda: wait_consumed(story, [s1, s2], produced))
        journal.rebalance = 1
        s1.pause_polling()
        _settle(story, journal, [s2], everything, "once s1 stopped polling for longer than max.poll.interval.ms")
        s1.resume_polling()
        try:
            story.wait(lambda: journal.returned[("s1", "on_lost")] > 0, "s1's on_lost to return", timeout=HOOK_S)
        except WaitTimeout:
            if s1.callbacks.lost:
                raise Stuck(f"s1's on_lost did not return within {HOOK_S:.0f} s: does it loop, or wait for something "
                           f"that never comes?") from None
            raise Fail("the grader could not make s1 lose its partitions (not a problem of your code: grade again)"
                       ) from None
        with journal.lock:
            attempts = [a for a in journal.attempts if a.hook == "on_lost"]
            problems = [p for p in journal.problems if "on_lost" in p]
    finally:
        story.close()
    if attempts:
        asked = attempts[0].offsets
        what = ", ".join(f"{_tp(t, p)} at offset {o}" for t, p, o in asked) if asked else "its stored offsets"
        refused = f" (refused: {attempts[0].error})" if attempts[0].error else ""
        raise Fail(f"s1's on_lost committed {what}{refused}: when on_lost runs, s1 is out of the group and s2 owns "
                   f"those partitions, so the commit is refused, or overwrites the new owner's; on_lost only cleans "
                   f"up")
    if problems:
        raise Fail(problems[0])
    return None


def listener_checks(ctx: Context) -> list[Check]:
    return [
        Check("the README's example: when c2 joins, c1's on_revoke commits its positions", 2,
              _unless_stuck(listener_example)),
        Check("no record lost across three rebalances", 3, _unless_stuck(listener_no_loss)),
        Check("no record processed twice across three rebalances", 4, _unless_stuck(listener_no_duplicates)),
        Check("commits succeed, and no hook raises", 2, _unless_stuck(listener_commits_succeed)),
        Check("on_lost does not commit", 2, _unless_stuck(listener_on_lost)),
    ]


# --- 07: replay by timestamp -----------------------------------------------------------------------------------------
# Four whole minutes of records on three partitions: record n (0-11) of minute k is stamped 5n seconds into it and
# goes to partition n % 3. Partition p holds the records at seconds 5p, 5p + 15, 5p + 30 and 5p + 45 of each minute,
# at offsets 4k to 4k + 3.
MINUTE_MS, MINUTES, PER_MINUTE, SPACING_MS, CLICK_PARTITIONS = 60_000, 4, 12, 5_000, 3
REPLAY_S = 10.0         # the reference replays a window in well under a second


@dataclass(frozen=True)
class Window:
    start_ms: int
    end_ms: int

    def __str__(self) -> str:
        return f"[{_clock(self.start_ms)}, {_clock(self.end_ms)}) (start_ms={self.start_ms}, end_ms={self.end_ms})"


@dataclass(frozen=True)
class Clicks:
    """The topic the replays read, and every record in it by (partition, offset)."""

    bootstrap: str
    topic: str
    first_minute_ms: int
    written: dict[tuple[int, int], Written]

    def at(self, minute: int, ms: int = 0) -> int:
        return self.first_minute_ms + minute * MINUTE_MS + ms

    @property
    def last_ms(self) -> int:
        return max(w.timestamp_ms for w in self.written.values())


def _write_clicks(ctx: Context) -> Clicks:
    target = _target(ctx)
    admin = Admin(target.bootstrap)
    try:
        admin.create_topic("clicks", CLICK_PARTITIONS, {"message.timestamp.type": "CreateTime"})
    finally:
        admin.close()
    first = (int(time.time() * 1000) // MINUTE_MS - 10) * MINUTE_MS    # ten whole minutes ago
    stamps: dict[int, list[int]] = defaultdict(list)
    for minute in range(MINUTES):
        for n in range(PER_MINUTE):
            stamps[n % CLICK_PARTITIONS].append(first + minute * MINUTE_MS + n * SPACING_MS)
    written = [w for p, times in sorted(stamps.items()) for w in produce_records(
        target.bootstrap, "clicks", len(times), partition=p, timestamps_ms=times, key_prefix=f"p{p}")]
    return Clicks(target.bootstrap, "clicks", first, {(w.partition, w.offset): w for w in written})


def _clicks(ctx: Context) -> Clicks:
    return _once(ctx, "clicks", lambda: _write_clicks(ctx))


def _call_student(ctx: Context, clicks: Clicks, window: Window) -> list[Record]:
    """The student's replay() for `window`, on a thread of its own so that it cannot hang the grader."""
    what = f"replay(bootstrap, {clicks.topic!r}, {window.start_ms}, {window.end_ms})"
    replay = ctx.student_attr("replay")
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = ctx.call(what, replay, clicks.bootstrap, clicks.topic, window.start_ms, window.end_ms)
        except Fail as failure:
            box["fail"] = failure
        except BaseException as error:  # SystemExit, KeyboardInterrupt: whatever it is, it is the student's
            box["fail"] = Fail(f"{what} raised {type(error).__name__}: {error}{ctx.where(error)}")

    thread = threading.Thread(target=run, name="student-replay", daemon=True)
    thread.start()
    thread.join(REPLAY_S)
    if thread.is_alive():
        raise Stuck(f"{what} for the window {window} did not return within {REPLAY_S:.0f} s: does it wait for records "
                   f"that never come? (offsets_for_times answers -1 for a partition with nothing that late)")
    if "fail" in box:
        raise box["fail"]
    result = box["result"]
    expect_type(result, list, f"{what}'s result")
    for index, item in enumerate(result):
        expect_type(item, Record, f"item {index} of {what}'s result (build it with Record.of(message))")
    return result  # type: ignore[no-any-return]


def _answer(ctx: Context, window: Window) -> list[Record]:
    """The student's answer for `window`, once a grade (the order check reads the answers again)."""
    return _once(ctx, f"answer {window}", lambda: _call_student(ctx, _clicks(ctx), window))


def _expected(ctx: Context, window: Window) -> list[Record]:
    clicks = _clicks(ctx)
    expected: list[Record] = ctx.reference.replay(clicks.bootstrap, clicks.topic, window.start_ms, window.end_ms)
    return expected


def _record(clicks: Clicks, partition: int, offset: int, window: Window) -> str:
    """`partition 0 offset 8 at 10:43:00.000, exactly the window's end (the end is excluded)`"""
    written = clicks.written.get((partition, offset))
    if written is None:
        return f"partition {partition} offset {offset}, which the topic does not have"
    stamp = written.timestamp_ms
    where = (", exactly the window's start (the start is included)" if stamp == window.start_ms else
             ", exactly the window's end (the end is excluded)" if stamp == window.end_ms else
             ", after the window's end" if stamp > window.end_ms else
             ", before the window's start" if stamp < window.start_ms else "")
    return f"partition {partition} offset {offset} at {_clock(stamp)}{where}"


def _records(n: int) -> str:
    return f"{n} record{'' if n == 1 else 's'}"


def _judge(ctx: Context, window: Window) -> str | None:
    """None when the student's replay of `window` holds exactly the reference's records (in any order)."""
    clicks, got, expected = _clicks(ctx), _answer(ctx, window), _expected(ctx, window)
    want = {(r.partition, r.offset): r for r in expected}
    seen = Counter((r.partition, r.offset) for r in got)
    missing = [key for key in sorted(want) if key not in seen]
    extra = [key for key in sorted(seen) if key not in want]
    twice = [key for key, n in sorted(seen.items()) if n > 1 and key in want]
    stamped = [r for r in got if (r.partition, r.offset) in want
               and r.timestamp_ms != want[(r.partition, r.offset)].timestamp_ms]
    problems = []
    for label, keys in (("missing", missing), ("not in the window", extra), ("returned twice", twice)):
        if keys:
            shown = "; ".join(_record(clicks, p, o, window) for p, o in keys[:3])
            problems.append(f"{len(keys)} {label}: {shown}" + (", ..." if len(keys) > 3 else ""))
    if stamped:
        r = stamped[0]
        problems.append(f"partition {r.partition} offset {r.offset} has timestamp_ms {r.timestamp_ms}, but it was "
                        f"written at {want[(r.partition, r.offset)].timestamp_ms}")
    if not problems:
        return None
    return f"the window {window}: {_records(len(got))}, expected {len(expected)}; " + "; ".join(problems)


def _windows(ctx: Context, windows: list[Window], what: str = "window", give_up: bool = False) -> Partial | None:
    """Credit by window: the fraction of them replayed exactly. With `give_up`, the windows after a replay that hung
    are not tried (each could cost REPLAY_S more)."""
    stuck: list[Window] = []

    def judge(window: Window) -> str | None:
        if stuck and give_up:
            return f"the window {window}: not tried, after a replay that did not return"
        try:
            return _judge(ctx, window)
        except Stuck:
            stuck.append(window)
            raise

    return score_cases(windows, judge, what=what)


def _example(ctx: Context) -> None:
    problem = _judge(ctx, _example_window(_clicks(ctx)))
    if problem is not None:
        raise Fail(problem)


def _random(ctx: Context) -> Partial | None:
    outcome = _windows(ctx, _random_windows(ctx, _clicks(ctx)), "random window", give_up=True)
    return None if outcome is None else Partial(outcome.fraction, f"seed {ctx.seed}: {outcome.message}",
                                                outcome.detail)


def _example_window(c: Clicks) -> Window:
    return Window(c.at(1), c.at(2))


def _between_windows(c: Clicks) -> list[Window]:
    return [Window(c.at(1, 12_500), c.at(2, 12_500)), Window(c.at(1, 15_001), c.at(1, 30_000))]


def _empty_windows(c: Clicks) -> list[Window]:
    return [Window(c.at(2, 16_000), c.at(2, 19_000)), Window(c.at(2, 20_000), c.at(2, 20_000))]


def _past_end_windows(c: Clicks) -> list[Window]:
    return [Window(c.last_ms + 1, c.last_ms + 1 + MINUTE_MS), Window(c.at(3, 47_000), c.at(5))]


def _random_windows(ctx: Context, c: Clicks) -> list[Window]:
    rng = ctx.rng("windows")
    stamps = sorted(w.timestamp_ms for w in c.written.values())
    windows = []
    for _ in range(4 if ctx.quick else 10):
        start = rng.choice([rng.choice(stamps) + rng.choice((-1, 0, 1)), c.at(rng.randrange(MINUTES + 1)),
                            rng.randrange(stamps[0] - 30_000, stamps[-1] + 30_000)])
        length = rng.choice([0, 1, rng.randrange(1, 20_000), MINUTE_MS, rng.randrange(MINUTE_MS, 5 * MINUTE_MS)])
        windows.append(Window(start, start + length))
    return windows


def _order(ctx: Context) -> Partial | None:
    """Partition by partition, each in offset order: judged on the answers of the other checks with 2 records or
    more."""
    clicks = _clicks(ctx)
    judged, failures = 0, []
    for window in [_example_window(clicks), *_between_windows(clicks), *_past_end_windows(clicks)]:
        try:
            got = _answer(ctx, window)
        except Fail:
            continue
        if len(got) < 2:
            continue
        judged += 1
        for before, after in pairwise(got):
            if after.partition == before.partition and after.offset <= before.offset:
                failures.append(f"the window {window}: partition {after.partition} offset {after.offset} comes "
                                f"after offset {before.offset}; within a partition, records go in offset order")
                break
            if after.partition < before.partition:
                failures.append(f"the window {window}: a record of partition {after.partition} comes after one of "
                                f"partition {before.partition}; return the records partition by partition, "
                                f"partition 0 first")
                break
    if not judged:
        raise Fail("none of your replays returned two records or more, so there is no order to judge")
    if not failures:
        return None
    return Partial((judged - len(failures)) / judged, failures[0], "\n".join(failures))


def replay_checks(ctx: Context) -> list[Check]:
    return [
        Check("the README's example: the whole second minute", 3, _example),
        Check("windows that start or end between records", 2, lambda c: _windows(c, _between_windows(_clicks(c)))),
        Check("empty windows", 1, lambda c: _windows(c, _empty_windows(_clicks(c)))),
        Check("windows past the end of the partitions", 2, lambda c: _windows(c, _past_end_windows(_clicks(c)))),
        Check("records partition by partition, each in offset order", 1, _order),
        Check("random windows, against lab.clients.replay", 3, _random),
    ]

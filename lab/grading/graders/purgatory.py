"""Exercise 05: the student's `DelayedOperationPurgatory`, on the lab's own timer and `DelayedOperation`.

The checks: the README's worked example; Kafka's DelayedOperationTest vectors; the order of `try_complete_else_watch`
(try, watch, try again, then the timer, all under the operation's lock); the purge of completed operations from the
watcher lists; then random scripts of watches, completions, key checks, cancellations, purges and clock moves,
replayed on the lab's purgatory and on the student's, comparing after every step what each call returned, `watched`,
`num_delayed`, how each operation ended and, separately, the watcher list of every key:

    after step 2 (at clock 0, advance_clock(50)): watched and num_delayed are (0, 0) with yours, (1, 0) with Kafka's
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from lab.grading.checks import (
    Check,
    Context,
    Fail,
    Partial,
    differential,
    expect_type,
    first_step_difference,
    score_cases,
)
from lab.grading.reference_vectors import load
from lab.grading.timer_cases import Call, judge_purgatory_case, long_or_short, plain_call, wait_until_completed
from lab.purgatory.delayed_operation import DelayedOperation
from lab.timer.system_timer import SystemTimer
from lab.timer.time import MockTime

KEYS = ("k0", "k1", "k2", "k3")


class ScriptedOperation(DelayedOperation):
    """Completes on its `completes_on_try`-th try (0: never by itself) or once `ready`; records every try."""

    def __init__(self, name: str, delay_ms: int, completes_on_try: int = 0) -> None:
        super().__init__(delay_ms)
        self.name, self.completes_on_try = name, completes_on_try
        self.ready = False
        self.tries = self.unlocked_tries = self.completions = self.expirations = 0
        self.observed: Any = None            # the purgatory, while it runs try_complete_else_watch on this operation
        self.seen: list[tuple[Any, Any]] = []   # (watched, num_delayed) at each try inside try_complete_else_watch

    def try_complete(self) -> bool:
        self.tries += 1
        if not getattr(self.lock, "_is_owned", lambda: True)():
            self.unlocked_tries += 1
        if self.observed is not None:
            try:
                self.seen.append((self.observed.watched, self.observed.num_delayed))
            except Exception:  # unreadable counts show up, with a clear message, when the grader reads them itself
                self.seen.append((None, None))
        if self.ready or 0 < self.completes_on_try <= self.tries:
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self.completions += 1

    def on_expiration(self) -> None:
        self.expirations += 1

    def __repr__(self) -> str:
        return self.name

    def outcome(self) -> str:
        ended = ("expired" if self.expirations else "completed") if self.completions else "waiting"
        twice = f", on_complete ran {self.completions} times" if self.completions > 1 else ""
        return f"{ended}, tried {self.tries} times{twice}"


def new_purgatory(cls: Any, clock: MockTime, purge_interval: int) -> Any:
    return cls("graded", timer=SystemTimer("graded", time=clock), purge_interval=purge_interval)


def watch(purgatory: Any, op: ScriptedOperation, keys: list[str], call: Call) -> bool:
    what = f"try_complete_else_watch({op.name}, {keys})"
    op.observed = purgatory
    try:
        result = call(what, lambda watch_keys: purgatory.try_complete_else_watch(op, watch_keys), list(keys))
    finally:
        op.observed = None
    expect_type(result, bool, what)
    return bool(result)


def check(purgatory: Any, key: str, call: Call) -> int:
    what = f"check_and_complete({key!r})"
    count = call(what, purgatory.check_and_complete, key)
    expect_type(count, int, what)
    return int(count)


def counts(purgatory: Any, call: Call) -> tuple[int, int]:
    watched = call("purgatory.watched", lambda: purgatory.watched)
    expect_type(watched, int, "watched")
    delayed = call("purgatory.num_delayed", lambda: purgatory.num_delayed)
    expect_type(delayed, int, "num_delayed")
    return watched, delayed


def watcher_lists(purgatory: Any, call: Call) -> dict[str, list[str]]:
    keys = call("purgatory.watch_keys()", purgatory.watch_keys)
    return {str(key): [op.name for op in call(f"purgatory.watchers_for({key!r})", purgatory.watchers_for, key)]
            for key in sorted(keys, key=str)}


# --- fixed cases --------------------------------------------------------------------------------------------------

def worked_example(ctx: Context) -> Partial | None:
    cls = ctx.student_attr("DelayedOperationPurgatory")
    clock = MockTime()
    purgatory = ctx.call("DelayedOperationPurgatory('fetch', timer=...)", lambda: new_purgatory(cls, clock, 1000))
    fetch = ScriptedOperation("fetch", 500)
    steps: list[tuple[str, Callable[[], Any], Any, tuple[int, int]]] = [
        ("try_complete_else_watch(fetch, ['t-0', 't-1'])", lambda: watch(purgatory, fetch, ["t-0", "t-1"], ctx.call),
         False, (2, 1)),
        ("data arrives on t-1: check_and_complete('t-1')", lambda: check(purgatory, "t-1", ctx.call), 1, (1, 0)),
        ("check_and_complete('t-0')", lambda: check(purgatory, "t-0", ctx.call), 0, (0, 0)),
    ]
    late = ScriptedOperation("late", 500)
    steps += [
        ("try_complete_else_watch(late, ['t-0'])", lambda: watch(purgatory, late, ["t-0"], ctx.call), False, (1, 1)),
        ("advance_clock(1000) until late expires", lambda: wait_until_completed(purgatory, late, clock, 1000,
                                                                                  ctx.call), None, (1, 0)),
        ("check_and_complete('t-0')", lambda: check(purgatory, "t-0", ctx.call), 0, (0, 0)),
    ]
    for number, (label, run, want, (watched, delayed)) in enumerate(steps, start=1):
        fetch.ready = number >= 2
        got = run()
        if got != want:
            raise Fail(f"step {number}, {label}: returned {got!r}, expected {want!r}")
        if counts(purgatory, ctx.call) != (watched, delayed):
            raise Fail(f"after step {number}, {label}: watched and num_delayed are {counts(purgatory, ctx.call)}, "
                       f"expected ({watched}, {delayed})")
    if (fetch.outcome(), late.outcome()) != ("completed, tried 3 times", "expired, tried 2 times"):
        raise Fail(f"at the end the fetch is {fetch.outcome()} and the late one {late.outcome()}; expected "
                   f"'completed, tried 3 times' and 'expired, tried 2 times'")
    if clock.milliseconds() != 500 or ctx.call("watch_keys()", purgatory.watch_keys):
        raise Fail(f"the late operation should expire at 500 ms (it did at {clock.milliseconds()}), and no key should "
                   f"be left watched")
    return None


def vectors(ctx: Context) -> Partial | None:
    cls = ctx.student_attr("DelayedOperationPurgatory")
    cases = load("kafka_timer_purgatory.json")["purgatory_cases"]
    return score_cases(cases, lambda case: judge_purgatory_case(lambda clock: new_purgatory(cls, clock, 1000), case,
                                                                ctx.call), what="DelayedOperationTest case")


def kafka_order(ctx: Context) -> Partial | None:
    cls = ctx.student_attr("DelayedOperationPurgatory")

    def scenario(completes_on_try: int) -> str | None:
        purgatory = ctx.call("DelayedOperationPurgatory(...)", lambda: new_purgatory(cls, MockTime(), 1000))
        op = ScriptedOperation("op", 100, completes_on_try)
        result = watch(purgatory, op, ["a", "b"], ctx.call)
        setting = {1: "an operation completable at once", 2: "an operation that completes on its second try",
                   0: "an operation that never completes"}[completes_on_try]
        want_result, want_tries = completes_on_try != 0, completes_on_try or 2
        want_after = {1: (0, 0), 2: (2, 0), 0: (2, 1)}[completes_on_try]
        if (result, op.tries) != (want_result, want_tries):
            return (f"{setting}: try_complete_else_watch returned {result} after {op.tries} tries; expected "
                    f"{want_result} after {want_tries} (try, watch the keys, try again)")
        if op.unlocked_tries:
            return f"{setting}: try_complete ran without the operation's lock held"
        if want_tries == 2 and op.seen[1] != (2, 0):
            return (f"{setting}: at its second try watched and num_delayed were {op.seen[1]}, expected (2, 0): watch "
                    f"both keys before the second try, and add to the timer only after it fails")
        if counts(purgatory, ctx.call) != want_after:
            return (f"{setting}: afterwards watched and num_delayed are {counts(purgatory, ctx.call)}, expected "
                    f"{want_after}")
        return None

    def no_keys() -> str | None:
        purgatory = ctx.call("DelayedOperationPurgatory(...)", lambda: new_purgatory(cls, MockTime(), 1000))
        try:
            purgatory.try_complete_else_watch(ScriptedOperation("op", 100), [])
        except ValueError:
            return None
        except NotImplementedError:
            return "try_complete_else_watch is not implemented yet (it raises NotImplementedError)"
        except Exception as error:
            return f"watching no key raised {type(error).__name__}, expected ValueError{ctx.where(error)}"
        return "try_complete_else_watch(op, []) must raise ValueError (Kafka: the watch key list can't be empty)"

    cases: list[Callable[[], str | None]] = [lambda: scenario(1), lambda: scenario(2), lambda: scenario(0), no_keys]
    return score_cases(cases, lambda case: case(), what="case")


def purging(ctx: Context) -> Partial | None:
    cls = ctx.student_attr("DelayedOperationPurgatory")

    def setup(interval: int, own_keys: list[str]) -> tuple[Any, list[ScriptedOperation]]:
        """One operation per own key, each also watching 'shared', completed through its own key."""
        purgatory = ctx.call("DelayedOperationPurgatory(...)", lambda: new_purgatory(cls, MockTime(), interval))
        ops = [ScriptedOperation(f"op{i}", 10_000) for i in range(len(own_keys))]
        for op, key in zip(ops, own_keys, strict=True):
            watch(purgatory, op, [key, "shared"], ctx.call)
            op.ready = True
            check(purgatory, key, ctx.call)
        return purgatory, ops

    def advance(purgatory: Any) -> tuple[int, int]:
        ctx.call("advance_clock(0)", purgatory.advance_clock, 0)
        return counts(purgatory, ctx.call)

    def over_interval() -> str | None:
        purgatory, _ = setup(3, ["a", "b", "c", "d", "e"])
        stale = counts(purgatory, ctx.call)[0]
        if stale != 5:
            return f"5 operations completed through their own key leave 5 entries under 'shared', not {stale}"
        watched, _ = advance(purgatory)
        if watched != 0 or "shared" in ctx.call("watch_keys()", purgatory.watch_keys):
            return (f"purge_interval 3, 5 operations completed since the last purge: advance_clock must purge them "
                    f"(and drop the empty key 'shared'); watched is {watched} after it")
        return None

    def at_interval() -> str | None:
        purgatory, _ = setup(2, ["a", "b"])
        watched, _ = advance(purgatory)
        if watched != 2:
            return (f"purge_interval 2, 2 operations completed: 2 - 0 is not more than 2, so advance_clock must not "
                    f"purge yet (watched should stay 2, it is {watched})")
        return None

    def first_try_not_counted() -> str | None:
        purgatory, _ = setup(1, ["a"])
        quick = ScriptedOperation("quick", 10_000, completes_on_try=1)
        watch(purgatory, quick, ["b", "shared"], ctx.call)
        watched, _ = advance(purgatory)
        if watched != 1:
            return (f"purge_interval 1: one operation was watched and completed, another completed at its first try "
                    f"and was never watched; only watched operations count, so no purge yet (watched should stay 1, "
                    f"it is {watched})")
        return None

    def purge_now() -> str | None:
        purgatory = ctx.call("DelayedOperationPurgatory(...)", lambda: new_purgatory(cls, MockTime(), 1000))
        first, second = ScriptedOperation("first", 10_000), ScriptedOperation("second", 10_000)
        for op in (first, second):
            watch(purgatory, op, ["a", "b"], ctx.call)
        first.ready = True
        check(purgatory, "a", ctx.call)
        purged = ctx.call("purge_completed()", purgatory.purge_completed)
        expect_type(purged, int, "purge_completed()")
        if (purged, counts(purgatory, ctx.call)) != (1, (2, 1)):
            return (f"two operations on keys a and b, the first completed through a: purge_completed() returned "
                    f"{purged}, leaving watched and num_delayed {counts(purgatory, ctx.call)}; expected 1 and (2, 1)")
        return None

    return score_cases([over_interval, at_interval, first_try_not_counted, purge_now], lambda case: case(),
                       what="purge rule")


# --- random scripts -----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Script:
    purge_interval: int
    ops: tuple[tuple[Any, ...], ...]


SCRIPTS = st.builds(
    Script,
    purge_interval=st.sampled_from([0, 1, 1, 2, 3]),
    ops=long_or_short(st.one_of(
        st.tuples(st.just("watch"), st.integers(1, 300), st.sets(st.sampled_from(KEYS), min_size=1, max_size=3).map(
            lambda keys: tuple(sorted(keys))), st.sampled_from([0, 0, 1, 2, 3])),
        st.tuples(st.just("ready"), st.integers(0, 30)),
        st.tuples(st.just("check"), st.sampled_from(KEYS)),
        st.tuples(st.just("advance"), st.integers(0, 300), st.sampled_from([0, 50, 200])),
        st.tuples(st.just("cancel"), st.sampled_from(KEYS)),
        st.tuples(st.just("purge")),
    )).map(tuple),
)


@dataclass
class Step:
    label: str
    result: Any
    watched: int
    num_delayed: int
    clock: int
    ops: dict[str, tuple[str, int, list[tuple[Any, Any]]]] = field(default_factory=dict)  # outcome, unlocked, seen
    lists: dict[str, list[str]] = field(default_factory=dict)


def run_script(cls: Any, script: Script, call: Call) -> list[Step]:
    clock = MockTime()
    purgatory = call("DelayedOperationPurgatory(...)", lambda: new_purgatory(cls, clock, script.purge_interval))
    ops: list[ScriptedOperation] = []
    steps = []
    for number, (kind, *args) in enumerate(script.ops, start=1):
        at = f"step {number}"
        result: Any = None
        if kind == "watch":
            delay, keys, on_try = args
            op = ScriptedOperation(f"op{len(ops)}", delay, on_try)
            ops.append(op)
            how = {0: "completes only when made ready", 1: "completes at its first try"}.get(
                on_try, f"completes at its try number {on_try}")
            label = f"try_complete_else_watch({op.name}, {list(keys)}), {op.name} has delay {delay} ms and {how}"
            result = watch(purgatory, op, list(keys), call)
        elif kind == "ready" and ops:
            target = ops[args[0] % len(ops)]
            label = f"{target.name} becomes completable (its next try completes it)"
            target.ready = True
        elif kind == "check":
            label = f"check_and_complete({args[0]!r})"
            result = check(purgatory, args[0], call)
        elif kind == "advance":
            label = (f"the clock moves {args[0]} ms on, to {clock.milliseconds() + args[0]}; " if args[0] else
                     f"at clock {clock.milliseconds()}, ") + f"advance_clock({args[1]})"
            clock.sleep(args[0])
            result = call(f"{at}, {label}", purgatory.advance_clock, args[1])
            expect_type(result, bool, f"advance_clock({args[1]})")
        elif kind == "cancel":
            label = f"cancel_for_key({args[0]!r})"
            cancelled = call(f"{at}, {label}", purgatory.cancel_for_key, args[0])
            expect_type(cancelled, list, label)
            result = [getattr(op, "name", repr(op)) for op in cancelled]
        elif kind == "purge":
            label = "purge_completed()"
            result = call(f"{at}, {label}", purgatory.purge_completed)
            expect_type(result, int, label)
        else:
            label = "nothing (there is no operation to make completable yet)"
        step = Step(label, result, *counts(purgatory, call), clock.milliseconds(),
                    {op.name: (op.outcome(), op.unlocked_tries, op.seen) for op in ops})
        step.lists = watcher_lists(purgatory, call)
        steps.append(step)
    return steps


def result_difference(mine: Step, kafka: Step) -> str | None:
    if mine.result != kafka.result or type(mine.result) is not type(kafka.result):
        return f"it returned {mine.result!r} with yours, {kafka.result!r} with Kafka's"
    for name, (outcome, _, seen) in kafka.ops.items():
        my_outcome, unlocked, my_seen = mine.ops[name]
        if unlocked:
            return f"{name} was tried without holding its lock: call try_complete under operation.lock"
        if my_seen != seen:
            return (f"during try_complete_else_watch({name}, ...) its tries saw (watched, num_delayed) = {my_seen} "
                    f"with yours, {seen} with Kafka's: try, watch every key, try again, and only then add to the timer")
        if my_outcome != outcome:
            return f"{name} is {my_outcome} with yours; with Kafka's it is {outcome}"
    if (mine.watched, mine.num_delayed) != (kafka.watched, kafka.num_delayed):
        return (f"watched and num_delayed are ({mine.watched}, {mine.num_delayed}) with yours, ({kafka.watched}, "
                f"{kafka.num_delayed}) with Kafka's (watched counts every entry of every key's list, completed ones "
                f"too until they are purged)")
    return None


def lists_difference(mine: Step, kafka: Step) -> str | None:
    if mine.lists != kafka.lists:
        def show(lists: dict[str, list[str]]) -> str:
            return "; ".join(f"{key}: {', '.join(names)}" for key, names in lists.items()) or "no key"
        return (f"the watcher lists (oldest first) are {show(mine.lists)} with yours; {show(kafka.lists)} with "
                f"Kafka's (a key goes when its list empties)")
    return result_difference(mine, kafka)


def compare_scripts(ctx: Context, differ: Callable[[Step, Step], str | None]) -> Callable[[Script], str | None]:
    cls = ctx.student_attr("DelayedOperationPurgatory")

    def compare(script: Script) -> str | None:
        kafka = run_script(ctx.reference.DelayedOperationPurgatory, script, plain_call)
        return first_step_difference(
            f"DelayedOperationPurgatory(purge_interval={script.purge_interval}) on a timer with the clock at 0:",
            kafka, lambda: run_script(cls, script, ctx.call), differ)

    return compare


def random_results(ctx: Context) -> Partial | None:
    differential(ctx, SCRIPTS, compare_scripts(ctx, result_difference), name="script")
    return None


def random_lists(ctx: Context) -> Partial | None:
    differential(ctx, SCRIPTS, compare_scripts(ctx, lists_difference), name="script")
    return None


def purgatory_checks(ctx: Context) -> list[Check]:
    return [
        Check("the README's worked example (two fetches on t-0 and t-1)", 2, worked_example),
        Check("Kafka's DelayedOperationTest", 5, vectors),
        Check("try_complete_else_watch in Kafka's order", 3, kafka_order),
        Check("purging completed operations from the watcher lists", 2, purging),
        Check("random scripts: what each call returns, watched, num_delayed, how each operation ends", 5,
              random_results),
        Check("random scripts: the watcher list of every key", 3, random_lists),
    ]

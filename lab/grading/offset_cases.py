"""storm-kafka-client's OffsetManager test cases (the `offset_manager` vectors of `storm_kafka_offsets.json`),
replayed against any implementation: the lab's own tests and exercise 08's grader judge with the same code.

`replay(manager, case)` runs a case's actions and returns None when every expectation holds, else what went wrong in
words. With `core_only`, the actions outside the exercise's contract (nth_uncommitted, contains checks) are skipped.
"""

from __future__ import annotations

from typing import Any

# Upstream's Java exceptions and the Python ones the lab raises instead.
ERRORS: dict[str, type[Exception]] = {"NoSuchElementException": IndexError, "IllegalStateException": RuntimeError}
CORE = ("emit", "ack", "find_next_commit_offset", "commit")


def replay(manager: Any, case: dict[str, Any], *, core_only: bool = False) -> str | None:
    emitted: list[int] = []
    acked: list[int] = []
    for index, action in enumerate(case["actions"]):
        if core_only and not any(key in action for key in CORE):
            continue
        state = f"after emitting {emitted} and acking {acked}"
        if "emit" in action:
            manager.add_to_emitted(action["emit"])
            emitted.append(action["emit"])
        elif "ack" in action:
            manager.add_to_acked(action["ack"])
            acked.append(action["ack"])
        elif "find_next_commit_offset" in action:
            expected = action["find_next_commit_offset"]["expected"]
            got = manager.find_next_commit_offset()
            if got != expected:
                return f"{state}, find_next_commit_offset() returned {got!r}; expected {expected!r}"
        elif "commit" in action:
            got = manager.commit(action["commit"])
            if got != action["expected_returned"]:
                return (f"{state}, commit({action['commit']}) returned {got!r}; expected {action['expected_returned']} "
                        f"(the number of acked offsets it dropped)")
            emitted = [o for o in emitted if o >= action["commit"]]
            acked = [o for o in acked if o >= action["commit"]]
        elif "nth_uncommitted" in action:
            n = action["nth_uncommitted"]
            if "expected_error" in action:
                error = ERRORS[action["expected_error"]]
                try:
                    manager.nth_uncommitted_offset_after_committed_offset(n)
                except error:
                    continue
                return f"{state}, nth_uncommitted_offset_after_committed_offset({n}) should raise {error.__name__}"
            got = manager.nth_uncommitted_offset_after_committed_offset(n)
            if got != action["expected"]:
                return f"{state}, nth_uncommitted_offset_after_committed_offset({n}) returned {got}, expected " \
                       f"{action['expected']}"
        elif "assert" in action:
            checks = {"acked_contains": manager.contains, "emitted_contains": manager.contains_emitted}
            for kind, expected in action["assert"].items():
                for offset, present in expected.items():
                    if checks[kind](int(offset)) is not present:
                        return f"{state}, {kind}({offset}) should be {present}"
        else:
            return f"action {index} of {case['name']} is unknown: {action}"
    return None

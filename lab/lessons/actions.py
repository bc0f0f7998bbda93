"""The vocabulary of lesson steps: each action's arguments, checked when the lessons load (the table in
`docs/lessons/README.md` says what each does; `lab.lessons.environment` carries them out).

    >>> check_args("produce", {"topic": "orders", "count": 100})
    []
    >>> check_args("produce", {"topic": "orders", "cont": 100})
    ["unknown argument 'cont' for produce (its arguments: topic, count, partition, key_prefix, value_bytes)"]
    >>> check_args("teleport", {})
    ["unknown action 'teleport'"]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

VIEWS = ("cluster", "group", "assignors", "purgatory", "scenario", "backend", "spark")
STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")
# librdkafka's consumers offer no eager "sticky" assignor (only the lab's `assign` action computes it)
CONSUMER_STRATEGIES = ("range", "roundrobin", "cooperative-sticky")
NUMBER = (int, float)
SPLIT_MODES = ("perPartition", "minPartitions", "balanced")


@dataclass(frozen=True)
class Arg:
    kind: type | tuple[type, ...]
    required: bool = True
    choices: tuple[str, ...] = ()


def _opt(kind: type | tuple[type, ...], choices: tuple[str, ...] = ()) -> Arg:
    return Arg(kind, required=False, choices=choices)


SPECS: dict[str, dict[str, Arg]] = {
    "note": {},
    "create_topic": {"topic": Arg(str), "partitions": _opt(int), "config": _opt(dict)},
    "produce": {"topic": Arg(str), "count": _opt(int), "partition": _opt(int), "key_prefix": _opt(str),
                "value_bytes": _opt(int)},
    "offsets": {"topic": Arg(str)},
    "retention_check": {},
    "start_consumer": {"name": Arg(str), "group": Arg(str), "topics": Arg(list),
                       "strategy": _opt(str, CONSUMER_STRATEGIES), "commit": _opt(str, ("on-revoke", "never"))},
    "start_consumer_process": {"name": Arg(str), "group": Arg(str), "topic": Arg(str)},
    "stop_consumer": {"name": Arg(str)},
    "kill_consumer": {"name": Arg(str)},
    "hang_consumer": {"name": Arg(str)},
    "resume_consumer": {"name": Arg(str)},
    "wait_for_group": {"group": Arg(str), "members": Arg(int), "timeout_s": _opt((int, float))},
    "describe_group": {"group": Arg(str)},
    "run_scenario": {"scenario": Arg(str)},
    "assign": {"strategy": _opt(str, ("all", *STRATEGIES)), "topics": Arg(dict), "members": Arg(dict),
               "owned": _opt(dict)},
    "timer_add": {"name": Arg(str), "delay_ms": Arg(int)},
    "timer_advance": {"ms": Arg(int)},
    "purgatory_watch": {"name": Arg(str), "key": Arg(str), "delay_ms": Arg(int)},
    "purgatory_complete": {"key": Arg(str)},
    "show": {"view": Arg(str, choices=VIEWS)},
    # the Spark lessons (11 to 14): lab.lessons.spark_steps
    "bucket_create": {"rate": Arg(NUMBER), "burst": _opt(NUMBER)},
    "bucket_try": {"calls": _opt(int), "tokens": _opt(NUMBER)},
    "bucket_acquire": {"calls": _opt(int), "tokens": _opt(NUMBER)},
    "bucket_advance": {"ms": Arg(int)},
    "rate_map": {"qps": Arg(NUMBER), "workers": Arg(int), "calls": Arg(int), "share": _opt(str, ("split", "each")),
                 "burst": _opt(NUMBER)},
    "estimator_create": {"batch_interval_ms": _opt(int), "proportional": _opt(NUMBER), "integral": _opt(NUMBER),
                         "derivative": _opt(NUMBER), "min_rate": _opt(NUMBER)},
    "estimator_batch": {"time_ms": Arg(int), "elements": Arg(int), "processing_delay_ms": Arg(int),
                        "scheduling_delay_ms": _opt(int)},
    "estimator_replay": {"batches": Arg(list), "batch_interval_ms": _opt(int), "min_rate": _opt(NUMBER)},
    "backpressure_run": {"produce_rate": Arg(int), "process_rate": Arg(int), "batches": _opt(int),
                         "batch_interval_ms": _opt(int), "backpressure": _opt(bool), "initial_rate": _opt(int)},
    "max_messages": {"topic": Arg(str), "rate": _opt(NUMBER), "batch_interval_ms": _opt(int),
                     "max_rate_per_partition": _opt(int), "min_rate_per_partition": _opt(int),
                     "formula": _opt(str, ("current", "legacy"))},
    "rate_limit": {"limit": Arg(int), "topic": _opt(str), "until": _opt(dict)},
    "splits": {"topics": Arg(list), "mode": Arg(str, choices=SPLIT_MODES), "record_bytes": Arg(dict),
               "num_splits": _opt(int)},
    "reader_plan": {"topic": Arg(str), "options": _opt(dict), "batches": _opt(int)},
}


def check_args(action: str, args: dict[str, Any]) -> list[str]:
    """What is wrong with a step's action and arguments, in words."""
    spec = SPECS.get(action)
    if spec is None:
        return [f"unknown action {action!r}"]
    problems = []
    for name, value in args.items():
        arg = spec.get(name)
        if arg is None:
            problems.append(f"unknown argument {name!r} for {action} (its arguments: {', '.join(spec) or 'none'})")
        elif not isinstance(value, arg.kind) or (isinstance(value, bool) and arg.kind is not bool):
            problems.append(f"{action}: {name} = {value!r} should be {_kind(arg.kind)}")
        elif arg.choices and value not in arg.choices:
            problems.append(f"{action}: {name} = {value!r} is not one of {', '.join(arg.choices)}")
    problems += [f"{action}: missing argument {name!r}" for name, arg in spec.items()
                 if arg.required and name not in args]
    if action == "run_scenario" and isinstance(args.get("scenario"), str):
        from lab.scenarios.runner import CATALOGUE

        if args["scenario"] not in CATALOGUE:
            problems.append(f"run_scenario: no scenario {args['scenario']!r} (scenarios: {', '.join(CATALOGUE)})")
    return problems


def _kind(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "a table",
             bool: "true or false"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)

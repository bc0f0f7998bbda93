"""The classic scenarios the assignor lesson starts from, each a complete input for `assign`.

* `seed-range-skew`: three topics with three partitions each, two consumers on all of them. Range hands the extra
  partition of *every* topic to the first consumer: 6 and 3. Round-robin deals across topics: 5 and 4.
* `seed-roundrobin-uneven`: topics t0, t1, t2 with 1, 2 and 3 partitions; C0 subscribes to t0, C1 to t0 and t1, C2 to
  all three. Round-robin's dealer skips members not on a topic, so C2 collects t1-1 and all of t2 (4 partitions)
  while C1 has one; sticky finds 1 / 2 / 3, the best these subscriptions allow.
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.assignors.contract import Subscription


@dataclass(frozen=True)
class Example:
    name: str
    description: str
    partitions_per_topic: dict[str, int]
    subscriptions: dict[str, Subscription]


EXAMPLES: dict[str, Example] = {
    example.name: example
    for example in (
        Example(
            "seed-range-skew",
            "3 topics x 3 partitions, 2 consumers on all: range gives 6 and 3, round-robin 5 and 4",
            {"t0": 3, "t1": 3, "t2": 3},
            {"C0": Subscription(["t0", "t1", "t2"]), "C1": Subscription(["t0", "t1", "t2"])},
        ),
        Example(
            "seed-roundrobin-uneven",
            "topics with 1, 2, 3 partitions; C0 on t0, C1 on t0+t1, C2 on all: round-robin leaves C2 all of t2",
            {"t0": 1, "t1": 2, "t2": 3},
            {"C0": Subscription(["t0"]), "C1": Subscription(["t0", "t1"]), "C2": Subscription(["t0", "t1", "t2"])},
        ),
    )
}

"""Time the assignors on groups of growing size, with round-robin measured alongside as the O(P) baseline.

Run: .venv/bin/python benchmarks/assignors_bench.py [--quick]

For each size (members, partitions) and each subscription shape (identical: everyone on every topic; random: each
member on about half the topics) it times one `assign` per strategy on a fresh group, plus a cooperative-sticky
*rebalance* (everyone owns last round's result, one member has left) which is the path sticky assignors are for.
Partitions are spread over about sqrt(P) topics. Each number is the best of a few runs, in milliseconds.

"growth" is the exponent k in time ~ P^k between consecutive sizes for sticky: about 1 means linear, and
O(P log P) shows as slightly above 1. The goal for this lab: sticky on (1,000 members, 10,000 partitions) with
identical subscriptions in under a second, and growth no worse than O(P log P).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The path tweak above lets the script run from a plain checkout, without installing the package.
from lab.assignors import (
    Assignment,
    CooperativeStickyAssignor,
    Subscription,
    balance,
    get,
    moves,
)

SIZES = [(10, 100), (100, 1_000), (1_000, 10_000), (2_000, 50_000)]
STRATEGIES = ["roundrobin", "range", "sticky", "cooperative-sticky"]


def make_group(members: int, partitions: int, identical: bool, seed: int = 7) -> tuple[dict[str, int],
                                                                                        dict[str, Subscription]]:
    rng = random.Random(seed)
    num_topics = max(5, round(math.sqrt(partitions)))
    base, extra = divmod(partitions, num_topics)
    counts = {f"topic{i:03d}": base + (1 if i < extra else 0) for i in range(num_topics)}
    topics = list(counts)
    subscriptions = {}
    for index in range(members):
        chosen = topics if identical else ([t for t in topics if rng.random() < 0.5] or [rng.choice(topics)])
        subscriptions[f"consumer{index:04d}"] = Subscription(chosen)
    return counts, subscriptions


def best_of(repeats: int, run: Callable[[], Assignment]) -> tuple[float, Assignment]:
    best, result = math.inf, {}
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best * 1000, result


def _assign_fresh(name: str, counts: dict[str, int], subscriptions: dict[str, Subscription]) -> Assignment:
    return get(name).assign(counts, subscriptions)


def measure(members: int, partitions: int, identical: bool, repeats: int) -> dict[str, tuple[float, str]]:
    counts, subscriptions = make_group(members, partitions, identical)
    row: dict[str, tuple[float, str]] = {}
    for name in STRATEGIES:
        elapsed, result = best_of(repeats, partial(_assign_fresh, name, counts, subscriptions))
        row[name] = (elapsed, f"bal {balance(result)}")
    assignor = CooperativeStickyAssignor()
    before = assignor.assign(counts, subscriptions)
    leaving = next(iter(subscriptions))
    again = {m: assignor.resubscribe(s, before[m], 1) for m, s in subscriptions.items() if m != leaving}
    elapsed, after = best_of(repeats, lambda: CooperativeStickyAssignor().assign(counts, again))
    row["rebalance"] = (elapsed, f"{moves(before, after)} moved")
    return row


def growth(previous: tuple[int, float] | None, partitions: int, elapsed: float) -> str:
    if previous is None or previous[1] <= 0:
        return "-"
    return f"{math.log(elapsed / previous[1]) / math.log(partitions / previous[0]):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="the three smaller sizes, one run each")
    args = parser.parse_args()
    sizes = SIZES[:3] if args.quick else SIZES
    console = Console(width=max(Console().width, 180))
    table = Table(title="assign() time in ms (best of runs) and resulting balance (max - min partitions per member)",
                  caption="baseline: round-robin, O(P), measured in the same run; coop rebalance: "
                          "cooperative-sticky after one member left, everyone owning last round's result")
    for column in ("subscriptions", "members x partitions", "roundrobin (baseline)", "range", "sticky",
                   "cooperative-sticky", "coop rebalance", "sticky / baseline", "sticky growth k (t ~ P^k)"):
        table.add_column(column, justify="right")
    verdicts = []
    for identical in (True, False):
        previous: tuple[int, float] | None = None
        for members, partitions in sizes:
            repeats = 1 if args.quick or partitions >= 50_000 else 3
            row = measure(members, partitions, identical, repeats)
            sticky_ms = row["sticky"][0]
            table.add_row(
                "identical" if identical else "random", f"{members:,} x {partitions:,}",
                *(f"{row[name][0]:,.1f} ({row[name][1]})" for name in [*STRATEGIES, "rebalance"]),
                f"{sticky_ms / row['roundrobin'][0]:.1f}x", growth(previous, partitions, sticky_ms))
            previous = (partitions, sticky_ms)
            if identical and (members, partitions) == (1_000, 10_000):
                ok = max(sticky_ms, row["cooperative-sticky"][0]) < 1000
                verdicts.append(f"sticky at 1,000 x 10,000, identical: {sticky_ms:,.0f} ms, cooperative "
                                f"{row['cooperative-sticky'][0]:,.0f} ms -> {'under' if ok else 'OVER'} one second")
    console.print(table)
    for verdict in verdicts:
        console.print(verdict)


if __name__ == "__main__":
    main()

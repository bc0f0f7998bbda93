"""Balances until the sizes differ by at most one: for ever, when the subscriptions make that impossible."""

from pathlib import Path

from lab.grading.worker import load_student

Simplified = load_student(Path(__file__).with_name("simplified.py")).StickyAssignor


class StickyAssignor(Simplified):  # type: ignore[misc, valid-type]
    def rebalance(self, current, owner, order, topics):  # type: ignore[no-untyped-def]
        while current and max(map(len, current.values())) - min(map(len, current.values())) > 1:
            super().rebalance(current, owner, order, topics)

"""Valid and balanced, but not sticky: it ignores what members owned and starts from scratch every time."""

from pathlib import Path

from lab.grading.worker import load_student

Simplified = load_student(Path(__file__).with_name("simplified.py")).StickyAssignor


class StickyAssignor(Simplified):  # type: ignore[misc, valid-type]
    def trusted_ownership(self, counts, subscriptions):  # type: ignore[no-untyped-def]
        return {member: [] for member in subscriptions}

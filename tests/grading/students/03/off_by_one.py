"""The simplified sticky assignor, balancing only members three apart (`>` where `>=` belongs): with different
subscriptions two members can stay two apart."""

from pathlib import Path

from lab.grading.worker import load_student

Simplified = load_student(Path(__file__).with_name("simplified.py")).StickyAssignor


class StickyAssignor(Simplified):  # type: ignore[misc, valid-type]
    def must_move(self, giver_size: int, taker_size: int) -> bool:
        return giver_size > taker_size + 2

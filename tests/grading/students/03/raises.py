"""Looks each owned partition's topic up in the metadata: a KeyError once a topic has been deleted."""

from pathlib import Path

from lab.grading.worker import load_student

Simplified = load_student(Path(__file__).with_name("simplified.py")).StickyAssignor


class StickyAssignor(Simplified):  # type: ignore[misc, valid-type]
    def trusted_ownership(self, counts, subscriptions):  # type: ignore[no-untyped-def]
        for subscription in subscriptions.values():
            for tp in self.member_data(subscription).partitions:
                if tp.partition >= counts[tp.topic]:
                    raise ValueError(f"{tp} does not exist")
        return super().trusted_ownership(counts, subscriptions)

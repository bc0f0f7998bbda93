"""Consumer experiments with verdicts: setup, steps that emit events, and a checker that names the anomalies."""

from lab.scenarios.checker import Processed, Produced, Verdict, check

__all__ = ["Processed", "Produced", "Verdict", "check"]

"""What the Spark graders share: Spark's test vectors, read from `spark_backpressure_ratelimit.json` a section at a
time, and the tolerance that rates are compared with.

    >>> vectors("pid_rate_estimator")[0]["name"]
    'spark-pid-the right estimator is created'
    >>> close(0.1 + 0.2, 0.3), 0.1 + 0.2 == 0.3
    (True, False)
"""

from __future__ import annotations

import math
from typing import Any

from lab.grading.reference_vectors import load

VECTORS = "spark_backpressure_ratelimit.json"


def vectors(section: str) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = load(VECTORS)[section]
    return cases


def close(mine: float, theirs: float) -> bool:
    """Equal up to rounding: a relative 1e-9, or a millionth absolute (the order of additions may differ)."""
    return math.isclose(mine, theirs, rel_tol=1e-9, abs_tol=1e-6)

"""The upstream test vectors the graders use, copied into the package (`lab/grading/vectors/`) from
`../shared/reference/vectors/`, so a grader works from any install. A test checks the copies still match."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

NAMES = ("assignors_range_roundrobin.json", "assignors_sticky.json", "kafka_timer_purgatory.json",
         "storm_kafka_offsets.json", "spark_backpressure_ratelimit.json")


@cache
def load(name: str) -> Any:
    if name not in NAMES:
        raise KeyError(f"no vectors {name!r} in the package (there are: {', '.join(NAMES)})")
    return json.loads((resources.files("lab.grading") / "vectors" / name).read_text())

"""Loads the upstream test vectors from inside the repository, so that a fresh clone needs nothing beside it.

The files the graders use ship in the package (`lab/grading/vectors/`, read through `lab.grading.reference_vectors`);
the ones only the tests use live in `tests/data/`. Both are byte-for-byte copies of `../shared/reference/vectors/`
(the course's source material, present only in this project's own workspace): `SHARED` is where that original lies,
and the check that the copies still match it runs only where it exists (tests/grading/test_course.py).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from lab.grading import reference_vectors

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
SHARED = REPO.parent / "shared" / "reference" / "vectors"
TEST_ONLY = ("assignors_rack_aware.json", "assignors_group_coordinator.json")


def copy_of(name: str) -> Path:
    """The repository's own copy of the vector file `name`."""
    if name in reference_vectors.NAMES:
        return REPO / "lab" / "grading" / "vectors" / name
    if name in TEST_ONLY:
        return DATA / name
    raise KeyError(f"no vector file {name!r} in the repository "
                   f"(there are: {', '.join((*reference_vectors.NAMES, *TEST_ONLY))})")


@cache
def load(name: str) -> Any:
    if name in reference_vectors.NAMES:
        return reference_vectors.load(name)
    return json.loads(copy_of(name).read_text())

"""Loads the upstream test vectors in ../shared/reference/vectors (beside the repository, as in CI)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
VECTORS = REPO.parent / "shared" / "reference" / "vectors"


@cache
def load(name: str) -> Any:
    path = VECTORS / name
    if not path.exists():
        raise FileNotFoundError(
            f"reference vectors not found at {path}: the tests expect the shared/ folder beside the repository"
        )
    return json.loads(path.read_text())

"""The student's files: whether an exercise was started, and restoring its stub (keeping a backup of the work).

The original stub comes from git (`git show HEAD:exercises/...`) in a clone, or from the copy shipped in the package
when the student works on a copy of their own."""

from __future__ import annotations

import shutil
import subprocess
from datetime import datetime
from importlib import resources
from pathlib import Path

import lab
from lab.grading.catalogue import Exercise

ROOT = Path(lab.__file__).resolve().parent.parent


class NoPristineStub(RuntimeError):
    pass


def pristine(exercise: Exercise) -> str:
    relative = f"exercises/{exercise.folder}/{exercise.stub}"
    try:
        shown = subprocess.run(["git", "-C", str(ROOT), "show", f"HEAD:{relative}"], capture_output=True, text=True,
                               timeout=15, check=False)
        if shown.returncode == 0:
            return shown.stdout
    except (OSError, subprocess.TimeoutExpired):
        pass
    packaged = Path(str(resources.files("lab") / "_exercises" / exercise.folder / exercise.stub))
    if packaged.exists() and not (exercise.stub_path.exists() and packaged.samefile(exercise.stub_path)):
        return packaged.read_text()
    raise NoPristineStub(f"the original {relative} cannot be found (no git history here, and the package's copy is "
                         f"the file you edit): restore it from the project's repository")


def started(exercise: Exercise) -> bool:
    """Has the student changed the stub?"""
    try:
        return exercise.stub_path.read_text() != pristine(exercise)
    except (OSError, NoPristineStub):
        return True


def reset(exercise: Exercise, now: datetime | None = None) -> Path | None:
    """Restore the stub; the student's version goes to `<stub>.bak-<time>` beside it (returned; None if the file was
    already the stub)."""
    original = pristine(exercise)
    path = exercise.stub_path
    if path.exists() and path.read_text() == original:
        return None
    backup = None
    if path.exists():
        backup = path.with_name(f"{path.name}.bak-{(now or datetime.now()).strftime('%Y%m%d-%H%M%S')}")
        shutil.copy2(path, backup)
    path.write_text(original)
    return backup

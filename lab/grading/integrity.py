"""What a grade must leave as it found it. The student's code runs in the grader's child process as the student's own
user, so it can write to any file the lab reads: a backdoor in a grader's source, an overwritten reference, a `.pth`
file that runs code in every later Python. Before the child starts, the parent reads every file the grading trusts
into memory; after the child and everything it started are dead, it reads them again, puts back whatever changed
(and removes what was added), keeping the changed versions aside for whoever wants to see them, and the grade does
not count:

    before = Snapshot.take(trusted_paths())
    ...                                   # the student's code runs
    changed = before.restore(aside)       # ["lab/grading/checks.py (changed)", ...]: put back already

Trusted: the `lab` package (sources, data and compiled `__pycache__` files, whose timestamps Python checks, not
their contents; not the stubs shipped in `lab/_exercises/`, which a student edits), the exercise catalogue (which
names each exercise's reference and grader), and the interpreter's start-up hooks (`*.pth`, an editable install's
finder, `sitecustomize.py`, `usercustomize.py` in its site directories). A changed or added compiled file is only
put back: the parent's own imports write those too.

Not watched: the local grade log, which is a convenience for self-study (its hash chain has no secret), and the rest
of the student's account (their code can write to their home directory, as any program they run can). Someone
editing the lab's own sources while a grade runs sees the edit put back, and finds it in the folder set aside.
"""

from __future__ import annotations

import site
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import lab

START_UP_HOOKS = ("sitecustomize.py", "usercustomize.py")
LINK = b"\0symlink\0"       # what a symbolic link "contains" in a snapshot: this, then where it points


@dataclass(frozen=True)
class Watched:
    """A file, or a folder whose every file is watched (`recursive`: its subfolders too)."""

    path: Path
    recursive: bool = False
    patterns: tuple[str, ...] = ("*",)
    skip: tuple[str, ...] = ()       # folders (names, at any depth) not watched


def trusted_paths() -> list[Watched]:
    """Everything a grade must not change: the lab package, the catalogue, the interpreter's start-up hooks."""
    from lab.grading.catalogue import exercises_dir

    package = Path(lab.__file__).resolve().parent
    watched = [Watched(package, recursive=True, skip=("_exercises",)), Watched(exercises_dir() / "catalogue.toml")]
    site_dirs = {*site.getsitepackages(), site.getusersitepackages(), *(p for p in sys.path if p.endswith("-packages"))}
    for folder in sorted(site_dirs):
        # a .pth line that starts with "import" runs at every start; an editable install's finder decides where
        # `import lab` comes from
        watched.append(Watched(Path(folder), patterns=("*.pth", "__editable__*")))
        watched.extend(Watched(Path(folder) / name) for name in START_UP_HOOKS)
    return watched


def _files(watched: Watched) -> Iterable[Path]:
    if watched.path.is_dir():
        for pattern in watched.patterns:
            found = watched.path.rglob(pattern) if watched.recursive else watched.path.glob(pattern)
            for path in found:
                skipped = set(path.relative_to(watched.path).parts[:-1]) & set(watched.skip)
                if (path.is_symlink() or path.is_file()) and not skipped:
                    yield path
    else:
        yield watched.path      # a single file, watched whether or not it exists yet


def _read(path: Path) -> bytes | None:
    """A file's bytes; for a symbolic link, where it points (never the same as a file's bytes: a link put in place
    of a file is a change); None when there is nothing."""
    try:
        if path.is_symlink():
            return LINK + str(path.readlink()).encode()
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None


def _compiled(path: Path) -> bool:
    return path.parent.name == "__pycache__" and path.suffix == ".pyc"


@dataclass(frozen=True)
class Snapshot:
    watched: tuple[Watched, ...]
    contents: dict[Path, bytes | None]      # None: the file did not exist

    @staticmethod
    def take(watched: Iterable[Watched]) -> Snapshot:
        chosen = tuple(watched)
        return Snapshot(chosen, {path: _read(path) for w in chosen for path in _files(w)})

    def changes(self) -> dict[Path, str]:
        """What differs now from the snapshot: path -> "changed", "added" or "removed"."""
        now = Snapshot.take(self.watched).contents
        found: dict[Path, str] = {}
        for path, before in self.contents.items():
            after = now.get(path, _read(path))
            if after != before:
                found[path] = "added" if before is None else ("removed" if after is None else "changed")
        found.update({path: "added" for path, after in now.items()
                      if path not in self.contents and after is not None})
        return found

    def restore(self, aside: Path) -> list[str]:
        """Put every changed file back and remove every added one, the versions found kept under `aside`; the
        changes that were not compiled files, named for the student ("lab/grading/checks.py (changed)")."""
        named = []
        for path, how in sorted(self.changes().items()):
            before = self.contents.get(path)
            found = _read(path)
            if found is not None and not _compiled(path):
                kept = aside / _shown(path).lstrip("/")
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.write_bytes(found)
            if before is None:
                path.unlink(missing_ok=True)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                if path.is_symlink() or path.is_dir():
                    _remove(path)
                if before.startswith(LINK):
                    path.symlink_to(before[len(LINK):].decode())
                else:
                    path.write_bytes(before)
            if not _compiled(path):
                named.append(f"{_shown(path)} ({how})")
        return named


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        for child in path.iterdir():
            _remove(child)
        path.rmdir()
    else:
        path.unlink(missing_ok=True)


def _shown(path: Path) -> str:
    """A path as short as is still clear: relative to the lab's source tree where it lies inside it."""
    root = Path(lab.__file__).resolve().parent.parent
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)

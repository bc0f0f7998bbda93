"""The lab's optional parts, installed on first use into the lab's own virtualenv from the same lock file.

A learner's `python3 run.py` installs the core lab (the broker, lessons 00-10, the exercises): about 150 MB, in well
under a minute. The Spark part (PySpark, pyarrow, pandas, plotext, matplotlib: about 800 MB) comes when it is first
needed: opening one of the Spark lessons (11-14) or running `lab spark`. `python3 run.py test` installs everything.

    >>> "spark" in PARTS and PARTS["spark"].modules[0]
    'pyspark'

This module uses the standard library only: `run.py` imports it before any dependency is installed. The stamp file in
the virtualenv records which parts were installed from which `pyproject.toml` and lock file, so that run.py redoes an
install only when those change, and keeps every part already there when it does.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent        # the checkout, for an editable install (run.py's)
LOCK = ROOT / "requirements.lock"
PYPROJECT = ROOT / "pyproject.toml"
STAMP_NAME = ".lab-installed"


@dataclass(frozen=True)
class Part:
    name: str                  # the extra in pyproject.toml
    modules: tuple[str, ...]   # what must import for the part to count as installed
    what: str                  # for the learner: what it brings, how big, how long
    used_by: str


PARTS = {
    "spark": Part("spark", ("pyspark", "pyarrow", "pandas", "plotext", "matplotlib"),
                  "PySpark 4.3, pyarrow, pandas, plotext and matplotlib: about 800 MB, one to three minutes",
                  "the Spark lessons (11-14) and `lab spark`"),
    "dev": Part("dev", ("pytest", "mypy", "ruff"), "the test tools: pytest, mypy, ruff, testcontainers, two more "
                "Kafka clients", "`python3 run.py test`"),
}


class InstallFailed(RuntimeError):
    """pip did not install a part; the message ends with the tail of its output."""


def missing(part: str) -> list[str]:
    """The modules of `part` that do not import in this interpreter (empty when the part is installed)."""
    return [module for module in PARTS[part].modules if importlib.util.find_spec(module) is None]


def installable() -> bool:
    """True where the lab runs from a checkout with its lock file (run.py's editable install), so a part can be
    installed from the same pinned versions."""
    return LOCK.exists() and PYPROJECT.exists()


def fingerprint(root: Path = ROOT) -> str:
    digest = hashlib.sha256()
    for path in (root / "pyproject.toml", root / "requirements.lock"):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def installed_parts(venv: Path, root: Path = ROOT) -> set[str] | None:
    """The parts recorded as installed in `venv` for the current pyproject and lock; None when nothing is recorded
    for them (a new virtualenv, or the lock changed since)."""
    try:
        stamp = json.loads((venv / STAMP_NAME).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("fingerprint") != fingerprint(root):
        return None
    return set(stamp.get("parts", []))


def record(venv: Path, parts: Iterable[str], root: Path = ROOT) -> None:
    """Note in `venv` that `parts` (beside the core) are installed from the current pyproject and lock."""
    known = installed_parts(venv, root) or set()
    (venv / STAMP_NAME).write_text(json.dumps({"fingerprint": fingerprint(root), "parts": sorted(known | set(parts))})
                                   + "\n")


def pip_command(python: Path | str, parts: Iterable[str], root: Path = ROOT, *, progress: bool = True) -> list[str]:
    """pip installing the lab (editable) with `parts`, every version held to the lock file."""
    chosen = ",".join(sorted(parts))
    target = f"{root}[{chosen}]" if chosen else str(root)
    return [str(python), "-m", "pip", "--disable-pip-version-check", "install", "--progress-bar",
            "on" if progress else "off", "-c", str(root / "requirements.lock"), "-e", target]


def _stop_on(cancel: threading.Event, process: subprocess.Popen[str]) -> None:
    while process.poll() is None:
        if cancel.wait(0.5):
            process.terminate()
            return


def install(part: str, on_line: Callable[[str], None] | None = None, cancel: threading.Event | None = None) -> None:
    """Install `part` into this interpreter's environment from the lock file. With `on_line`, pip's output is read
    line by line and handed to it (for a progress display); without, pip writes to the terminal. Setting `cancel`
    stops pip. Raises InstallFailed, saying what to do, when the lab is not a checkout,
    pip fails or the install was cancelled."""
    if part not in PARTS:
        raise KeyError(f"no part {part!r} (there are: {', '.join(PARTS)})")
    if not installable():
        raise InstallFailed(f"{PARTS[part].used_by} need the {part!r} part, which this installation does not have "
                            f"and cannot add by itself (no requirements.lock beside the package): install it with "
                            f"pip install 'kafka-internals-lab[{part}]'")
    command = pip_command(sys.executable, [part], progress=on_line is None)
    if on_line is None:
        code = subprocess.run(command, cwd=ROOT).returncode
        tail = ""
    else:
        lines: list[str] = []
        with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              bufsize=1) as process:
            if cancel is not None:
                threading.Thread(target=_stop_on, args=(cancel, process), daemon=True).start()
            assert process.stdout is not None
            for line in process.stdout:
                lines.append(line.rstrip())
                del lines[:-20]
                on_line(line.rstrip())
            code = process.wait()
        if cancel is not None and cancel.is_set():
            raise InstallFailed(f"the {part!r} part was not installed: cancelled")
        tail = "\n".join(lines[-8:])
    if code != 0 or missing(part):
        raise InstallFailed(f"pip could not install the {part!r} part (exit status {code}); run `python3 run.py "
                            f"test` or `pip install -c requirements.lock -e '.[{part}]'` to see why"
                            + (f":\n{tail}" if tail else ""))
    importlib.invalidate_caches()
    if sys.prefix != sys.base_prefix:   # a virtualenv (run.py's): remember it, so run.py keeps the part on reinstall
        record(Path(sys.prefix), [part])

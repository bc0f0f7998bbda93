#!/usr/bin/env python3
"""Set up the lab's virtualenv, then launch the lab or run the test suite.

    python3 run.py            # set up .venv with the core lab (first time only) and launch it on the embedded broker
    python3 run.py test       # set up .venv with everything (first time only) and run lint, type checks and every test
    python3 run.py test -k wheel   # extra arguments go to pytest (or to `lab` for the first form)

Needs nothing but Python 3.11+. Dependencies come from PyPI, pinned by `requirements.lock`, so an install next year
resolves to the same versions. The core lab installs in well under a minute; the Spark part (PySpark and friends)
installs when a Spark lesson or `lab spark` first needs it (`lab/extras.py`), and `test` installs it with the test
tools. An install is redone only when `pyproject.toml` or the lock file changes, and then keeps every part there.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import venv
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
LOCK = ROOT / "requirements.lock"
TEST_PARTS = {"dev", "spark"}


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def say(message: str) -> None:
    print(f"[run.py] {message}", flush=True)


def ensure_venv(parts: set[str]) -> Path:
    """The virtualenv's python, with the core lab and `parts` installed from the lock file."""
    if sys.version_info < (3, 11):  # noqa: UP036 - run.py itself may be started by an older python3
        sys.exit(f"run.py: the lab needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    sys.path.insert(0, str(ROOT))
    from lab import extras  # standard library only: safe before anything is installed

    python = venv_python()
    if not python.exists():
        say(f"creating a virtualenv in {VENV.relative_to(ROOT)}/ ...")
        venv.EnvBuilder(with_pip=True).create(VENV)
    installed = extras.installed_parts(VENV, ROOT)
    if installed is not None and parts <= installed:
        return python
    wanted = parts | (installed or set()) | _parts_already_there(python, extras)
    names = ", ".join(sorted(wanted)) or "none"
    say(f"installing the lab's pinned dependencies (optional parts: {names}); "
        + ("the core lab takes under a minute ..." if not wanted else "this takes a few minutes the first time ..."))
    started = time.monotonic()
    steps = [
        [str(python), "-m", "pip", "--disable-pip-version-check", "install", "--quiet", "--progress-bar", "off",
         "-c", str(LOCK), "pip", "setuptools"],
        extras.pip_command(python, wanted, ROOT, progress=sys.stdout.isatty()),
    ]
    for step in steps:
        result = subprocess.run(step, cwd=ROOT)
        if result.returncode != 0:
            sys.exit(f"run.py: dependency install failed (exit {result.returncode}); see the pip output above")
    extras.record(VENV, wanted, ROOT)
    say(f"dependencies installed in {time.monotonic() - started:.0f} s.")
    return python


def _parts_already_there(python: Path, extras: ModuleType) -> set[str]:
    """Parts a previous install put in .venv (by `lab` on first use, or an older run.py), so that a reinstall after
    a lock change keeps them."""
    if not python.exists():
        return set()
    found = set()
    for name, part in extras.PARTS.items():
        check = (f"import importlib.util, sys; "
                 f"sys.exit(any(importlib.util.find_spec(m) is None for m in {part.modules!r}))")
        if subprocess.run([str(python), "-c", check], cwd=ROOT, capture_output=True).returncode == 0:
            found.add(name)
    return found


def run_tests(python: Path, pytest_args: list[str]) -> int:
    bin_dir = python.parent
    checks = [
        ("ruff", [str(bin_dir / "ruff"), "check", "lab", "tests", "benchmarks", "run.py"]),
        ("mypy --strict lab/", [str(python), "-m", "mypy", "--strict", "lab"]),
        ("pytest", [str(python), "-m", "pytest", *pytest_args]),
    ]
    failed = []
    for name, command in checks:
        say(f"running {name} ...")
        if subprocess.run(command, cwd=ROOT).returncode != 0:
            failed.append(name)
    if failed:
        say("FAILED: " + ", ".join(failed))
        return 1
    say("all checks passed.")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["test"]:
        return run_tests(ensure_venv(TEST_PARTS), argv[1:])
    python = ensure_venv(set())
    lab = python.parent / ("lab.exe" if os.name == "nt" else "lab")
    return subprocess.run([str(lab), *argv], cwd=ROOT).returncode


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)

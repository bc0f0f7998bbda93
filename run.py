#!/usr/bin/env python3
"""Set up the lab's virtualenv, then launch the lab or run the test suite.

    python3 run.py            # set up .venv (first time only) and launch the lab on the embedded broker
    python3 run.py test       # set up .venv (first time only) and run lint, type checks and every test
    python3 run.py test -k wheel   # extra arguments go to pytest (or to `lab` for the first form)

Needs nothing but Python 3.11+. Dependencies come from PyPI, pinned by `requirements.lock`, so an install next year
resolves to the same versions. The install is redone only when `pyproject.toml` or the lock file changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
LOCK = ROOT / "requirements.lock"
STAMP = VENV / ".lab-installed"
EXTRAS = "dev,spark"


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def say(message: str) -> None:
    print(f"[run.py] {message}", flush=True)


def install_fingerprint() -> str:
    digest = hashlib.sha256()
    for path in (ROOT / "pyproject.toml", LOCK):
        digest.update(path.read_bytes())
    digest.update(EXTRAS.encode())
    return digest.hexdigest()


def ensure_venv() -> Path:
    if sys.version_info < (3, 11):  # noqa: UP036 - run.py itself may be started by an older python3
        sys.exit(f"run.py: the lab needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    python = venv_python()
    if not python.exists():
        say(f"creating a virtualenv in {VENV.relative_to(ROOT)}/ ...")
        venv.EnvBuilder(with_pip=True).create(VENV)
    fingerprint = install_fingerprint()
    if STAMP.exists() and STAMP.read_text().strip() == fingerprint:
        return python
    say("installing pinned dependencies (first run takes a minute or two) ...")
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    steps = [
        [*pip, "install", "--quiet", "--progress-bar", "off", "-c", str(LOCK), "pip", "setuptools"],
        [*pip, "install", "--progress-bar", "off", "-c", str(LOCK), "-e", f"{ROOT}[{EXTRAS}]"],
    ]
    for step in steps:
        result = subprocess.run(step, cwd=ROOT)
        if result.returncode != 0:
            sys.exit(f"run.py: dependency install failed (exit {result.returncode}); see the pip output above")
    STAMP.write_text(fingerprint + "\n")
    say("dependencies installed.")
    return python


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
    python = ensure_venv()
    if argv[:1] == ["test"]:
        return run_tests(python, argv[1:])
    lab = python.parent / ("lab.exe" if os.name == "nt" else "lab")
    return subprocess.run([str(lab), *argv], cwd=ROOT).returncode


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)

"""The whole test suite on a busy machine: CPU hogs spin on every core while pytest runs, round after round.

    .venv/bin/python benchmarks/suite_under_load.py                   # baseline, then 3 rounds beside 2 hogs
    .venv/bin/python benchmarks/suite_under_load.py --rounds 1 --hogs 4 -- tests/grading -x
    .venv/bin/python benchmarks/suite_under_load.py --no-baseline     # the loaded rounds only

No test may depend on the machine's speed (README, "Tests and benchmarks"): this is how that is checked. A hog is a
Python process in an endless loop, as many as there are cores by default, so the suite gets about half the CPU it
would alone. The baseline is the same suite on the same machine without hogs, in the same run. Prints a table of each
round's outcome (pytest's closing line) and wall time, and exits non-zero when any round failed. Arguments after
`--` go to pytest (default: the whole suite).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOG = "while True: pass"


def one_round(pytest_args: list[str], hogs: int, log: Path) -> tuple[int, str, float]:
    spinning = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(hogs)]
    started = time.monotonic()
    try:
        with log.open("w") as out:
            code = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args],
                                  cwd=ROOT, stdout=out, stderr=subprocess.STDOUT).returncode
    finally:
        for hog in spinning:
            hog.kill()
            hog.wait()
    seconds = time.monotonic() - started
    closing = [line for line in log.read_text().splitlines() if re.search(r"\d+ (passed|failed)", line)]
    return code, (closing[-1].strip("= ") if closing else f"exit {code}, no closing line"), seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="loaded rounds (default 3)")
    parser.add_argument("--hogs", type=int, default=os.cpu_count() or 2, help="CPU hogs beside pytest (default: cores)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unloaded baseline round")
    parser.add_argument("--logs", type=Path, default=Path("/tmp"), help="where each round's pytest output goes")
    parser.add_argument("pytest_args", nargs="*", help="after --: arguments for pytest")
    args = parser.parse_args()
    args.logs.mkdir(parents=True, exist_ok=True)
    plan = ([] if args.no_baseline else [("baseline", 0)]) + [(f"loaded {n}", args.hogs)
                                                               for n in range(1, args.rounds + 1)]
    rows, failed = [], False
    for name, hogs in plan:
        log = args.logs / f"suite_under_load_{name.replace(' ', '_')}.log"
        print(f"{name}: {hogs} hogs, pytest output in {log} ...", flush=True)
        code, closing, seconds = one_round(args.pytest_args, hogs, log)
        failed |= code != 0
        rows.append((name, hogs, closing, seconds, code))
    print(f"\n{'round':<10} {'hogs':>4}  {'wall':>8}  {'exit':>4}  pytest")
    for name, hogs, closing, seconds, code in rows:
        print(f"{name:<10} {hogs:>4}  {seconds:>7.0f}s  {code:>4}  {closing}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

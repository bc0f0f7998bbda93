"""What a learner's first launch costs: `python3 run.py` on a fresh copy of the repository, on a warm pip cache.

    .venv/bin/python benchmarks/install_bench.py           # the core launch, the Spark part on first use, everything
    .venv/bin/python benchmarks/install_bench.py --quick   # the core launch and everything only

Each row starts from a fresh copy of the repository (its committed and untracked files, no .venv) in an empty
temporary folder:
- **core**: `python3 run.py --version` (sets up .venv with the core lab, then runs `lab`), then the lesson list's first
  frame in that .venv (as in tui_bench.py): the learner's first launch. Goal: under 60 s, .venv under 400 MB.
- **+ spark on first use**: in that same .venv, `lab.extras.install("spark")`, what opening lesson 11 or `lab spark
  demo` runs (pip with the lock file).
- **baseline, everything**: what every launch installed before the core/Spark split and what `python3 run.py test`
  still installs: the `dev` and `spark` parts with the core.

Each copy builds its own virtualenv (from the base interpreter of the one this runs in). The pip cache is whatever
this machine has: run `python3 run.py test` once first for a warm cache.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tui_bench import LAB_START  # noqa: E402 - the same first-frame probe as the TUI benchmark


def fresh_copy(into: Path) -> Path:
    """The repository's committed and untracked (not ignored) files, copied to `into`/kafka-internals-lab."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    target = into / "kafka-internals-lab"
    for name in filter(None, listed):
        source = ROOT / name
        if not (source.exists() or source.is_symlink()):
            continue
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            destination.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, destination)
    return target


def size_mb(path: Path) -> float:
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            file = Path(folder) / name
            if not file.is_symlink():
                total += file.stat().st_size
    return total / 1e6


def timed(command: list[str], cwd: Path) -> float:
    started = time.monotonic()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}")
    return time.monotonic() - started


def first_frame(python: Path, cwd: Path) -> float:
    result = subprocess.run([str(python), "-c", LAB_START], cwd=cwd, capture_output=True, text=True, check=True)
    return float(result.stdout.split()[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="skip the Spark-on-first-use row")
    args = parser.parse_args()
    rows: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory() as scratch:
        core = fresh_copy(Path(scratch) / "core")
        install_s = timed([sys.executable, "run.py", "--version"], core)
        frame_s = first_frame(core / ".venv" / "bin" / "python", core)
        rows.append(("core: python3 run.py, then the lesson list", f"{install_s:.1f} s", f"{frame_s:.2f} s",
                     f"{size_mb(core / '.venv'):.0f} MB"))
        if not args.quick:
            spark_s = timed([str(core / ".venv" / "bin" / "python"), "-c",
                             "from lab import extras; extras.install('spark', on_line=lambda line: None)"], core)
            rows.append(("+ spark on first use (lesson 11, lab spark demo)", f"{spark_s:.1f} s", "",
                         f"{size_mb(core / '.venv'):.0f} MB"))
        shutil.rmtree(core.parent)
        everything = fresh_copy(Path(scratch) / "all")
        baseline_s = timed([sys.executable, "-c", "import run; run.ensure_venv(run.TEST_PARTS)"], everything)
        rows.append(("baseline: everything (dev + spark), as python3 run.py test", f"{baseline_s:.1f} s", "",
                     f"{size_mb(everything / '.venv'):.0f} MB"))
    width = max(len(r[0]) for r in rows)
    print(f"{'install':<{width}}  {'time':>8}  {'1st frame':>9}  {'.venv':>8}")
    for name, seconds, frame, size in rows:
        print(f"{name:<{width}}  {seconds:>8}  {frame:>9}  {size:>8}")
    print("goal: the core launch under 60 s into a .venv under 400 MB (warm pip cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

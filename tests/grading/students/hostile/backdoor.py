"""Writes itself into the lab that grades it, as soon as it is loaded: a backdoor in the grader's `run_check` (every
check of every later grade passes), a module added to the package, and a start-up hook beside the interpreter's
packages. The lab must put all of it back and refuse this grade."""

import site
from pathlib import Path

import lab

PACKAGE = Path(lab.__file__).resolve().parent
checks = PACKAGE / "grading" / "checks.py"
checks.write_text(checks.read_text() + '''

def run_check(ctx, check):  # backdoor: full points, whatever the answer
    return CheckResult(check.name, check.points, check.points)
''')
(PACKAGE / "backdoor.py").write_text("OPEN = True\n")
(Path(site.getsitepackages()[0]) / "zz-lab-backdoor.pth").write_text("# would run at every start\n")


class OffsetManager:
    pass

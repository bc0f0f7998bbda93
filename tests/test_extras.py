"""The lab's optional parts (lab/extras.py): what counts as installed, the stamp run.py and `lab` share, the pip
command held to the lock file, and installs that fail or are cancelled saying so. pip itself runs for real in
benchmarks/install_bench.py (a real install takes a minute); here a stand-in interpreter plays pip."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lab import extras
from lab.lessons.catalogue import load_lessons, problems
from lab.lessons.model import Lesson

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "requirements.lock").write_text("a==1\n")
    return tmp_path


def test_a_part_counts_as_installed_only_when_every_module_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(extras.PARTS, "demo", extras.Part("demo", ("json", "no_such_module_xyz"), "", ""))
    assert extras.missing("demo") == ["no_such_module_xyz"]
    monkeypatch.setitem(extras.PARTS, "demo", extras.Part("demo", ("json",), "", ""))
    assert extras.missing("demo") == []


def test_the_stamp_keeps_every_part_and_forgets_them_all_when_the_lock_changes(project: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    venv.mkdir()
    assert extras.installed_parts(venv, project) is None                 # nothing recorded yet
    extras.record(venv, [], project)
    assert extras.installed_parts(venv, project) == set()                # the core alone
    extras.record(venv, ["spark"], project)
    extras.record(venv, ["dev"], project)
    assert extras.installed_parts(venv, project) == {"spark", "dev"}     # a later record adds, never drops
    (project / "requirements.lock").write_text("a==2\n")
    assert extras.installed_parts(venv, project) is None                 # new pins: install again
    (venv / extras.STAMP_NAME).write_text("not json")
    assert extras.installed_parts(venv, project) is None


def test_pip_installs_the_editable_lab_with_the_parts_held_to_the_lock(project: Path) -> None:
    command = extras.pip_command("/venv/bin/python", ["spark", "dev"], project, progress=False)
    assert command[:3] == ["/venv/bin/python", "-m", "pip"]
    assert command[command.index("-c") + 1] == str(project / "requirements.lock")
    assert command[-2:] == ["-e", f"{project}[dev,spark]"]
    assert extras.pip_command("python", [], project)[-1] == str(project)   # the core: no extras


def test_every_spark_module_is_in_the_spark_extra_and_the_lock() -> None:
    pyproject = (REPO / "pyproject.toml").read_text()
    spark_extra = pyproject.split("spark = [", 1)[1].split("]", 1)[0]
    lock = (REPO / "requirements.lock").read_text().lower()
    for module in extras.PARTS["spark"].modules:
        assert f'"{module}==' in spark_extra and f"\n{module}==" in lock, module


def test_the_spark_lessons_say_they_need_the_spark_part_and_the_others_need_nothing() -> None:
    lessons = load_lessons()
    assert problems(lessons) == []
    assert [lesson.number for lesson in lessons if "spark" in lesson.needs] == [11, 12, 13, 14]
    assert all(lesson.needs == () for lesson in lessons if lesson.number <= 10)


def test_an_unknown_part_in_a_lesson_is_a_content_problem() -> None:
    lesson = Lesson(0, "00-x", "x", "", "text", status="coming", needs=("gpu",))
    assert problems((lesson,)) == ["00-x: needs unknown part 'gpu' (parts: spark, dev)"]


def fake_pip(tmp_path: Path, script: str) -> Path:
    """A stand-in for `python -m pip`: a python whose `-m pip ...` runs `script` instead."""
    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} -c {script!r}\n")
    wrapper.chmod(0o755)
    return wrapper


def test_a_failed_install_says_what_to_run_and_shows_pips_last_lines(monkeypatch: pytest.MonkeyPatch,
                                                                      tmp_path: Path) -> None:
    python = fake_pip(tmp_path, "import sys; print('Collecting pyspark==4.3.0'); "
                                "print('ERROR: No matching distribution'); sys.exit(1)")
    monkeypatch.setattr(extras.sys, "executable", str(python))
    monkeypatch.setitem(extras.PARTS, "demo", extras.Part("demo", ("no_such_module_xyz",), "", "a test"))
    seen: list[str] = []
    with pytest.raises(extras.InstallFailed) as failed:
        extras.install("demo", on_line=seen.append)
    assert seen == ["Collecting pyspark==4.3.0", "ERROR: No matching distribution"]
    assert "exit status 1" in str(failed.value) and "pip install -c requirements.lock -e '.[demo]'" in str(failed.value)
    assert str(failed.value).endswith("ERROR: No matching distribution")


def test_pip_succeeding_without_the_modules_importing_is_still_a_failure(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    monkeypatch.setattr(extras.sys, "executable", str(fake_pip(tmp_path, "print('Successfully installed nothing')")))
    monkeypatch.setitem(extras.PARTS, "demo", extras.Part("demo", ("no_such_module_xyz",), "", "a test"))
    with pytest.raises(extras.InstallFailed, match="exit status 0"):
        extras.install("demo", on_line=lambda _line: None)


def test_a_cancelled_install_stops_pip_even_while_it_prints_nothing(monkeypatch: pytest.MonkeyPatch,
                                                                    tmp_path: Path) -> None:
    python = fake_pip(tmp_path, "import time; print('Collecting pyspark', flush=True); time.sleep(600)")
    monkeypatch.setattr(extras.sys, "executable", str(python))
    monkeypatch.setitem(extras.PARTS, "demo", extras.Part("demo", ("no_such_module_xyz",), "", "a test"))
    cancel = threading.Event()
    with pytest.raises(extras.InstallFailed, match="cancelled"):
        extras.install("demo", on_line=lambda _line: cancel.set(), cancel=cancel)


def test_outside_a_checkout_the_message_names_the_pip_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(extras, "LOCK", tmp_path / "requirements.lock")
    with pytest.raises(extras.InstallFailed, match=r"pip install 'kafka-internals-lab\[spark\]'"):
        extras.install("spark")


def test_run_py_imports_extras_with_the_standard_library_alone() -> None:
    """run.py imports lab.extras before anything is installed: under `python -S -I` (no site-packages) it must load."""
    code = "import sys; sys.path.insert(0, '.'); from lab import extras; print(sorted(extras.PARTS))"
    result = subprocess.run([sys.executable, "-S", "-I", "-c", code], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['dev', 'spark']"

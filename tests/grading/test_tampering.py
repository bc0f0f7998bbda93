"""A grade leaves the files the grading trusts as it found them (`lab.grading.integrity`): what a student's code
changes, adds or replaces with a link is put back, the version found is kept aside, and the grade does not count.
The end-to-end test grades a backdoor against a copy of the lab (never the checkout the tests run from)."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lab.grading.integrity import Snapshot, Watched

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = Path(__file__).parent / "students" / "hostile"


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): (b"link:" + str(p.readlink()).encode()) if p.is_symlink() else p.read_bytes()
            for p in sorted(root.rglob("*")) if p.is_symlink() or p.is_file()}


def make_package(root: Path) -> Path:
    package = root / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "_exercises").mkdir()
    (package / "__pycache__").mkdir()
    (package / "a.py").write_text("A = 1\n")
    (package / "sub" / "b.py").write_text("B = 2\n")
    (package / "_exercises" / "stub.py").write_text("# the student's\n")
    (package / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"compiled")
    return package


def test_a_change_an_addition_a_removal_and_a_link_are_all_put_back_and_named(tmp_path: Path) -> None:
    package = make_package(tmp_path)
    original = tree(package)
    snapshot = Snapshot.take([Watched(package, recursive=True, skip=("_exercises",))])
    (package / "a.py").write_text("A = 'backdoor'\n")
    (package / "sub" / "b.py").unlink()
    (package / "sub" / "c.py").write_text("C = 3\n")
    (package / "link.py").symlink_to(tmp_path / "elsewhere.py")
    (package / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"tampered bytecode")
    (package / "_exercises" / "stub.py").write_text("# the student's answer, saved meanwhile\n")
    named = snapshot.restore(tmp_path / "aside")
    assert named == [f"{package}/a.py (changed)", f"{package}/link.py (added)", f"{package}/sub/b.py (removed)",
                     f"{package}/sub/c.py (added)"]               # not the compiled file: the lab's imports write those
    after = tree(package)
    assert after.pop("_exercises/stub.py") == b"# the student's answer, saved meanwhile\n"   # not the lab's to undo
    original.pop("_exercises/stub.py")
    assert after == original                                   # the compiled file too, though it is not named
    kept = {p.name: p.read_bytes() for p in (tmp_path / "aside").rglob("*") if p.is_file()}
    assert kept["a.py"] == b"A = 'backdoor'\n" and kept["c.py"] == b"C = 3\n"
    assert Snapshot.take(snapshot.watched).changes() == {}


def test_a_watched_file_that_did_not_exist_is_removed_when_it_appears(tmp_path: Path) -> None:
    hook = tmp_path / "sitecustomize.py"
    snapshot = Snapshot.take([Watched(hook), Watched(tmp_path, patterns=("*.pth",))])
    hook.write_text("import os\n")
    (tmp_path / "evil.pth").write_text("import os\n")
    (tmp_path / "harmless.txt").write_text("not watched\n")
    assert sorted(snapshot.changes().values()) == ["added", "added"]
    snapshot.restore(tmp_path / "aside")
    assert not hook.exists() and not (tmp_path / "evil.pth").exists() and (tmp_path / "harmless.txt").exists()


NAMES = st.sampled_from(["a.py", "b.py", "sub/c.py", "sub/d.json", "e.pth"])


@given(st.lists(st.tuples(st.sampled_from(["write", "remove", "link"]), NAMES, st.binary(max_size=8)), max_size=12))
def test_whatever_is_done_to_the_tree_restoring_gives_it_back_byte_for_byte(
        actions: list[tuple[str, str, bytes]]) -> None:
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        package = make_package(root)
        original = tree(package)
        snapshot = Snapshot.take([Watched(package, recursive=True)])
        for action, name, data in actions:
            path = package / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_symlink() or path.exists():
                path.unlink()
            if action == "write":
                path.write_bytes(data)
            elif action == "link":
                path.symlink_to(root / "outside")
        differs = tree(package) != original
        assert bool(snapshot.changes()) == differs               # a change is seen exactly when there is one
        snapshot.restore(root / "aside")
        assert tree(package) == original


def lab_copy(tmp_path: Path) -> Path:
    """The lab's package and exercises, copied: what a backdoor writes to lands there."""
    copy = tmp_path / "lab-copy"
    for part in ("lab", "exercises"):
        shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def lab_grade(copy: Path, data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`lab grade ...` run from `copy` (no site start-up, so the editable install cannot point `lab` back here)."""
    sites = [p for p in sys.path if p.endswith("-packages")]
    launcher = (f"import sys; sys.path[:0] = [{str(copy)!r}]; sys.path += {sites!r}; sys.argv[0] = 'lab'; "
                f"from lab.cli import main; main()")
    return subprocess.run([sys.executable, "-S", "-c", launcher, "grade", *args], capture_output=True, text=True,
                          env={**os.environ, "LAB_DATA_DIR": str(data), "PYTHONPATH": str(copy)}, timeout=600,
                          check=False, cwd=copy.parent)


def test_a_backdoor_written_during_a_grade_is_undone_and_the_grade_does_not_count(tmp_path: Path) -> None:
    copy = lab_copy(tmp_path)
    pth = Path(site.getsitepackages()[0]) / "zz-lab-backdoor.pth"
    pristine = tree(copy / "lab")
    checkout = Snapshot.take([Watched(ROOT / "lab", recursive=True)])   # should a grader ever run from here instead
    try:
        done = lab_grade(copy, tmp_path / "data", "08", "--file", str(HOSTILE / "backdoor.py"), "--json")
        report = json.loads(done.stdout)
        assert report["score"] == 0 and report["checks"] == [], done.stdout
        for named in ("lab/grading/checks.py (changed)", "lab/backdoor.py (added)", "zz-lab-backdoor.pth (added)"):
            assert named in report["error"], report["error"]
        assert not pth.exists()
        assert {k: v for k, v in tree(copy / "lab").items() if "__pycache__" not in k} == \
            {k: v for k, v in pristine.items() if "__pycache__" not in k}
        kept = list((tmp_path / "data" / "tampered").rglob("checks.py"))
        assert len(kept) == 1 and b"backdoor" in kept[0].read_bytes()
        # the next grade is judged by the lab as it was: the untouched stub earns nothing
        stub = lab_grade(copy, tmp_path / "data", "08", "--json")
        assert json.loads(stub.stdout)["score"] == 0
    finally:
        pth.unlink(missing_ok=True)
        assert not checkout.restore(tmp_path / "checkout-aside"), "the backdoor reached the checkout (put back)"


def test_a_lab_folder_where_the_student_stands_is_not_the_grader(tmp_path: Path) -> None:
    """`lab grade` run from a folder holding a `lab/` package of the student's: its grader process must still load
    the lab's own worker, not one that prints full marks."""
    fake = tmp_path / "lab" / "grading"
    fake.mkdir(parents=True)
    (tmp_path / "lab" / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "worker.py").write_text(
        "import json\n"
        "print(json.dumps({'event': 'checks', 'names': ['forged'], 'points': [10]}))\n"
        "print(json.dumps({'event': 'start', 'index': 0, 'name': 'forged'}))\n"
        "print(json.dumps({'event': 'result', 'index': 0, 'result': {'name': 'forged', 'points': 10, "
        "'earned': 10}}))\n")
    done = subprocess.run([str(Path(sys.executable).with_name("lab")), "grade", "08", "--json"], capture_output=True,
                          text=True, env={**os.environ, "LAB_DATA_DIR": str(tmp_path / "data")}, timeout=600,
                          check=False, cwd=tmp_path)
    report = json.loads(done.stdout)
    assert [check["name"] for check in report["checks"]] != ["forged"] and report["score"] < 10, done.stdout


def test_the_labs_own_implementation_is_not_an_answer(tmp_path: Path) -> None:
    done = subprocess.run([str(Path(sys.executable).with_name("lab")), "grade", "08", "--file",
                           str(ROOT / "lab" / "offsets" / "offset_manager.py")], capture_output=True, text=True,
                          env={**os.environ, "LAB_DATA_DIR": str(tmp_path), "COLUMNS": "200"}, timeout=300,
                          check=False)
    assert done.returncode == 1
    assert "is part of the lab itself, not an answer" in done.stdout and "score" not in done.stdout

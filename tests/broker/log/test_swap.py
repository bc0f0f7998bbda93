"""A cleaning cut short by a crash: before the .log.swap rename the old segments stay, after it the cleaned one wins.

Each state is built from real files. First a cleaning runs to completion, then the test puts together the
files a crash at a given step would leave, in a fresh directory, and reopens the log there (as Kafka's
`LogCleanerTest.testRecoveryAfterCrash` does).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lab.broker.log import SimpleRecord, build_batch
from lab.broker.log import cleaner as cleaner_module
from lab.broker.log.cleaner import CHECKPOINT_FILE
from tests.broker.log.compaction import compacted_log, consume, replay, rows, write

Files = dict[str, bytes]
OLD = [f"{base:020d}{suffix}" for base in (0, 2, 4) for suffix in (".log", ".index", ".timeindex")]
NEW_LOG, NEW_INDEX, NEW_TIME_INDEX = (f"{0:020d}{suffix}" for suffix in (".log", ".index", ".timeindex"))


def history(directory: Path) -> tuple[Files, Files]:
    """Segments 0, 2 and 4 that clean into one segment at 0, plus the active segment 6: the files before and after."""
    log = compacted_log(directory, index_interval_bytes=0)
    write(log, (b"a", b"1"), (b"b", b"1"), (b"a", b"2"), (b"c", b"1"), (b"b", b"2"), (b"a", b"3"), (b"d", b"1"))
    before = {path.name: path.read_bytes() for path in directory.iterdir()}
    log.clean()
    log.close()
    after = {path.name: path.read_bytes() for path in directory.iterdir()}
    return before, after


def crashed_in_step_1(before: Files, after: Files) -> Files:  # the .log.cleaned only half written
    return before | {NEW_LOG + ".cleaned": after[NEW_LOG][:50], NEW_INDEX + ".cleaned": after[NEW_INDEX]}


def crashed_in_step_2(before: Files, after: Files) -> Files:  # the indexes renamed to .swap, not yet the log
    return before | {NEW_INDEX + ".swap": after[NEW_INDEX], NEW_TIME_INDEX + ".swap": after[NEW_TIME_INDEX],
                     NEW_LOG + ".cleaned": after[NEW_LOG]}


def committed(before: Files, after: Files) -> Files:  # the .log.swap rename happened, nothing deleted yet
    return before | {name + ".swap": after[name] for name in (NEW_LOG, NEW_INDEX, NEW_TIME_INDEX)}


def crashed_in_step_3(before: Files, after: Files) -> Files:  # old segment 0 gone, 2 half-way (.deleted), 4 intact
    files = {name: data for name, data in committed(before, after).items() if name not in OLD[:3]}
    return files | {f"{2:020d}.log.deleted": files.pop(f"{2:020d}.log")}


def crashed_in_step_4(before: Files, after: Files) -> Files:  # the indexes in place, the log still .swap
    files = {name: data for name, data in before.items() if name not in OLD}
    return files | {NEW_INDEX: after[NEW_INDEX], NEW_TIME_INDEX: after[NEW_TIME_INDEX],
                    NEW_LOG + ".swap": after[NEW_LOG]}


def before_the_checkpoint(before: Files, after: Files) -> Files:  # swapped, but cleaner-offset-checkpoint not written
    return {name: data for name, data in after.items() if name != CHECKPOINT_FILE}


State = Callable[[Files, Files], Files]


def materialise(directory: Path, files: Files) -> Path:
    directory.mkdir()
    for name, data in files.items():
        (directory / name).write_bytes(data)
    return directory


@pytest.mark.parametrize(("state", "rolls_forward"), [
    (crashed_in_step_1, False), (crashed_in_step_2, False), (committed, True), (crashed_in_step_3, True),
    (crashed_in_step_4, True), (before_the_checkpoint, True)])
def test_a_crash_at_any_step_rolls_the_swap_back_or_forward(tmp_path: Path, state: State, rolls_forward: bool) -> None:
    before, after = history(tmp_path / "original")
    expected = rows(compacted_log(materialise(tmp_path / "expected", after if rolls_forward else before)))
    assert len(expected) == (4 if rolls_forward else 7)

    directory = materialise(tmp_path / "crashed", state(before, after))
    log = compacted_log(directory, index_interval_bytes=0)
    assert rows(log) == expected and consume(log) == expected
    assert sorted(path.name for path in directory.iterdir() if path.suffix in (".cleaned", ".swap", ".deleted")) == []
    log.clean()  # the checkpoint was not written: the next cleaning redoes the work and gets the same result
    assert [row[:3] for row in rows(log)] == [(3, b"c", b"1"), (4, b"b", b"2"), (5, b"a", b"3"), (6, b"d", b"1")]


def test_a_segment_that_lost_every_record_may_outlive_a_crash_until_the_next_cleaning(tmp_path: Path) -> None:
    # Segments x,y | a,b | a,b and segment.bytes for two segments: groups [0, 2] and [4]. Group [0, 2] keeps only
    # x and y, so its .swap log ends at 2 and recovery cannot know that segment 2 belonged to it (as in Kafka).
    batch_size = len(build_batch([SimpleRecord(b"1", key=b"x", timestamp=1_000)]))
    log = compacted_log(tmp_path / "original", segment_bytes=4 * batch_size)
    write(log, (b"x", b"1"), (b"y", b"1"), (b"a", b"1"), (b"b", b"1"), (b"a", b"2"), (b"b", b"2"))
    before = {path.name: path.read_bytes() for path in (tmp_path / "original").iterdir()}
    log.clean()
    log.close()
    after = {path.name: path.read_bytes() for path in (tmp_path / "original").iterdir()}
    crashed = {name: data for name, data in before.items() if not name.startswith("0" * 20)}
    directory = materialise(tmp_path / "crashed", crashed | {NEW_LOG + ".swap": after[NEW_LOG]})

    log = compacted_log(directory, segment_bytes=4 * batch_size)
    assert [row[0] for row in rows(log)] == [0, 1, 2, 3, 4, 5]  # 2 and 3 are back: superseded, harmless
    assert replay(consume(log)) == {b"x": b"1", b"y": b"1", b"a": b"2", b"b": b"2"}
    log.clean()
    assert [row[0] for row in rows(log)] == [0, 1, 4, 5]


def test_a_cleaning_that_fails_half_way_leaves_the_log_as_it_was(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    log = compacted_log(tmp_path)
    write(log, *[(b"k%d" % (n % 3), b"%d" % n) for n in range(9)])
    before = rows(log)
    calls = 0

    def failing_filter(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise OSError("disk full")
        return original(*args, **kwargs)  # type: ignore[arg-type]

    original = cleaner_module.filter_batch
    monkeypatch.setattr(cleaner_module, "filter_batch", failing_filter)
    with pytest.raises(OSError, match="disk full"):
        log.clean()
    assert rows(log) == before and consume(log) == before
    assert list(tmp_path.glob("*.cleaned")) == [] and not (tmp_path / CHECKPOINT_FILE).exists()
    monkeypatch.undo()
    assert log.clean() is not None and [row[0] for row in rows(log)] == [5, 6, 7, 8]

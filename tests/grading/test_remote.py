"""The wire between the judge and the student's process (`lab.grading.remote`): plain values cross unchanged, the
student's process can name only the lab's own value types (never make the judge import or run anything), malformed
or oversized messages are refused, and the student's exceptions come back as the builtin types graders catch."""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lab.assignors import TopicPartition
from lab.grading.remote import (
    MAX_MESSAGE,
    ProtocolError,
    Side,
    decode,
    describe_error,
    encode,
    rebuild_error,
    receive,
    send,
)
from lab.spark.splits import OffsetRange


def no_refs(data: dict[str, Any]) -> Any:
    raise AssertionError(f"unexpected reference {data}")


scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary()
hashable = st.recursive(scalars, lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3), max_leaves=8)
values = st.recursive(
    scalars | st.fractions() | st.builds(TopicPartition, st.text(max_size=5), st.integers(0, 99)),
    lambda inner: (st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(hashable, inner, max_size=3)
                   | st.sets(hashable, max_size=3)),
    max_leaves=20)


@given(values)
def test_plain_values_cross_the_wire_unchanged(value: Any) -> None:
    stream = io.BytesIO()
    send(stream, {"ok": encode(value)})
    stream.seek(0)
    message = receive(stream)
    assert message is not None
    back = decode(message["ok"], no_refs)
    assert back == value and type(back) is type(value)


def test_infinities_and_nan_cross_too() -> None:
    back = decode(encode([float("inf"), float("-inf"), float("nan")]), no_refs)
    assert back[:2] == [float("inf"), float("-inf")] and back[2] != back[2]


def test_the_labs_dataclasses_cross_by_value() -> None:
    ranges = [OffsetRange("t", 0, 5, 10), OffsetRange("t", 1, 0, 3)]
    assert decode(encode(ranges), no_refs) == ranges


@pytest.mark.parametrize("named", ["os:system", "builtins:eval", "lab.grading.runner:Report", "lab.nothing:Here",
                                   "subprocess:Popen"])
def test_the_student_side_can_name_only_the_labs_value_types_already_loaded(named: str) -> None:
    with pytest.raises(ProtocolError):
        decode({"$": "value", "type": named, "v": {}}, no_refs)


def test_the_judge_refuses_to_send_what_is_not_plain_data() -> None:
    with pytest.raises(TypeError, match="cannot be sent to the student's process"):
        encode(object())


@pytest.mark.parametrize("stream", [
    struct.pack(">I", MAX_MESSAGE + 1),                    # a length over the limit: refused before reading
    struct.pack(">I", 10) + b"{}",                         # cut short
    b"\x00\x00",                                           # cut inside the length
    struct.pack(">I", 3) + b"[1]",                         # JSON, but not an object
    struct.pack(">I", 4) + b"\xff\xfe{}",                  # not JSON
])
def test_malformed_messages_are_refused(stream: bytes) -> None:
    with pytest.raises(ProtocolError):
        receive(io.BytesIO(stream))


@pytest.mark.parametrize("data", [{"$": "nothing"}, {"$": "tuple", "v": 3}, {"$": "fraction", "v": [1]},
                                  {"$": "complex", "v": [1, 2]}, {"$": "enum", "type": "os:environ", "v": "x"}])
def test_values_that_are_not_values_are_refused(data: Any) -> None:
    with pytest.raises(ProtocolError):
        decode(data, no_refs)


def test_a_students_exception_comes_back_as_the_builtin_it_extends_with_its_name_and_line(tmp_path: Path) -> None:
    student = tmp_path / "answer.py"
    student.write_text("class Refused(ValueError):\n    pass\n\ndef go():\n    raise Refused('no', 3)\n")
    namespace: dict[str, Any] = {}
    exec(compile(student.read_text(), str(student), "exec"), namespace)
    try:
        namespace["go"]()
    except ValueError as error:
        described = describe_error(error, student)
    back = rebuild_error(described)
    assert isinstance(back, ValueError) and type(back).__name__ == "Refused" and back.args == ("no", 3)
    assert back.student_frames == [(5, "raise Refused('no', 3)")]  # type: ignore[attr-defined]
    assert str(rebuild_error(describe_error(KeyError("gone"), student))) == "'gone'"   # not "\"'gone'\""


def test_an_exception_that_is_not_an_exception_class_of_python_becomes_a_plain_exception() -> None:
    back = rebuild_error({"type": "SystemExit", "builtins": ["SystemExit", "BaseException"], "message": "3"})
    assert type(back).__name__ == "SystemExit" and isinstance(back, Exception)   # never a real SystemExit here


def test_the_student_side_reports_a_call_that_changed_its_arguments(tmp_path: Path) -> None:
    class Module:
        @staticmethod
        def sorts(items: list[int]) -> int:
            items.sort()
            return len(items)

        @staticmethod
        def reads(items: list[int]) -> int:
            return sum(items)

    served = Side("student", Module(), tmp_path / "answer.py")
    for name, changed in (("sorts", True), ("reads", False)):
        function = served.answer({"op": "getattr", "id": 0, "name": name})["ok"]
        reply = served.answer({"op": "call", "id": function["id"], "args": encode([[3, 1, 2]]),
                               "kwargs": encode({})})
        assert reply["ok"] == (3 if name == "sorts" else 6) and reply.get("mutated", False) is changed


def test_truth_length_items_and_iteration_of_a_students_object_are_asked_of_its_process(tmp_path: Path) -> None:
    class Empty:
        pass

    class Module:
        def __init__(self) -> None:
            self.plain, self.items = Empty(), {"a": 1}

    served = Side("student", Module(), tmp_path / "answer.py")
    plain = served.answer({"op": "getattr", "id": 0, "name": "plain"})["ok"]
    assert plain["$"] == "ref" and served.answer({"op": "truth", "id": plain["id"]}) == {"ok": True}
    mapping = served.answer({"op": "getattr", "id": 0, "name": "items"})["ok"]
    assert decode(mapping, no_refs) == {"a": 1}         # a dict comes back as a value, not a reference
    assert served.answer({"op": "iterate", "id": 0})["error"]["type"] == "TypeError"   # a module does not iterate


def test_the_students_code_may_call_the_judges_objects_only_on_the_thread_the_judge_called_it_on(
        tmp_path: Path) -> None:
    import threading

    from lab.grading.remote import Remote, StudentEnd

    end = StudentEnd(object(), tmp_path / "answer.py", io.BytesIO(), io.BytesIO())
    clock = Remote(end.side, 0, "judge")          # as the student's end makes a proxy of the judge's clock
    found: list[BaseException] = []

    def elsewhere() -> None:
        try:
            clock()
        except RuntimeError as error:
            found.append(error)

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join(30)
    assert found and "only be used on the thread the grader called your code on" in str(found[0])


def test_an_exception_of_the_judges_object_comes_back_through_the_students_code_as_itself(tmp_path: Path) -> None:
    """The judge's clock raises its own failure inside the student's call; when the student's code lets it through,
    the judge gets that very exception back (its message written for the student), not a copy of another type."""

    class Refusal(Exception):
        pass

    def clock() -> float:
        raise Refusal("your bucket read the clock too often")

    judge = Side("judge")
    reference = judge.refer(clock)

    class Answer:
        """The student's code: reads the clock (through the judge) and lets whatever it raises through."""

        def take(self) -> None:
            student.reply_value(judge.answer({"op": "call", "id": reference["id"], "args": [], "kwargs":
                                              encode({})}))

    student = Side("student", Answer(), tmp_path / "answer.py")
    reply = student.answer({"op": "call", "id": 0, "method": "take", "args": [], "kwargs": encode({})})
    with pytest.raises(Refusal) as back:
        judge.reply_value(reply)
    assert str(back.value) == "your bucket read the clock too often"


@pytest.mark.parametrize("request_", [
    {"op": "getattr", "name": "__class__"},
    {"op": "getattr", "name": "now"},
    {"op": "setattr", "name": "now", "value": 100.0},
    {"op": "call", "method": "new_call", "args": [], "kwargs": {"$": "dict", "v": []}},
    {"op": "iterate"},
])
def test_the_judges_objects_can_only_be_called_whatever_the_student_sends(request_: dict[str, Any]) -> None:
    """A clock the judge hands the student's code must not lead to its class, its module or its counters: the
    student's process can write any request it likes to the judge, not only the proxy's."""

    class Clock:
        now = 5.0

        def __call__(self) -> float:
            return self.now

        def new_call(self) -> None:
            raise AssertionError("reached the judge's method")

    judge = Side("judge")
    clock = Clock()
    reference = judge.refer(clock)
    reply = judge.answer({**request_, "id": reference["id"], "owner": "judge"})
    assert reply["error"]["type"] == "AttributeError" and "can only be called" in reply["error"]["message"]
    assert clock.now == 5.0
    assert judge.answer({"op": "call", "id": reference["id"], "args": [], "kwargs": encode({})}) == {"ok": 5.0}

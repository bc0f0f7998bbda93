"""The student's code in a process of its own, driven by a judge in another: the judge holds the student's module,
classes and objects as proxies (`Remote`), and every use of one (an attribute, a call, `len`, iteration) is a
request over a pipe, answered with plain data. Nothing the student's process sends can run in the judge's: values
come back as JSON (numbers, strings, lists, tuples, dicts, sets, bytes, and the lab's own value types: frozen
dataclasses, named tuples and enums, rebuilt field by field without running their code); anything else stays in the
student's process and comes back as a new proxy. An exception raised there comes back as the same builtin exception
type (a class of the student's own keeps its name and its builtin base), with the lines of the student's file it
passed through.

    host = Host.start(...)                       # lab.grading.student_host in a child process
    module = host.module()                       # Remote: the student's module
    manager = module.OffsetManager(0)            # two requests: the attribute, then the call
    manager.add_to_emitted(3)

The wire: each message is a 4-byte big-endian length then that many bytes of JSON. Requests (judge to student):
`getattr`, `setattr`, `call`, `iterate` (the whole iteration as one list), `repr`, `truth`. Replies: {"ok": value}
or {"error": {...}}, with "mutated": true when a call changed the arguments it was given (the judge's own copies
cannot show that: the student's process checks its copies after the call).
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
import math
import struct
import sys
import traceback
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import IO, Any

MAX_MESSAGE = 64 << 20      # bytes of one message: a larger answer is refused, not read
MAX_DEPTH = 200             # nesting of one value
ITERATION_CAP = 1_000_000   # items one iteration may return


class ProtocolError(Exception):
    """The other side sent something that is not a message of this protocol."""


class Gone(Exception):
    """The student's process ended (or was stopped) while the judge waited for it."""


# --- the wire -----------------------------------------------------------------------------------------------------
def send(stream: IO[bytes], message: dict[str, Any]) -> None:
    data = json.dumps(message, separators=(",", ":"), allow_nan=False).encode()
    if len(data) > MAX_MESSAGE:
        raise ProtocolError(f"a message of {len(data) >> 20} MiB is over the {MAX_MESSAGE >> 20} MiB limit")
    stream.write(struct.pack(">I", len(data)) + data)
    stream.flush()


def receive(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message; None at the end of the stream. Raises ProtocolError on anything else."""
    header = stream.read(4)
    if not header:
        return None
    if len(header) < 4:
        raise ProtocolError("the stream ended inside a message's length")
    (size,) = struct.unpack(">I", header)
    if size > MAX_MESSAGE:
        raise ProtocolError(f"a message claims {size} bytes, over the {MAX_MESSAGE >> 20} MiB limit")
    data = stream.read(size)
    if len(data) < size:
        raise ProtocolError("the stream ended inside a message")
    try:
        message = json.loads(data)
    except ValueError as error:
        raise ProtocolError(f"a message is not JSON: {error}") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message is not a JSON object")
    return message


# --- values -------------------------------------------------------------------------------------------------------
def _value_type(kind: type) -> bool:
    """The lab's own plain value types, sent by value: its frozen dataclasses, named tuples and enums."""
    if not getattr(kind, "__module__", "").startswith("lab."):
        return False
    frozen = dataclasses.is_dataclass(kind) and kind.__dataclass_params__.frozen  # type: ignore[attr-defined]
    return bool(frozen) or issubclass(kind, enum.Enum) or (issubclass(kind, tuple) and hasattr(kind, "_fields"))


def encode(value: Any, refer: Callable[[Any], dict[str, Any]] | None = None, depth: int = 0) -> Any:
    """`value` as JSON data. What is not plain data is passed to `refer` (which returns a reference to it); without
    `refer` (the judge's side), such a value is refused with TypeError."""
    if depth > MAX_DEPTH:
        raise ValueError(f"a value nested deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int) and type(value) is int:
        return value
    if isinstance(value, float) and type(value) is float:
        return value if math.isfinite(value) else {"$": "float", "v": repr(value)}
    if isinstance(value, Remote):
        return {"$": "ref", "id": value._remote_id}
    kind = type(value)
    if kind is list:
        return [encode(item, refer, depth + 1) for item in value]
    if kind is tuple:
        return {"$": "tuple", "v": [encode(item, refer, depth + 1) for item in value]}
    if kind is dict:
        pairs = [[encode(k, refer, depth + 1), encode(v, refer, depth + 1)] for k, v in value.items()]
        return {"$": "dict", "v": pairs}
    if kind in (set, frozenset):
        return {"$": kind.__name__, "v": [encode(item, refer, depth + 1) for item in value]}
    if kind in (bytes, bytearray):
        return {"$": "bytes", "v": base64.b64encode(value).decode()}
    if kind is Fraction:
        return {"$": "fraction", "v": [value.numerator, value.denominator]}
    if _value_type(kind):
        name = f"{kind.__module__}:{kind.__qualname__}"
        if isinstance(value, enum.Enum):
            return {"$": "enum", "type": name, "v": value.name}
        if isinstance(value, tuple):
            return {"$": "value", "type": name, "v": [encode(item, refer, depth + 1) for item in value]}
        fields = {f.name: encode(getattr(value, f.name), refer, depth + 1) for f in dataclasses.fields(value)}
        return {"$": "value", "type": name, "v": fields}
    if refer is None:
        raise TypeError(f"{kind.__name__} cannot be sent to the student's process (only plain data can)")
    return refer(value)


def _known_type(name: str) -> type:
    """A lab value type named by the other side: only one already imported here, never an import."""
    module_name, _, qualname = name.partition(":")
    module = sys.modules.get(module_name)
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if not module_name.startswith("lab.") or not isinstance(found, type) or not _value_type(found):
        raise ProtocolError(f"{name!r} is not one of the lab's value types")
    return found


def decode(data: Any, resolve: Callable[[dict[str, Any]], Any], depth: int = 0) -> Any:
    """The value `data` stands for; references are given to `resolve`."""
    if depth > MAX_DEPTH:
        raise ProtocolError(f"a value nested deeper than {MAX_DEPTH} levels")
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [decode(item, resolve, depth + 1) for item in data]
    if not isinstance(data, dict):
        raise ProtocolError(f"not a value: {type(data).__name__}")
    tag, inner = data.get("$"), data.get("v")
    if tag == "ref":
        return resolve(data)
    if tag == "float" and inner in ("nan", "inf", "-inf"):
        return float(inner)
    if tag in ("tuple", "set", "frozenset") and isinstance(inner, list):
        items = [decode(item, resolve, depth + 1) for item in inner]
        return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and isinstance(inner, list):
        return {decode(k, resolve, depth + 1): decode(v, resolve, depth + 1) for k, v in inner}
    if tag == "bytes" and isinstance(inner, str):
        return base64.b64decode(inner)
    if tag == "fraction" and isinstance(inner, list) and len(inner) == 2:
        return Fraction(int(inner[0]), int(inner[1]))
    if tag == "enum":
        enumeration: Any = _known_type(str(data.get("type")))
        return enumeration[str(inner)]
    if tag == "value":
        kind = _known_type(str(data.get("type")))
        if isinstance(inner, list):
            return kind(*(decode(item, resolve, depth + 1) for item in inner))
        if not isinstance(inner, dict):
            raise ProtocolError("a value's fields are not an object")
        built: Any = object.__new__(kind)
        for field in dataclasses.fields(kind):
            if field.name in inner:
                object.__setattr__(built, field.name, decode(inner[field.name], resolve, depth + 1))
        return built
    raise ProtocolError(f"not a value: {json.dumps(data)[:80]}")


def _no_references(data: dict[str, Any]) -> Any:
    raise ProtocolError("an exception's arguments hold a reference")


# --- exceptions ----------------------------------------------------------------------------------------------------
def describe_error(error: BaseException, student_file: Path) -> dict[str, Any]:
    """An exception as data: its class's name, the builtin classes it extends, its message, and the lines of the
    student's file its traceback passed through."""
    frames = [[f.lineno, (f.line or "").strip()] for f in traceback.extract_tb(error.__traceback__)
              if Path(f.filename) == student_file]
    builtin = [k.__name__ for k in type(error).__mro__ if k.__module__ == "builtins"]
    described = {"type": type(error).__name__[:100], "builtins": builtin, "message": str(error)[:4000],
                 "frames": frames}
    scalars = (str, int, float, bool, type(None))
    if len(error.args) <= 8 and all(type(a) in scalars for a in error.args):
        # the arguments themselves where they are plain: str(KeyError('x')) is "'x'", not "x"
        described["args"] = encode([a[:4000] if isinstance(a, str) else a for a in error.args])
    return described


def rebuild_error(data: dict[str, Any]) -> BaseException:
    """The exception the student's code raised, as an instance of a class with its name that extends the first
    builtin exception class it extended (so `except ValueError` still catches the student's own ValueError)."""
    base: type[BaseException] = Exception
    for name in data.get("builtins", []):
        found = getattr(__import__("builtins"), str(name), None)
        if isinstance(found, type) and issubclass(found, Exception):
            base = found
            break
    name = str(data.get("type", "Exception"))
    kind: type[BaseException] = base if base.__name__ == name else type(name, (base,), {"__module__": "student"})
    error: BaseException
    try:
        args = decode(data["args"], _no_references) if "args" in data else [str(data.get("message", ""))]
        error = kind(*args) if isinstance(args, list) else kind(str(data.get("message", "")))
    except (TypeError, ValueError, ProtocolError):  # a builtin whose constructor wants more (UnicodeDecodeError)
        error = Exception(str(data.get("message", "")))
    error.student_frames = [(int(n), str(line)) for n, line in data.get("frames", [])]  # type: ignore[attr-defined]
    return error


# --- the judge's side ------------------------------------------------------------------------------------------------
class Remote:
    """An object that lives in the student's process; every use is a request to it."""

    __slots__ = ("_remote_host", "_remote_id", "_remote_type")

    def __init__(self, host: Any, ident: int, kind: str) -> None:
        object.__setattr__(self, "_remote_host", host)
        object.__setattr__(self, "_remote_id", ident)
        object.__setattr__(self, "_remote_type", kind)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)      # Python's own probing (copy, pickle, ...) stays here
        return self._remote_host.request({"op": "getattr", "id": self._remote_id, "name": name})

    def __setattr__(self, name: str, value: Any) -> None:
        self._remote_host.request({"op": "setattr", "id": self._remote_id, "name": name, "value": encode(value)})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._remote_host.request({"op": "call", "id": self._remote_id, "args": encode(list(args)),
                                          "kwargs": encode(dict(kwargs))})

    def __iter__(self) -> Iterator[Any]:
        return iter(self._remote_host.request({"op": "iterate", "id": self._remote_id}))

    def __bool__(self) -> bool:
        return bool(self._remote_host.request({"op": "truth", "id": self._remote_id}))

    def __len__(self) -> int:
        found = self._remote_host.request({"op": "call", "id": self._remote_id, "method": "__len__",
                                           "args": [], "kwargs": {"$": "dict", "v": []}})
        if not isinstance(found, int) or found < 0:
            raise TypeError(f"len() of your {self._remote_type} gave {found!r}, not a count")
        return found

    def __getitem__(self, key: Any) -> Any:
        return self._remote_host.request({"op": "call", "id": self._remote_id, "method": "__getitem__",
                                          "args": encode([key]), "kwargs": {"$": "dict", "v": []}})

    def __contains__(self, item: Any) -> bool:
        return bool(self._remote_host.request({"op": "call", "id": self._remote_id, "method": "__contains__",
                                               "args": encode([item]), "kwargs": {"$": "dict", "v": []}}))

    def __repr__(self) -> str:
        shown = self._remote_host.request({"op": "repr", "id": self._remote_id})
        return str(shown)[:2000]

    def __deepcopy__(self, memo: dict[int, Any]) -> Remote:
        return self                         # the object is the student's: the judge's copies are references to it

    def __copy__(self) -> Remote:
        return self

    def __reduce__(self) -> Any:
        raise TypeError("an object of the student's process cannot be pickled")


# --- the student's side --------------------------------------------------------------------------------------------
class Served:
    """The student's process: answers the judge's requests about `root` (the student's module) and every object
    handed out since, by number."""

    def __init__(self, root: Any, student_file: Path) -> None:
        self.objects: dict[int, Any] = {0: root}
        self.numbers: dict[int, int] = {id(root): 0}
        self.student_file = student_file

    def refer(self, value: Any) -> dict[str, Any]:
        number = self.numbers.get(id(value))
        if number is None or self.objects.get(number) is not value:
            number = len(self.objects)
            self.objects[number] = value
            self.numbers[id(value)] = number
        kind = value.__name__ if isinstance(value, type) else type(value).__name__
        return {"$": "ref", "id": number, "type": str(kind)[:100]}

    def refer_bare(self, value: Any) -> dict[str, Any]:
        """A reference as the judge writes one (no type name): for comparing arguments before and after a call."""
        return {"$": "ref", "id": self.refer(value)["id"]}

    def resolve(self, data: dict[str, Any]) -> Any:
        number = data.get("id")
        if not isinstance(number, int) or number not in self.objects:
            raise ProtocolError(f"no object {number!r} here")
        return self.objects[number]

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        target = self.resolve(request)
        try:
            if op == "getattr":
                return {"ok": encode(getattr(target, str(request["name"])), self.refer)}
            if op == "setattr":
                setattr(target, str(request["name"]), decode(request["value"], self.resolve))
                return {"ok": None}
            if op == "repr":
                return {"ok": repr(target)[:2000]}
            if op == "truth":
                return {"ok": bool(target)}
            if op == "iterate":
                items = []
                for item in target:
                    items.append(item)
                    if len(items) > ITERATION_CAP:
                        raise ValueError(f"iterating gave more than {ITERATION_CAP} items")
                return {"ok": encode(items, self.refer)}
            if op == "call":
                args, kwargs = decode(request["args"], self.resolve), decode(request["kwargs"], self.resolve)
                if not isinstance(args, list) or not isinstance(kwargs, dict):
                    raise ProtocolError("a call's arguments are not a list and a dict")
                function = getattr(target, str(request["method"])) if "method" in request else target
                result = function(*args, **kwargs)
                reply: dict[str, Any] = {"ok": encode(result, self.refer)}
                if encode([args, kwargs], self.refer_bare) != [request["args"], request["kwargs"]]:
                    reply["mutated"] = True
                return reply
        except ProtocolError:
            raise
        except Exception as error:
            return {"error": describe_error(error, self.student_file)}
        raise ProtocolError(f"no operation {op!r}")

    def serve(self, requests: IO[bytes], replies: IO[bytes]) -> None:
        while (request := receive(requests)) is not None:
            send(replies, self.answer(request))

"""The feedback channel: how a finished micro-batch's numbers reach the reader that plans the next one.

Spark Streaming's `RateController` heard about each finished batch on the driver (`onBatchCompleted`) and handed the
numbers to its estimator in the same JVM
(streaming/src/main/scala/org/apache/spark/streaming/scheduler/RateController.scala).
A Python data source has no such luck: three processes are involved.

    driver (your Python)            the JVM                          planner (a Python worker the JVM starts)
    StreamingQueryListener  <--  query progress events               DataSourceStreamReader: latestOffset, partitions,
      writes <run id>.json  ------------------------------------->   commit; reads the files and feeds the estimator

`ProgressListener` (installed for you by `lab.spark.session()`, or by `install(spark)`) writes the last batches of every
query into one small JSON file per query run, atomically (a temporary file renamed over the old one), in a directory
both processes can see (they run on the same host: Spark starts the planner beside the driver). The reader matches a
progress entry to a batch it planned by the batch's end offsets (and start offsets, when Spark reports them), so it
needs no query id.

The feedback is one batch old, as it was in Spark Streaming: Spark asks the reader for batch n+1's end offsets as soon
as batch n's sink finishes, while the listener hears about batch n a moment later, on the listener bus. So batch n+1 is
usually planned from batch n-1's numbers, and batch n's numbers shape batch n+2.

Each entry carries what the estimator needs (`BatchFeedback`):
- elements: the batch's input rows (from this source);
- processing delay: the time the sink spent on the batch (`durationMs.addBatch`);
- scheduling delay: how late the batch started. A processing-time trigger starts a batch every interval; when a batch
  overruns, the next one starts late, by the previous batch's duration minus the interval, and the records that
  arrived meanwhile are the backlog the PID's integral term works off (Structured Streaming has no batch queue, so
  this replaces DStream's time-in-queue). A longer pause between batches is the stream idling, not lateness;
- time: when the batch finished (start + `durationMs.triggerExecution`).
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

KEEP_BATCHES = 200  # entries per query run kept in its file; the reader needs only the last few


def default_directory() -> Path:
    """Where progress files go unless told otherwise: `LAB_SPARK_FEEDBACK_DIR`, else a per-user temp folder."""
    configured = os.environ.get("LAB_SPARK_FEEDBACK_DIR")
    if configured:
        return Path(configured)
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"lab-spark-feedback-{uid}"


def canonical_offsets(offsets: Any) -> str:
    """One spelling for an offsets object (a dict, or its JSON text): the listener's and the reader's compare equal."""
    if isinstance(offsets, str):
        try:
            offsets = json.loads(offsets)
        except ValueError:
            return str(offsets)
    return json.dumps(offsets, sort_keys=True, separators=(",", ":"))


def epoch_ms(timestamp: str) -> int:
    """Progress timestamps are ISO 8601 in UTC with a trailing Z, e.g. 2026-11-22T03:04:05.123Z."""
    return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1000)


def progress_entry(progress: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a StreamingQueryProgress (as parsed from its JSON) that the reader uses."""
    durations = progress.get("durationMs") or {}
    return {
        "batch_id": int(progress["batchId"]),
        "start_ms": epoch_ms(str(progress["timestamp"])),
        "trigger_ms": int(durations.get("triggerExecution", 0)),
        "add_batch_ms": int(durations.get("addBatch", durations.get("triggerExecution", 0))),
        "sources": [
            {
                "description": source.get("description", ""),
                "start": (canonical_offsets(source["startOffset"])
                          if source.get("startOffset") is not None else None),
                "end": canonical_offsets(source.get("endOffset")),
                "rows": int(source.get("numInputRows", 0)),
            }
            for source in progress.get("sources", [])
        ],
    }


def write_atomically(path: Path, payload: Mapping[str, Any]) -> None:
    """Replace `path` with `payload` as JSON so that a reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(handle, "w") as stream:
            json.dump(payload, stream)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


class ProgressLog:
    """The listener's side, without Spark: keeps the last batches of each run and rewrites the run's file."""

    def __init__(self, directory: Path | None = None, keep: int = KEEP_BATCHES) -> None:
        self.directory = directory or default_directory()
        self.keep = keep
        self._runs: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def record(self, run_id: str, progress: Mapping[str, Any]) -> Path:
        entry = progress_entry(progress)
        with self._lock:
            entries = self._runs.setdefault(run_id, [])
            entries.append(entry)
            del entries[: -self.keep]
            path = self.directory / f"{run_id}.json"
            write_atomically(path, {"run_id": run_id, "batches": list(entries)})
        return path

    def forget(self, run_id: str) -> None:
        with self._lock:
            self._runs.pop(run_id, None)
            (self.directory / f"{run_id}.json").unlink(missing_ok=True)


@dataclass(frozen=True)
class BatchFeedback:
    """One finished batch, as the PID estimator takes it (all times in ms)."""

    start: str | None  # the canonical start offsets (None when Spark's progress has none)
    end: str  # the canonical end offsets: the key the reader planned the batch under
    batch_id: int
    time_ms: int
    elements: int
    processing_delay_ms: int
    scheduling_delay_ms: int


def read_feedback(
    directory: Path,
    planned: Mapping[str, str | None] | Iterable[str],
    batch_interval_ms: int,
    *,
    since_mtime: float = 0.0,
) -> list[BatchFeedback]:
    """Every finished batch, in any run's file newer than `since_mtime`, that matches a planned batch: `planned` maps
    canonical end offsets to canonical start offsets (or is just the ends). An entry matches when its end is planned
    and its start, if both sides know it, is the planned start.

    Sorted by batch id. A file that vanishes or is unreadable (a run that just ended) is skipped: feedback is advisory.
    """
    wanted: dict[str, str | None] = dict(planned) if isinstance(planned, Mapping) else dict.fromkeys(planned)
    found: dict[str, BatchFeedback] = {}
    if not wanted or not directory.is_dir():
        return []
    for path in directory.glob("*.json"):
        try:
            if path.stat().st_mtime < since_mtime:
                continue
            for feedback in _batches_of(json.loads(path.read_text())["batches"], batch_interval_ms):
                if feedback.end not in wanted or feedback.end in found:
                    continue
                start = wanted[feedback.end]
                if start is None or feedback.start is None or start == feedback.start:
                    found[feedback.end] = feedback
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return sorted(found.values(), key=lambda f: f.batch_id)


def _batches_of(entries: list[dict[str, Any]], batch_interval_ms: int) -> Iterator[BatchFeedback]:
    previous: dict[str, Any] | None = None
    for entry in sorted(entries, key=lambda e: int(e["batch_id"])):
        late = 0
        if previous is not None:
            # only the previous batch's overrun delays this one: a longer gap is the stream idling, not lateness
            gap = entry["start_ms"] - previous["start_ms"]
            late = min(gap, previous["trigger_ms"]) - batch_interval_ms
        previous = entry
        for source in entry["sources"]:
            yield BatchFeedback(
                start=source.get("start"),
                end=source["end"],
                batch_id=entry["batch_id"],
                time_ms=entry["start_ms"] + entry["trigger_ms"],
                elements=source["rows"],
                processing_delay_ms=entry["add_batch_ms"],
                scheduling_delay_ms=max(0, late),
            )


def _listener_class() -> type:
    from pyspark.sql.streaming.listener import StreamingQueryListener

    class ProgressListener(StreamingQueryListener):
        """Writes each query run's recent progress for the lab's reader to find (see the module docstring)."""

        def __init__(self, directory: Path | None = None) -> None:
            self.log = ProgressLog(directory)

        def onQueryStarted(self, event: Any) -> None:
            pass

        def onQueryProgress(self, event: Any) -> None:
            try:
                progress = json.loads(event.progress.json)
                self.log.record(str(progress["runId"]), progress)
            except Exception:  # a listener that raises is dropped by Spark; losing one entry is better
                log.exception("could not record a batch's progress for the lab-kafka reader")

        def onQueryIdle(self, event: Any) -> None:
            pass

        def onQueryTerminated(self, event: Any) -> None:
            self.log.forget(str(event.runId))

    return ProgressListener


_installed: dict[int, Any] = {}


def install(spark: SparkSession, directory: Path | None = None) -> Any:
    """Add the progress listener to `spark` (once per session): backpressured `lab-kafka` readers need its feedback."""
    key = id(spark)
    if key not in _installed:
        listener = _listener_class()(directory)
        spark.streams.addListener(listener)
        _installed[key] = listener
    return _installed[key]

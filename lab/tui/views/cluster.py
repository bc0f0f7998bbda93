"""Cluster view: every topic and partition with log start offset, high watermark, log end offset and segments; the
selected partition's segments and their index entries below.

On the embedded broker the numbers come from the logs themselves (read on the broker's thread); on docker or external
clusters from the Admin API (watermarks: log start and high watermark), read in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Static

from lab.broker.events import Append, Event, HighWatermarkMoved, LogStartOffsetMoved, SegmentDeleted, SegmentRolled
from lab.tui.views.base import LabView

LOG_EVENTS = (Append, HighWatermarkMoved, LogStartOffsetMoved, SegmentRolled, SegmentDeleted)


SHOWN_INDEX_ENTRIES = 12


@dataclass(frozen=True)
class PartitionRow:
    topic: str
    partition: int
    log_start: int
    high_watermark: int
    log_end: int | None                       # None: not known off the embedded broker
    segments: tuple[SegmentInfo, ...] = ()


@dataclass(frozen=True)
class SegmentInfo:
    base_offset: int
    size: int
    index: tuple[tuple[int, int], ...]      # the offset index: (offset, byte position), every index.interval.bytes
    time_entries: int


def embedded_rows(broker: Any) -> list[PartitionRow]:
    """Read every partition's offsets and segments on the broker's thread (internal topics left out)."""
    def read(b: Any) -> list[PartitionRow]:
        rows = []
        for name, meta in sorted(b.logs.topics().items()):
            if name.startswith("__"):
                continue
            for partition in range(meta.num_partitions):
                log = b.logs.get_log(name, partition)
                segments = tuple(SegmentInfo(s.base_offset, s.size, tuple(
                    s.offset_index.entry(i) for i in range(min(s.offset_index.entries, SHOWN_INDEX_ENTRIES))),
                    s.time_index.entries) for s in log.segments)
                rows.append(PartitionRow(name, partition, log.log_start_offset, log.high_watermark,
                                         log.log_end_offset, segments))
        return rows
    result: list[PartitionRow] = broker.call(read)
    return result


def admin_rows(bootstrap: str) -> list[PartitionRow]:
    """The same from any cluster, through the Admin API and a consumer's watermark queries."""
    from confluent_kafka import Consumer, TopicPartition

    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "lab-cluster-view"})
    try:
        metadata = reader.list_topics(timeout=10)
        rows = []
        for name in sorted(metadata.topics):
            if name.startswith("__"):
                continue
            for partition in sorted(metadata.topics[name].partitions):
                low, high = reader.get_watermark_offsets(TopicPartition(name, partition), timeout=10, cached=False)
                rows.append(PartitionRow(name, partition, low, high, None))
        return rows
    finally:
        reader.close()


class ClusterView(LabView):
    NAME = "cluster"
    TITLE = "Topics and partitions"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("i", "toggle_index", "Index entries")]

    def compose(self) -> ComposeResult:
        yield Static(self.TITLE, classes="view-title")
        yield Static("", id="cluster-note", classes="view-note")
        table: DataTable[str] = DataTable(id="partitions", cursor_type="row", zebra_stripes=True)
        table.add_columns("topic", "partition", "log start", "high watermark", "log end", "segments")
        yield table
        yield Static("", id="segments")

    def __init__(self, env: Any = None, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self.rows: list[PartitionRow] = []
        self.dirty = True
        self.show_index = False
        self._reading = False

    def on_mount(self) -> None:
        self.refresh_view()

    def action_toggle_index(self) -> None:
        self.show_index = not self.show_index
        self._show_segments()

    def absorb(self, events: list[Event]) -> None:
        if any(isinstance(e, LOG_EVENTS) for e in events):
            self.dirty = True

    def refresh_view(self) -> None:
        target = self.target
        if target is None or self._reading:
            return
        if target.broker is not None:
            if self.dirty:
                self.dirty = False
                self.show(embedded_rows(target.broker))
            return
        self._reading = True
        self.run_worker(lambda: self._read_admin(target.bootstrap), thread=True, group="cluster", exit_on_error=False)

    def _read_admin(self, bootstrap: str) -> None:
        try:
            rows = admin_rows(bootstrap)
        finally:
            self._reading = False
        self.app.call_from_thread(self.show, rows)

    def show(self, rows: list[PartitionRow]) -> None:
        self.rows = rows
        table = self.query_one("#partitions", DataTable)
        cursor = table.cursor_row
        table.clear()
        for row in rows:
            table.add_row(row.topic, str(row.partition), str(row.log_start), str(row.high_watermark),
                          "-" if row.log_end is None else str(row.log_end),
                          str(len(row.segments)) if row.log_end is not None else "-")
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))
        note = "" if self.embedded else self.unavailable_note("The log end offset and the segments")
        self.query_one("#cluster-note", Static).update(note or f"{len(rows)} partitions")
        self._show_segments()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_segments()

    def _show_segments(self) -> None:
        table = self.query_one("#partitions", DataTable)
        detail = self.query_one("#segments", Static)
        if not self.rows or table.cursor_row >= len(self.rows):
            detail.update("")
            return
        row = self.rows[table.cursor_row]
        if row.log_end is None:
            detail.update("")
            return
        lines = [f"{row.topic}-{row.partition}: {len(row.segments)} segment(s)"
                 + ("" if self.show_index else "   (i: show the offset index entries)")]
        for segment in row.segments:
            lines.append(f"  {segment.base_offset:020d}.log  {segment.size} bytes · .index {len(segment.index)}"
                         f"{'+' if len(segment.index) == SHOWN_INDEX_ENTRIES else ''} entries · .timeindex "
                         f"{segment.time_entries} entries")
            if self.show_index:
                lines += [f"      offset {offset} -> byte {position}" for offset, position in segment.index]
        detail.update("\n".join(lines))

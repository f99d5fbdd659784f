"""FileStreamSource: each line of a file (or stdin) becomes a record (Kafka's ``FileStreamSourceConnector``).

Offsets: the source partition is ``{"filename": <file>}`` and the offset
``{"position": <byte offset just after the line>}``, so a restarted task seeks there and
resumes exactly after the last committed line: no line is lost or repeated at the source.
Reading stdin tracks no offsets (``None`` partition and offset) and cannot be altered.

Lines end at ``\\n``, ``\\r\\n`` or ``\\r``; a line is emitted only once its terminator has
been read (a trailing ``\\r`` waits for the next byte, which may be ``\\n``). Values are
STRING, decoded as UTF-8 (invalid bytes replaced), keys null, timestamps wall-clock.
"""

from __future__ import annotations

import logging
import os
import select
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any, BinaryIO

from seaway.connect.api import (
    NO_DEFAULT,
    ConfigDef,
    ConfigType,
    ConnectError,
    ExactlyOnceSupport,
    Importance,
    NonEmptyString,
    Range,
    Schema,
    SourceConnector,
    SourceRecordBatch,
    SourceTask,
    Task,
)
from seaway.connectors.file._version import VERSION

__all__ = ["CONFIG_DEF", "FileStreamSourceConnector", "FileStreamSourceTask"]

log = logging.getLogger(__name__)

FILE_CONFIG = "file"
TOPIC_CONFIG = "topic"
TASK_BATCH_SIZE_CONFIG = "batch.size"
DEFAULT_TASK_BATCH_SIZE = 2000
FILENAME_FIELD = "filename"
POSITION_FIELD = "position"

CONFIG_DEF = (
    ConfigDef()
    .define(FILE_CONFIG, ConfigType.STRING, None, None, Importance.HIGH,
            "Source filename. If not specified, the standard input will be used")
    .define(TOPIC_CONFIG, ConfigType.STRING, NO_DEFAULT, NonEmptyString(), Importance.HIGH,
            "The topic to publish data to")
    .define(TASK_BATCH_SIZE_CONFIG, ConfigType.INT, DEFAULT_TASK_BATCH_SIZE, Range.at_least(1), Importance.LOW,
            "The maximum number of records the source task can read from the file each time it is polled")
)

_READ_SIZE = 1 << 20  # bytes read per poll when the buffer holds fewer than batch.size lines
_IDLE_WAIT = 1.0  # seconds, as Kafka's task waits when no data is available


class FileStreamSourceConnector(SourceConnector):
    """Reads one file (or stdin) with exactly one task, whatever ``tasks.max`` says."""

    def __init__(self) -> None:
        self._props: dict[str, str] = {}

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        CONFIG_DEF.parse(props)  # fail the connector early on a bad config
        self._props = dict(props)

    def task_class(self) -> type[Task]:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]  # only one reader of a stream makes sense

    def stop(self) -> None:
        """Nothing to release: the task owns the file."""

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def exactly_once_support(self, connector_config: Mapping[str, str]) -> ExactlyOnceSupport | None:
        """A file can be re-read from a stored position; stdin cannot."""
        filename = CONFIG_DEF.parse(connector_config)[FILE_CONFIG]
        return ExactlyOnceSupport.SUPPORTED if filename else ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(self, connector_config: Mapping[str, str],
                      offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]]) -> bool:
        """Accept new positions for files (checked against the file when the task starts)."""
        if not CONFIG_DEF.parse(connector_config)[FILE_CONFIG]:
            raise ConnectError(f"Offsets cannot be modified if the '{FILE_CONFIG}' configuration is unspecified. "
                               "This is because stdin is used for input and offsets are not tracked.")
        for partition, offset in offsets:
            if offset is None:
                continue  # tombstones are always fine: they clean up garbage
            if POSITION_FIELD not in offset:
                raise ConnectError(f"Offset objects should either be null or contain the key '{POSITION_FIELD}'")
            position = offset[POSITION_FIELD]
            if not isinstance(position, int) or isinstance(position, bool):
                raise ConnectError(f"The value for the '{POSITION_FIELD}' key in the offset is expected to be "
                                   "a Long value")
            if position < 0:
                raise ConnectError(f"The value for the '{POSITION_FIELD}' key in the offset should be a "
                                   "non-negative value")
            if partition is None:
                raise ConnectError("Partition objects cannot be null")
            if FILENAME_FIELD not in partition:
                raise ConnectError(f"Partition objects should contain the key '{FILENAME_FIELD}'")
        return True


class _LineOffsets(Sequence[Mapping[str, Any]]):
    """The source offset after each line of one poll, ``{"position": ...}``, computed on access.

    The runtime reads only the last one unless SMTs or ``commit_record`` need every record, so
    lines are kept as running sums of their lengths (one C-level ``accumulate`` per read),
    not as one dict per line.
    """

    __slots__ = ("_count", "_pieces")

    def __init__(self) -> None:
        # (lines before this piece, base, running sums, bytes per terminator): the line j of a
        # piece ends at base + sums[j] + step * (j + 1)
        self._pieces: list[tuple[int, int, list[int], int]] = []
        self._count = 0

    def add_lines(self, position: int, lines: list[bytes]) -> None:
        """Lines that follow ``position``, each ended by one ``\\n``."""
        self._pieces.append((self._count, position, list(accumulate(map(len, lines))), 1))
        self._count += len(lines)

    def add_ends(self, ends: list[int]) -> None:
        """Lines whose end positions are known."""
        if ends:
            self._pieces.append((self._count, 0, ends, 0))
            self._count += len(ends)

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: int) -> Mapping[str, Any]:  # type: ignore[override]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        for first, base, sums, step in reversed(self._pieces):
            if index >= first:
                j = index - first
                return {POSITION_FIELD: base + sums[j] + step * (j + 1)}
        raise IndexError(index)  # unreachable: the first piece starts at 0


class FileStreamSourceTask(SourceTask):
    """Reads lines after the stored position; ``poll`` returns up to ``batch.size`` records.

    ``poll`` runs on the task thread; ``stop`` (another thread) only sets an event, which also
    cuts short the one-second wait for more data. The file is closed by ``stop`` under the
    same lock ``poll`` holds while reading, so a read never races a close.
    """

    def __init__(self) -> None:
        self._filename: str | None = None
        self._topic = ""
        self._batch_size = DEFAULT_TASK_BATCH_SIZE
        self._stream: BinaryIO | None = None
        self._stdin_fd: int | None = None
        self._buffer = b""
        self._position = 0  # file offset of self._buffer[0]
        self._partition: dict[str, Any] | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()

    def version(self) -> str:
        return VERSION

    def start(self, props: Mapping[str, str]) -> None:
        config = CONFIG_DEF.parse(props)
        self._filename = config[FILE_CONFIG] or None
        self._topic = config[TOPIC_CONFIG]
        self._batch_size = config[TASK_BATCH_SIZE_CONFIG]
        if self._filename is None:
            self._stdin_fd = sys.stdin.fileno()
        else:
            self._partition = {FILENAME_FIELD: self._filename}

    # -- reading ------------------------------------------------------------------------------
    def _open(self) -> bool:
        """Open the file at the stored position; False (after logging) while it does not exist."""
        assert self._filename is not None and self._partition is not None
        try:
            stream = open(self._filename, "rb", buffering=0)  # noqa: SIM115 (kept open across polls)
        except FileNotFoundError:
            log.warning("Couldn't find file %s for FileStreamSourceTask, sleeping to wait for it to be created",
                        self._filename)
            return False
        except OSError as exc:
            raise ConnectError(f"Error while trying to open file {self._filename}: {exc}") from exc
        stored = self.context.offset_storage_reader().offset(self._partition)
        position = 0
        if stored is not None:
            found = stored.get(POSITION_FIELD)
            if found is not None and (not isinstance(found, int) or isinstance(found, bool)):
                stream.close()
                raise ConnectError("Offset position is the incorrect type")
            position = found or 0
            log.debug("Found previous offset, skipping to file offset %d", position)
            stream.seek(position)
        self._stream, self._position, self._buffer = stream, position, b""
        return True

    def _read(self) -> bytes:
        """Whatever is available now (maybe nothing); never blocks for long."""
        if self._stdin_fd is not None:
            ready, _, _ = select.select([self._stdin_fd], [], [], 0)
            return os.read(self._stdin_fd, _READ_SIZE) if ready else b""
        assert self._stream is not None
        return self._stream.read(_READ_SIZE) or b""

    def _extract(self, values: list[str], offsets: _LineOffsets) -> None:
        """Move complete lines from the buffer into ``values`` (up to the batch size).

        The common case (no ``\\r`` in the buffer) splits the whole batch with one
        ``bytes.split`` and records where the lines end as one running sum of their lengths;
        buffers holding a ``\\r`` take the line-by-line scan.
        """
        buf = self._buffer
        limit = self._batch_size - len(values)
        if limit <= 0 or not buf:
            return
        if b"\r" in buf:
            self._extract_scan(values, offsets)
            return
        lines = buf.split(b"\n", limit)
        rest = lines.pop()  # the incomplete last line, or what lies beyond the batch
        if not lines:
            return
        values += [line.decode("utf-8", "replace") for line in lines]
        offsets.add_lines(self._position, lines)
        self._position += len(buf) - len(rest)
        self._buffer = rest

    def _extract_scan(self, values: list[str], offsets: _LineOffsets) -> None:
        """``_extract`` for buffers with ``\\r``: lines end at ``\\n``, ``\\r\\n`` or ``\\r``."""
        buf, start, end = self._buffer, 0, len(self._buffer)
        limit = self._batch_size
        ends: list[int] = []
        while len(values) < limit:
            newline = buf.find(b"\n", start)
            stop_at = newline if newline >= 0 else end
            cr = buf.find(b"\r", start, stop_at)
            if cr >= 0:
                if cr + 1 >= end:
                    break  # a trailing \r: the next byte may be its \n
                line_end, next_start = cr, (cr + 2 if buf[cr + 1] == 0x0A else cr + 1)
            elif newline >= 0:
                line_end, next_start = newline, newline + 1
            else:
                break
            values.append(buf[start:line_end].decode("utf-8", "replace"))
            start = next_start
            ends.append(self._position + start)
        offsets.add_ends(ends)
        self._buffer = buf[start:]
        self._position += start

    def poll(self) -> SourceRecordBatch | None:
        with self._lock:
            if self._stopping.is_set():
                return None
            if self._stream is None and self._stdin_fd is None and not self._open():
                opened = False
            else:
                opened = True
                values: list[str] = []
                offsets = _LineOffsets()
                self._extract(values, offsets)
                while len(values) < self._batch_size:
                    chunk = self._read()
                    if not chunk:
                        break
                    self._buffer += chunk
                    self._extract(values, offsets)
                if values:
                    partition = self._partition
                    return SourceRecordBatch(self._topic, values, value_schema=Schema.STRING_SCHEMA,
                                             source_partition=partition,
                                             source_offsets=None if partition is None else offsets,
                                             timestamp=int(time.time() * 1000))
        if not opened or not self._stopping.is_set():
            self._stopping.wait(_IDLE_WAIT)
        return None

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            if self._stream is not None:
                self._stream.close()
                self._stream = None

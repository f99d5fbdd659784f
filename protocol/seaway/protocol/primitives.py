"""Sans-IO readers and writers for the Kafka protocol's primitive types.

Generated message classes (``seaway.protocol.messages``) call these with a ``flexible``
flag: flexible versions (KIP-482) use compact (unsigned-varint length + 1) strings, bytes
and arrays, and end every struct with tagged fields. Classic versions use int16/int32
lengths where -1 means null.

The :class:`Reader` works on a memoryview and never copies record data: a ``records``
field decodes to a memoryview slice of the request buffer. The :class:`Writer` lets a
``records`` value be an external chunk (anything with ``__len__`` that is not a bytes-like
object, e.g. a segment file region) which the transport writes itself with sendfile, so a
fetch response never copies log bytes through Python.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any, Protocol, runtime_checkable

from seaway.errors import SeawayError

__all__ = [
    "ZERO_UUID",
    "CorruptFrameError",
    "Reader",
    "RecordsChunk",
    "RecordsValue",
    "Writer",
]

ZERO_UUID = uuid.UUID(int=0)

# Readers and writers have methods named after the types they read (bool, bytes);
# these aliases keep the builtins reachable inside those classes.
_Bool = bool
_Bytes = bytes

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")


class CorruptFrameError(SeawayError):
    """A request or response body that does not parse; the connection must be closed."""


@runtime_checkable
class RecordsChunk(Protocol):
    """Record bytes the encoder does not copy: the transport writes them (sendfile)."""

    def __len__(self) -> int: ...


RecordsValue = bytes | bytearray | memoryview | RecordsChunk | None


class Reader:
    """Reads primitives from ``buf`` starting at ``pos``; raises CorruptFrameError past the end."""

    __slots__ = ("buf", "end", "pos")

    def __init__(self, buf: bytes | bytearray | memoryview, pos: int = 0) -> None:
        self.buf = memoryview(buf)
        self.pos = pos
        self.end = len(self.buf)

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def _need(self, n: int) -> None:
        if n < 0 or self.pos + n > self.end:
            raise CorruptFrameError(f"need {n} bytes at offset {self.pos}, have {self.end - self.pos}")

    def bool(self) -> bool:
        self._need(1)
        v = self.buf[self.pos]
        self.pos += 1
        return v != 0

    def int8(self) -> int:
        self._need(1)
        (v,) = _I8.unpack_from(self.buf, self.pos)
        self.pos += 1
        return int(v)

    def int16(self) -> int:
        self._need(2)
        (v,) = _I16.unpack_from(self.buf, self.pos)
        self.pos += 2
        return int(v)

    def uint16(self) -> int:
        self._need(2)
        (v,) = _U16.unpack_from(self.buf, self.pos)
        self.pos += 2
        return int(v)

    def int32(self) -> int:
        self._need(4)
        (v,) = _I32.unpack_from(self.buf, self.pos)
        self.pos += 4
        return int(v)

    def uint32(self) -> int:
        self._need(4)
        (v,) = _U32.unpack_from(self.buf, self.pos)
        self.pos += 4
        return int(v)

    def int64(self) -> int:
        self._need(8)
        (v,) = _I64.unpack_from(self.buf, self.pos)
        self.pos += 8
        return int(v)

    def float64(self) -> float:
        self._need(8)
        (v,) = _F64.unpack_from(self.buf, self.pos)
        self.pos += 8
        return float(v)

    def uuid(self) -> uuid.UUID:
        self._need(16)
        v = uuid.UUID(bytes=_Bytes(self.buf[self.pos : self.pos + 16]))
        self.pos += 16
        return v

    def uvarint(self) -> int:
        buf, pos, end = self.buf, self.pos, self.end
        result = 0
        shift = 0
        while True:
            if pos >= end:
                raise CorruptFrameError("truncated varint")
            b = buf[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
            if shift > 63:
                raise CorruptFrameError("varint is too long")
        self.pos = pos
        return result

    def varint(self) -> int:
        v = self.uvarint()
        return (v >> 1) ^ -(v & 1)

    def _length(self, flexible: _Bool, wide: _Bool) -> int:
        """A length prefix: -1 for null; compact lengths are stored plus one."""
        if flexible:
            return self.uvarint() - 1
        return self.int32() if wide else self.int16()

    def _slice(self, n: int) -> memoryview:
        self._need(n)
        v = self.buf[self.pos : self.pos + n]
        self.pos += n
        return v

    def nullable_string(self, flexible: _Bool) -> str | None:
        n = self._length(flexible, False)
        if n < 0:
            return None
        try:
            return str(self._slice(n), "utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptFrameError(f"string is not UTF-8: {exc}") from None

    def string(self, flexible: _Bool) -> str:
        v = self.nullable_string(flexible)
        if v is None:
            raise CorruptFrameError("null where a non-nullable string is required")
        return v

    def nullable_bytes(self, flexible: _Bool) -> _Bytes | None:
        n = self._length(flexible, True)
        return None if n < 0 else _Bytes(self._slice(n))

    def bytes(self, flexible: _Bool) -> _Bytes:
        v = self.nullable_bytes(flexible)
        if v is None:
            raise CorruptFrameError("null where non-nullable bytes are required")
        return v

    def records(self, flexible: _Bool) -> memoryview | None:
        n = self._length(flexible, True)
        return None if n < 0 else self._slice(n)

    def array_length(self, flexible: _Bool) -> int:
        """Element count (-1 for a null array), sanity-checked against what is left."""
        n = self._length(flexible, True)
        if n > self.end - self.pos:
            raise CorruptFrameError(f"array of {n} elements cannot fit in {self.end - self.pos} bytes")
        return n

    def tagged_field_end(self, size: int) -> int:
        """Where a tagged field of ``size`` bytes that starts here ends; it must fit the frame."""
        self._need(size)
        return self.pos + size

    def end_tagged_field(self, tag: int, end: int) -> None:
        """Check that the known tagged field ``tag`` just read filled its declared size."""
        if self.pos != end:
            raise CorruptFrameError(f"tagged field {tag} ends at offset {self.pos}, its size says {end}")

    def skip_tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            size = self.uvarint()
            self._need(size)
            self.pos += size


class Writer:
    """Accumulates an encoded message; external record chunks are kept aside, uncopied."""

    __slots__ = ("buf", "chunks")

    def __init__(self) -> None:
        self.buf = bytearray()
        self.chunks: list[Any] = []

    def bool(self, v: _Bool) -> None:
        self.buf.append(1 if v else 0)

    def int8(self, v: int) -> None:
        self.buf += _I8.pack(v)

    def int16(self, v: int) -> None:
        self.buf += _I16.pack(v)

    def uint16(self, v: int) -> None:
        self.buf += _U16.pack(v)

    def int32(self, v: int) -> None:
        self.buf += _I32.pack(v)

    def uint32(self, v: int) -> None:
        self.buf += _U32.pack(v)

    def int64(self, v: int) -> None:
        self.buf += _I64.pack(v)

    def float64(self, v: float) -> None:
        self.buf += _F64.pack(v)

    def uuid(self, v: uuid.UUID) -> None:
        self.buf += v.bytes

    def uvarint(self, v: int) -> None:
        buf = self.buf
        while v > 0x7F:
            buf.append((v & 0x7F) | 0x80)
            v >>= 7
        buf.append(v)

    def varint(self, v: int) -> None:
        self.uvarint((v << 1) ^ (v >> 63))

    def raw(self, data: bytes | bytearray | memoryview) -> None:
        self.buf += data

    def _length(self, n: int, flexible: _Bool, wide: _Bool) -> None:
        if flexible:
            self.uvarint(n + 1)
        elif wide:
            self.int32(n)
        else:
            self.int16(n)

    def nullable_string(self, v: str | None, flexible: _Bool) -> None:
        if v is None:
            self._length(-1, flexible, False)
            return
        data = v.encode("utf-8")
        self._length(len(data), flexible, False)
        self.buf += data

    def string(self, v: str, flexible: _Bool) -> None:
        self.nullable_string(v, flexible)

    def nullable_bytes(self, v: _Bytes | bytearray | memoryview | None, flexible: _Bool) -> None:
        if v is None:
            self._length(-1, flexible, True)
            return
        self._length(len(v), flexible, True)
        self.buf += v

    def bytes(self, v: _Bytes | bytearray | memoryview, flexible: _Bool) -> None:
        self.nullable_bytes(v, flexible)

    def records(self, v: RecordsValue, flexible: _Bool) -> None:
        if v is None:
            self._length(-1, flexible, True)
        elif isinstance(v, (_Bytes, bytearray, memoryview)):
            self._length(len(v), flexible, True)
            self.buf += v
        else:
            self._length(len(v), flexible, True)
            if self.buf:
                self.chunks.append(_Bytes(self.buf))
                self.buf = bytearray()
            self.chunks.append(v)

    def array_length(self, n: int, flexible: _Bool) -> None:
        self._length(n, flexible, True)

    def empty_tagged_fields(self) -> None:
        self.buf.append(0)

    @property
    def size(self) -> int:
        return len(self.buf) + sum(len(c) for c in self.chunks)

    def to_chunks(self) -> list[Any]:
        """Everything written, as bytes objects interleaved with external chunks."""
        out = list(self.chunks)
        if self.buf:
            out.append(_Bytes(self.buf))
        return out

    def getvalue(self) -> _Bytes:
        if any(not isinstance(c, _Bytes) for c in self.chunks):
            raise TypeError("message holds external record chunks; use to_chunks()")
        return b"".join(self.chunks) + _Bytes(self.buf)

"""One client connection: framing, ordered request processing, zero-copy responses.

Kafka's guarantee per connection is that requests are processed in the order they
arrive and answered in that order. We get it by construction: frames are queued as they
are read and a single task per connection works through the queue (started on demand,
so an idle connection costs no task). Reading pauses when too many frames are waiting,
which pushes back on a producer faster than the disk.

Reading is an ``asyncio.BufferedProtocol`` so big frames are copied once, by the kernel:
small frames are read into a reusable scratch buffer and sliced out of it, but once a
frame's size prefix announces more than :data:`_DIRECT_MIN` bytes, a buffer of that size
is taken and the transport reads the rest straight into it. That buffer is the request:
a produce request's record batches are memoryviews of it, which the log stamps with
offsets in place and writes with a single ``os.write``. A fresh buffer is an anonymous
memory mapping, whose pages the kernel backs only as bytes land in them: a size prefix
announcing 100 MB costs nothing until 100 MB arrive.

Memory: every request's bytes are charged to the broker's one
:class:`~seaway.broker.request_memory.RequestMemory` (``queued.max.request.bytes``) from
the read until the request is handled; past the limit this connection stops reading
until bytes are given back. Independently, a connection with 64 requests queued stops
reading until half of them are answered.

A frame that cannot be parsed (absurd size, unknown API key, unsupported version,
truncated body) closes this connection only; everyone else keeps being served. The one
exception is ApiVersions with a version we do not serve: Kafka answers it in version 0
with UNSUPPORTED_VERSION and the ranges it does serve, so clients can downgrade.

Socket buffers follow Kafka's ``socket.send.buffer.bytes`` and
``socket.receive.buffer.bytes`` (-1 leaves the OS's autotuning on). Kafka's bounded
100 KiB send buffer also streams big fetch answers faster and steadier than an
autotuned one, which lets megabytes queue at the receiver: 3.3-4.0 GB/s against
2.1-5.9 GB/s on loopback (docs/performance.md).

Compressed produce batches are checked on worker threads, and what they unpack to is
charged to this connection's ``connections.max.decompressed.bytes.per.second`` quota
(:mod:`seaway.broker.decompression`): while a batch is checked this connection's worker
awaits it (its later requests wait, in order) and everyone else is served.

Security (:mod:`seaway.broker.security`): on SSL and SASL_SSL listeners the transport is
asyncio's TLS transport (the handshake is done before the first byte reaches this protocol)
and a client certificate becomes the principal. On SASL listeners a :class:`SaslSession`
gates the connection: until it is authenticated only ApiVersions, SaslHandshake and
SaslAuthenticate are served (anything else closes the connection, as in Kafka), frames are
limited to ``sasl.server.max.receive.size``, and a failed authentication is answered after
``connection.failed.authentication.delay.ms`` and closes the connection. Every request
carries the connection's principal and client address, which handlers check ACLs against.

Record data in fetch responses arrives as file regions. Such a response bypasses the
transport: once the transport's buffer is empty, it is written to a duplicate of the
socket's fd, the protocol bytes with ``send(MSG_MORE)`` and every region with
``os.sendfile`` straight from the page cache, waiting for writability when the socket
is full. Nothing else writes to the connection meanwhile (the connection's single
worker is busy with this response), so ordering holds. TLS cannot use sendfile (the bytes
must be encrypted in this process): regions are read with ``os.pread`` and the response is
written through the TLS transport in writes of up to 256 KiB, the protocol bytes and small
regions joined (one write is one send of full 16 KiB TLS records), waiting whenever the
transport holds more than 2 MiB, so a 50 MB fetch answer is never in memory at once.

Why uvloop's TLS transport and not our own: receiving, an ``SSLSocket`` reading into the
frame buffer costs more CPU per byte than it (Python's ``ssl`` has no read-ahead: a socket BIO
makes two ``recv`` calls per 16 KiB record) and an ``SSLObject`` with ``MemoryBIO`` about the
same (it copies as uvloop does); sending, a ``MemoryBIO`` driven by hand saved 0.1-0.15 s of
about 0.7 s per GiB in a bare loop, too little for a TLS transport of our own with its
handshake, shutdown and flow control (figures in docs/performance.md). kTLS needs Python 3.12.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import mmap
import os
import socket
import struct
import sys
import threading
import time
from typing import Any

from seaway.broker.context import BrokerContext, RequestContext
from seaway.broker.decompression import DecompressionQuota
from seaway.broker.handlers import HANDLERS
from seaway.broker.listener import normalize_ip
from seaway.broker.request_memory import RequestMemory
from seaway.broker.security.principal import ANONYMOUS, USER_TYPE, KafkaPrincipal, NoMatchingRuleError
from seaway.broker.security.sasl import AuthenticationFailed, SaslSession
from seaway.broker.security.settings import ListenerSecurity
from seaway.broker.security.tls import peer_subject_dn
from seaway.broker.wire import decode_produce
from seaway.protocol.errors import KafkaProtocolError
from seaway.protocol.primitives import CorruptFrameError, Reader, Writer

__all__ = ["KafkaConnection"]

log = logging.getLogger("seaway.broker.connection")

_HEADER = struct.Struct(">hhi")
_SIZE = struct.Struct(">i")
_API_VERSIONS_KEY = 18
_PRODUCE_KEY = 0
_MAX_QUEUED_FRAMES = 64
_FAILED_AUTH_LINGER_S = 0.5  # after a failed authentication's answer: see _close_after_flush
_SCRATCH_BYTES = 64 * 1024
_DIRECT_MIN = 16 * 1024
_PEEK_BYTES = 4096
_POOL_BUFFER_MAX = 8 * 1024 * 1024
_POOL_TOTAL_MAX = 64 * 1024 * 1024
# TLS fetch answers: bytes of a file region read and encrypted at a time, and what the TLS
# transport may hold before writing pauses. 256 KiB pieces cost a fifth less CPU per byte
# than 1 MiB ones, 4 MiB ones twice as much (cache misses); measured with bench/broker_fetch.py.
_TLS_CHUNK = 256 * 1024
_TLS_HIGH_WATER = 2 * 1024 * 1024


class _BufferPool:
    """Big-frame buffers shared by all connections, reused once nothing refers to them.

    Reuse matters: a fresh buffer of a few hundred KiB costs page faults and zeroing on
    every frame, more than the kernel's copy into it. A lock, because tests may run
    several brokers (event loops) in one process.
    """

    def __init__(self) -> None:
        self._free: list[bytearray | mmap.mmap] = []
        self._bytes = 0
        self._lock = threading.Lock()

    def take(self, size: int) -> bytearray | mmap.mmap:
        """A pooled buffer of at least ``size`` bytes, else a fresh lazily backed mapping.

        Raises OSError when the mapping cannot be made (an overcommit limit).
        """
        with self._lock:
            free = self._free
            for i in range(len(free) - 1, -1, -1):
                if len(free[i]) >= size:
                    buf = free.pop(i)
                    self._bytes -= len(buf)
                    return buf
        # Not bytearray(size): that zero-fills, so every page is backed at once, and 20
        # connections each announcing 100 MB would cost 2 GB before sending it.
        return mmap.mmap(-1, -(-size // 65536) * 65536, flags=mmap.MAP_PRIVATE)

    def give(self, frame: memoryview) -> None:
        """Release ``frame`` and pool its buffer unless a view or request still holds it."""
        buf = frame.obj
        frame.release()
        # Two references: ``buf`` here and getrefcount's argument. Any memoryview still
        # alive (a handler that kept the records, a traceback) holds one more.
        if sys.getrefcount(buf) != 2 or not isinstance(buf, _POOLED_TYPES) or len(buf) > _POOL_BUFFER_MAX:
            return
        with self._lock:
            if self._bytes + len(buf) <= _POOL_TOTAL_MAX:
                self._free.append(buf)
                self._bytes += len(buf)


_POOLED_TYPES = (bytearray, mmap.mmap)
_POOL = _BufferPool()
_BYTES_TYPES = (bytes, bytearray, memoryview)


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


def _write_parts(transport: asyncio.Transport, parts: list[Any]) -> None:
    """One transport write of ``parts`` (joined when there are several; nothing when none)."""
    if parts:
        transport.write(parts[0] if len(parts) == 1 else b"".join(parts))


class KafkaConnection(asyncio.BufferedProtocol):
    """asyncio BufferedProtocol for one Kafka client connection (see module docstring)."""

    def __init__(
        self,
        broker: BrokerContext,
        listener: str,
        max_request_bytes: int,
        memory: RequestMemory | None = None,
        security: ListenerSecurity | None = None,
    ) -> None:
        self.broker = broker
        self.listener = listener
        self.max_request_bytes = max_request_bytes
        self.principal: KafkaPrincipal = ANONYMOUS
        self._ip = "?"
        self._sasl: SaslSession | None = None
        if security is not None and security.uses_sasl:
            store = broker.security_store
            self._sasl = SaslSession(security.mechanisms, security.plain_users,
                                     store.scram_credential if store is not None else lambda m, u: None)
            # Kafka's sasl.server.max.receive.size: small frames until the client is authenticated
            self.max_request_bytes = min(max_request_bytes, broker.config.sasl_server_max_receive_size)
        self._authenticated_max_bytes = max_request_bytes
        rate = broker.config.connections_max_decompressed_bytes_per_second
        self._decompression = DecompressionQuota(rate) if rate > 0 else None
        self._memory = memory if memory is not None else RequestMemory(-1)
        self._charged = 0  # bytes of this connection's requests charged to the memory budget
        self.transport: asyncio.Transport | None = None
        self._scratch = bytearray(_SCRATCH_BYTES)
        self._scratch_view = memoryview(self._scratch)
        self._start = 0  # first unparsed byte of the scratch buffer
        self._end = 0  # end of the bytes read into it
        self._direct_view: memoryview | None = None  # a big frame being read straight into place
        self._direct_filled = 0
        self._peek = False  # after a big frame, read little until the next size prefix is known
        self._frames: collections.deque[bytearray | memoryview] = collections.deque()
        self._worker: asyncio.Task[None] | None = None
        self._reading_paused = False
        self._too_many_frames = False  # a reason to pause reading: the queue is full
        self._waiting_for_memory = False  # the other reason: queued.max.request.bytes reached
        self._eof = False
        self._can_write = asyncio.Event()
        self._can_write.set()
        self._closed = False
        self._peer = "?"
        self._sock_fd = -1
        self._out: list[bytes | bytearray] = []  # small responses, written together (see _send)
        self._flush_scheduled = False
        self._raw: socket.socket | None = None  # dup of the socket, for sendfile responses
        self._write_waiter: asyncio.Future[None] | None = None
        self.last_active = time.monotonic()  # last read or response (connections.max.idle.ms)

    # --- asyncio.BufferedProtocol ---------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports implement asyncio.Transport without subclassing it.
        self.transport = transport  # type: ignore[assignment]
        peer = transport.get_extra_info("peername")
        self._peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        self._ip = normalize_ip(str(peer[0])) if peer else "?"
        sock = transport.get_extra_info("socket")
        if sock is not None:
            config = self.broker.config
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                if config.socket_send_buffer_bytes > 0:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, config.socket_send_buffer_bytes)
                if config.socket_receive_buffer_bytes > 0:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, config.socket_receive_buffer_bytes)
            self._sock_fd = sock.fileno()
        ssl_object = transport.get_extra_info("ssl_object")
        if ssl_object is not None:
            self._sock_fd = -1  # no sendfile: the bytes must go through TLS
            transport.set_write_buffer_limits(high=_TLS_HIGH_WATER)  # type: ignore[attr-defined]
            if self._sasl is None:
                self._certificate_principal(ssl_object)

    def _certificate_principal(self, ssl_object: Any) -> None:
        """SSL listener: the client certificate's DN (mapped by ssl.principal.mapping.rules) names
        the principal; no certificate is User:ANONYMOUS, as in Kafka."""
        dn = peer_subject_dn(ssl_object)
        if dn is None:
            return
        try:
            self.principal = KafkaPrincipal(USER_TYPE, self.broker.principal_mapper.name(dn))
        except NoMatchingRuleError as exc:
            self._abort(f"authentication failed: {exc}")

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self._frames.clear()
        self._release_memory()
        self._can_write.set()
        if self._worker is not None and not self._worker.done():
            self._worker.cancel()
        self._close_raw()

    def pause_writing(self) -> None:
        self._can_write.clear()

    def resume_writing(self) -> None:
        self._can_write.set()

    def eof_received(self) -> bool:
        """The client stopped sending: answer what it sent, then close (False: close now)."""
        self._eof = True
        self._flush()
        return bool(self._frames) or (self._worker is not None and not self._worker.done())

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._direct_view is not None:
            view = self._direct_view[self._direct_filled :]
            room = self._memory.room()
            # Under a memory limit, read no more than fits (or one scratch's worth).
            return view if len(view) <= room else view[: max(room, _SCRATCH_BYTES)]
        if self._peek:
            # The next frame is likely big too: keep its bytes out of the scratch buffer,
            # so they are read straight into place instead of copied.
            return self._scratch_view[self._end : self._end + _PEEK_BYTES]
        return self._scratch_view[self._end :]

    def buffer_updated(self, nbytes: int) -> None:
        self.last_active = time.monotonic()
        memory = self._memory
        if self._direct_view is not None:
            self._direct_filled += nbytes
            self._charged += nbytes
            memory.used += nbytes
            if self._direct_filled < len(self._direct_view):
                if memory.full:
                    self._check_memory()
                return
            self._frames.append(self._direct_view)
            self._direct_view = None
            memory.end_request(self)
        else:
            self._end += nbytes
            if not self._parse():
                return
        self._frames_ready()
        if memory.full:
            self._check_memory()

    def _parse(self) -> bool:
        """Slice complete frames out of the scratch buffer; False when the connection is aborted."""
        buf = self._scratch
        pos, end = self._start, self._end
        while end - pos >= 4:
            (size,) = _SIZE.unpack_from(buf, pos)
            if size < 8 or size > self.max_request_bytes:
                self._abort(f"frame size {size} is outside [8, {self.max_request_bytes}]")
                return False
            have = end - pos - 4
            if have >= size:
                self._frames.append(buf[pos + 4 : pos + 4 + size])
                self._charged += size
                self._memory.used += size
                self._peek = size >= _DIRECT_MIN
                pos += 4 + size
                continue
            if size >= _DIRECT_MIN:
                self._peek = True
                # Read the rest of this frame straight into a buffer of its own.
                try:
                    view = memoryview(_POOL.take(size))[:size]
                except OSError as exc:
                    self._abort(f"no memory for a frame of {size} bytes: {exc}")
                    return False
                view[:have] = self._scratch_view[pos + 4 : end]
                self._direct_view, self._direct_filled = view, have
                self._charged += have
                self._memory.used += have
                self._memory.begin_request(self)
                pos = end
            break
        if pos == end:
            self._start = self._end = 0
        elif pos:
            # Move the partial frame (< _DIRECT_MIN bytes) to the front; each byte moves once.
            rest = end - pos
            buf[:rest] = self._scratch_view[pos:end]
            self._start, self._end = 0, rest
        else:
            self._start = pos
        return True

    def _frames_ready(self) -> None:
        if not self._frames:
            return
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._work())
        if len(self._frames) >= _MAX_QUEUED_FRAMES and not self._too_many_frames:
            self._too_many_frames = True
            self._update_reading()

    # --- back-pressure ----------------------------------------------------------------
    def _check_memory(self) -> None:
        """The memory budget is full: stop reading unless this connection is exempt."""
        if not self._waiting_for_memory and not self._closed and not self._memory.may_read(self):
            self._waiting_for_memory = True
            self._memory.wait(self)
            self._update_reading()

    def memory_available(self) -> None:
        """Called by the memory budget when there is room again (see request_memory)."""
        if self._waiting_for_memory:
            self._waiting_for_memory = False
            self._update_reading()

    def _update_reading(self) -> None:
        """Pause the transport while either reason holds; resume when none does."""
        pause = self._too_many_frames or self._waiting_for_memory
        if pause == self._reading_paused or self._closed or self.transport is None:
            return
        self._reading_paused = pause
        if pause:
            self.transport.pause_reading()
        else:
            self.transport.resume_reading()

    def _release(self, nbytes: int) -> None:
        """Give a handled request's bytes back to the budget."""
        nbytes = min(nbytes, self._charged)
        if nbytes:
            self._charged -= nbytes
            self._memory.release(nbytes)

    def _release_memory(self) -> None:
        """The connection is gone: give back everything it held and leave the budget's queues."""
        self._direct_view = None
        self._waiting_for_memory = False
        self._memory.forget(self)
        charged, self._charged = self._charged, 0
        if charged:
            self._memory.release(charged)

    def idle_seconds(self, now: float) -> float:
        """How long nothing was read or answered; 0 while a request is being worked on.

        Also 0 while this connection waits for request memory: it is not reading because
        the broker told it not to, which is no reason to close it.
        """
        if self.busy or self._waiting_for_memory:
            return 0.0
        return now - self.last_active

    @property
    def busy(self) -> bool:
        """Whether a request is queued or being worked on."""
        return bool(self._frames) or (self._worker is not None and not self._worker.done())

    def close_idle(self) -> None:
        """Close a connection idle past ``connections.max.idle.ms``, as Kafka's selector does."""
        log.debug("closing connection from %s: idle past connections.max.idle.ms", self._peer)
        self._abort(None)

    # --- processing -----------------------------------------------------------------
    async def _work(self) -> None:
        frames = self._frames
        try:
            while frames and not self._closed:
                frame = frames.popleft()
                if self._too_many_frames and len(frames) < _MAX_QUEUED_FRAMES // 2:
                    self._too_many_frames = False
                    self._update_reading()
                await self._handle(frame)
                self._release(len(frame))
                if isinstance(frame, memoryview):
                    _POOL.give(frame)
            if self._eof and not self._closed and self.transport is not None:
                self._flush()
                self.transport.close()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("closing connection from %s after an unexpected error", self._peer)
            self._abort(None)

    async def _handle(self, frame: bytearray | memoryview) -> None:
        metrics = self.broker.metrics  # request count and TotalTimeMs (seaway.broker.metrics)
        started = time.perf_counter_ns() if metrics is not None else 0
        sasl = self._sasl
        if sasl is not None:
            if sasl.raw_tokens:
                await self._raw_sasl_token(sasl, bytes(frame))
                return
            api_key = _HEADER.unpack_from(frame, 0)[0]
            if not sasl.accepts(api_key):
                self._abort(f"API key {api_key} before SASL authentication completed")
                return
        api_key, version, correlation_id = _HEADER.unpack_from(frame, 0)
        spec = HANDLERS.get(api_key)
        if spec is None:
            self._abort(f"unknown API key {api_key}")
            return
        if not spec.min_version <= version <= spec.max_version:
            if api_key == _API_VERSIONS_KEY:
                await self._unsupported_api_versions(correlation_id)
                return
            self._abort(f"{spec.name} v{version} is not served (v{spec.min_version}-{spec.max_version})")
            return
        flexible = spec.request_flexible(version)
        r = Reader(frame, 8)
        try:
            client_id = r.nullable_string(False)
            if flexible:
                r.skip_tagged_fields()
            if api_key == _PRODUCE_KEY:  # the hot path: decoded in C (seaway.broker.wire)
                request = decode_produce(r.buf, r.pos, version)
            else:
                request = spec.request_cls.decode(r, version)
        except (CorruptFrameError, ValueError, IndexError) as exc:
            self._abort(f"malformed {spec.name} v{version}: {exc}")
            return
        ctx = RequestContext(
            self.broker, api_key, version, correlation_id, client_id, self.listener, self._peer,
            self.principal, self._ip, sasl, decompression=self._decompression,
        )
        try:
            response = await spec.func(ctx, request)
        except KafkaProtocolError as exc:
            # Handlers report per-partition errors in their responses; a top-level raise
            # means the request as a whole cannot be answered meaningfully.
            self._abort(f"{spec.name} v{version} failed: {exc.name} {exc}")
            return
        if response is None:
            if metrics is not None:
                metrics.request_done(api_key, started)
            return
        header_flexible = flexible and api_key != _API_VERSIONS_KEY
        if sasl is not None:
            await self._after_sasl_step(sasl, api_key)
        await self._send(correlation_id, response, version, header_flexible)
        if metrics is not None:
            metrics.request_done(api_key, started)
        if sasl is not None and sasl.failed:
            self._close_after_flush(sasl.failure)

    async def _after_sasl_step(self, sasl: SaslSession, api_key: int) -> None:
        """Before a pre-authentication response goes out: note progress, delay failures."""
        if api_key == _API_VERSIONS_KEY:
            sasl.api_versions_answered()
        elif sasl.failed:
            await self._failure_delay()
        elif sasl.complete:
            self._authenticated(sasl)

    def _authenticated(self, sasl: SaslSession) -> None:
        assert sasl.principal is not None
        self.principal = sasl.principal
        self.max_request_bytes = self._authenticated_max_bytes
        self._sasl = None
        log.debug("connection from %s authenticated as %s with %s", self._peer, self.principal, sasl.mechanism)

    async def _failure_delay(self) -> None:
        delay = self.broker.config.connection_failed_authentication_delay_ms
        if delay > 0:
            await asyncio.sleep(delay / 1000)

    async def _raw_sasl_token(self, sasl: SaslSession, token: bytes) -> None:
        """A token framed as after SaslHandshake v0: no request header, the answer likewise."""
        try:
            answer = sasl.authenticate(token)
        except AuthenticationFailed as exc:
            await self._failure_delay()
            self._abort(f"authentication failed: {exc}")
            return
        if sasl.complete:
            self._authenticated(sasl)
        if self.transport is not None and not self._closed:
            self._flush()
            self.transport.write(_SIZE.pack(len(answer)) + answer)

    def _close_after_flush(self, reason: str | None) -> None:
        """Send what is queued (the error response), then close, as Kafka does after a
        failed authentication.

        The close lingers for up to half a second, reading nothing and serving nothing: a
        client that reads a response and the end of the stream in one go may drop the
        response (kafka-python then reports "socket disconnected" instead of error 58), so
        the client gets time to read it and close first. The answer itself was already
        delayed by ``connection.failed.authentication.delay.ms``, so brute force gains
        nothing, and a lingering connection still counts against the connection limits."""
        log.info("closing connection from %s: %s", self._peer, reason or "authentication failed")
        self._flush()
        self._closed = True
        self._frames.clear()
        self._release_memory()
        transport = self.transport
        if transport is not None:
            transport.pause_reading()
            asyncio.get_running_loop().call_later(_FAILED_AUTH_LINGER_S, transport.close)

    async def _unsupported_api_versions(self, correlation_id: int) -> None:
        from seaway.broker.handlers.api_versions import unsupported_version_response

        await self._send(correlation_id, unsupported_version_response(), 0, False)

    # --- writing --------------------------------------------------------------------
    async def _send(self, correlation_id: int, response: Any, version: int, header_flexible: bool) -> None:
        self.last_active = time.monotonic()
        w = Writer()
        w.int32(0)  # size, patched below
        w.int32(correlation_id)
        if header_flexible:
            w.empty_tagged_fields()
        response.encode(w, version)
        transport = self.transport
        if transport is None or self._closed:
            return
        if not w.chunks:
            # Responses to pipelined requests are handled in one go (a handler that does
            # not wait returns at once), so queueing them for one write at the end of
            # this loop iteration saves a syscall per response.
            buf = w.buf
            _SIZE.pack_into(buf, 0, len(buf) - 4)
            self._out.append(buf)
            if not self._flush_scheduled:
                self._flush_scheduled = True
                asyncio.get_running_loop().call_soon(self._flush)
        else:
            chunks = w.to_chunks()
            first = chunks[0]
            chunks[0] = _SIZE.pack(w.size - 4) + memoryview(first)[4:]
            self._flush()
            await self._write_with_regions(chunks)
        if not self._can_write.is_set():
            await self._can_write.wait()

    def _flush(self) -> None:
        self._flush_scheduled = False
        out = self._out
        if not out:
            return
        transport = self.transport
        if transport is not None and not self._closed:
            transport.write(out[0] if len(out) == 1 else b"".join(out))
        out.clear()

    async def _write_with_regions(self, chunks: list[Any]) -> None:
        """Write bytes and file regions, the regions with sendfile (see module docstring)."""
        transport = self.transport
        assert transport is not None
        raw = self._raw_socket()
        if raw is None:
            await self._write_through_transport(chunks)
            return
        fd = raw.fileno()
        last = len(chunks) - 1
        try:
            while transport.get_write_buffer_size():
                # Earlier responses still queued in the transport must reach the socket first.
                await self._wait_writable(raw)
                await asyncio.sleep(0)
            for i, chunk in enumerate(chunks):
                if isinstance(chunk, _BYTES_TYPES):
                    view = memoryview(chunk)
                    flags = socket.MSG_MORE if i < last else 0
                    while view:
                        try:
                            view = view[raw.send(view, flags) :]
                        except BlockingIOError:
                            await self._wait_writable(raw)
                    continue
                position, length, src = chunk.position, chunk.length, chunk.fileno()
                while length > 0:
                    try:
                        sent = os.sendfile(fd, src, position, length)
                    except BlockingIOError:
                        await self._wait_writable(raw)
                        continue
                    if sent == 0:
                        self._abort("segment file shorter than its index claims")
                        return
                    position += sent
                    length -= sent
        except OSError as exc:
            if not self._closed:
                self._abort(f"writing a response failed: {exc}")

    async def _write_through_transport(self, chunks: list[Any]) -> None:
        """TLS (or no socket to sendfile to): the response gathered into writes of up to
        :data:`_TLS_CHUNK` bytes, file regions read piece by piece, pausing while the
        transport is over its high-water mark.

        Each transport write is encrypted into TLS records of up to 16 KiB and sent with one
        syscall, so a fetch answer of many small pieces (6 partitions with a batch each is
        13 chunks: protocol bytes between regions) is read and joined into one write, one
        record and one send instead of 13 of each. A big region is read in whole pieces
        written as they are; only the pieces that meet protocol bytes or another region
        are joined (a copy of at most one piece per region boundary).
        """
        transport = self.transport
        assert transport is not None
        can_write = self._can_write
        parts: list[Any] = []  # gathered for the next write, ``size`` bytes in all
        size = 0
        for chunk in chunks:
            if isinstance(chunk, _BYTES_TYPES):
                if len(chunk) >= _TLS_CHUNK:  # a big in-memory chunk goes as it is
                    _write_parts(transport, parts)
                    parts, size = [], 0
                    transport.write(chunk)
                    continue
                parts.append(chunk)
                size += len(chunk)
                if size >= _TLS_CHUNK:
                    _write_parts(transport, parts)
                    parts, size = [], 0
                continue
            position, left, fd = chunk.position, chunk.length, chunk.fileno()
            while left > 0:
                if not can_write.is_set():
                    await can_write.wait()
                if self._closed:
                    return
                try:
                    data = os.pread(fd, min(left, _TLS_CHUNK - size), position)
                except OSError as exc:
                    self._abort(f"reading a segment for a response failed: {exc}")
                    return
                if not data:
                    self._abort("segment file shorter than its index claims")
                    return
                parts.append(data)
                size += len(data)
                position += len(data)
                left -= len(data)
                if size >= _TLS_CHUNK:
                    _write_parts(transport, parts)
                    parts, size = [], 0
        if not self._closed:
            _write_parts(transport, parts)

    def _raw_socket(self) -> socket.socket | None:
        if self._raw is None and self._sock_fd >= 0 and not self._closed:
            try:
                self._raw = socket.socket(fileno=os.dup(self._sock_fd))
                self._raw.setblocking(False)
            except OSError:
                self._sock_fd = -1
        return self._raw

    async def _wait_writable(self, raw: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        fd = raw.fileno()
        loop.add_writer(fd, _resolve, fut)
        self._write_waiter = fut
        try:
            await fut
        finally:
            if self._write_waiter is fut:
                self._write_waiter = None
                loop.remove_writer(fd)
        if self._closed:
            raise ConnectionResetError("connection closed while writing")

    def _close_raw(self) -> None:
        raw, self._raw = self._raw, None
        if raw is None:
            return
        waiter, self._write_waiter = self._write_waiter, None
        if waiter is not None:
            asyncio.get_running_loop().remove_writer(raw.fileno())
            waiter.cancel()
        raw.close()

    def _abort(self, reason: str | None) -> None:
        if reason:
            log.warning("closing connection from %s: %s", self._peer, reason)
        self._closed = True
        self._frames.clear()
        self._release_memory()
        if self.transport is not None:
            self.transport.abort()

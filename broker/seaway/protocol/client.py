"""A minimal asyncio Kafka protocol client, for what confluent-kafka cannot express.

librdkafka hard-codes the consumer group protocol type (``consumer``), but Connect workers
join groups of protocol type ``connect`` and schema registries groups of type ``sr``. Those
speak the group APIs themselves, over this connection, built on the sans-IO codec (the
generated messages and the primitives Reader/Writer). It works against any Kafka broker;
everything else (producing, consuming, admin) goes through confluent-kafka.

Framing (Kafka's, for every API)::

    int32   size of what follows
    header  request header v1 (api key, api version, correlation id, client id), or v2
            (the same plus tagged fields) when the API version is flexible
    body    the request, encoded at that version

Responses carry header v0 (correlation id), or v1 (plus tagged fields) when flexible.
Versions are negotiated once per connection with ApiVersions v0: the highest version both
sides support, capped by the caller (the code that reads a response knows which versions'
semantics it handles). One request at a time per connection: group calls are sequential.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from typing import ClassVar, Protocol, TypeVar

from seaway.errors import SeawayError
from seaway.protocol.messages.api_versions_request import ApiVersionsRequest
from seaway.protocol.messages.api_versions_response import ApiVersionsResponse
from seaway.protocol.messages.request_header import RequestHeader
from seaway.protocol.primitives import Reader, Writer

__all__ = ["KafkaConnection", "KafkaWireError", "split_bootstrap"]

_SIZE = struct.Struct(">i")
_MAX_FRAME = 64 * 1024 * 1024


class KafkaWireError(SeawayError):
    """The connection failed, timed out, or the broker cannot serve a request we need."""

    retriable = True


class _Message(Protocol):
    """A generated request class instance."""

    API_KEY: ClassVar[int]
    MIN_VERSION: ClassVar[int]
    MAX_VERSION: ClassVar[int]
    FLEXIBLE_FROM: ClassVar[int]

    def encode(self, w: Writer, version: int) -> None: ...


R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class _Decodable(Protocol[R_co]):
    """A generated response class (its ``decode`` classmethod)."""

    def decode(self, r: Reader, version: int) -> R_co: ...


def split_bootstrap(servers: str) -> list[tuple[str, int]]:
    """``"h1:9092,h2:9093"`` -> ``[("h1", 9092), ("h2", 9093)]`` (a ``PLAINTEXT://`` prefix is dropped)."""
    out = []
    for item in servers.split(","):
        item = item.strip().split("://", 1)[-1]
        if not item:
            continue
        host, _, port = item.rpartition(":")
        out.append((host.strip("[]") or "localhost", int(port)))
    if not out:
        raise KafkaWireError(f"no bootstrap servers in {servers!r}")
    return out


class KafkaConnection:
    """One TCP connection to a broker; :meth:`open` connects and negotiates versions."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str) -> None:
        self._reader = reader
        self._writer = writer
        self._client_id = client_id
        self._correlation = 0
        self._lock = asyncio.Lock()
        self.versions: dict[int, tuple[int, int]] = {}

    @classmethod
    async def open(cls, host: str, port: int, client_id: str, timeout: float = 10.0) -> KafkaConnection:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        except (TimeoutError, OSError) as exc:
            raise KafkaWireError(f"cannot connect to {host}:{port}: {exc}") from exc
        conn = cls(reader, writer, client_id)
        try:
            response = await conn._send(ApiVersionsRequest(), ApiVersionsResponse, 0, timeout)
        except BaseException:
            await conn.close()
            raise
        if response.error_code != 0:
            await conn.close()
            raise KafkaWireError(f"ApiVersions failed with error {response.error_code}")
        conn.versions = {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}
        return conn

    @classmethod
    async def open_any(cls, bootstrap: str, client_id: str, timeout: float = 10.0) -> KafkaConnection:
        """A connection to the first reachable bootstrap server."""
        errors = []
        for host, port in split_bootstrap(bootstrap):
            try:
                return await cls.open(host, port, client_id, timeout)
            except KafkaWireError as exc:
                errors.append(str(exc))
        raise KafkaWireError("; ".join(errors))

    def version_for(self, request: _Message, cap: int | None = None) -> int:
        """The highest version of ``request``'s API that we, the broker and ``cap`` allow."""
        served = self.versions.get(request.API_KEY)
        ours = request.MAX_VERSION if cap is None else min(cap, request.MAX_VERSION)
        if served is None or max(served[0], request.MIN_VERSION) > min(served[1], ours):
            raise KafkaWireError(f"the broker does not serve {type(request).__name__} versions we speak")
        return int(min(served[1], ours))

    async def call(
        self, request: _Message, response_cls: _Decodable[R], *, cap: int | None = None, timeout: float = 30.0
    ) -> tuple[R, int]:
        """Send ``request`` at the negotiated version; returns (response, version used)."""
        version = self.version_for(request, cap)
        return await self._send(request, response_cls, version, timeout), version

    async def _send(self, request: _Message, response_cls: _Decodable[R], version: int, timeout: float) -> R:
        flexible = version >= request.FLEXIBLE_FROM
        async with self._lock:
            self._correlation += 1
            correlation = self._correlation
            w = Writer()
            RequestHeader(
                request_api_key=request.API_KEY,
                request_api_version=version,
                correlation_id=correlation,
                client_id=self._client_id,
            ).encode(w, 2 if flexible else 1)
            request.encode(w, version)
            body = w.getvalue()
            try:
                self._writer.write(_SIZE.pack(len(body)) + body)
                await asyncio.wait_for(self._writer.drain(), timeout)
                frame = await asyncio.wait_for(self._read_frame(), timeout)
            except (TimeoutError, OSError, asyncio.IncompleteReadError) as exc:
                self._writer.close()
                raise KafkaWireError(f"{type(request).__name__} failed: {exc!r}") from exc
        r = Reader(frame)
        if r.int32() != correlation:
            self._writer.close()
            raise KafkaWireError("response correlation id does not match the request")
        # ApiVersions answers with header v0 even when flexible (KIP-511); we only send it as v0.
        if flexible:
            r.skip_tagged_fields()
        return response_cls.decode(r, version)

    async def _read_frame(self) -> bytes:
        (size,) = _SIZE.unpack(await self._reader.readexactly(4))
        if not 0 <= size <= _MAX_FRAME:
            raise OSError(f"bad response frame size {size}")
        return await self._reader.readexactly(size)

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()

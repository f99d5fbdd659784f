"""How a fetch answer leaves the broker over TLS: few, full TLS records, the same bytes as plaintext.

Over TLS every transport write becomes at least one TLS record (and one ``send``), so a fetch
answer of many small pieces (protocol bytes, then a file region, per partition) must be
gathered into writes of up to 256 KiB instead of written piece by piece. A relay between the
client and the broker counts the records the broker sends by their 5-byte headers (TLS record
framing is not encrypted), so the test sees what the broker wrote, not what the client read.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]  # re-exported without __all__
from seaway.protocol.messages.fetch_request import FetchPartition, FetchRequest, FetchTopic
from seaway.protocol.messages.fetch_response import FetchResponse
from seaway.protocol.messages.sasl_authenticate_request import SaslAuthenticateRequest
from seaway.protocol.messages.sasl_authenticate_response import SaslAuthenticateResponse
from seaway.protocol.messages.sasl_handshake_request import SaslHandshakeRequest
from seaway.protocol.messages.sasl_handshake_response import SaslHandshakeResponse
from seaway.protocol.primitives import Reader

from tests.broker.security.wire import Wire
from tests.support.secure_broker import ADMIN_PASSWORD, SecureBroker

pytestmark = pytest.mark.timeout(120)

PLAIN_ADMIN = f"\x00admin\x00{ADMIN_PASSWORD}".encode()
PARTITIONS = 40
TLS_RECORD = 16 * 1024  # the most plaintext one TLS record carries
_APPLICATION_DATA = 23


class RecordCountingRelay:
    """A one-connection TCP relay that counts the TLS records flowing from the broker."""

    def __init__(self, upstream_port: int) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._upstream_port = upstream_port
        self.records = 0  # application-data records (TLS 1.3 sends everything after the handshake so)
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._serve, daemon=True)]
        self._threads[0].start()

    def _serve(self) -> None:
        client, _ = self._listener.accept()
        upstream = socket.create_connection(("127.0.0.1", self._upstream_port))
        self._sockets += [client, upstream]
        back = threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True)
        self._threads.append(back)
        back.start()
        self._pump(upstream, client, True)

    def _pump(self, src: socket.socket, dst: socket.socket, count: bool) -> None:
        pending = bytearray()  # bytes of the current record header not yet complete
        skip = 0  # bytes of the current record body still to come
        try:
            while data := src.recv(1 << 20):
                if count:
                    view = memoryview(data)
                    while view:
                        if skip:
                            n = min(skip, len(view))
                            skip -= n
                            view = view[n:]
                            continue
                        need = 5 - len(pending)
                        pending += view[:need]
                        view = view[need:]
                        if len(pending) == 5:
                            if pending[0] == _APPLICATION_DATA:
                                with self._lock:
                                    self.records += 1
                            skip = int.from_bytes(pending[3:5], "big")
                            pending.clear()
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (src, dst):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def count(self) -> int:
        with self._lock:
            return self.records

    def close(self) -> None:
        self._listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(10)
        for sock in self._sockets:
            sock.close()


def _login(wire: Wire) -> None:
    assert wire.call(SaslHandshakeRequest(mechanism="PLAIN"), SaslHandshakeResponse, 1).error_code == 0
    assert wire.call(SaslAuthenticateRequest(auth_bytes=PLAIN_ADMIN), SaslAuthenticateResponse, 2).error_code == 0


def _fetch(wire: Wire, topic: str) -> tuple[int, list[bytes]]:
    """One fetch of every partition from offset 0: (frame size, each partition's record bytes)."""
    request = FetchRequest(
        replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=64 << 20, isolation_level=0,
        session_id=0, session_epoch=-1,
        topics=[FetchTopic(topic=topic, partitions=[
            FetchPartition(partition=p, fetch_offset=0, partition_max_bytes=8 << 20) for p in range(PARTITIONS)
        ])],
    )
    wire.sock.sendall(wire.frame(request, 11))
    frame = wire.read_frame()
    r = Reader(frame)
    r.int32()  # correlation id
    response = FetchResponse.decode(r, 11)
    records: dict[int, bytes] = {}
    for part in response.responses[0].partitions:
        assert part.error_code == 0 and isinstance(part.records, memoryview)
        records[part.partition_index] = bytes(part.records)
    return len(frame) + 4, [records[p] for p in range(PARTITIONS)]


def test_fetch_of_many_small_regions_goes_out_in_full_tls_records(secure_broker: SecureBroker) -> None:
    """40 partitions, a small batch in each and 600 KiB in one: the answer over SASL_SSL is the
    same bytes as over SASL_PLAINTEXT (sendfile), in about one TLS record per 16 KiB, not two
    or more per partition (written piece by piece it took 80+)."""
    topic = f"tlswrites-{uuid.uuid4().hex[:8]}"
    admin = AdminClient(secure_broker.admin_config())
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(15)
    producer = Producer({**secure_broker.admin_config(), "linger.ms": 5})
    for p in range(PARTITIONS):
        producer.produce(topic, f"value-{p}".encode() * 20, partition=p)
    big = bytes(range(256)) * 40  # 10 KiB values: partition 7 gets ~600 KiB, more than one 256 KiB write
    for i in range(60):
        producer.produce(topic, big, key=str(i).encode(), partition=7)
    assert producer.flush(60) == 0

    with Wire(secure_broker.bootstrap("SASL_PLAINTEXT")) as wire:
        _login(wire)
        _, plain = _fetch(wire, topic)

    relay = RecordCountingRelay(secure_broker.ports["SASL_SSL"])
    try:
        context = ssl.create_default_context(cafile=str(secure_broker.material.ca))
        with Wire(f"127.0.0.1:{relay.port}", context) as wire:
            _login(wire)
            before = relay.count()
            size, over_tls = _fetch(wire, topic)
            records = relay.count() - before
    finally:
        relay.close()

    assert over_tls == plain
    assert all(plain) and len(plain[7]) > 600_000
    # one record per 16 KiB of answer, plus at most one per 256 KiB write that does not end
    # on a record boundary, plus slack for a ticket or two
    full = -(-size // TLS_RECORD)
    assert full <= records <= full + size // (256 * 1024) + 3, (records, size)

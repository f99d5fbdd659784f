"""Capture the fuzzers' seed corpus from real clients talking to a real broker.

Run once (the output is committed; re-run after adding an API or a client)::

    python -m tests.fuzz.capture_corpus

A broker subprocess advertises a recording TCP proxy in front of it, so every
connection of every client goes through the proxy, which splits the client-to-broker
stream into frames. librdkafka (confluent-kafka: producers with each codec, idempotent
and transactional, a consumer group, the admin client) and kafka-python (producers with
each codec it writes, a consumer group) drive the broker through the APIs it serves.

Output: ``corpus/request/<api>-v<version>-<sha>.bin`` holds one frame each exactly as it
arrived (size prefix included), plus ``<api>-v<version>-gen-<sha>.bin``, one frame the
codec encodes for each served version no client sent; ``corpus/batch/<codec>-<client>-<sha>.bin``
holds one records field of a produce request (whole v2 batches), and
``<codec>-plain-<client>-<sha>.bin`` the same batch with its records decompressed. At most :data:`PER_KIND` frames
are kept per API version and batch kind, none over :data:`MAX_FRAME` bytes, so the
corpus stays small.
"""

from __future__ import annotations

import contextlib
import hashlib
import socket
import struct
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from seaway.protocol.compression import decompress
from seaway.protocol.messages import REQUESTS
from seaway.protocol.primitives import Reader, Writer
from seaway.protocol.record_batch import BATCH_HEADER_SIZE, iter_batch_headers

from tests.support.broker import BrokerProcess
from tests.support.ports import free_port as _free_port

HERE = Path(__file__).parent
PER_KIND = 4
MAX_FRAME = 16 * 1024
_CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
_SAMPLES: dict[str, Any] = {
    "bool": True, "int8": 1, "int16": 2, "uint16": 3, "int32": 4, "uint32": 5, "int64": 6, "float64": 0.5,
    "uuid": uuid.UUID(int=7), "string": "s", "bytes": b"b", "records": None,
}



class RecordingProxy:
    """Forwards 127.0.0.1:port to the broker and keeps each client frame (with its prefix)."""

    def __init__(self, port: int, upstream: int) -> None:
        self.upstream = upstream
        self.frames: list[bytes] = []
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", port))
        self._stop = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            broker = socket.create_connection(("127.0.0.1", self.upstream))
            threading.Thread(target=self._pump, args=(client, broker, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(broker, client, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, record: bool) -> None:
        pending = b""
        try:
            while data := src.recv(65536):
                dst.sendall(data)
                if record:
                    pending += data
                    while len(pending) >= 4:
                        (size,) = struct.unpack_from(">i", pending)
                        if len(pending) < 4 + size:
                            break
                        with self._lock:
                            self.frames.append(pending[: 4 + size])
                        pending = pending[4 + size :]
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._stop = True
        self._server.close()


def _drive_confluent(bootstrap: str) -> None:
    from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap})
    topic = f"corpus-{uuid.uuid4().hex[:6]}"
    for fut in admin.create_topics([NewTopic(topic, 2, 1, config={"cleanup.policy": "delete"}),
                                    NewTopic(topic + "-c", 1, 1, config={"cleanup.policy": "compact"})]).values():
        fut.result(20)
    for codec in ("none", "gzip", "snappy", "lz4", "zstd"):
        for idempotent in (False, True):
            p = Producer({"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 20,
                          "enable.idempotence": idempotent, "acks": "all"})
            for i in range(30):
                headers: list[tuple[str, str | bytes | None]] | None = None
                if i % 3 == 0:
                    headers = [("h", b"v"), ("n", None)]
                p.produce(topic, key=f"k{i}".encode() if i % 4 else None, value=b"x" * (i * 7 % 90) if i % 5 else None,
                          headers=headers, partition=i % 2, timestamp=1_700_000_000_000 + i)
            p.produce(topic + "-c", key=b"key", value=b"value")
            assert p.flush(20) == 0
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "auto.offset.reset": "earliest",
                  "enable.auto.commit": False})
    c.subscribe([topic])
    got = 0
    deadline = time.monotonic() + 30
    while got < 300 and time.monotonic() < deadline:
        for m in c.consume(100, 0.5):
            if not m.error():
                got += 1
    c.commit(asynchronous=False)
    c.committed([TopicPartition(topic, 0)], timeout=10)
    c.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    c.offsets_for_times([TopicPartition(topic, 0, 1_700_000_000_010)], timeout=10)
    c.close()
    res = ConfigResource("topic", topic)
    for fut in admin.describe_configs([res]).values():
        fut.result(20)
    res.set_config("retention.ms", "86400000")
    for fut in admin.alter_configs([res]).values():
        fut.result(20)
    for fut in admin.create_partitions([NewPartitions(topic, 3)]).values():
        fut.result(20)
    admin.list_consumer_groups().result(20)
    for fut in admin.describe_consumer_groups([f"g-{topic}"]).values():
        fut.result(20)
    admin.describe_cluster().result(20)
    for fut in admin.delete_records([TopicPartition(topic, 0, 3)]).values():
        fut.result(20)
    for fut in admin.delete_consumer_groups([f"g-{topic}"]).values():
        fut.result(20)
    txn = Producer({"bootstrap.servers": bootstrap, "transactional.id": "corpus-txn"})
    with contextlib.suppress(KafkaException):
        txn.init_transactions(5)
    for fut in admin.delete_topics([topic]).values():
        fut.result(20)


def _drive_kafka_python(bootstrap: str) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    topic = f"corpus-kp-{uuid.uuid4().hex[:6]}"
    for codec in (None, "gzip", "snappy", "lz4", "zstd"):
        p = KafkaProducer(bootstrap_servers=bootstrap, compression_type=codec, linger_ms=20)
        for i in range(20):
            p.send(topic, key=f"k{i}".encode(), value=b"y" * (i * 11 % 70), headers=[("h", b"1")],
                   timestamp_ms=1_700_000_000_000 + i)
        p.flush(20)
        p.close()
    c = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=f"kp-{topic}",
                      auto_offset_reset="earliest", consumer_timeout_ms=3000)
    for _ in c:
        pass
    c.commit()
    c.close()


def _kind(frame: bytes) -> str:
    api_key, version = struct.unpack_from(">hh", frame, 4)
    cls = REQUESTS.get(api_key)
    name = cls.__name__.removesuffix("Request") if cls is not None else f"api{api_key}"
    return f"{name}-v{version}"


def _batches(frame: bytes, client: str) -> list[tuple[str, bytes]]:
    """Records fields of a produce request frame, each named by its codec."""
    api_key, version = struct.unpack_from(">hh", frame, 4)
    if api_key != 0:
        return []
    cls = REQUESTS[0]
    r = Reader(frame, 12)
    r.nullable_string(False)
    if version >= cls.FLEXIBLE_FROM:
        r.skip_tagged_fields()
    request = cls.decode(r, version)
    out = []
    for topic in request.topic_data:
        for part in topic.partition_data:
            if part.records is None:
                continue
            records = bytes(part.records)
            codec = next(iter_batch_headers(records)).compression
            out.append((f"{_CODECS[codec]}-{client}", records))
    return out


def _plain(name: str, records: bytes) -> list[tuple[str, bytes]]:
    """A compressed batch with its records decompressed in place (header kept, CRC stale).

    The batch fuzzer rebuilds such an input into a valid compressed batch
    (``targets.as_valid_batch``), so these seed its path through record decoding
    inside compressed batches.
    """
    header = next(iter_batch_headers(records))
    if header.compression == 0:
        return []
    body = decompress(header.compression, memoryview(records)[BATCH_HEADER_SIZE : header.size])
    return [(name.replace("-", "-plain-", 1), records[:BATCH_HEADER_SIZE] + body)]


def _filled(cls: Any, version: int, module: Any, depth: int = 0) -> Any:
    """An instance of ``cls`` with every field of ``version`` set, each array holding one item."""
    values: dict[str, Any] = {}
    for name, typ, lo, hi, _nlo, _nhi, _tag in cls._FIELDS:
        if not lo <= version <= hi:
            continue
        elem = typ.removeprefix("[]")
        item = _SAMPLES[elem] if elem in _SAMPLES else _filled(getattr(module, elem), version, module, depth + 1)
        values[name] = ([item] if depth < 3 else []) if typ.startswith("[]") else item
    return cls(**values)


def _generated() -> list[tuple[str, bytes]]:
    """One frame per served API version, encoded by the codec: versions no client sent."""
    import importlib

    from seaway.broker.handlers import HANDLERS

    out = []
    for key, spec in sorted(HANDLERS.items()):
        module = importlib.import_module(spec.request_cls.__module__)
        for version in range(spec.min_version, spec.max_version + 1):
            w = Writer()
            w.buf += struct.pack(">hhih", key, version, 1, 6) + b"seaway"
            if spec.request_flexible(version):
                w.empty_tagged_fields()
            _filled(spec.request_cls, version, module).encode(w, version)
            body = w.getvalue()
            out.append((f"{spec.name}-v{version}-gen", struct.pack(">i", len(body)) + body))
    return out


def _write(directory: Path, items: list[tuple[str, bytes]]) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    per_kind: dict[str, int] = defaultdict(int)
    written = 0
    for kind, data in items:
        if len(data) > MAX_FRAME or per_kind[kind] >= PER_KIND:
            continue
        path = directory / f"{kind}-{hashlib.sha1(data).hexdigest()[:10]}.bin"
        if not path.exists():
            path.write_bytes(data)
            per_kind[kind] += 1
            written += 1
    return written


def main() -> int:
    requests: list[tuple[str, bytes]] = []
    batches: list[tuple[str, bytes]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for client, drive in (("librdkafka", _drive_confluent), ("kafka-python", _drive_kafka_python)):
            broker_port, proxy_port = _free_port(), _free_port()
            proxy = RecordingProxy(proxy_port, broker_port)
            overrides = {"advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy_port}"}
            with BrokerProcess(Path(tmp) / client, overrides, port=broker_port):
                drive(f"127.0.0.1:{proxy_port}")
            proxy.close()
            frames = list(proxy.frames)
            requests += [(_kind(f), f) for f in frames]
            for f in frames:
                for name, records in _batches(f, client):
                    batches += [(name, records), *_plain(name, records)]
    requests += _generated()
    n_req = _write(HERE / "corpus" / "request", requests)
    n_batch = _write(HERE / "corpus" / "batch", batches)
    print(f"{len(requests)} frames seen, {n_req} request seeds and {n_batch} batch seeds written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

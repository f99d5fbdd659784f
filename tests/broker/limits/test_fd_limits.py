"""File descriptors: no request pattern opens files without bound, and at the open-file limit
the broker answers Kafka's errors and recovers by itself (issue 14, item 4).

Each test lowers RLIMIT_NOFILE of a running broker subprocess with prlimit(2)."""

from __future__ import annotations

import os
import resource
import struct
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from seaway.protocol.messages.create_partitions_request import CreatePartitionsRequest, CreatePartitionsTopic
from seaway.protocol.messages.create_partitions_response import CreatePartitionsResponse
from seaway.protocol.messages.create_topics_request import CreatableTopic, CreateTopicsRequest
from seaway.protocol.messages.create_topics_response import CreateTopicsResponse
from seaway.protocol.messages.metadata_request import MetadataRequest, MetadataRequestTopic
from seaway.protocol.messages.metadata_response import MetadataResponse

from tests.broker.admin.rawclient import call
from tests.broker.limits.wire import API_VERSIONS_V0, Wire, api_versions, connect, cpu_seconds, open_fds, recv_exactly
from tests.support.broker import BrokerProcess
from tests.support.optional import present

pytestmark = pytest.mark.timeout(120)

KAFKA_STORAGE_ERROR = 56
POLICY_VIOLATION = 44


def _set_fd_limit(pid: int, soft: int) -> int:
    """Lower (or restore) the broker's soft open-file limit; returns the previous one."""
    old, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
    return old


def _settled(broker: BrokerProcess) -> int:
    """The broker's pid once it has created __consumer_offsets (50 partitions, 150 fds), which
    it does in the background after saying it is ready."""
    assert broker.proc is not None
    deadline = time.monotonic() + 30
    while not (broker.data_dir / "__consumer_offsets-49").is_dir():
        assert time.monotonic() < deadline, "__consumer_offsets was not created"
        time.sleep(0.05)
    AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10)  # and loaded
    return broker.proc.pid


def _create_topic(broker: BrokerProcess, name: str, config: dict[str, str]) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for fut in admin.create_topics([NewTopic(name, 1, 1, config=config)], operation_timeout=10).values():
        fut.result(15)


def _segment_files(broker: BrokerProcess, topic: str) -> list[str]:
    return sorted(os.listdir(broker.data_dir / f"{topic}-0"))


def _values(broker: BrokerProcess, topic: str, count: int) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": f"g-{topic}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(values) < count and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is not None and not msg.error():
            values.append(present(msg.value()))
    consumer.close()
    return values


def _fd_numbers(pid: int) -> list[int]:
    return sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd"))


def _wait_for_fds(pid: int, count: int) -> None:
    deadline = time.monotonic() + 10
    while open_fds(pid) != count:
        assert time.monotonic() < deadline, f"the broker holds {open_fds(pid)} fds, expected {count}"
        time.sleep(0.02)


def test_fd_exhaustion_answers_storage_error_and_recovers(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "b") as broker, ExitStack() as stack:
        pid = _settled(broker)
        _create_topic(broker, "t", {"segment.ms": "1"})  # every produce is due to roll
        producer = Wire(broker.bootstrap)
        stack.callback(producer.close)
        assert [producer.produce("t", [f"v{i}".encode()]) for i in range(3)] == [(0, i) for i in range(3)]
        idle = [stack.enter_context(connect(broker.bootstrap)) for _ in range(150)]
        for sock in idle:
            api_versions(sock)
        files = _segment_files(broker, "t")
        fds = _fd_numbers(pid)
        assert fds == list(range(len(fds))), "the broker's fd table has holes; the test needs it dense"
        _set_fd_limit(pid, len(fds))  # every fd the broker may have is in use...
        idle.pop(0).close()  # ...but one, low in the table (not in the reserve): a roll is tried
        _wait_for_fds(pid, len(fds) - 1)

        for _ in range(3):
            time.sleep(0.002)
            code, _ = producer.produce("t", [b"lost?"])
            assert code == KAFKA_STORAGE_ERROR  # the .log opened, its .index found no fd
        assert _segment_files(broker, "t") == files, "a failed roll left files behind"

        # The last free fd goes to a client; accept() then hits EMFILE: the broker neither
        # spins nor dies, and the next client waits in the backlog.
        taker = stack.enter_context(connect(broker.bootstrap))
        api_versions(taker)
        late = stack.enter_context(connect(broker.bootstrap))
        late.sendall(API_VERSIONS_V0)
        cpu = cpu_seconds(pid)
        time.sleep(2.0)
        assert cpu_seconds(pid) - cpu < 0.5, "the broker spins on accept() at EMFILE"
        assert broker.alive

        for sock in idle:  # fds free up: the broker recovers by itself
            sock.close()
        late.settimeout(10)
        (size,) = struct.unpack(">i", recv_exactly(late, 4))
        assert struct.unpack(">i", recv_exactly(late, size)[:4]) == (1,)
        time.sleep(0.002)
        assert producer.produce("t", [b"after"]) == (0, 3)  # no offset lost or skipped
        assert len([f for f in _segment_files(broker, "t") if f.endswith(".log")]) > len(
            [f for f in files if f.endswith(".log")])  # and the roll happened this time
        assert _values(broker, "t", 4) == [b"v0", b"v1", b"v2", b"after"]
    assert broker.proc is not None and broker.proc.returncode == 0


def test_optional_rolls_wait_while_fds_are_short(tmp_path: Path) -> None:
    """segment.ms=1 would roll (3 fds) on every produce; at the fd limit the segment grows instead."""
    with BrokerProcess(tmp_path / "b") as broker, ExitStack() as stack:
        pid = _settled(broker)
        _create_topic(broker, "t", {"segment.ms": "1"})
        producer = Wire(broker.bootstrap)
        stack.callback(producer.close)
        assert producer.produce("t", [b"first"]) == (0, 0)
        logs = [f for f in _segment_files(broker, "t") if f.endswith(".log")]
        soft = _set_fd_limit(pid, open_fds(pid))
        for i in range(1, 6):
            time.sleep(0.005)
            assert producer.produce("t", [b"more"]) == (0, i)
        assert [f for f in _segment_files(broker, "t") if f.endswith(".log")] == logs
        _set_fd_limit(pid, soft)  # room again: the deferred roll happens
        time.sleep(0.005)
        assert producer.produce("t", [b"rolled"]) == (0, 6)
        assert len([f for f in _segment_files(broker, "t") if f.endswith(".log")]) == 2


def _create(broker: BrokerProcess, topics: dict[str, int], validate_only: bool = False) -> dict[str, int]:
    request = CreateTopicsRequest(topics=[CreatableTopic(name=n, num_partitions=p, replication_factor=1)
                                          for n, p in topics.items()], timeout_ms=10000,
                                  validate_only=validate_only)
    response = call(broker.bootstrap, request, CreateTopicsResponse, 7)
    return {t.name: t.error_code for t in response.topics}


def _topics(broker: BrokerProcess) -> set[str]:
    return set(AdminClient({"bootstrap.servers": broker.bootstrap}).list_topics(timeout=10).topics)


def test_partition_creation_stays_within_the_fd_budget(tmp_path: Path) -> None:
    with BrokerProcess(tmp_path / "b", {"num.partitions": "40"}) as broker:
        pid = _settled(broker)
        # Kafka 4's cap on one request, whatever the fds: POLICY_VIOLATION for every topic.
        assert _create(broker, {"huge-a": 6000, "huge-b": 6000}, validate_only=True) == {
            "huge-a": POLICY_VIOLATION, "huge-b": POLICY_VIOLATION}
        # Room for about 33 partitions (3 fds each) beyond what is open and the reserve of 64.
        soft = _set_fd_limit(pid, open_fds(pid) + 64 + 100)
        assert _create(broker, {"big": 50}) == {"big": POLICY_VIOLATION}
        assert _create(broker, {"small": 10}) == {"small": 0}
        grown = call(broker.bootstrap, CreatePartitionsRequest(
            topics=[CreatePartitionsTopic(name="small", count=60)], timeout_ms=10000),
            CreatePartitionsResponse, 3)
        assert grown.results[0].error_code == POLICY_VIOLATION
        metadata = call(broker.bootstrap, MetadataRequest(topics=[MetadataRequestTopic(name="auto")],
                                                          allow_auto_topic_creation=True), MetadataResponse, 9)
        assert metadata.topics[0].error_code == POLICY_VIOLATION  # num.partitions=40 do not fit
        assert _topics(broker) & {"big", "auto"} == set()
        _set_fd_limit(pid, soft)  # room again
        assert _create(broker, {"big": 50}) == {"big": 0}

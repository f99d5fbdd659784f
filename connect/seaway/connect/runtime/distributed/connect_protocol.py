"""Connect's group-protocol payloads, in Kafka Connect's exact byte layout.

A Connect worker joins its group with protocol type ``connect`` and offers up to three
protocols, each with its own metadata layout (Kafka's ``ConnectProtocol`` and
``IncrementalCooperativeConnectProtocol``). Everything uses the classic (non-flexible)
primitive encoding: INT16/INT32/INT64 big-endian, STRING = int16 length + UTF-8,
ARRAY = int32 count (-1 = null), NULLABLE_BYTES = int32 length (-1 = null)::

    member metadata v0 ("default", eager)
        version:int16=0  url:string  config_offset:int64
    member metadata v1 ("compatible") / v2 ("sessioned")
        version:int16    url:string  config_offset:int64  allocation:nullable_bytes
        (allocation = this member's current assignment, encoded as an assignment below)

    assignment v0
        version:int16=0  error:int16  leader:string  leader_url:string  config_offset:int64
        assignment:[connector:string tasks:[int32]]          (task -1 = the Connector itself)
    assignment v1 / v2
        ... the v0 fields, then  revoked:[connector:string tasks:[int32]] (nullable)
        delay:int32   (ms until the leader wants a follow-up rebalance; 0 = none)

Decoders tolerate missing trailing fields (Kafka's TOLERATE_MISSING_FIELDS_WITH_DEFAULTS).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

from seaway.connect.runtime.herder import ConnectorTaskId
from seaway.errors import SeawayError
from seaway.protocol.primitives import CorruptFrameError, Reader, Writer

__all__ = [
    "CONFIG_MISMATCH",
    "CONNECTOR_TASK",
    "NO_ERROR",
    "ConnectProtocol",
    "ConnectProtocolError",
    "ExtendedAssignment",
    "WorkerState",
    "decode_assignment",
    "decode_metadata",
    "encode_assignment",
    "encode_metadata",
    "protocols_for",
]

CONNECTOR_TASK = -1
"""The task id that stands for the Connector instance itself in an assignment."""
NO_ERROR = 0
CONFIG_MISMATCH = 1
"""The leader is behind the config topic: members read it to the end and rejoin."""


class ConnectProtocolError(SeawayError):
    """A group payload that does not parse as any Connect protocol version."""


class ConnectProtocol(enum.Enum):
    """The protocol names a worker may offer, with their metadata/assignment versions."""

    EAGER = ("default", 0)
    COMPATIBLE = ("compatible", 1)
    SESSIONED = ("sessioned", 2)

    @property
    def protocol_name(self) -> str:
        return self.value[0]

    @property
    def version(self) -> int:
        return self.value[1]

    @classmethod
    def from_name(cls, name: str) -> ConnectProtocol:
        for p in cls:
            if p.protocol_name == name:
                return p
        raise ConnectProtocolError(f"unknown Connect protocol {name!r}")


def protocols_for(connect_protocol: str) -> list[ConnectProtocol]:
    """What ``connect.protocol`` offers, in preference order (Kafka's ConnectProtocolCompatibility)."""
    offered = {
        "sessioned": [ConnectProtocol.SESSIONED, ConnectProtocol.COMPATIBLE, ConnectProtocol.EAGER],
        "compatible": [ConnectProtocol.COMPATIBLE, ConnectProtocol.EAGER],
        "eager": [ConnectProtocol.EAGER],
    }
    try:
        return offered[connect_protocol.lower()]
    except KeyError:
        raise ConnectProtocolError(f"connect.protocol must be eager, compatible or sessioned, "
                                   f"not {connect_protocol!r}") from None


@dataclass(frozen=True, slots=True)
class ExtendedAssignment:
    """One member's assignment (v0 when ``version`` is 0: no revocations, no delay)."""

    version: int
    error: int
    leader: str
    leader_url: str
    config_offset: int
    connectors: tuple[str, ...] = ()
    tasks: tuple[ConnectorTaskId, ...] = ()
    revoked_connectors: tuple[str, ...] = ()
    revoked_tasks: tuple[ConnectorTaskId, ...] = ()
    delay: int = 0

    @property
    def failed(self) -> bool:
        return self.error != NO_ERROR

    @classmethod
    def empty(cls, version: int, config_offset: int = -1) -> ExtendedAssignment:
        return cls(version, NO_ERROR, "", "", config_offset)


@dataclass(frozen=True, slots=True)
class WorkerState:
    """A member's JoinGroup metadata: its REST URL, config offset and (v1+) current allocation."""

    url: str
    config_offset: int
    allocation: ExtendedAssignment | None = field(default=None)


def _grouped(connectors: Iterable[str], tasks: Iterable[ConnectorTaskId]) -> dict[str, list[int]]:
    """Kafka's ``asMap``: per connector, -1 for the Connector instance first, then its task ids."""
    out: dict[str, list[int]] = {}
    for name in connectors:
        out.setdefault(name, []).append(CONNECTOR_TASK)
    for task in tasks:
        out.setdefault(task.connector, []).append(task.task)
    return out


def _write_map(w: Writer, grouped: dict[str, list[int]]) -> None:
    w.array_length(len(grouped), False)
    for name, ids in grouped.items():
        w.string(name, False)
        w.array_length(len(ids), False)
        for i in ids:
            w.int32(i)


def _read_map(r: Reader) -> tuple[tuple[str, ...], tuple[ConnectorTaskId, ...]]:
    connectors: list[str] = []
    tasks: list[ConnectorTaskId] = []
    count = r.array_length(False)
    for _ in range(max(count, 0)):
        name = r.string(False)
        for _ in range(max(r.array_length(False), 0)):
            task = r.int32()
            if task == CONNECTOR_TASK:
                connectors.append(name)
            else:
                tasks.append(ConnectorTaskId(name, task))
    return tuple(connectors), tuple(tasks)


def encode_assignment(a: ExtendedAssignment) -> bytes:
    w = Writer()
    w.int16(a.version)
    w.int16(a.error)
    w.string(a.leader, False)
    w.string(a.leader_url, False)
    w.int64(a.config_offset)
    _write_map(w, _grouped(a.connectors, a.tasks))
    if a.version >= 1:
        _write_map(w, _grouped(a.revoked_connectors, a.revoked_tasks))
        w.int32(a.delay)
    return w.getvalue()


def decode_assignment(data: bytes) -> ExtendedAssignment:
    r = Reader(data)
    try:
        version = r.int16()
        if version < 0:
            raise ConnectProtocolError(f"invalid Connect assignment version {version}")
        error = r.int16()
        leader = r.string(False)
        leader_url = r.string(False)
        offset = r.int64()
        connectors, tasks = _read_map(r)
        revoked_connectors: tuple[str, ...] = ()
        revoked_tasks: tuple[ConnectorTaskId, ...] = ()
        delay = 0
        if version >= 1 and r.remaining:
            revoked_connectors, revoked_tasks = _read_map(r)
            if r.remaining:
                delay = r.int32()
    except CorruptFrameError as e:
        raise ConnectProtocolError(f"malformed Connect assignment: {e}") from e
    return ExtendedAssignment(version, error, leader, leader_url, offset, connectors, tasks,
                              revoked_connectors, revoked_tasks, delay)


def encode_metadata(state: WorkerState, protocol: ConnectProtocol) -> bytes:
    w = Writer()
    w.int16(protocol.version)
    w.string(state.url, False)
    w.int64(state.config_offset)
    if protocol.version >= 1:
        allocation = state.allocation
        w.nullable_bytes(None if allocation is None else encode_assignment(allocation), False)
    return w.getvalue()


def decode_metadata(data: bytes) -> tuple[int, WorkerState]:
    """``(version, state)`` of a member's metadata."""
    r = Reader(data)
    try:
        version = r.int16()
        if version < 0:
            raise ConnectProtocolError(f"invalid Connect metadata version {version}")
        url = r.string(False)
        offset = r.int64()
        allocation = None
        if version >= 1 and r.remaining:
            raw = r.nullable_bytes(False)
            allocation = None if raw is None else decode_assignment(raw)
    except CorruptFrameError as e:
        raise ConnectProtocolError(f"malformed Connect member metadata: {e}") from e
    return version, WorkerState(url, offset, allocation)

"""A tiny asyncio Kafka client for driving the group protocol by hand in tests.

Built on Seaway's own codec (primitives + generated messages): one connection, one
request at a time, exactly what a test needs to check error codes and leader choice that
real clients hide. Also the broker fixture settings the group tests share.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from seaway.protocol.framing import FRAME_SIZE, request_frame, response_reader
from seaway.protocol.messages.heartbeat_request import HeartbeatRequest
from seaway.protocol.messages.heartbeat_response import HeartbeatResponse
from seaway.protocol.messages.join_group_request import JoinGroupRequest, JoinGroupRequestProtocol
from seaway.protocol.messages.join_group_response import JoinGroupResponse
from seaway.protocol.messages.sync_group_request import SyncGroupRequest, SyncGroupRequestAssignment
from seaway.protocol.messages.sync_group_response import SyncGroupResponse

# Fast groups for tests: no initial delay, short sessions allowed, few offsets partitions.
FAST_GROUPS = {
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "5",
}

MEMBER_ID_REQUIRED = 79


class RawClient:
    """One connection to the broker; ``call`` sends a request and decodes its response."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str) -> None:
        self._reader = reader
        self._writer = writer
        self._client_id = client_id
        self._correlation = 0

    @classmethod
    async def connect(cls, bootstrap: str, client_id: str = "raw-test") -> RawClient:
        host, port = bootstrap.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer, client_id)

    async def call(self, request: Any, response_cls: Any, version: int) -> Any:
        self._correlation += 1
        self._writer.write(request_frame(request, version, self._correlation, self._client_id))
        await self._writer.drain()
        (size,) = FRAME_SIZE.unpack(await self._reader.readexactly(4))
        frame = await self._reader.readexactly(size)
        return response_cls.decode(response_reader(frame, request, version, self._correlation), version)

    async def close(self) -> None:
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()

    # --- group helpers ----------------------------------------------------------------
    async def join(self, group: str, member_id: str = "", *, protocols: list[tuple[str, bytes]] | None = None,
                   protocol_type: str = "connect", session_ms: int = 10_000, rebalance_ms: int = 10_000,
                   instance_id: str | None = None, version: int = 5) -> JoinGroupResponse:
        protos = [JoinGroupRequestProtocol(name=n, metadata=m) for n, m in (protocols or [("x", b"meta")])]
        req = JoinGroupRequest(group_id=group, session_timeout_ms=session_ms, rebalance_timeout_ms=rebalance_ms,
                               member_id=member_id, group_instance_id=instance_id, protocol_type=protocol_type,
                               protocols=protos)
        resp: JoinGroupResponse = await self.call(req, JoinGroupResponse, version)
        return resp

    async def join_fully(self, group: str, **kwargs: Any) -> JoinGroupResponse:
        """JoinGroup, following MEMBER_ID_REQUIRED with the id handed out."""
        resp = await self.join(group, **kwargs)
        if resp.error_code == MEMBER_ID_REQUIRED:
            kwargs["member_id"] = resp.member_id
            resp = await self.join(group, **kwargs)
        return resp

    async def sync(self, group: str, generation: int, member_id: str,
                   assignments: dict[str, bytes] | None = None, instance_id: str | None = None,
                   version: int = 3) -> SyncGroupResponse:
        req = SyncGroupRequest(group_id=group, generation_id=generation, member_id=member_id,
                               group_instance_id=instance_id,
                               assignments=[SyncGroupRequestAssignment(member_id=m, assignment=a)
                                            for m, a in (assignments or {}).items()])
        resp: SyncGroupResponse = await self.call(req, SyncGroupResponse, version)
        return resp

    async def heartbeat(self, group: str, generation: int, member_id: str, instance_id: str | None = None) -> int:
        req = HeartbeatRequest(group_id=group, generation_id=generation, member_id=member_id,
                               group_instance_id=instance_id)
        resp: HeartbeatResponse = await self.call(req, HeartbeatResponse, 3)
        return resp.error_code

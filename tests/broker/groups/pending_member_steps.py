"""Issue 27, item 3: a JoinGroup into a classic group that is rebalancing with no members left
but one KIP-394 pending member, as steps any broker can be put through (Seaway's in
test_groups_pending_member.py, Apache Kafka's in tests/peer/test_groups_pending_member_peer.py).

A joins and syncs; B sends a first JoinGroup (answered MEMBER_ID_REQUIRED: B is now a pending
member) and goes silent; A rejoins (the group prepares a rebalance and waits for B); A leaves;
C joins. Kafka's ``ClassicGroup.supportsProtocols`` counts a protocol as supported when every
member supports it, which with no members every protocol is: only the protocol type must be
the group's. So C gets MEMBER_ID_REQUIRED (79), not INCONSISTENT_GROUP_PROTOCOL (23), which
the Java consumer treats as fatal. C then joins with its id and forms the next generation
alone once B's pending id expires (B's session timeout).

Requests are crafted with Seaway's codec (``RawClient``) so every answer is seen as sent.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from seaway.protocol.messages.describe_groups_request import DescribeGroupsRequest
from seaway.protocol.messages.describe_groups_response import DescribeGroupsResponse
from seaway.protocol.messages.find_coordinator_request import FindCoordinatorRequest
from seaway.protocol.messages.find_coordinator_response import FindCoordinatorResponse
from seaway.protocol.messages.leave_group_request import LeaveGroupRequest, MemberIdentity
from seaway.protocol.messages.leave_group_response import LeaveGroupResponse

from tests.broker.groups.grouptest_client import RawClient

__all__ = ["EXPECTED", "PendingMemberAnswers", "run_pending_member_steps"]

PROTOCOL_TYPE = "consumer"
B_SESSION_MS = 6000
"""B's session timeout, so how long its pending member id lives: long enough that it is still
pending when C joins (the step under test), short enough that C's generation forms soon after."""


@dataclass(frozen=True)
class PendingMemberAnswers:
    """What the broker answered at each step (error codes; states as DescribeGroups shows them)."""

    a_first_generation: tuple[int, int, bool]
    """A's join: (error, generation, A is the leader)."""
    b_first_join: int
    rebalancing_after_a_rejoined: tuple[str, int]
    """(state, number of members) while A's rejoin waits for B."""
    a_leave: tuple[int, list[int]]
    a_parked_rejoin: int
    """The answer to A's parked JoinGroup once A has left."""
    rebalancing_with_no_members: tuple[str, int]
    other_protocol_type: int
    """A new member with another protocol type: still refused with no members."""
    c_first_join: int
    c_joined: tuple[int, int, str | None, bool, int]
    """C's join with its id: (error, generation, protocol, C is the leader, members listed)."""
    c_synced: tuple[int, bytes]


EXPECTED = PendingMemberAnswers(
    a_first_generation=(0, 1, True),
    b_first_join=79,  # MEMBER_ID_REQUIRED
    rebalancing_after_a_rejoined=("PreparingRebalance", 1),
    a_leave=(0, [0]),
    a_parked_rejoin=25,  # UNKNOWN_MEMBER_ID
    rebalancing_with_no_members=("PreparingRebalance", 0),
    other_protocol_type=23,  # INCONSISTENT_GROUP_PROTOCOL
    c_first_join=79,  # MEMBER_ID_REQUIRED (the report saw 23)
    c_joined=(0, 2, "roundrobin", True, 1),
    c_synced=(0, b"to-c"),
)
"""Apache Kafka 4's answers (tests/peer/test_groups_pending_member_peer.py checks them there)."""


async def _connect(bootstrap: str, name: str, group: str) -> RawClient:
    """A connection to a broker whose group coordinator answers for ``group``.

    FindCoordinator first: Apache Kafka creates ``__consumer_offsets`` on it. Then until
    DescribeGroups answers without an error: until the partition holding the group is loaded
    the brokers answer NOT_COORDINATOR (Kafka, for a moment after creating the topic) or
    COORDINATOR_LOAD_IN_PROGRESS / COORDINATOR_NOT_AVAILABLE.
    """
    client = await RawClient.connect(bootstrap, name)
    deadline = time.monotonic() + 60
    while True:
        found = await client.call(FindCoordinatorRequest(key=group, key_type=0), FindCoordinatorResponse, 3)
        error = found.error_code
        if error == 0:
            described = await client.call(DescribeGroupsRequest(groups=[group]), DescribeGroupsResponse, 5)
            error = described.groups[0].error_code
            if error == 0:
                return client
        assert time.monotonic() < deadline, f"no coordinator for {group}: error {error}"
        await asyncio.sleep(0.2)


async def _describe(client: RawClient, group: str) -> tuple[str, int]:
    response = await client.call(DescribeGroupsRequest(groups=[group]), DescribeGroupsResponse, 5)
    described = response.groups[0]
    return described.group_state, len(described.members)


async def run_pending_member_steps(bootstrap: str, group: str) -> PendingMemberAnswers:
    """The steps of the module docstring against ``bootstrap``, on a new ``group``."""
    clients = [await _connect(bootstrap, name, group) for name in ("a", "b", "c", "admin")]
    a, b, c, admin = clients
    try:
        ja = await a.join_fully(group, protocol_type=PROTOCOL_TYPE, protocols=[("range", b"A")],
                                session_ms=30_000, rebalance_ms=30_000)
        a_first = (ja.error_code, ja.generation_id, ja.leader == ja.member_id)
        await a.sync(group, ja.generation_id, ja.member_id, {ja.member_id: b"to-a"})

        jb = await b.join(group, protocol_type=PROTOCOL_TYPE, protocols=[("range", b"B")], session_ms=B_SESSION_MS,
                          rebalance_ms=30_000)  # and B is never heard of again

        rejoin = asyncio.create_task(a.join(group, ja.member_id, protocol_type=PROTOCOL_TYPE,
                                            protocols=[("range", b"A")], session_ms=30_000, rebalance_ms=30_000))
        deadline = time.monotonic() + 10
        while (after_rejoin := await _describe(admin, group))[0] != "PreparingRebalance":
            assert time.monotonic() < deadline, f"A's rejoin did not start a rebalance: {after_rejoin}"
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # A's JoinGroup is parked, waiting for B

        leave = await admin.call(LeaveGroupRequest(group_id=group, members=[MemberIdentity(member_id=ja.member_id)]),
                                 LeaveGroupResponse, 4)
        parked = await asyncio.wait_for(rejoin, 10)
        no_members = await _describe(admin, group)

        other = await c.join(group, protocol_type="connect", protocols=[("roundrobin", b"C")])
        jc = await c.join(group, protocol_type=PROTOCOL_TYPE, protocols=[("roundrobin", b"C")], session_ms=30_000,
                          rebalance_ms=30_000)
        c_first = jc.error_code
        if c_first == 79:
            # Alone once B's pending id expires (within B_SESSION_MS of its first join).
            jc = await asyncio.wait_for(
                c.join(group, jc.member_id, protocol_type=PROTOCOL_TYPE, protocols=[("roundrobin", b"C")],
                       session_ms=30_000, rebalance_ms=30_000), 30)
            synced = await c.sync(group, jc.generation_id, jc.member_id, {jc.member_id: b"to-c"})
            c_synced = (synced.error_code, synced.assignment)
        else:
            c_synced = (-1, b"")
        return PendingMemberAnswers(
            a_first_generation=a_first,
            b_first_join=jb.error_code,
            rebalancing_after_a_rejoined=after_rejoin,
            a_leave=(leave.error_code, [m.error_code for m in leave.members]),
            a_parked_rejoin=parked.error_code,
            rebalancing_with_no_members=no_members,
            other_protocol_type=other.error_code,
            c_first_join=c_first,
            c_joined=(jc.error_code, jc.generation_id, jc.protocol_name, jc.leader == jc.member_id, len(jc.members)),
            c_synced=c_synced,
        )
    finally:
        for client in clients:
            await client.close()
